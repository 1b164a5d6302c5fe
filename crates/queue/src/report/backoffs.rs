//! The hosts in backoff now, and who holds them: what the dashboard lists.
//!
//! The `hosts` table has a row only for hosts that throttled, so this reads a small table
//! whatever the size of the list; each row's partition lease is joined for its holder.

use crate::db::with_pool;
use crate::error::Error;
use crate::queue::Queue;

/// A host the fleet leaves alone until `backoff_until`, because it answered 429 or 503.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct Backoff {
    pub host: String,
    /// The worker holding the host's partition; `None` while it is free or its lease expired.
    pub owner: Option<String>,
    /// Unix milliseconds (the database's clock).
    pub backoff_until: i64,
    pub last_throttled_at: Option<i64>,
    /// That answer's HTTP status.
    pub last_status: Option<i32>,
    /// How many times the host throttled.
    pub throttled: i64,
}

impl Queue {
    /// Up to `limit` hosts whose backoff has not passed, the longest first.
    pub async fn backoffs(&self, limit: u32) -> Result<Vec<Backoff>, Error> {
        let sql = self.statement(
            "SELECT h.host, CASE WHEN p.expires_at > {now} THEN p.owner END AS owner, \
             h.backoff_until, h.last_throttled_at, h.last_status, h.throttled \
             FROM hosts AS h LEFT JOIN parts AS p ON p.id = h.part \
             WHERE h.backoff_until > {now} ORDER BY h.backoff_until DESC, h.host LIMIT ?",
        );
        Ok(with_pool!(&self.db, pool => {
            sqlx::query_as(&sql).bind(i64::from(limit)).fetch_all(pool).await?
        }))
    }
}
