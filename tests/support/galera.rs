//! A Galera cluster for tests: three private `mariadbd` nodes replicating through Debian's
//! `galera-4` provider, on 127.0.0.1 only, children of the test process like every server of
//! [`crate::mariadb`] (whose spawner, template, scratch directory and ready wait they share).
//!
//! Node 0 bootstraps the cluster (`--wsrep-new-cluster`); nodes 1 and 2 join it one after the
//! other, each waiting until the one before is `Synced`. A joiner's state transfer (SST) is a
//! copy of the donor's data directory by the script `galera/wsrep_sst_local_copy`, put on the
//! nodes' `PATH`: it needs neither rsync nor `mariadb-server`'s SST scripts. Nodes can be
//! killed (SIGKILL); the other two keep a quorum and go on once they have noticed, within
//! about [`SUSPECT_TIMEOUT`].

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use sqlx::{Connection, MySqlConnection};

use crate::mariadb::server::{free_port, Launch};
use crate::mariadb::{ready, scratch, MariaDb};

/// The nodes of a cluster: the smallest that survives the loss of one with a quorum.
pub const NODES: usize = 3;

/// The state transfer method, after the script `wsrep_sst_<method>` it runs.
const SST_METHOD: &str = "local_copy";
const SST_SCRIPT: &str = include_str!("galera/wsrep_sst_local_copy");

/// How long the others wait for a silent node before they leave it out of the cluster (and
/// hold their commits meanwhile). Galera's 5 s default, shortened so that a killed node costs
/// a test seconds; far above what a busy two-core machine delays a keepalive.
const SUSPECT_TIMEOUT: &str = "PT3S";

/// Where distributions put the provider; `galera-4` on Debian and Ubuntu installs both of the
/// first two.
const PROVIDERS: &[&str] = &[
    "/usr/lib/galera/libgalera_smm.so",
    "/usr/lib/libgalera_smm.so",
    "/usr/lib64/galera-4/libgalera_smm.so",
    "/usr/lib/galera-4/libgalera_smm.so",
];

/// How long a node may take to join and reach `Synced`.
const SYNC_TIMEOUT: Duration = Duration::from_secs(60);

/// A running cluster; its nodes are killed and their directories removed on drop.
pub struct Galera {
    /// `None` once killed.
    nodes: Vec<Option<MariaDb>>,
}

/// Replication conflicts a node counted since it started (`SHOW GLOBAL STATUS`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Conflicts {
    /// `wsrep_local_cert_failures`: local transactions that failed certification at commit
    /// (another node committed a write to the same row first); the client gets a deadlock.
    pub cert_failures: u64,
    /// `wsrep_local_bf_aborts`: local transactions aborted by a replicated one ("brute
    /// force") that needed their locks; the client gets a deadlock too.
    pub bf_aborts: u64,
}

impl Galera {
    /// Starts the cluster and waits until every node is `Synced` in a cluster of [`NODES`].
    /// Panics with the node's error log when one cannot start or join.
    pub fn start() -> Galera {
        let group: Vec<u16> = (0..NODES).map(|_| free_port()).collect();
        let members = group
            .iter()
            .map(|port| format!("127.0.0.1:{port}"))
            .collect::<Vec<_>>()
            .join(",");
        let mut nodes = Vec::new();
        for (i, &port) in group.iter().enumerate() {
            let mut launch = node_launch(&members, port);
            if i == 0 {
                launch.flags.push("--wsrep-new-cluster".into());
            }
            let node = MariaDb::start_with(launch);
            ready::block_on(wait_synced(&node, i + 1));
            nodes.push(Some(node));
        }
        Galera { nodes }
    }

    /// Node `i`, panicking if it was killed.
    pub fn node(&self, i: usize) -> &MariaDb {
        self.nodes[i]
            .as_ref()
            .unwrap_or_else(|| panic!("node {i} was killed"))
    }

    /// The indexes of the nodes still running.
    pub fn alive(&self) -> Vec<usize> {
        (0..NODES).filter(|&i| self.nodes[i].is_some()).collect()
    }

    /// Creates a database with a fresh random name (on node 0; DDL replicates to all) and
    /// returns its name; [`Galera::url`] gives its url on any node.
    pub async fn create_database(&self) -> String {
        let url = self.node(0).create_database().await;
        let name = url.rsplit('/').next().unwrap_or_default().to_owned();
        self.settle().await;
        name
    }

    /// `mysql://crawler:PASSWORD@127.0.0.1:PORT/DATABASE` of node `i`.
    pub fn url(&self, i: usize, database: &str) -> String {
        self.node(i).url(database)
    }

    /// Kills node `i` with SIGKILL, as a crash would, and waits until the others have left it
    /// out (a cluster of one fewer, every node `Synced`).
    pub async fn kill(&mut self, i: usize) {
        let mut node = self.nodes[i].take().expect("a node is killed once");
        node.kill();
        let size = self.alive().len();
        for j in self.alive() {
            wait_synced(self.node(j), size).await;
        }
    }

