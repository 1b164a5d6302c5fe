//! A site's verdict changes, oldest first (`crawler-report`'s and the dashboard's history of a
//! site): the rows of `verdict_changes` (`crate::history` records them), then its current
//! verdict from its own row.

use super::reports::Reports;
use crate::db::with_pool;
use crate::error::Error;
use crate::retry::retry;
use crate::sql::cached;

/// One change of a site's verdict.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct VerdictChange {
    /// When the check that found the new verdict ran, Unix milliseconds.
    pub changed_at: i64,
    pub verdict: String,
    pub http_status: Option<i32>,
    pub error_kind: Option<String>,
    /// The verdict this one replaced; none for a site's first (and for changes recorded
    /// before this was).
    pub previous_verdict: Option<String>,
}

impl Reports<'_> {
    /// The verdicts of site `id`, oldest first: the recorded changes, then its current verdict
    /// unless that is the latest recorded change (rows written before `verdict_since`).
    pub async fn verdict_changes(&self, id: i64) -> Result<Vec<VerdictChange>, Error> {
        let recorded = &cached!(
            self.db.dialect(),
            "SELECT changed_at, verdict, http_status, error_kind, previous_verdict \
             FROM verdict_changes WHERE site_id = ? ORDER BY id"
        );
        let current = &cached!(
            self.db.dialect(),
            "SELECT COALESCE(verdict_since, checked_at) AS changed_at, verdict, http_status, \
             error_kind, previous_verdict FROM sites \
             WHERE id = ? AND verdict IS NOT NULL AND checked_at IS NOT NULL"
        );
        let (mut changes, current) = with_pool!(&self.db, pool => {
            let changes = retry("read verdict changes", || {
                sqlx::query_as::<_, VerdictChange>(recorded).bind(id).fetch_all(pool)
            })
            .await?;
            let current = retry("read the current verdict", || {
                sqlx::query_as::<_, VerdictChange>(current).bind(id).fetch_optional(pool)
            })
            .await?;
            (changes, current)
        });
        if let Some(current) = current {
            if changes
                .last()
                .is_none_or(|last| last.verdict != current.verdict)
            {
                changes.push(current);
            }
        }
        Ok(changes)
    }
}
