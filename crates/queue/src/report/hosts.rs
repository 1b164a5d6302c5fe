//! The hosts report's pages: per host, its sites by verdict and state, who holds its partition,
//! and what the fleet learned when it throttled or failed.
//!
//! Keyset-paginated by host name (`WHERE host > ? GROUP BY host ORDER BY host LIMIT ?`, read in
//! order from the `sites_host` index), so a report of millions of hosts holds one page in
//! memory. The partition's lease and the throttle record are joined to the page's hosts only.

use super::reports::Reports;
use crate::db::with_pool;
use crate::dialect::Dialect;
use crate::error::Error;
use crate::sql::{cached, sites_using, SitesIndex};
use crate::verdict::{Verdict, VerdictCounts};

/// One host, as the hosts report prints it.
#[derive(Clone, Debug, PartialEq)]
pub struct HostRow {
    pub host: String,
    /// Every site of the host.
    pub sites: i64,
    /// Sites per verdict. A site being checked again keeps its last verdict, so it counts here
    /// and in `pending` too.
    pub verdicts: VerdictCounts,
    /// Sites pending or claimed: waiting for their check of this round.
    pub pending: i64,
    /// The worker holding the host's partition; `None` while it is free (never taken, given
    /// back, or its lease expired).
    pub owner: Option<String>,
    /// Unix milliseconds before which the fleet leaves the host alone; `None` when it has no
    /// backoff, or its backoff has passed.
    pub backoff_until: Option<i64>,
    /// Unix milliseconds of the host's last 429 or 503; `None` if it never throttled.
    pub last_throttled_at: Option<i64>,
    /// That answer's HTTP status.
    pub last_status: Option<i32>,
    /// Checks of the host lately, and how many got no answer (see `crate::hosts`): its recent
    /// error rate. Zero for a host that never failed nor throttled.
    pub recent_checks: i64,
    pub recent_errors: i64,
    /// The host's state for the fleet: `ok`, `throttled` (see `rate`), `deferred` (until
    /// `backoff_until`) or `unreachable` (since `unreachable_since`, for `cause`).
    pub state: String,
    /// Its adaptive rate while throttled, requests per second.
    pub rate: Option<f64>,
    /// Unix milliseconds since it was decided unreachable.
    pub unreachable_since: Option<i64>,
    /// Why: the error kind its URLs got.
    pub cause: Option<String>,
    /// What was seen, as its URLs' detail says.
    pub detail: Option<String>,
}

/// [`HostRow`] as the page's query returns it: a column per verdict.
#[derive(sqlx::FromRow)]
struct HostColumns {
    host: String,
    sites: i64,
    alive: i64,
    dead: i64,
    blocked: i64,
    unreachable: i64,
    error: i64,
    excluded: i64,
    pending: i64,
    owner: Option<String>,
    backoff_until: Option<i64>,
    last_throttled_at: Option<i64>,
    last_status: Option<i32>,
    recent_checks: i64,
    recent_errors: i64,
    state: String,
    rate: Option<f64>,
    unreachable_since: Option<i64>,
    cause: Option<String>,
    detail: Option<String>,
}

impl From<HostColumns> for HostRow {
    fn from(c: HostColumns) -> Self {
        let mut verdicts = VerdictCounts::default();
        for (verdict, n) in [
            (Verdict::Alive, c.alive),
            (Verdict::Dead, c.dead),
            (Verdict::Blocked, c.blocked),
            (Verdict::Unreachable, c.unreachable),
            (Verdict::Error, c.error),
            (Verdict::Excluded, c.excluded),
        ] {
            verdicts.add(verdict, n.max(0) as u64);
        }
        HostRow {
            host: c.host,
            sites: c.sites,
            verdicts,
            pending: c.pending,
            owner: c.owner,
            backoff_until: c.backoff_until,
            last_throttled_at: c.last_throttled_at,
            last_status: c.last_status,
            recent_checks: c.recent_checks,
            recent_errors: c.recent_errors,
            state: c.state,
            rate: c.rate,
            unreachable_since: c.unreachable_since,
            cause: c.cause,
            detail: c.detail,
        }
    }
}

impl Reports<'_> {
    /// Up to `limit` hosts (only `host`, if given) whose name sorts after `after`, in name
    /// order. The next page starts after the last host of this one; the first, after `""`.
    ///
    /// A host's partition is that of its sites (the highest, should they differ: on SQLite,
    /// sites seeded before partitions existed stay in partition 0).
    pub async fn hosts_page(
        &self,
        host: Option<&str>,
        after: &str,
        limit: u32,
    ) -> Result<Vec<HostRow>, Error> {
        let sql = self.hosts_page_sql(host.is_some());
        let rows: Vec<HostColumns> = with_pool!(&self.db, pool => {
            let mut q = sqlx::query_as(sql).bind(after);
            if let Some(host) = host {
                q = q.bind(host);
            }
            q.bind(i64::from(limit)).fetch_all(pool).await?
        });
        Ok(rows.into_iter().map(HostRow::from).collect())
    }

    /// Binds: after, host (if `one_host`), limit.
    fn hosts_page_sql(&self, one_host: bool) -> &'static str {
        match one_host {
            true => cached!(self.db.dialect(), |dialect| hosts_page(
                dialect,
                "AND host = ?"
            )),
            false => cached!(self.db.dialect(), |dialect| hosts_page(dialect, "")),
        }
    }
}

/// The hosts report's page, only of one host with `host_filter`.
fn hosts_page(dialect: Dialect, host_filter: &str) -> String {
    let sites = sites_using(dialect, SitesIndex::Host);
    format!(
        "SELECT g.host, g.sites, g.alive, g.dead, g.blocked, g.unreachable, g.error, g.excluded, \
             g.pending, \
             CASE WHEN p.expires_at > {{now}} THEN p.owner END AS owner, \
             CASE WHEN h.backoff_until > {{now}} THEN h.backoff_until END AS backoff_until, \
             h.last_throttled_at, h.last_status, \
             COALESCE(h.recent_checks, 0) AS recent_checks, \
             COALESCE(h.recent_errors, 0) AS recent_errors, \
             CASE WHEN h.unreachable_since IS NOT NULL THEN 'unreachable' \
                  WHEN h.backoff_until > {{now}} THEN 'deferred' \
                  WHEN h.rate IS NOT NULL THEN 'throttled' ELSE 'ok' END AS state, \
             h.rate, h.unreachable_since, h.unreachable_kind AS cause, \
             h.unreachable_detail AS detail \
             FROM (SELECT host, MAX(part) AS part, COUNT(*) AS sites, \
                   COUNT(CASE WHEN verdict = {{alive}} THEN 1 END) AS alive, \
                   COUNT(CASE WHEN verdict = {{dead}} THEN 1 END) AS dead, \
                   COUNT(CASE WHEN verdict = {{blocked}} THEN 1 END) AS blocked, \
                   COUNT(CASE WHEN verdict = {{unreachable}} THEN 1 END) AS unreachable, \
                   COUNT(CASE WHEN verdict = {{error}} THEN 1 END) AS error, \
                   COUNT(CASE WHEN verdict = {{excluded}} THEN 1 END) AS excluded, \
                   COUNT(CASE WHEN state IN ({{pending}}, {{claimed}}) THEN 1 END) AS pending \
                   FROM {sites} WHERE host > ? {host_filter} \
                   GROUP BY host ORDER BY host LIMIT ?) AS g \
             LEFT JOIN parts AS p ON p.id = g.part \
             LEFT JOIN hosts AS h ON h.host = g.host \
             ORDER BY g.host"
    )
}
