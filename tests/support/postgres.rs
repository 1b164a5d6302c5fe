//! PostgreSQL for the tests: a private `postgres` that the test process starts and owns, as
//! `mariadb.rs` does for MariaDB, and on the same pieces: its spawner (no server outlives the
//! process), its scratch directory and exit hook, its readiness runtime.
//!
//! [`shared()`] is the one server of a test process, where each test makes its own database
//! with [`Postgres::create_database`]; fault tests start their own with [`Postgres::start`] and
//! stop, restart or cut it. The binaries are those of the newest `/usr/lib/postgresql/*/bin`
//! (Debian's layout); the template data directory is `initdb`'ed once per process and copied
//! per server. PostgreSQL refuses to run as root, so when the tests are root (CI, containers)
//! both run as the `postgres` system user the package creates, on directories given to it.
//! Nothing here ever talks to a system server on :5432.

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use rand::distr::{Alphanumeric, SampleString};
use sqlx::{Connection, PgConnection};

use crate::mariadb::command::append_to;
use crate::mariadb::server::{free_port, tail};
use crate::mariadb::template::{copy_dir, run_installer};
use crate::mariadb::{ready::block_on, scratch, spawner};

/// How long a server may take to accept a login, or to exit after a fast-shutdown request.
const TIMEOUT: Duration = Duration::from_secs(60);

/// A fresh port can still be taken by someone else before the server binds it.
const PORT_ATTEMPTS: usize = 5;

/// Fast rather than durable; enough connections for many workers' pools.
const THROWAWAY_SETTINGS: &[&str] = &[
    "listen_addresses=127.0.0.1",
    "fsync=off",
    "synchronous_commit=off",
    "full_page_writes=off",
    "max_connections=300",
    "shared_buffers=64MB",
];

/// Extra server settings for private servers, whitespace-separated `name=value` pairs, each
/// passed as `-c`: later settings win, so benchmarks size the server (shared buffers, WAL)
/// while tests keep the small defaults above.
pub const EXTRA_SETTINGS_VAR: &str = "CRAWLER_TEST_POSTGRES_SETTINGS";

/// A private PostgreSQL server, killed and its directory removed on drop.
pub struct Postgres {
    /// Holds `data`, the socket directory and the log.
    dir: PathBuf,
    port: u16,
    /// `None` while stopped.
    child: Option<Child>,
}

/// The binaries, the template and the password of its `crawler` superuser.
struct Template {
    bin: PathBuf,
    /// Who runs the server: the `postgres` user when the tests are root.
    user: Option<(u32, u32)>,
    dir: PathBuf,
    password: String,
}

impl Postgres {
    /// Starts a private server on a copy of the template and its own port and socket
    /// directory, and waits until user `crawler` can log in over TCP. Panics with what is
    /// missing, or the end of the server's log, when that fails.
    pub fn start() -> Postgres {
        let dir = new_server_dir();
        let mut server = Postgres {
            dir,
            port: 0,
            child: None,
        };
        for _ in 0..PORT_ATTEMPTS {
            server.port = free_port();
            match server.launch() {
                Ok(()) => return server,
                Err(true) => continue,
                Err(false) => server.fail("exited during startup or accepted no login"),
            }
        }
        server.fail(&format!("found no free port in {PORT_ATTEMPTS} attempts"))
    }

    /// `postgres://crawler:PASSWORD@127.0.0.1:PORT/DATABASE`.
    pub fn url(&self, database: &str) -> String {
        let (password, port) = (&template().password, self.port);
        format!("postgres://crawler:{password}@127.0.0.1:{port}/{database}")
    }

    /// The process id of the server's postmaster (the parent of every backend and background
    /// worker), `None` while stopped: for reading its CPU time.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Creates a database with a fresh random name and returns its url.
    pub async fn create_database(&self) -> String {
        let name = format!("crawler_test_{:016x}", rand::random::<u64>());
        let mut connection = self.connect().await;
        sqlx::raw_sql(&format!("CREATE DATABASE \"{name}\""))
            .execute(&mut connection)
            .await
            .unwrap_or_else(|e| panic!("cannot create database {name} on port {}: {e}", self.port));
        let _ = connection.close().await;
        self.url(&name)
    }

    /// Stops the server (fast shutdown: clients are disconnected) and waits until it has
    /// exited; the data stays.
    pub fn stop(&mut self) {
        let Some(child) = self.child.take() else {
            return;
        };
        if let Err(why) = spawner::stop(child, libc::SIGINT, "SIGINT", TIMEOUT) {
            self.fail(&why);
        }
    }

