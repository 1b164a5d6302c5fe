//! MySQL for the tests: a private `mariadbd` that the test process starts and owns.
//!
//! [`shared()`] is the one server of a test process, where each test makes its own
//! database with [`MariaDb::create_database`], so tests run in parallel. Fault tests start
//! their own with [`MariaDb::start`] and stop, restart or cut it. Setting
//! `CRAWLER_TEST_MYSQL_URL` to an admin url of an existing server makes [`shared()`] use that
//! server instead; [`MariaDb::start`] still needs `mariadbd`.
//!
//! # Layout
//! - `binary`: finds `mariadbd` and `mariadb-install-db`, also outside `PATH`
//! - `command`: the flags of a throwaway server and where it keeps its files
//! - `ready`: waits until a starting server accepts a login
//! - `scratch`: the process's temp directory, its exit hook, the sweep of dead ones (the
//!   PostgreSQL servers of `postgres.rs` live there too)
//! - `server`: one `mariadbd` process: start, stop, restart, kill
//! - `spawner`: the thread that forks every server, so none outlives the process (PostgreSQL's
//!   too)
//! - `template`: the data directory installed once per process and copied per server

mod binary;
pub(crate) mod command;
pub(crate) mod ready;
pub(crate) mod scratch;
pub(crate) mod server;
pub(crate) mod spawner;
pub(crate) mod template;

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use sqlx::{Connection, MySqlConnection};
use url::Url;

pub use command::EXTRA_FLAGS_VAR;
use server::{Launch, Server};

/// Names an existing server for [`shared()`], e.g. `mysql://root:pw@127.0.0.1:3306/`.
pub const URL_VAR: &str = "CRAWLER_TEST_MYSQL_URL";

/// A MySQL server for tests: private, or the existing one named by [`URL_VAR`].
pub struct MariaDb {
    /// The server's url without a database; [`MariaDb::url`] sets the path.
    admin: Url,
    /// The private server process; `None` for a server named by [`URL_VAR`].
    server: Option<Server>,
}

impl MariaDb {
    /// Starts a private `mariadbd` on its own port, socket and copy of a fresh data directory,
    /// and waits until user `crawler` can log in over TCP. Panics with what is missing or
    /// the end of the server's error log when that fails.
    pub fn start() -> MariaDb {
        Self::start_with(Launch::default())
    }

    /// Like [`MariaDb::start`], with `launch` added to the server's command line (a Galera
    /// node's flags; see `galera.rs`).
    pub(crate) fn start_with(launch: Launch) -> MariaDb {
        let server = Server::start_with(launch);
        let admin = Url::parse(&server.url("")).expect("the private server's url is valid");
        MariaDb {
            admin,
            server: Some(server),
        }
    }

    /// `mysql://crawler:PASSWORD@127.0.0.1:PORT/DATABASE` (for a server named by
    /// [`URL_VAR`], that url with `DATABASE` as its path).
    pub fn url(&self, database: &str) -> String {
        let mut url = self.admin.clone();
        url.set_path(database);
        url.into()
    }

    /// Creates a database with a fresh random name and returns its url.
    pub async fn create_database(&self) -> String {
        let name = format!("crawler_test_{:016x}", rand::random::<u64>());
        let mut connection = self.connect().await;
        sqlx::raw_sql(&format!("CREATE DATABASE `{name}`"))
            .execute(&mut connection)
            .await
            .unwrap_or_else(|e| {
                panic!("cannot create database {name} on {}: {e}", self.redacted())
            });
        let _ = connection.close().await;
        self.url(&name)
    }

    /// Stops the server with SIGTERM and waits until it has exited; the data stays.
    pub fn stop(&mut self) {
        self.private("stop()").stop();
    }

    /// Starts the server again (stopping it first if needed) on the same port and data,
    /// and waits until it accepts a login.
    pub fn restart(&mut self) {
        self.private("restart()").restart();
    }

