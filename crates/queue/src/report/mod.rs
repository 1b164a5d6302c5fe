//! Reading results: pages of checked sites and of hosts for the report, and counts for
//! summaries, progress bars and `--drain`.
//!
//! Pages are keyset-paginated per verdict (`WHERE verdict = ? AND id > ? ORDER BY id LIMIT ?`,
//! served by the `sites_verdict` index), so a report of millions of rows holds one page in
//! memory and no statement runs for long. The hosts report pages the same way by host name
//! (`hosts.rs`).

mod hosts;

pub use hosts::HostRow;

use crate::db::with_pool;
use crate::error::Error;
use crate::queue::Queue;
use crate::verdict::{ErrorKind, Verdict};

/// One checked site, as the report prints it.
#[derive(Clone, Debug, PartialEq)]
pub struct Checked {
    pub id: i64,
    pub url: String,
    pub host: String,
    pub verdict: Verdict,
    pub status: Option<u16>,
    pub error_kind: Option<ErrorKind>,
    pub final_url: Option<String>,
    /// Unix milliseconds.
    pub checked_at: i64,
    pub attempts: i32,
    pub latency_ms: Option<i32>,
}

#[derive(sqlx::FromRow)]
struct CheckedRow {
    id: i64,
    url: String,
    host: String,
    verdict: String,
    http_status: Option<i32>,
    error_kind: Option<String>,
    final_url: Option<String>,
    checked_at: Option<i64>,
    attempts: i32,
    latency_ms: Option<i32>,
}

impl TryFrom<CheckedRow> for Checked {
    type Error = Error;
    fn try_from(row: CheckedRow) -> Result<Checked, Error> {
        Ok(Checked {
            id: row.id,
            url: row.url,
            host: row.host,
            verdict: row.verdict.parse()?,
            status: row.http_status.and_then(|s| u16::try_from(s).ok()),
            error_kind: row.error_kind.as_deref().map(str::parse).transpose()?,
            final_url: row.final_url,
            checked_at: row.checked_at.unwrap_or(0),
            attempts: row.attempts,
            latency_ms: row.latency_ms,
        })
    }
}

/// How many sites are in each state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StateCounts {
    pub pending: i64,
    pub claimed: i64,
    pub done: i64,
}

/// A worker as the workers table knows it.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct WorkerRow {
    pub id: String,
    pub host: String,
    pub pid: i64,
    pub started_at: i64,
    pub heartbeat_at: i64,
    pub checked: i64,
}

impl Queue {
    /// Up to `limit` sites with `verdict` (and `host`, if given) whose id is above `after`, in id
    /// order. The next page starts after the last id of this one.
    pub async fn checked_page(
        &self,
        verdict: Verdict,
        host: Option<&str>,
        after: i64,
        limit: u32,
    ) -> Result<Vec<Checked>, Error> {
        let host_filter = if host.is_some() { "AND host = ?" } else { "" };
        let sql = format!(
            "SELECT id, url, host, verdict, http_status, error_kind, final_url, checked_at, \
             attempts, latency_ms FROM sites WHERE verdict = ? AND id > ? {host_filter} \
             ORDER BY verdict, id LIMIT ?"
        );
        let rows: Vec<CheckedRow> = with_pool!(&self.db, pool => {
            let mut q = sqlx::query_as(&sql).bind(verdict.as_str()).bind(after);
            if let Some(host) = host {
                q = q.bind(host);
            }
            q.bind(limit).fetch_all(pool).await?
        });
        rows.into_iter().map(Checked::try_from).collect()
    }

    /// Sites per state.
    pub async fn state_counts(&self) -> Result<StateCounts, Error> {
        let rows: Vec<(i8, i64)> = with_pool!(&self.db, pool => {
            sqlx::query_as("SELECT state, COUNT(*) FROM sites GROUP BY state").fetch_all(pool).await?
        });
        let mut counts = StateCounts::default();
        for (state, n) in rows {
            match state {
                0 => counts.pending = n,
                1 => counts.claimed = n,
                _ => counts.done += n,
            }
        }
        Ok(counts)
    }

    /// Whether any site is pending or claimed: false once the whole list has a verdict.
    pub async fn has_unfinished(&self) -> Result<bool, Error> {
        let row: Option<i64> = with_pool!(&self.db, pool => {
            sqlx::query_scalar("SELECT id FROM sites WHERE state IN (0, 1) LIMIT 1")
                .fetch_optional(pool)
                .await?
        });
        Ok(row.is_some())
    }

    /// Checked sites per verdict.
    pub async fn verdict_counts(&self) -> Result<Vec<(Verdict, i64)>, Error> {
        let rows: Vec<(String, i64)> = with_pool!(&self.db, pool => {
            sqlx::query_as(
                "SELECT verdict, COUNT(*) FROM sites WHERE verdict IS NOT NULL GROUP BY verdict",
            )
            .fetch_all(pool)
            .await?
        });
        rows.into_iter().map(|(v, n)| Ok((v.parse()?, n))).collect()
    }

    /// The `limit` hosts with the most dead sites.
    pub async fn top_dead_hosts(&self, limit: u32) -> Result<Vec<(String, i64)>, Error> {
        Ok(with_pool!(&self.db, pool => {
            sqlx::query_as(
                "SELECT host, COUNT(*) AS n FROM sites WHERE verdict = 'dead' \
                 GROUP BY host ORDER BY n DESC, host LIMIT ?",
            )
            .bind(limit)
            .fetch_all(pool)
            .await?
        }))
    }

    /// The registered workers, most recent heartbeat first.
    pub async fn workers(&self) -> Result<Vec<WorkerRow>, Error> {
        Ok(with_pool!(&self.db, pool => {
            sqlx::query_as(
                "SELECT id, host, pid, started_at, heartbeat_at, checked FROM workers \
                 ORDER BY heartbeat_at DESC",
            )
            .fetch_all(pool)
            .await?
        }))
    }
}