    /// Starts the server again (stopping it first if needed) on the same port and data.
    pub fn restart(&mut self) {
        self.stop();
        if self.launch().is_err() {
            self.fail("cannot restart");
        }
    }

    /// Terminates, from the server side, every client connection but its own, and waits until
    /// they are gone. On the shared server that hits every test: fault tests use their own.
    pub async fn kill_connections(&self) {
        let mut connection = self.connect().await;
        let others = "SELECT pid FROM pg_stat_activity \
                      WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()";
        let victims: Vec<i32> = sqlx::query_scalar(others)
            .fetch_all(&mut connection)
            .await
            .unwrap_or_else(|e| panic!("cannot list connections: {e}"));
        for pid in &victims {
            // A connection may close on its own meanwhile: false then, which is fine.
            let _ = sqlx::query("SELECT pg_terminate_backend($1)")
                .bind(pid)
                .execute(&mut connection)
                .await;
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let left: Vec<i32> = sqlx::query_scalar(others)
                .fetch_all(&mut connection)
                .await
                .unwrap_or_else(|e| panic!("cannot list connections: {e}"));
            if !left.iter().any(|pid| victims.contains(pid)) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "killed connections still listed after 10 s"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let _ = connection.close().await;
    }

    /// Spawns `postgres` and waits until it accepts a login. `Err(true)`: the port was taken.
    fn launch(&mut self) -> Result<(), bool> {
        let log = self.dir.join("server.log");
        let log_before = fs::metadata(&log).map_or(0, |meta| meta.len());
        let child = spawner::spawn(self.command(&log)).map_err(|_| false)?;
        let url = self.url("postgres");
        let child = self.child.insert(child);
        let deadline = Instant::now() + TIMEOUT;
        let ready = block_on(async {
            loop {
                if let Ok(Some(_)) = child.try_wait() {
                    return false;
                }
                let login =
                    tokio::time::timeout(Duration::from_secs(5), PgConnection::connect(&url));
                if let Ok(Ok(connection)) = login.await {
                    let _ = connection.close().await;
                    return true;
                }
                if Instant::now() > deadline {
                    return false;
                }
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
        });
        if ready {
            return Ok(());
        }
        self.kill();
        let text = fs::read(&log).unwrap_or_default();
        let this_run = text.get(log_before as usize..).unwrap_or_default();
        Err(String::from_utf8_lossy(this_run).contains("Address already in use"))
    }

    fn command(&self, log: &Path) -> Command {
        let template = template();
        let mut command = as_server_user(Command::new(template.bin.join("postgres")));
        command
            .arg("-D")
            .arg(self.dir.join("data"))
            .arg("-p")
            .arg(self.port.to_string())
            // The socket in the server's own directory, never /var/run/postgresql.
            .arg("-k")
            .arg(&self.dir)
            .args(THROWAWAY_SETTINGS.iter().flat_map(|s| ["-c", s]))
            .args(
                std::env::var(EXTRA_SETTINGS_VAR)
                    .unwrap_or_default()
                    .split_whitespace()
                    .flat_map(|s| ["-c".to_string(), s.to_string()]),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(append_to(log));
        command
    }

    /// Kills the server and panics with `why` and the end of its log.
    fn fail(&mut self, why: &str) -> ! {
        self.kill();
        let log = self.dir.join("server.log");
        panic!(
            "private postgres ({}) on port {} {why}; the end of {}:\n{}",
            template().bin.display(),
            self.port,
            log.display(),
            tail(&log, 30)
        )
    }

    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            spawner::forget(child.id());
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// A fresh connection to the maintenance database: a pool would be tied to the runtime of
    /// the test that made it.
    async fn connect(&self) -> PgConnection {
        PgConnection::connect(&self.url("postgres"))
            .await
            .unwrap_or_else(|e| {
                panic!(
                    "cannot connect to the test server on port {}: {e}",
                    self.port
                )
            })
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.kill();
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// The test process's server, started on first use; lives until the process exits, when the
/// exit hook kills it and removes its data.
pub fn shared() -> &'static Postgres {
    static SHARED: OnceLock<Postgres> = OnceLock::new();
    SHARED.get_or_init(Postgres::start)
}

fn template() -> &'static Template {
    static TEMPLATE: OnceLock<Template> = OnceLock::new();
    TEMPLATE.get_or_init(|| {
        let template = Template {
            bin: bin_dir(),
            user: server_user(),
            dir: scratch::dir().join("postgres-template"),
            password: Alphanumeric.sample_string(&mut rand::rng(), 24),
        };
        initdb(&template);
        template
    })
}

/// The newest `/usr/lib/postgresql/VERSION/bin` holding `initdb` and `postgres`.
fn bin_dir() -> PathBuf {
    let mut dirs: Vec<(u32, PathBuf)> = fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            (bin.join("initdb").is_file() && bin.join("postgres").is_file())
                .then_some((version, bin))
        })
        .collect();
    dirs.sort();
    dirs.pop().map(|(_, bin)| bin).unwrap_or_else(|| {
        panic!(
            "{}; the tests start their own private server with it",
            crate::installed::not_installed(
                "a PostgreSQL server (/usr/lib/postgresql/*/bin/initdb, postgres)",
                "postgresql"
            )
        )
    })
}

/// The uid and gid to run the server as: none when the tests are not root; the `postgres`
/// user when they are, as PostgreSQL refuses root. No user is ever created here.
fn server_user() -> Option<(u32, u32)> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    // SAFETY: getpwnam with a NUL-terminated name; the fields are read before any other call.
    let user = unsafe { libc::getpwnam(c"postgres".as_ptr()) };
    if user.is_null() {
        panic!(
            "the tests run as root and PostgreSQL refuses root, and there is no `postgres` user \
             to run it as: {}",
            crate::installed::not_installed(
                "PostgreSQL's package (which creates the user)",
                "postgresql"
            )
        );
    }
    // SAFETY: checked non-null above.
    Some(unsafe { ((*user).pw_uid, (*user).pw_gid) })
}