    /// Waits until every running node has applied what any node committed so far, so that
    /// what a test wrote through one node is read through every other.
    pub async fn settle(&self) {
        for i in self.alive() {
            let mut connection = connect(self.node(i)).await;
            // Reads wait for the node to catch up with the cluster (causality checks).
            sqlx::raw_sql("SET SESSION wsrep_sync_wait = 1; SELECT 1")
                .execute(&mut connection)
                .await
                .unwrap_or_else(|e| panic!("node {i} did not catch up: {e}"));
            let _ = connection.close().await;
        }
    }

    /// The conflicts counted by the running nodes, summed.
    pub async fn conflicts(&self) -> Conflicts {
        let mut sum = Conflicts::default();
        for i in self.alive() {
            let mut connection = connect(self.node(i)).await;
            sum.cert_failures += status(&mut connection, "wsrep_local_cert_failures").await;
            sum.bf_aborts += status(&mut connection, "wsrep_local_bf_aborts").await;
            let _ = connection.close().await;
        }
        sum
    }
}

impl Conflicts {
    /// Both kinds together: the transactions a client saw fail with a deadlock for a conflict.
    pub fn total(self) -> u64 {
        self.cert_failures + self.bf_aborts
    }
}

/// The wsrep flags of a node whose group port is `port`, in a cluster of `members`.
fn node_launch(members: &str, port: u16) -> Launch {
    let (ist, sst) = (free_port(), free_port());
    let options = [
        format!("gmcast.listen_addr=tcp://127.0.0.1:{port}"),
        format!("ist.recv_addr=127.0.0.1:{ist}"),
        // keepalive_period must stay below a third of suspect_timeout.
        "evs.keepalive_period=PT0.5S".into(),
        format!("evs.suspect_timeout={SUSPECT_TIMEOUT}"),
        "evs.inactive_timeout=PT6S".into(),
        "evs.install_timeout=PT5S".into(),
        // The write-set cache, for IST to a node that comes back; small, it is a file per node.
        "gcache.size=32M".into(),
    ]
    .join(";");
    let flags = vec![
        "--wsrep-on=ON".into(),
        format!("--wsrep-provider={}", provider().display()),
        format!("--wsrep-cluster-address=gcomm://{members}"),
        format!("--wsrep-node-address=127.0.0.1:{port}"),
        format!("--wsrep-provider-options={options}"),
        format!("--wsrep-sst-method={SST_METHOD}"),
        // Never bound by the local copy, but the server insists on an address.
        format!("--wsrep-sst-receive-address=127.0.0.1:{sst}"),
        // Galera replicates row images, and cannot replicate the table lock of the
        // traditional auto-increment mode.
        "--binlog-format=ROW".into(),
        "--innodb-autoinc-lock-mode=2".into(),
    ];
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![sst_dir().to_path_buf()];
    dirs.extend(std::env::split_paths(&path));
    let path = std::env::join_paths(dirs).expect("the PATH's directories join again");
    Launch {
        flags,
        env: vec![("PATH".into(), path)],
    }
}

/// The provider library; panics with the package to install when it is missing.
fn provider() -> PathBuf {
    PROVIDERS
        .iter()
        .map(PathBuf::from)
        .find(|path| path.is_file())
        .unwrap_or_else(|| {
            panic!(
                "{} (looked in {PROVIDERS:?}); the Galera tests start their own cluster with it",
                crate::installed::not_installed("libgalera_smm.so", "galera-4")
            )
        })
}

/// The directory holding `wsrep_sst_local_copy`, written once per process into its scratch
/// directory.
fn sst_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = scratch::dir().join("galera-bin");
        let script = dir.join(format!("wsrep_sst_{SST_METHOD}"));
        std::fs::create_dir_all(&dir)
            .and_then(|()| std::fs::write(&script, SST_SCRIPT))
            .and_then(|()| {
                std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
            })
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", script.display()));
        dir
    })
}

/// Waits until `node` is `Synced` in a cluster of `size`.
async fn wait_synced(node: &MariaDb, size: usize) {
    let deadline = Instant::now() + SYNC_TIMEOUT;
    let mut seen = String::new();
    while Instant::now() < deadline {
        if let Ok(mut connection) = MySqlConnection::connect(&node.url("")).await {
            let state = text_status(&mut connection, "wsrep_local_state_comment").await;
            let members = status(&mut connection, "wsrep_cluster_size").await;
            let _ = connection.close().await;
            if state == "Synced" && members == size as u64 {
                return;
            }
            seen = format!("{state} in a cluster of {members}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "a Galera node did not reach Synced in a cluster of {size} within {SYNC_TIMEOUT:?}: {seen}"
    )
}

async fn connect(node: &MariaDb) -> MySqlConnection {
    MySqlConnection::connect(&node.url(""))
        .await
        .unwrap_or_else(|e| panic!("cannot connect to a Galera node: {e}"))
}

/// A status variable as text, empty when the server has no such variable.
async fn text_status(connection: &mut MySqlConnection, name: &str) -> String {
    sqlx::query_scalar(
        "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = ?",
    )
    .bind(name.to_ascii_uppercase())
    .fetch_optional(connection)
    .await
    .ok()
    .flatten()
    .unwrap_or_default()
}

/// A numeric status variable, 0 when the server has no such variable.
async fn status(connection: &mut MySqlConnection, name: &str) -> u64 {
    text_status(connection, name).await.parse().unwrap_or(0)
}
