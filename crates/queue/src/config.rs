//! How the queue behaves, as every binary configures it (where the database is, is
//! [`crate::database_url`]'s). The options that set it are `crawler-cli`'s: this crate parses no
//! command line.

use std::time::Duration;

/// Defined with the backoff, which it bounds; named here too, where `complete.rs` and
/// `confirm.rs` take it from.
pub use crate::backoff::MAX_DELAY;

/// How a worker claims a batch on MySQL/MariaDB (SQLite has one writer at a time, and always
/// uses update-then-select).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ClaimMethod {
    /// One autocommit `UPDATE … ORDER BY … LIMIT n` stamps a fresh token, then a `SELECT` by
    /// that token reads the batch. Concurrent claimers wait for each other's row locks.
    #[default]
    UpdateThenSelect,
    /// `SELECT … FOR UPDATE SKIP LOCKED`, then `UPDATE … WHERE id IN (…)`, in one
    /// transaction: concurrent claimers skip each other's rows instead of waiting.
    SkipLocked,
}

/// How the queue claims, and treats transient outcomes.
#[derive(Clone, Debug)]
pub struct QueueConfig {
    pub claim: ClaimMethod,
    /// Checks of one site, each ending in a transient failure, before its verdict is final.
    pub max_attempts: u32,
    /// The wait before the second check of a site whose first ended in a transient failure; it
    /// doubles for each further one, with ±20 % jitter.
    pub retry_delay: Duration,
    /// A site the server (or the backoff) defers further than this is not sent back to
    /// pending: its current result becomes its verdict now, and the time the server allows is
    /// kept as its `next_check_at`. So `--drain` ends once every site has a verdict, deferred
    /// ones included, instead of waiting for a far `Retry-After`.
    pub defer_horizon: Duration,
    /// `--confirm N:SPAN`: dead sites are checked again every SPAN/N until confirmed
    /// (`confirm.rs`); none: a dead verdict is checked again only by a recheck.
    pub confirm: Option<crate::confirm::Confirm>,
}

/// [`QueueConfig::max_attempts`] by default (`--attempts`).
pub const DEFAULT_MAX_ATTEMPTS: u32 = 2;
/// [`QueueConfig::retry_delay`] by default (`--retry-delay`).
pub const DEFAULT_RETRY_DELAY: Duration = Duration::from_secs(5);
/// [`QueueConfig::defer_horizon`] by default (`--defer-horizon`), which the checker's
/// `CheckConfig` shares.
pub const DEFAULT_DEFER_HORIZON: Duration = Duration::from_secs(60);

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig {
            claim: ClaimMethod::default(),
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            retry_delay: DEFAULT_RETRY_DELAY,
            defer_horizon: DEFAULT_DEFER_HORIZON,
            confirm: None,
        }
    }
}