/// `command`, run as the server user if there is one.
fn as_server_user(mut command: Command) -> Command {
    if let Some((uid, gid)) = template().user {
        command.uid(uid).gid(gid);
    }
    command
}

/// Gives `path` and everything under it to the server user, if there is one.
fn give_to_server_user(path: &Path) {
    let Some((uid, gid)) = template().user else {
        return;
    };
    let mut paths = vec![path.to_path_buf()];
    while let Some(path) = paths.pop() {
        std::os::unix::fs::lchown(&path, Some(uid), Some(gid))
            .unwrap_or_else(|e| panic!("cannot give {} to the postgres user: {e}", path.display()));
        if path.is_dir() && !path.is_symlink() {
            paths.extend(
                fs::read_dir(&path)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|e| e.path()),
            );
        }
    }
}

/// Runs `initdb` into the template: UTF-8, C collation, a `crawler` superuser with a password
/// over TCP (as a fleet would log in), trust on the private socket.
fn initdb(template: &Template) {
    let _ = fs::remove_dir_all(&template.dir);
    fs::create_dir(&template.dir)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", template.dir.display()));
    let pwfile = template.dir.with_extension("pw");
    fs::write(&pwfile, &template.password)
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", pwfile.display()));
    if let Some((uid, gid)) = template.user {
        for path in [&template.dir, &pwfile] {
            std::os::unix::fs::lchown(path, Some(uid), Some(gid))
                .unwrap_or_else(|e| panic!("cannot give {} to postgres: {e}", path.display()));
        }
    }
    let mut command = Command::new(template.bin.join("initdb"));
    if let Some((uid, gid)) = template.user {
        command.uid(uid).gid(gid);
    }
    command
        .arg("-D")
        .arg(&template.dir)
        .args(["-U", "crawler", "-E", "UTF8", "--locale=C"])
        .args([
            "--auth-host=scram-sha-256",
            "--auth-local=trust",
            "--no-sync",
        ])
        .arg(format!("--pwfile={}", pwfile.display()));
    run_installer(&mut command, "initdb", &template.dir);
}

/// A new server directory: a copy of the template as its data directory (mode 0700, as
/// PostgreSQL demands), all given to the server user.
fn new_server_dir() -> PathBuf {
    static SERVERS: AtomicUsize = AtomicUsize::new(0);
    let n = SERVERS.fetch_add(1, Ordering::Relaxed);
    let dir = scratch::dir().join(format!("postgres-{n}"));
    let data = dir.join("data");
    fs::create_dir(&dir)
        .and_then(|()| copy_dir(&template().dir, &data))
        .and_then(|()| {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&data, fs::Permissions::from_mode(0o700))
        })
        .unwrap_or_else(|e| panic!("cannot set up server directory {}: {e}", dir.display()));
    give_to_server_user(&dir);
    dir
}