    /// Kills the server with SIGKILL, as a crash or a power cut would, and waits until it has
    /// exited; the data stays.
    pub fn kill(&mut self) {
        self.private("kill()").kill();
    }

    /// Sends `signal` to the private server: SIGSTOP freezes it (connections open, queries
    /// hang, nothing answers), SIGCONT thaws it.
    pub fn signal(&self, signal: i32) {
        self.server
            .as_ref()
            .expect("signal() needs a private server")
            .signal(signal);
    }

    /// The private server's process id, to read its CPU time (the scale benchmark); `None`
    /// for a server named by [`URL_VAR`] or while stopped.
    pub fn pid(&self) -> Option<u32> {
        self.server.as_ref().and_then(Server::pid)
    }

    /// Kills, from the server side, every connection of the url's user (`crawler`) but
    /// its own, and waits until they are gone. On the shared server that hits every test:
    /// fault tests use a server of their own.
    pub async fn kill_connections(&self) {
        let mut connection = self.connect().await;
        let victims = others(&mut connection).await;
        for id in &victims {
            // A connection may close on its own meanwhile: "unknown thread id" is fine.
            let _ = sqlx::raw_sql(&format!("KILL CONNECTION {id}"))
                .execute(&mut connection)
                .await;
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while others(&mut connection)
            .await
            .iter()
            .any(|id| victims.contains(id))
        {
            assert!(
                Instant::now() < deadline,
                "killed connections still listed after 10 s"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let _ = connection.close().await;
    }

    fn external(url: &str) -> MariaDb {
        let admin = Url::parse(url).unwrap_or_else(|e| panic!("{URL_VAR} is not a valid url: {e}"));
        MariaDb {
            admin,
            server: None,
        }
    }

    fn private(&mut self, what: &str) -> &mut Server {
        let Some(server) = self.server.as_mut() else {
            panic!("{what} is only available on a private server, not on {URL_VAR}")
        };
        server
    }

    /// A fresh connection: a pool would be tied to the runtime of the test that made it.
    async fn connect(&self) -> MySqlConnection {
        MySqlConnection::connect(&self.url(""))
            .await
            .unwrap_or_else(|e| {
                panic!(
                    "cannot connect to the test server at {}: {e}",
                    self.redacted()
                )
            })
    }

    fn redacted(&self) -> Url {
        let mut url = self.admin.clone();
        if url.password().is_some() {
            let _ = url.set_password(Some("***"));
        }
        url
    }
}

/// Drops the database that `url` names (one made by [`MariaDb::create_database`]).
pub async fn drop_database(url: &str) {
    let name = url.rsplit('/').next().unwrap_or_default().to_owned();
    let mut connection = MySqlConnection::connect(url).await.expect("connect");
    sqlx::raw_sql(&format!("DROP DATABASE `{name}`"))
        .execute(&mut connection)
        .await
        .expect("drop the database");
    let _ = connection.close().await;
}

/// The ids of the other connections of this connection's user.
async fn others(connection: &mut MySqlConnection) -> Vec<i64> {
    sqlx::query_scalar(
        r"
        SELECT ID FROM information_schema.PROCESSLIST
        WHERE USER = SUBSTRING_INDEX(USER(), '@', 1) AND ID <> CONNECTION_ID()
        ",
    )
    .fetch_all(connection)
    .await
    .unwrap_or_else(|e| panic!("cannot list connections: {e}"))
}

/// The test process's server, started on first use; or, when [`URL_VAR`] is set, that
/// server. Lives until the process exits; an exit hook then kills it and removes its data.
pub fn shared() -> &'static MariaDb {
    static SHARED: OnceLock<MariaDb> = OnceLock::new();
    SHARED.get_or_init(|| match std::env::var(URL_VAR) {
        Ok(url) if !url.is_empty() => MariaDb::external(&url),
        _ => MariaDb::start(),
    })
}
