//! Verdict history for continuous monitoring: `verdict_changes` holds the verdicts a site had
//! before its current one, one row per change, not per check, so that `sites` stays one row
//! per URL however many rounds run, and the history grows with the changes alone
//! (docs/scale.md, section 4). The current verdict is the site's own row, with the time it began
//! (`sites.verdict_since`): a site's first verdict, and every check that finds what the last one
//! found, cost the history nothing.
//!
//! A verdict is recorded when it is replaced, by the statement that replaces it, just before:
//! a final write-back records the verdicts of the sites whose new verdict differs from the one
//! they had when claimed (`Site::last_verdict`), read from the rows its claim still holds; a
//! host decided at once records those of the host's pending sites it is about to decide.
//! Each row records the verdict with the time it began and the verdict it had replaced, unless
//! the site's latest recorded change is that verdict already, which makes it idempotent: a
//! retry, or a second write-back of the same rows, records nothing more. So recording before
//! the write is never false, whatever follows: the site had that verdict, and if the write
//! fails, the site still has it and the next write records nothing twice. And a failure to
//! record (after the retries) fails the write, which is tried again: no change goes
//! unrecorded. What `crawler-report --changed-since` and the notifier read needs none of this:
//! the current verdict's start and the one it replaced are columns of the site's own row
//! (`verdict_since`, `previous_verdict`), written by the statement that writes the verdict
//! (`changes.rs`). Rows written before
//! `verdict_since` existed recorded every verdict, the current one included: the reader shows
//! a current verdict only when the latest recorded change is not that verdict. Pruning drops
//! changes older than a given age; the current verdict is in `sites`, never pruned. The view
//! [`History`] ([`Queue::history`]) writes and prunes; a site's changes are read through
//! [`Reports`](crate::Reports) (`report/history.rs`).

use std::time::Duration;

use crate::db::{with_pool, Db};
use crate::error::Error;
use crate::queue::{millis, Queue};
use crate::retry::retry;
use crate::sql::{cached, owned_rows, owned_rows_binds, sites_using, SitesIndex};
use crate::verdict::Verdict;

/// Rows one pruning statement deletes at most: a large prune never holds one long transaction.
const PRUNE_CHUNK: i64 = 10_000;

/// The columns a replaced verdict is recorded with, read from its `sites` row.
const REPLACED: &str = "INSERT INTO verdict_changes \
                        (site_id, changed_at, verdict, http_status, error_kind, previous_verdict) \
                        SELECT id, COALESCE(verdict_since, checked_at), verdict, http_status, \
                        error_kind, previous_verdict";

/// Which `sites` rows have a verdict to record: one, not their latest recorded change.
const UNRECORDED: &str = "verdict IS NOT NULL AND checked_at IS NOT NULL AND COALESCE(\
                          (SELECT v.verdict FROM verdict_changes AS v WHERE v.site_id = sites.id \
                          ORDER BY v.id DESC LIMIT 1), '') <> verdict";

/// The history of verdicts: recording the ones replaced (with the write-back, or a host's
/// decision) and pruning the old ones. Obtained from [`Queue::history`]; it borrows the queue's
/// database handle.
#[derive(Clone, Copy, Debug)]
pub struct History<'q> {
    db: &'q Db,
}

impl Queue {
    /// The history of verdicts ([`History`]).
    pub fn history(&self) -> History<'_> {
        History { db: &self.db }
    }
}

impl History<'_> {
    /// Records the verdicts of `rows` (each a site's id and the token of the claim that holds
    /// it), sites about to get another verdict (their result differs from the verdict they had
    /// when claimed).
    pub(crate) async fn record_replaced(&self, rows: &[(i64, i64)]) -> Result<(), sqlx::Error> {
        // Through the primary key, each row fenced by its own claim's token.
        let sql = cached!(self.db.dialect(), rows.len(), |dialect, n| {
            format!(
                "{REPLACED} FROM {} WHERE {} AND {UNRECORDED}",
                sites_using(dialect, SitesIndex::Primary),
                owned_rows(dialect, "{claimed}", n)
            )
        });
        with_pool!(self.db, pool => {
            retry("record verdict changes", || {
                let mut q = sqlx::query(&sql);
                for value in owned_rows_binds(rows.iter().copied()) {
                    q = q.bind(value);
                }
                q.execute(pool)
            })
            .await
            .map(drop)
        })
    }

    /// Records the verdicts of the pending sites of `host` under `prefix` (in the partitions
    /// `parts_token` holds) that a host decision is about to replace with `verdict`.
    pub(crate) async fn record_replaced_of_host(
        &self,
        parts_token: i64,
        host: &str,
        prefix: &str,
        verdict: Verdict,
    ) -> Result<(), Error> {
        let sql = cached!(self.db.dialect(), |dialect| {
            format!(
                "{REPLACED} FROM {} WHERE host = ? AND SUBSTR(url, 1, ?) = ? AND state = {{pending}} \
                 AND part IN (SELECT id FROM parts WHERE token = ?) AND verdict <> ? AND {UNRECORDED}",
                sites_using(dialect, SitesIndex::Host)
            )
        });
        with_pool!(self.db, pool => {
            retry("record verdict changes", || {
                sqlx::query(sql)
                    .bind(host)
                    .bind(prefix.len() as i32)
                    .bind(prefix)
                    .bind(parts_token)
                    .bind(verdict.as_str())
                    .execute(pool)
            })
            .await?;
        });
        Ok(())
    }

    /// Deletes the verdict changes recorded longer ago than `older_than`; returns how many. A
    /// site's current verdict is its `sites` row, which stays.
    pub async fn prune(&self, older_than: Duration) -> Result<u64, Error> {
        // The inner SELECT is wrapped in a derived table: MySQL refuses both `LIMIT` in an
        // `IN` subquery and a subquery on the table a `DELETE` deletes from.
        let sql = cached!(
            self.db.dialect(),
            "DELETE FROM verdict_changes WHERE id IN (SELECT id FROM ( \
             SELECT o.id FROM verdict_changes AS o WHERE o.changed_at < {now} - ? \
             ORDER BY o.changed_at LIMIT ?) AS old)"
        );
        let mut pruned = 0;
        loop {
            let deleted = with_pool!(self.db, pool => {
                retry("prune verdict changes", || {
                    sqlx::query(sql).bind(millis(older_than)).bind(PRUNE_CHUNK).execute(pool)
                })
                .await?
                .rows_affected()
            });
            pruned += deleted;
            if deleted < PRUNE_CHUNK as u64 {
                return Ok(pruned);
            }
        }
    }
}
