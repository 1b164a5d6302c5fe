//! A fresh, empty database per test, on any backend, so tests run in parallel; and private
//! servers of either server backend for the fault tests.

use crawler_queue::{DatabaseUrl, Db, Queue, QueueConfig};
use tempfile::TempDir;

/// The backends every queue and end-to-end test runs against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    MariaDb,
    Postgres,
}

/// A database that exists for one test. A SQLite file lives in a temp dir removed on drop; a
/// MariaDB or PostgreSQL database is created on the process's shared test server of that kind
/// (see `mariadb.rs`, `postgres.rs`).
pub struct TestDb {
    pub url: DatabaseUrl,
    pub backend: Backend,
    _dir: Option<TempDir>,
}

impl Backend {
    /// The backend a test named `name` runs on (`on_every_backend!`): `sqlite`, `mariadb` or
    /// `postgres`.
    pub fn named(name: &str) -> Backend {
        match name {
            "sqlite" => Backend::Sqlite,
            "mariadb" => Backend::MariaDb,
            "postgres" => Backend::Postgres,
            other => panic!("no backend is named {other}: sqlite, mariadb or postgres"),
        }
    }

    pub async fn fresh(self) -> TestDb {
        match self {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().expect("create a temp dir");
                let url = format!("sqlite://{}", dir.path().join("crawler.db").display());
                TestDb {
                    url: DatabaseUrl::new(url),
                    backend: self,
                    _dir: Some(dir),
                }
            }
            Backend::MariaDb | Backend::Postgres => {
                let url = match self {
                    Backend::Postgres => crate::postgres::shared().create_database().await,
                    _ => crate::mariadb::shared().create_database().await,
                };
                TestDb {
                    url: DatabaseUrl::new(url),
                    backend: self,
                    _dir: None,
                }
            }
        }
    }
}

/// A private server of a test's own, MariaDB or PostgreSQL, which the test may stop, restart
/// or cut off (the fault tests).
pub enum PrivateServer {
    MariaDb(crate::mariadb::MariaDb),
    Postgres(crate::postgres::Postgres),
}

impl PrivateServer {
    /// Starts one of `backend`'s kind; SQLite has no server.
    pub fn start(backend: Backend) -> PrivateServer {
        match backend {
            Backend::MariaDb => PrivateServer::MariaDb(crate::mariadb::MariaDb::start()),
            Backend::Postgres => PrivateServer::Postgres(crate::postgres::Postgres::start()),
            Backend::Sqlite => panic!("SQLite has no server to start"),
        }
    }

    pub fn backend(&self) -> Backend {
        match self {
            PrivateServer::MariaDb(_) => Backend::MariaDb,
            PrivateServer::Postgres(_) => Backend::Postgres,
        }
    }

    /// A new database on it.
    pub async fn fresh(&self) -> TestDb {
        let url = match self {
            PrivateServer::MariaDb(server) => server.create_database().await,
            PrivateServer::Postgres(server) => server.create_database().await,
        };
        TestDb::external(DatabaseUrl::new(url), self.backend())
    }

    pub fn stop(&mut self) {
        match self {
            PrivateServer::MariaDb(server) => server.stop(),
            PrivateServer::Postgres(server) => server.stop(),
        }
    }

    pub fn restart(&mut self) {
        match self {
            PrivateServer::MariaDb(server) => server.restart(),
            PrivateServer::Postgres(server) => server.restart(),
        }
    }

    /// Kills every client connection from the server side.
    pub async fn kill_connections(&self) {
        match self {
            PrivateServer::MariaDb(server) => server.kill_connections().await,
            PrivateServer::Postgres(server) => server.kill_connections().await,
        }
    }
}

impl TestDb {
    /// A database someone else made (a private server's, in the fault tests).
    pub fn external(url: DatabaseUrl, backend: Backend) -> TestDb {
        TestDb {
            url,
            backend,
            _dir: None,
        }
    }

    /// Connects (applying migrations) with `config`.
    pub async fn queue_with(&self, config: QueueConfig) -> Queue {
        let db = Db::connect(&self.url, 32)
            .await
            .expect("connect to the test database");
        Queue::new(db, config)
    }

    pub async fn queue(&self) -> Queue {
        self.queue_with(QueueConfig::default()).await
    }
}

/// Declares an async test body once and runs it as a test per backend, `sqlite`, `mariadb`
/// and `postgres`: `on_every_backend!(async fn name(backend: Backend) { … });`. A test that
/// needs a database server (to restart it, to kill its connections) names the backends it
/// runs on: `on_every_backend!(only [mariadb, postgres] async fn name(backend: Backend) { … });`.
#[macro_export]
macro_rules! on_every_backend {
    ($(#[$meta:meta])* async fn $name:ident($backend:ident : Backend $(,)?) $body:block) => {
        $crate::on_every_backend!(
            only [sqlite, mariadb, postgres] $(#[$meta])* async fn $name($backend: Backend) $body
        );
    };
    (only [$($on:ident),+ $(,)?] $(#[$meta:meta])*
     async fn $name:ident($backend:ident : Backend $(,)?) $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            async fn body($backend: $crate::backend::Backend) $body

            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $on() {
                    body($crate::backend::Backend::named(stringify!($on))).await
                }
            )+
        }
    };
}
