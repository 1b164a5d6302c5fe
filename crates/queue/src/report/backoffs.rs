//! The hosts in trouble now (deferred, unreachable or throttled), and who holds them: what the
//! dashboard lists.
//!
//! The `hosts` table has a row only for hosts that throttled or failed, so this reads a small
//! table whatever the size of the list; each row's partition lease is joined for its holder.

use super::reports::Reports;
use crate::db::with_pool;
use crate::error::Error;
use crate::sql::cached;

/// A host in trouble: deferred until `backoff_until`, decided unreachable, or throttled.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct Backoff {
    pub host: String,
    /// `deferred`, `unreachable` or `throttled` (see `crate::hosts`).
    pub state: String,
    /// Why an unreachable host is: the error kind its URLs got.
    pub cause: Option<String>,
    /// The worker holding the host's partition; `None` while it is free or its lease expired.
    pub owner: Option<String>,
    /// Unix milliseconds (the database's clock); `None` when not deferred.
    pub backoff_until: Option<i64>,
    pub last_throttled_at: Option<i64>,
    /// That answer's HTTP status.
    pub last_status: Option<i32>,
    /// How many times the host throttled.
    pub throttled: i64,
}

impl Reports<'_> {
    /// Up to `limit` hosts in trouble: unreachable first, then deferred (the longest first),
    /// then throttled.
    pub async fn backoffs(&self, limit: u32) -> Result<Vec<Backoff>, Error> {
        let sql = cached!(
            self.db.dialect(),
            "SELECT h.host, \
             CASE WHEN h.unreachable_since IS NOT NULL THEN 'unreachable' \
                  WHEN h.backoff_until > {now} THEN 'deferred' ELSE 'throttled' END AS state, \
             h.unreachable_kind AS cause, \
             CASE WHEN p.expires_at > {now} THEN p.owner END AS owner, \
             CASE WHEN h.backoff_until > {now} THEN h.backoff_until END AS backoff_until, \
             h.last_throttled_at, h.last_status, h.throttled \
             FROM hosts AS h LEFT JOIN parts AS p ON p.id = h.part \
             WHERE h.backoff_until > {now} OR h.unreachable_since IS NOT NULL \
             OR h.rate IS NOT NULL \
             ORDER BY CASE WHEN h.unreachable_since IS NOT NULL THEN 0 ELSE 1 END, \
             h.backoff_until DESC, h.host LIMIT ?"
        );
        Ok(with_pool!(&self.db, pool => {
            sqlx::query_as(sql).bind(i64::from(limit)).fetch_all(pool).await?
        }))
    }
}
