//! What the fleet learns about a host, kept in the `hosts` table so that whoever holds the
//! host's partition next respects it: backoff after 429/503 (and the `Retry-After` asked), and
//! the recent error rate (requests that got no answer). Rows exist only for hosts that throttled or
//! failed, so the table stays small on a healthy list.

use std::time::Duration;

use crate::db::with_pool;
use crate::error::Error;
use crate::parts::part_of;
use crate::queue::{millis, Queue};
use crate::retry::retry;
use crate::sql::placeholders;

/// A host that answered 429 or 503.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Throttled {
    pub host: String,
    pub status: u16,
    /// What the server asked for (`Retry-After`), if anything.
    pub retry_after: Option<Duration>,
}

/// Checks of one host in one write-back, and how many of them failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostChecks {
    pub host: String,
    pub checks: u32,
    pub errors: u32,
}

/// What the fleet knows of a host that troubled it.
#[derive(Clone, Debug, PartialEq)]
pub struct HostState {
    pub host: String,
    /// Not to be asked for this long yet (zero when not in backoff).
    pub backoff: Duration,
    /// Checks and failures lately (see `RECENT_CHECKS` in sql.rs).
    pub recent_checks: i64,
    pub recent_errors: i64,
}

impl HostState {
    /// Failing lately: at least half of ten or more recent checks.
    pub fn failing(&self) -> bool {
        self.recent_checks >= 10 && 2 * self.recent_errors >= self.recent_checks
    }
}

/// Hosts written by one statement.
const CHECKS_CHUNK: usize = 100;

impl Queue {
    /// The hosts of `token`'s partitions in backoff or with recent errors: what the fleet
    /// learned before this worker held them.
    pub async fn host_states(&self, token: i64) -> Result<Vec<HostState>, Error> {
        let sql = &self.sql().host_states;
        let rows: Vec<(String, i64, i64, i64)> = with_pool!(&self.db, pool => {
            retry("host states", || sqlx::query_as(sql).bind(token).fetch_all(pool)).await?
        });
        Ok(rows
            .into_iter()
            .map(|(host, ms, recent_checks, recent_errors)| HostState {
                host,
                backoff: Duration::from_millis(ms.max(0) as u64),
                recent_checks,
                recent_errors,
            })
            .collect())
    }

    /// Records hosts that throttled, so that whoever holds them next waits as they asked.
    pub async fn record_throttled(&self, hosts: &[Throttled]) -> Result<(), Error> {
        let sql = &self.sql().record_throttled;
        for t in hosts {
            let asked = millis(t.retry_after.unwrap_or_default().min(crate::MAX_DELAY));
            with_pool!(&self.db, pool => {
                retry("record throttled host", || {
                    sqlx::query(sql)
                        .bind(&t.host)
                        .bind(part_of(&t.host))
                        .bind(asked)
                        .bind(i32::from(t.status))
                        .bind(t.retry_after.map(|_| asked))
                        .execute(pool)
                })
                .await?;
            });
        }
        Ok(())
    }

    /// Adds checks and failures to the hosts' recent counts, a statement per hundred hosts.
    pub async fn record_checks(&self, hosts: &[HostChecks]) -> Result<(), Error> {
        for chunk in hosts.chunks(CHECKS_CHUNK) {
            let rows = vec![format!("({})", placeholders(4)); chunk.len()].join(", ");
            let sql = self.statement(&self.sql().record_checks.replace("{rows}", &rows));
            with_pool!(&self.db, pool => {
                retry("record host checks", || {
                    let mut q = sqlx::query(&sql);
                    for h in chunk {
                        q = q
                            .bind(&h.host)
                            .bind(part_of(&h.host))
                            .bind(i64::from(h.checks))
                            .bind(i64::from(h.errors));
                    }
                    q.execute(pool)
                })
                .await?;
            });
        }
        Ok(())
    }
}
