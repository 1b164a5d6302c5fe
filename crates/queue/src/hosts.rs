//! What the fleet learns about a host, kept in the `hosts` table so that whoever holds the
//! host's partition next respects it — the host's state: `ok` (no row, or nothing set),
//! `throttled` (its adaptive `rate`), `deferred` until `backoff_until` (a host-wide
//! `Retry-After`), `unreachable` since when and why (decided once for the host, which gives
//! every pending URL of it its verdict in one write: [`Queue::decide_host`]); and the recent
//! error rate (requests that got no answer). Rows exist only for hosts that throttled or
//! failed, so the table stays small on a healthy list.

use std::time::Duration;

use crate::db::with_pool;
use crate::error::Error;
use crate::parts::part_of;
use crate::queue::{millis, Queue};
use crate::retry::retry;
use crate::sql::{cached, greatest, placeholders, upsert, Statements};
use crate::verdict::{ErrorKind, Verdict};

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
    /// The rate it was last asked at, while it throttled (requests per second).
    pub rate: Option<f64>,
    /// Decided unreachable, for this cause.
    pub unreachable: Option<ErrorKind>,
}

/// Why a host was decided unreachable: the error kind every pending URL of it gets, and a
/// detail that says it was decided for the host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unreachable {
    pub kind: ErrorKind,
    pub detail: String,
}

/// A host's pace as one worker last saw it, for the fleet.
#[derive(Clone, Debug, PartialEq)]
pub struct HostPace {
    pub host: String,
    /// Its adaptive rate while throttled; `None` once back at its configured rate.
    pub rate: Option<f64>,
    /// Deferred by the server (host-wide `Retry-After`) for this long yet.
    pub deferred: Duration,
}

/// Sites one `decide_host` statement writes at most: a host of a million URLs is decided in
/// statements of bounded size.
const DECIDE_CHUNK: i64 = 1000;

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
        type Row = (String, i64, i64, i64, Option<f64>, Option<String>);
        let rows: Vec<Row> = with_pool!(&self.db, pool => {
            retry("host states", || sqlx::query_as(sql).bind(token).fetch_all(pool)).await?
        });
        Ok(rows
            .into_iter()
            .map(
                |(host, ms, recent_checks, recent_errors, rate, kind)| HostState {
                    host,
                    backoff: Duration::from_millis(ms.max(0) as u64),
                    recent_checks,
                    recent_errors,
                    rate,
                    unreachable: kind.and_then(|k| k.parse().ok()),
                },
            )
            .collect())
    }

    /// Gives every pending site of `host` under `origin` (`scheme://host[:port]`, in the
    /// partitions `parts_token` holds) the host's verdict, `unreachable` with `why`, in
    /// statements of [`DECIDE_CHUNK`] sites, and records the host's state. Returns the sites
    /// written. The sites this worker has claimed are not touched: their checks end with the
    /// same verdict without a request.
    pub async fn decide_host(
        &self,
        parts_token: i64,
        host: &str,
        origin: &str,
        why: &Unreachable,
    ) -> Result<u64, Error> {
        let prefix = format!("{origin}/");
        self.record_unreachable(host, Some(why)).await?;
        self.record_replaced_of_host(parts_token, host, &prefix, Verdict::Unreachable)
            .await;
        let sql = &self.sql().decide_host;
        let mut written = 0;
        loop {
            let n = with_pool!(&self.db, pool => {
                retry("decide a host", || {
                    sqlx::query(sql)
                        .bind(Verdict::Unreachable.as_str())
                        .bind(Verdict::Unreachable.as_str())
                        .bind(why.kind.as_str())
                        .bind(why.detail.as_str())
                        .bind(host)
                        .bind(prefix.len() as i32)
                        .bind(prefix.as_str())
                        .bind(parts_token)
                        .bind(DECIDE_CHUNK)
                        .execute(pool)
                })
                .await?
                .rows_affected()
            });
            written += n;
            if n < DECIDE_CHUNK as u64 {
                break;
            }
        }
        Ok(written)
    }

    /// Records that `host` is unreachable (`why`), or reachable again (`None`).
    pub async fn record_unreachable(
        &self,
        host: &str,
        why: Option<&Unreachable>,
    ) -> Result<(), Error> {
        let sql = match why {
            Some(_) => cached!(self.db.dialect(), |dialect| {
                format!(
                    "{} unreachable_since = COALESCE(hosts.unreachable_since, {{now}}), \
                     unreachable_kind = ?, unreachable_detail = ?",
                    upsert(
                        dialect,
                        "INTO hosts (host, part, unreachable_since, unreachable_kind, unreachable_detail) \
                         VALUES (?, ?, {now}, ?, ?)",
                        "host"
                    )
                )
            }),
            None => cached!(
                self.db.dialect(),
                "UPDATE hosts SET unreachable_since = NULL, unreachable_kind = NULL, \
                 unreachable_detail = NULL WHERE host = ?"
            ),
        };
        with_pool!(&self.db, pool => {
            retry("record a host's reachability", || {
                let q = sqlx::query(sql);
                let q = match why {
                    Some(why) => q
                        .bind(host)
                        .bind(part_of(host))
                        .bind(why.kind.as_str())
                        .bind(why.detail.as_str())
                        .bind(why.kind.as_str())
                        .bind(why.detail.as_str()),
                    None => q.bind(host),
                };
                q.execute(pool)
            })
            .await?;
        });
        Ok(())
    }

    /// Records the hosts' paces: their adaptive rate (none: back to the configured rate) and
    /// how long the server deferred them.
    pub async fn record_paces(&self, paces: &[HostPace]) -> Result<(), Error> {
        let sql = cached!(self.db.dialect(), |dialect| {
            format!(
                "{} rate = ?, backoff_until = {}(hosts.backoff_until, {{now}} + ?)",
                upsert(
                    dialect,
                    "INTO hosts (host, part, rate, backoff_until) VALUES (?, ?, ?, {now} + ?)",
                    "host"
                ),
                greatest(dialect)
            )
        });
        for p in paces {
            let deferred = millis(p.deferred.min(crate::MAX_DELAY));
            with_pool!(&self.db, pool => {
                retry("record a host's pace", || {
                    sqlx::query(sql)
                        .bind(&p.host)
                        .bind(part_of(&p.host))
                        .bind(p.rate)
                        .bind(deferred)
                        .bind(p.rate)
                        .bind(deferred)
                        .execute(pool)
                })
                .await?;
            });
        }
        Ok(())
    }

    /// Records hosts that throttled (for the hosts report). A `Retry-After` about one URL
    /// does not defer its host: a host-wide one comes through [`Queue::record_paces`].
    pub async fn record_throttled(&self, hosts: &[Throttled]) -> Result<(), Error> {
        let sql = &self.sql().record_throttled;
        for t in hosts {
            let asked = millis(t.retry_after.unwrap_or_default().min(crate::MAX_DELAY));
            with_pool!(&self.db, pool => {
                retry("record throttled host", || {
                    sqlx::query(sql)
                        .bind(&t.host)
                        .bind(part_of(&t.host))
                        .bind(0i64)
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
            let sql = cached!(self.db.dialect(), chunk.len(), |dialect, n| {
                let rows = vec![format!("({})", placeholders(4)); n].join(", ");
                Statements::get(dialect)
                    .record_checks
                    .replace("{rows}", &rows)
            });
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
