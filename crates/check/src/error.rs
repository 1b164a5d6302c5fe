//! Why a [`Checker`](crate::Checker) could not be built: the one error type of the crate. A
//! URL's check never fails: a dead link is a [`Finding`](crate::Finding), not an error.

/// Why a [`Checker`](crate::Checker) could not be built.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("invalid check configuration: {0}")]
    InvalidConfig(&'static str),
    #[error("cannot build the http client")]
    Client(#[source] reqwest::Error),
}
