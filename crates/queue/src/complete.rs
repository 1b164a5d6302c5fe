//! Writing results back: a few statements per batch, each fenced by the claim token.
//!
//! A final result sets the verdict and marks the site done. A transient one (the finding says
//! the failure may pass) sends the site back to pending, due again after a backoff, until its
//! attempts reach the limit; then that result is final. Either way, only rows the claim still
//! owns are written, and the count of the others comes back as `stale`.
//!
//! A written row keeps its claim token: clearing it would move its `sites_token` index entry,
//! a fifth of the index writes of a site's claim and completion, for nothing, since every fence
//! also requires `state = 1` and a token is never reused.

use std::collections::BTreeMap;
use std::time::Duration;

use rand::Rng;

use crate::db::with_pool;
use crate::error::Error;
use crate::queue::{millis, Queue, Site};
use crate::retry::retry;
use crate::sql::{case_by_id, placeholders};
use crate::verdict::{Finding, Verdict};

/// Rows per statement at most: each row binds two parameters per column (under SQLite's
/// 32,766 and MySQL's 65,535), and the CASE lists stay short enough to evaluate cheaply.
const CHUNK: usize = 128;

/// The rows of a statement, padded to a power of two by repeating the last one, which
/// changes nothing (a CASE takes the first match; an IN list matches a row once). So a
/// statement has one of 8 shapes, not one per chunk length: each connection prepares it once
/// and keeps it in its statement cache, where varying shapes would be prepared again and
/// again, and would fill every connection's cache with large statements.
fn padded<T: Copy>(chunk: &[T]) -> Vec<T> {
    let mut rows = chunk.to_vec();
    if let Some(&last) = chunk.last() {
        rows.resize(chunk.len().next_power_of_two(), last);
    }
    rows
}

/// A site's check result, to write back.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub site: Site,
    pub finding: Finding,
}

/// What a write-back did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Completed {
    /// Sites that got their verdict.
    pub done: u64,
    /// Sites sent back to pending to be checked again later.
    pub retrying: u64,
    /// Results dropped because their claim had lost the site (lease expired or reaped).
    pub stale: u64,
}

impl std::ops::AddAssign for Completed {
    fn add_assign(&mut self, other: Completed) {
        self.done += other.done;
        self.retrying += other.retrying;
        self.stale += other.stale;
    }
}

/// One claim's outcomes: the final ones, and the retries with their delay in milliseconds.
type Split<'a> = (Vec<&'a Outcome>, Vec<(&'a Outcome, i64)>);

impl Queue {
    /// Writes `outcomes` back; they may come from several claims.
    pub async fn complete(&self, outcomes: &[Outcome]) -> Result<Completed, Error> {
        let mut by_token: BTreeMap<i64, Split> = BTreeMap::new();
        for outcome in outcomes {
            let (finals, retries) = by_token.entry(outcome.site.token).or_default();
            match self.retry_delay(outcome) {
                Some(delay) => retries.push((outcome, millis(delay))),
                None => finals.push(outcome),
            }
        }
        let mut completed = Completed::default();
        for (token, (finals, retries)) in by_token {
            for chunk in finals.chunks(CHUNK) {
                let written = self.write_finals(token, chunk).await?;
                completed.done += written;
                completed.stale += chunk.len() as u64 - written;
            }
            for chunk in retries.chunks(CHUNK) {
                let written = self.write_retries(token, chunk).await?;
                completed.retrying += written;
                completed.stale += chunk.len() as u64 - written;
            }
        }
        Ok(completed)
    }

    /// When the site should be checked again, or `None` if this result is final.
    fn retry_delay(&self, outcome: &Outcome) -> Option<Duration> {
        let finding = &outcome.finding;
        let attempts = outcome.site.tries.max(0) as u32 + 1;
        if !(finding.transient || finding.retry_after.is_some())
            || attempts >= self.config.max_attempts
        {
            return None;
        }
        let backoff = self
            .config
            .retry_delay
            .saturating_mul(1 << (attempts - 1).min(16));
        let jittered = backoff.mul_f64(rand::rng().random_range(0.8..1.2));
        Some(jittered.max(finding.retry_after.unwrap_or_default()))
    }

    async fn write_finals(&self, token: i64, chunk: &[&Outcome]) -> Result<u64, Error> {
        let now = self.now_expr();
        let chunk = padded(chunk);
        let case = case_by_id(chunk.len());
        // Every column reads only bound values, never another column this statement changes:
        // MySQL evaluates SET left to right with the new values, SQLite with the old ones.
        let sql = format!(
            "UPDATE {} SET state = 2, owner = NULL, expires_at = NULL, \
             checked_at = {now}, next_check_at = {now}, verdict = {case}, http_status = {case}, \
             error_kind = {case}, final_url = {case}, redirects = {case}, latency_ms = {case}, \
             tries = 0, attempts = {case}, consecutive_failures = {case}, \
             last_alive_at = CASE WHEN {case} = 1 THEN {now} ELSE last_alive_at END \
             WHERE claim_token = ? AND state = 1 AND id IN ({})",
            self.sql().sites_by_id,
            placeholders(chunk.len())
        );
        // Binds one `CASE id WHEN ? THEN ?` list: the value of `$value` for each outcome `$o`.
        macro_rules! column {
            ($query:ident, $o:ident => $value:expr) => {
                for $o in &chunk {
                    $query = $query.bind($o.site.id).bind($value);
                }
            };
        }
        let written = with_pool!(&self.db, pool => {
            retry("complete", || {
                let mut q = sqlx::query(&sql);
                column!(q, o => o.finding.verdict.as_str());
                column!(q, o => o.finding.status.map(i32::from));
                column!(q, o => o.finding.error_kind.map(|k| k.as_str()));
                column!(q, o => o.finding.final_url.as_deref());
                column!(q, o => o.finding.redirects as i32);
                column!(q, o => millis(o.finding.latency).min(i32::MAX.into()) as i32);
                column!(q, o => o.site.tries + 1);
                column!(q, o => if o.finding.verdict == Verdict::Alive {
                    0
                } else {
                    o.site.consecutive_failures + 1
                });
                column!(q, o => i32::from(o.finding.verdict == Verdict::Alive));
                q = q.bind(token);
                for o in &chunk {
                    q = q.bind(o.site.id);
                }
                q.execute(pool)
            })
            .await?
            .rows_affected()
        });
        Ok(written)
    }

    async fn write_retries(&self, token: i64, chunk: &[(&Outcome, i64)]) -> Result<u64, Error> {
        let now = self.now_expr();
        let chunk = padded(chunk);
        let case = case_by_id(chunk.len());
        let sql = format!(
            "UPDATE {} SET state = 0, owner = NULL, expires_at = NULL, \
             tries = {case}, next_check_at = {now} + {case} \
             WHERE claim_token = ? AND state = 1 AND id IN ({})",
            self.sql().sites_by_id,
            placeholders(chunk.len())
        );
        let written = with_pool!(&self.db, pool => {
            retry("complete", || {
                let mut q = sqlx::query(&sql);
                for (o, _) in &chunk {
                    q = q.bind(o.site.id).bind(o.site.tries + 1);
                }
                for (o, delay) in &chunk {
                    q = q.bind(o.site.id).bind(delay);
                }
                q = q.bind(token);
                for (o, _) in &chunk {
                    q = q.bind(o.site.id);
                }
                q.execute(pool)
            })
            .await?
            .rows_affected()
        });
        Ok(written)
    }
}
