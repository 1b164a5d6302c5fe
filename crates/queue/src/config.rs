//! How the queue behaves, as every binary configures it (where the database is, is
//! [`crate::database_url`]'s). The options that set it are `crawler-cli`'s: this crate parses no
//! command line.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// Defined with the backoff, which it bounds; named here too, where `complete.rs` and the
/// confirm policy take it from.
pub use crate::backoff::MAX_DELAY;

/// How a worker claims a batch on MySQL/MariaDB (SQLite has one writer at a time, and always
/// uses update-then-select).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ClaimMethod {
    /// Update-then-select: an autocommit `UPDATE` stamps a fresh token on due rows, then a
    /// `SELECT` by that token reads the batch. On MySQL the rows are first picked from the
    /// `sites_due` index by a plain read that locks nothing, and the `UPDATE` stamps those of
    /// them still pending and due, by primary key (`sql::mark`).
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
    pub confirm: Option<Confirm>,
}

/// [`QueueConfig::max_attempts`] by default (`--attempts`).
pub const DEFAULT_MAX_ATTEMPTS: u32 = 2;
/// [`QueueConfig::retry_delay`] by default (`--retry-delay`).
pub const DEFAULT_RETRY_DELAY: Duration = Duration::from_secs(5);
/// [`QueueConfig::defer_horizon`] by default (`--defer-horizon`), which the checker's
/// `CheckConfig` shares (so it is the verdict vocabulary's).
pub use crawler_verdict::DEFER_HORIZON as DEFAULT_DEFER_HORIZON;

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

/// `--confirm N:SPAN`, dead confirmed over time: what `confirm.rs` applies.
/// The most results a policy may ask for: more would recheck a dead link for ever.
const MAX_RESULTS: u32 = 100;

/// `N:SPAN`: a dead site is confirmed after N dead results in a row spanning SPAN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Confirm {
    pub results: u32,
    pub span: Duration,
}

impl Confirm {
    /// The time between two checks of a dead site not confirmed yet: SPAN/N.
    pub fn interval(&self) -> Duration {
        self.span / self.results
    }
}

impl fmt::Display for Confirm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}",
            self.results,
            humantime::format_duration(self.span)
        )
    }
}

impl FromStr for Confirm {
    type Err = String;

    fn from_str(s: &str) -> Result<Confirm, String> {
        let (n, span) = s
            .split_once(':')
            .ok_or_else(|| format!("{s:?} is not N:SPAN (e.g. 3:3d)"))?;
        let results: u32 = n
            .trim()
            .parse()
            .map_err(|_| format!("{n:?} is not a number of results (N of N:SPAN)"))?;
        if !(1..=MAX_RESULTS).contains(&results) {
            return Err(format!(
                "N of N:SPAN is between 1 and {MAX_RESULTS}, not {results}"
            ));
        }
        let span = humantime::parse_duration(span.trim())
            .map_err(|e| format!("{span:?} is not a duration (SPAN of N:SPAN): {e}"))?;
        if span < Duration::from_secs(1) {
            return Err("SPAN of N:SPAN is at least 1s".into());
        }
        if span > MAX_DELAY {
            return Err(format!(
                "SPAN of N:SPAN is at most {}",
                humantime::format_duration(MAX_DELAY)
            ));
        }
        Ok(Confirm { results, span })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_policy_parses_and_its_interval_is_span_over_n() {
        let policy: Confirm = "3:3d".parse().unwrap();
        assert_eq!(policy.results, 3);
        assert_eq!(policy.span, Duration::from_secs(3 * 86_400));
        assert_eq!(policy.interval(), Duration::from_secs(86_400));
        assert_eq!(policy.to_string(), "3:3days");
        assert_eq!(
            " 2 : 90s ".parse::<Confirm>().unwrap().interval(),
            Duration::from_secs(45)
        );
    }

    #[test]
    fn a_bad_policy_says_which_part_is_wrong() {
        for (text, says) in [
            ("3", "not N:SPAN"),
            ("x:3d", "not a number"),
            ("0:3d", "between 1 and 100"),
            ("101:3d", "between 1 and 100"),
            ("3:soon", "not a duration"),
            ("3:0s", "at least 1s"),
            ("3:1000d", "at most"),
        ] {
            let error = text.parse::<Confirm>().unwrap_err();
            assert!(error.contains(says), "{text}: {error}");
        }
    }
}
