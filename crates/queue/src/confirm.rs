//! Dead confirmed over time: the `--confirm N:SPAN` policy (InternetArchiveBot calls a link dead
//! after three dead results at least three days apart; an alive or inconclusive result starts
//! over).
//!
//! Every final write-back keeps a site's streak, policy or not (`complete.rs`): `dead_streak`
//! counts its dead results in a row and `dead_since` is when the first of them was stored; any
//! other verdict (alive, blocked, unreachable, error) clears both. Under a policy, a dead site
//! that is not confirmed yet gets `confirm_check_at`, one interval (SPAN/N) later; the reaper
//! makes it due again then ([`Queue::reap`]), so it is checked again whether or not the crawl
//! rechecks anything else. A write-back whose site has at least N dead results in a row over at
//! least SPAN (from the streak's first result to this one, by the database's clock) stamps
//! `confirmed_at` and schedules nothing more. With checks SPAN/N apart that is the (N+1)th
//! result: the first, then N rechecks, so the streak spans SPAN.
//!
//! The policy is the worker's (give every worker the same one); the report only reads
//! `confirmed_at`, so `crawler-report --dead --confirmed` needs no flag of its own.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::db::with_pool;
use crate::queue::{millis, Queue};
use crate::retry::retry;
use crate::sql::{cached, owned_ids, Statements};
use crate::verdict::Verdict;

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
        if span > crate::config::MAX_DELAY {
            return Err(format!(
                "SPAN of N:SPAN is at most {}",
                humantime::format_duration(crate::config::MAX_DELAY)
            ));
        }
        Ok(Confirm { results, span })
    }
}

impl Queue {
    /// Stamps `confirmed_at` on the sites of `ids` that this claim (`token`) just wrote dead
    /// and whose streak now meets the policy; returns how many.
    pub(crate) async fn confirm_dead(
        &self,
        policy: Confirm,
        token: i64,
        ids: &[i64],
    ) -> Result<u64, sqlx::Error> {
        if ids.is_empty() {
            return Ok(0);
        }
        let sql = cached!(self.db.dialect(), ids.len(), |dialect, n| {
            format!(
                "UPDATE {} SET confirmed_at = {{now}}, confirm_check_at = NULL \
                 WHERE {} AND verdict = ? AND confirmed_at IS NULL \
                 AND dead_streak >= ? AND {{now}} - dead_since >= ?",
                Statements::get(dialect).sites_by_id,
                owned_ids(dialect, "{done}", n)
            )
        });
        let confirmed = with_pool!(&self.db, pool => {
            retry("confirm dead sites", || {
                let mut q = sqlx::query(&sql).bind(token);
                for id in ids {
                    q = q.bind(id);
                }
                q.bind(Verdict::Dead.as_str())
                    .bind(i64::from(policy.results))
                    .bind(millis(policy.span))
                    .execute(pool)
            })
            .await?
            .rows_affected()
        });
        Ok(confirmed)
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
