//! The queue's error type, and how any error prints on one line.

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

/// An error and its causes on one line: `cannot connect to the database at …: refused`.
/// A cause whose text its parent already printed (sqlx's errors do that) is not repeated.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.ends_with(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("outer: {0}")]
    struct Repeats(#[source] std::io::Error);

    #[derive(Debug, thiserror::Error)]
    #[error("cannot open")]
    struct Adds(#[source] std::io::Error);

    #[test]
    fn a_cause_already_printed_is_not_repeated() {
        let io = || std::io::Error::other("refused");
        assert_eq!(error_chain(&Repeats(io())), "outer: refused");
        assert_eq!(error_chain(&Adds(io())), "cannot open: refused");
    }
}
