//! Configuration every binary shares: where the database is, and how the queue behaves. (The
//! options that set them are `crawler-cli`'s: this crate parses no command line.)

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// The default database: a SQLite file in the working directory, so that a newcomer gets a full
/// crawl with no server.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://crawler.db";

/// A database URL. It may hold a password, so it never prints: `Debug` and `Display` show
/// [`DatabaseUrl::redacted`], and only [`DatabaseUrl::expose`] gives the real text.
#[derive(Clone, PartialEq, Eq)]
pub struct DatabaseUrl(String);

impl DatabaseUrl {
    pub fn new(url: impl Into<String>) -> Self {
        DatabaseUrl(url.into())
    }

    /// The URL with its password, for connecting only.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The URL without password or query, fit for logs and errors:
    /// `mysql://crawler@db.example:3306/crawler`.
    pub fn redacted(&self) -> String {
        match url::Url::parse(&self.0) {
            Ok(mut url) if url.has_host() => {
                let _ = url.set_password(None);
                url.set_query(None);
                url.to_string()
            }
            // sqlite://file.db has no host: show the path, which is no secret.
            Ok(url) if url.scheme() == "sqlite" => self.0.split('?').next().unwrap_or("").into(),
            _ => "<unparsable database url>".into(),
        }
    }
}

impl fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DatabaseUrl({})", self.redacted())
    }
}

impl fmt::Display for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

impl FromStr for DatabaseUrl {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(DatabaseUrl(s.to_owned()))
    }
}

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

/// The longest any delay computed from a server's answer may be: a `Retry-After` (in seconds or
/// as an HTTP date) and the retry backoff are capped at this, with saturating arithmetic, so no
/// answer can push a time past what the database stores. Thirty days: past that, a site is
/// simply checked again by the next round.
pub const MAX_DELAY: Duration = Duration::from_secs(30 * 24 * 3600);

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

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig {
            claim: ClaimMethod::default(),
            max_attempts: 2,
            retry_delay: Duration::from_secs(5),
            defer_horizon: Duration::from_secs(60),
            confirm: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacted_url_has_no_password() {
        let url = DatabaseUrl::new("mysql://crawler:s3cret@db.example:3306/crawler?ssl-mode=off");
        assert_eq!(url.redacted(), "mysql://crawler@db.example:3306/crawler");
        assert!(!format!("{url:?} {url}").contains("s3cret"));
        let url =
            DatabaseUrl::new("postgresql://crawler:s3cret@db.example/crawler?password=s3cret");
        assert_eq!(url.redacted(), "postgresql://crawler@db.example/crawler");
        assert!(!format!("{url:?} {url}").contains("s3cret"));
    }

    #[test]
    fn sqlite_url_shows_its_path() {
        assert_eq!(
            DatabaseUrl::new("sqlite://crawler.db").redacted(),
            "sqlite://crawler.db"
        );
    }
}
