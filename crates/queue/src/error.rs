//! The queue's error type.

use crate::database_url::BadDatabaseUrl;
use crate::verdict::UnknownName;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The URL cannot work, whatever the network does: refused before connecting.
    #[error(transparent)]
    DatabaseUrl(#[from] BadDatabaseUrl),
    /// The first connection failed. `url` has no password.
    #[error("cannot connect to the database at {url}")]
    Connect {
        url: String,
        #[source]
        source: sqlx::Error,
    },
    /// A SQLite database to read is not there (see [`crate::db::Missing::Refuse`]).
    #[error("there is no database at {path}: check --database-url, or run crawler-seed first")]
    NoDatabase { path: String },
    #[error("cannot apply the database migrations")]
    Migrate(#[source] sqlx::migrate::MigrateError),
    /// A query failed, after the retries that transient failures get (see `retry.rs`).
    #[error("database query failed")]
    Query(#[from] sqlx::Error),
    /// A stored verdict or error kind this version does not know (a newer version wrote it).
    #[error("the database holds a value this version does not understand")]
    Unknown(#[from] UnknownName),
}

impl Error {
    /// Whether waiting and trying again may succeed: the database is restarting, a connection
    /// was lost, a lock could not be had. Workers keep what they hold and retry these.
    pub fn is_transient(&self) -> bool {
        match self {
            Error::Query(e) => crate::retry::is_transient(e),
            Error::Connect { source, .. } => crate::retry::is_transient(source),
            _ => false,
        }
    }
}
