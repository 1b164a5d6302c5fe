//! Counts for summaries, progress bars and `--drain`: sites per state and per verdict, whether
//! any is unfinished, the hosts with the most dead sites.

use super::reports::Reports;
use crate::db::with_pool;
use crate::error::Error;
use crate::sql::cached;
use crate::state::State;
use crate::verdict::VerdictCounts;

/// How many sites are in each state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StateCounts {
    pub pending: i64,
    pub claimed: i64,
    pub done: i64,
}

impl Reports<'_> {
    /// Sites per state.
    pub async fn state_counts(&self) -> Result<StateCounts, Error> {
        let sql = cached!(
            self.db.dialect(),
            "SELECT state, COUNT(*) FROM sites GROUP BY state"
        );
        let rows: Vec<(i16, i64)> = with_pool!(&self.db, pool => {
            sqlx::query_as(sql).fetch_all(pool).await?
        });
        let mut counts = StateCounts::default();
        for (state, n) in rows {
            match State::from_sql(state.into()) {
                Some(State::Pending) => counts.pending = n,
                Some(State::Claimed) => counts.claimed = n,
                Some(State::Done) | None => counts.done += n,
            }
        }
        Ok(counts)
    }

    /// Whether any site is pending or claimed: false once the whole list has a verdict.
    pub async fn has_unfinished(&self) -> Result<bool, Error> {
        let sql = cached!(
            self.db.dialect(),
            "SELECT id FROM sites WHERE state IN ({pending}, {claimed}) LIMIT 1"
        );
        let row: Option<i64> = with_pool!(&self.db, pool => {
            sqlx::query_scalar(sql)
                .fetch_optional(pool)
                .await?
        });
        Ok(row.is_some())
    }

    /// Checked sites per verdict.
    pub async fn verdict_counts(&self) -> Result<VerdictCounts, Error> {
        let sql = cached!(
            self.db.dialect(),
            "SELECT verdict, COUNT(*) FROM sites WHERE verdict IS NOT NULL GROUP BY verdict"
        );
        let rows: Vec<(String, i64)> = with_pool!(&self.db, pool => {
            sqlx::query_as(sql)
            .fetch_all(pool)
            .await?
        });
        let mut counts = VerdictCounts::default();
        for (verdict, n) in rows {
            counts.add(verdict.parse()?, u64::try_from(n).unwrap_or(0));
        }
        Ok(counts)
    }

    /// The `limit` hosts with the most dead sites.
    pub async fn top_dead_hosts(&self, limit: u32) -> Result<Vec<(String, i64)>, Error> {
        let sql = cached!(
            self.db.dialect(),
            "SELECT host, COUNT(*) AS n FROM sites WHERE verdict = {dead} \
             GROUP BY host ORDER BY n DESC, host LIMIT ?"
        );
        Ok(with_pool!(&self.db, pool => {
            sqlx::query_as(sql)
            .bind(i64::from(limit))
            .fetch_all(pool)
            .await?
        }))
    }
}
