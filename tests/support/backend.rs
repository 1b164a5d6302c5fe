//! A fresh, empty database per test, on either backend, so tests run in parallel.

use crawler_queue::{DatabaseUrl, Db, Queue, QueueConfig};
use tempfile::TempDir;

/// The two backends every queue and end-to-end test runs against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    MariaDb,
}

/// A database that exists for one test. A SQLite file lives in a temp dir removed on drop; a
/// MariaDB database is created on the shared test server (see `mariadb.rs`).
pub struct TestDb {
    pub url: DatabaseUrl,
    pub backend: Backend,
    _dir: Option<TempDir>,
}

impl Backend {
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
            Backend::MariaDb => {
                let url = crate::mariadb::shared().create_database().await;
                TestDb {
                    url: DatabaseUrl::new(url),
                    backend: self,
                    _dir: None,
                }
            }
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

/// Declares an async test body once and runs it as two tests, `sqlite` and `mariadb`:
/// `both_backends!(async fn name(backend: Backend) { … });`
#[macro_export]
macro_rules! both_backends {
    ($(#[$meta:meta])* async fn $name:ident($backend:ident : Backend $(,)?) $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            async fn body($backend: $crate::backend::Backend) $body

            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn sqlite() {
                body($crate::backend::Backend::Sqlite).await
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn mariadb() {
                body($crate::backend::Backend::MariaDb).await
            }
        }
    };
}
