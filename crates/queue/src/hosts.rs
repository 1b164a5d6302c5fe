//! What the fleet learns about a host, kept in the `hosts` table so that whoever holds the
//! host's partition next respects it — the host's state: `ok` (no row, or nothing set),
//! `throttled` (its adaptive `rate`), `deferred` until `backoff_until` (a host-wide
//! `Retry-After`), `unreachable` since when and why (decided once for the host, which gives
//! every pending URL of it its verdict in one write: [`Hosts::decide`]); and the recent
//! error rate (requests that got no answer). Rows exist only for hosts that throttled or
//! failed, so the table stays small on a healthy list. All of it is [`Hosts`], a view of the
//! queue ([`Queue::hosts`]).

use std::time::Duration;

use crate::db::with_pool;
use crate::dialect::Dialect;
use crate::error::Error;
use crate::parts::part_of;
use crate::queue::{millis, Queue};
use crate::retry::retry;
use crate::sql::{cached, greatest, inserted, int_div, limited_update, placeholders, upsert};
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
    /// Checks and failures lately (see `RECENT_CHECKS` in hosts.rs).
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

/// A host's recent checks are halved, errors with them, when they pass this: the error rate
/// weighs the last hundred or so.
const RECENT_CHECKS: i64 = 100;

/// Sites one [`Hosts::decide`] statement writes at most: a host of a million URLs is decided in
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

/// What the fleet learned of its hosts, the `hosts` table: read by the keeper of the worker
/// that holds a host's partition, written by the worker's share-hosts stage. Obtained from
/// [`Queue::hosts`]; it borrows the queue.
#[derive(Clone, Copy, Debug)]
pub struct Hosts<'q> {
    queue: &'q Queue,
}

impl Queue {
    /// What the fleet learned of its hosts, in this queue's database ([`Hosts`]).
    pub fn hosts(&self) -> Hosts<'_> {
        Hosts { queue: self }
    }
}

