//! Why a worker could not start ([`Error`]): the one error type of the crate. A site's check
//! never fails (a dead link is a finding), and the database's errors while running are
//! retried or logged where they happen.

/// Why a worker could not start.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Queue(#[from] crawler_queue::Error),
    #[error(transparent)]
    Check(#[from] crawler_check::CheckError),
    #[error("cannot make the client of --archive-api")]
    Archive(#[source] reqwest::Error),
    #[error("cannot serve --metrics on {addr}")]
    Metrics {
        addr: std::net::SocketAddr,
        #[source]
        source: std::io::Error,
    },
}
