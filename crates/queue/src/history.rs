//! Verdict history for continuous monitoring: `verdict_changes` gets a row only when a site's
//! verdict changes, not per check, so that `sites` stays one row per URL however many rounds
//! run, and the history grows with the changes alone (docs/scale.md, section 4).
//!
//! A final write-back records the changes of the rows it wrote, right after its fenced
//! `UPDATE`: the rows its claim token completed whose verdict differs from the site's latest
//! change. It asks only about the sites whose new verdict differs from the one they had when
//! claimed (`Site::last_verdict`), so a recheck that finds the same verdict costs the history
//! nothing; the price is that a change whose recording failed (a database error after the
//! retries, logged) is recorded only at the site's next change, not at its next check. Comparing with the history rather than with the verdict the `UPDATE` overwrote makes
//! the statement idempotent: a retry, or a second write-back of the same rows, finds the
//! change already recorded. Pruning drops changes older than a given age, but never a site's
//! latest one, which later checks compare with. A site's changes are read through [`Reports`].

use std::time::Duration;

use crate::db::with_pool;
use crate::error::Error;
use crate::queue::{millis, Queue};
use crate::report::Reports;
use crate::retry::retry;
use crate::sql::{cached, owned_ids, sites_using, SitesIndex, Statements};

/// Rows one pruning statement deletes at most: a large prune never holds one long transaction.
const PRUNE_CHUNK: i64 = 10_000;

/// One change of a site's verdict.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct VerdictChange {
    /// When the check that found the new verdict ran, Unix milliseconds.
    pub changed_at: i64,
    pub verdict: String,
    pub http_status: Option<i32>,
    pub error_kind: Option<String>,
}

/// The latest verdict recorded for the `sites` row at hand.
const LATEST: &str = "(SELECT v.verdict FROM verdict_changes AS v WHERE v.site_id = sites.id \
                      ORDER BY v.id DESC LIMIT 1)";

impl Queue {
    /// Records the verdict changes among `ids`, the rows claim `token` has just completed (those
    /// whose verdict changed since their claim). Best effort: the write-back has stored the
    /// verdicts already, so a failure is logged, never returned; the history then misses that
    /// change until the site's verdict changes again.
    pub(crate) async fn record_verdict_changes(&self, token: i64, ids: &[i64]) {
        // Through the primary key: the token alone would have MariaDB scan `sites_token`.
        let sql = cached!(self.db.dialect(), ids.len(), |dialect, n| {
            format!(
                "INSERT INTO verdict_changes (site_id, changed_at, verdict, http_status, error_kind) \
                 SELECT id, checked_at, verdict, http_status, error_kind FROM {} \
                 WHERE {} AND COALESCE({LATEST}, '') <> verdict",
                Statements::get(dialect).sites_by_id,
                owned_ids(dialect, "{done}", n)
            )
        });
        let recorded: Result<(), sqlx::Error> = with_pool!(&self.db, pool => {
            retry("record verdict changes", || {
                let mut q = sqlx::query(&sql).bind(token);
                for id in ids {
                    q = q.bind(id);
                }
                q.execute(pool)
            })
            .await
            .map(drop)
        });
        if let Err(error) = recorded {
            tracing::warn!(%error, "cannot record verdict changes; the history misses them");
        }
    }

    /// Records the verdict changes of every row claim `token` completed (a host decided at
    /// once: `Queue::decide_host`), through the `sites_token` index.
    pub(crate) async fn record_verdict_changes_of(&self, token: i64) {
        let sql = cached!(self.db.dialect(), |dialect| {
            format!(
                "INSERT INTO verdict_changes (site_id, changed_at, verdict, http_status, error_kind) \
                 SELECT id, checked_at, verdict, http_status, error_kind FROM {} \
                 WHERE claim_token = ? AND state = {{done}} AND COALESCE({LATEST}, '') <> verdict",
                sites_using(dialect, SitesIndex::Token)
            )
        });
        let recorded: Result<(), sqlx::Error> = with_pool!(&self.db, pool => {
            retry("record verdict changes", || sqlx::query(sql).bind(token).execute(pool))
                .await
                .map(drop)
        });
        if let Err(error) = recorded {
            tracing::warn!(%error, "cannot record verdict changes; the history misses them");
        }
    }

    /// Deletes the verdict changes recorded longer ago than `older_than`, except each site's
    /// latest one; returns how many.
    pub async fn prune_verdict_changes(&self, older_than: Duration) -> Result<u64, Error> {
        // The inner SELECT is wrapped in a derived table: MySQL refuses both `LIMIT` in an
        // `IN` subquery and a subquery on the table a `DELETE` deletes from.
        let sql = cached!(self.db.dialect(), "DELETE FROM verdict_changes WHERE id IN (SELECT id FROM ( \
             SELECT o.id FROM verdict_changes AS o WHERE o.changed_at < {now} - ? \
             AND EXISTS (SELECT 1 FROM verdict_changes AS n WHERE n.site_id = o.site_id AND n.id > o.id) \
             ORDER BY o.changed_at LIMIT ?) AS old)");
        let mut pruned = 0;
        loop {
            let deleted = with_pool!(&self.db, pool => {
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

impl Reports<'_> {
    /// The verdict changes of site `id`, oldest first.
    pub async fn verdict_changes(&self, id: i64) -> Result<Vec<VerdictChange>, Error> {
        let sql = &cached!(
            self.db.dialect(),
            "SELECT changed_at, verdict, http_status, error_kind FROM verdict_changes \
             WHERE site_id = ? ORDER BY id"
        );
        Ok(with_pool!(&self.db, pool => {
            retry("read verdict changes", || {
                sqlx::query_as::<_, VerdictChange>(sql).bind(id).fetch_all(pool)
            })
            .await?
        }))
    }
}