impl Hosts<'_> {
    /// The hosts of `token`'s partitions in backoff or with recent errors: what the fleet
    /// learned before this worker held them (host, milliseconds of backoff left, recent checks,
    /// recent errors, rate, unreachable kind).
    pub async fn states(&self, token: i64) -> Result<Vec<HostState>, Error> {
        let sql = cached!(
            self.queue.db.dialect(),
            "SELECT host, backoff_until - {now}, recent_checks, recent_errors, rate, \
             unreachable_kind FROM hosts \
             WHERE part IN (SELECT id FROM parts WHERE token = ?) \
             AND (backoff_until > {now} OR recent_errors > 0 OR rate IS NOT NULL \
             OR unreachable_since IS NOT NULL)"
        );
        type Row = (String, i64, i64, i64, Option<f64>, Option<String>);
        let rows: Vec<Row> = with_pool!(&self.queue.db, pool => {
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
    pub async fn decide(
        &self,
        parts_token: i64,
        host: &str,
        origin: &str,
        why: &Unreachable,
    ) -> Result<u64, Error> {
        let prefix = format!("{origin}/");
        self.record_unreachable(host, Some(why)).await?;
        self.queue
            .history()
            .record_replaced_of_host(parts_token, host, &prefix, Verdict::Unreachable)
            .await?;
        let sql = cached!(self.queue.db.dialect(), decide_pending);
        let mut written = 0;
        loop {
            let n = with_pool!(&self.queue.db, pool => {
                retry("decide a host", || {
                    sqlx::query(sql)
                        .bind(Verdict::Unreachable.as_str())
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
            Some(_) => cached!(self.queue.db.dialect(), |dialect| {
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
                self.queue.db.dialect(),
                "UPDATE hosts SET unreachable_since = NULL, unreachable_kind = NULL, \
                 unreachable_detail = NULL WHERE host = ?"
            ),
        };
        with_pool!(&self.queue.db, pool => {
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
        let sql = cached!(self.queue.db.dialect(), |dialect| {
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
            with_pool!(&self.queue.db, pool => {
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
    /// does not defer its host: a host-wide one comes through [`Hosts::record_paces`].
    pub async fn record_throttled(&self, hosts: &[Throttled]) -> Result<(), Error> {
        let sql = cached!(self.queue.db.dialect(), throttled);
        for t in hosts {
            let asked = millis(t.retry_after.unwrap_or_default().min(crate::MAX_DELAY));
            with_pool!(&self.queue.db, pool => {
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
            let sql = cached!(self.queue.db.dialect(), chunk.len(), record_checks);
            with_pool!(&self.queue.db, pool => {
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

/// For [`cached`]: adds to `n` hosts' recent counts, halving both whenever the checks pass
/// [`RECENT_CHECKS`]. Binds, per host: host, part, checks, errors.
fn record_checks(dialect: Dialect, n: usize) -> String {
    let rows = vec![format!("({})", placeholders(4)); n].join(", ");
    let recent = |col: &str| {
        let sum = format!("hosts.{col} + {}", inserted(dialect, col));
        format!(
            "{col} = CASE WHEN hosts.recent_checks + {} > {RECENT_CHECKS} \
             THEN ({sum}) {} 2 ELSE {sum} END",
            inserted(dialect, "recent_checks"),
            int_div(dialect)
        )
    };
    // Errors first: MySQL assigns left to right, and the errors' test reads the checks before
    // they change.
    format!(
        "{} {}, {}",
        upsert(
            dialect,
            &format!("INTO hosts (host, part, recent_checks, recent_errors) VALUES {rows}"),
            "host"
        ),
        recent("recent_errors"),
        recent("recent_checks")
    )
}

/// For [`cached`]: gives up to n pending sites of a host under an origin (in the held
/// partitions) the host's verdict. Binds: verdict three times, error kind, detail, host,
/// origin prefix length, origin prefix, parts token, n. `verdict_since` and
/// `previous_verdict` read `verdict` before it is written: MySQL assigns left to right.
fn decide_pending(dialect: Dialect) -> String {
    limited_update(
        dialect,
        "sites",
        "state = {done}, owner = NULL, checked_by = NULL, expires_at = NULL, \
         checked_at = {now}, next_check_at = {now}, \
         verdict_since = CASE WHEN verdict = ? THEN verdict_since ELSE {now} END, \
         previous_verdict = CASE WHEN verdict = ? THEN previous_verdict ELSE verdict END, \
         verdict = ?, http_status = NULL, \
         error_kind = ?, final_url = NULL, redirects = 0, latency_ms = 0, tries = 0, \
         moved_to = NULL, moved_at = NULL, \
         attempts = 0, consecutive_failures = consecutive_failures + 1, detail = ?, \
         dead_streak = 0, dead_since = NULL, confirmed_at = NULL, confirm_check_at = NULL",
        "host = ? AND SUBSTR(url, 1, ?) = ? AND state = {pending} \
         AND part IN (SELECT id FROM parts WHERE token = ?)",
        "id",
    )
}

/// For [`cached`]: records that a host throttled. Binds: host, part, backoff ms, status,
/// retry-after ms.
fn throttled(dialect: Dialect) -> String {
    let new = |column: &str| inserted(dialect, column);
    format!(
        "{} backoff_until = {}(hosts.backoff_until, {}), \
         last_throttled_at = {}, last_status = {}, \
         retry_after_ms = {}, throttled = hosts.throttled + 1",
        upsert(
            dialect,
            "INTO hosts (host, part, backoff_until, last_throttled_at, \
             last_status, retry_after_ms, throttled) \
             VALUES (?, ?, {now} + ?, {now}, ?, ?, 1)",
            "host",
        ),
        greatest(dialect),
        new("backoff_until"),
        new("last_throttled_at"),
        new("last_status"),
        new("retry_after_ms"),
    )
}
