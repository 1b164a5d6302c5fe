//! Reading results: pages of checked sites and of hosts for the report, and counts for
//! summaries, progress bars and `--drain`. All of it is [`Reports`], the read-side view of the
//! queue ([`Queue::reports`]); the queue itself only moves work.
//!
//! Pages are keyset-paginated per verdict (`WHERE verdict = ? AND id > ? ORDER BY id LIMIT ?`,
//! served by the `sites_verdict` index), so a report of millions of rows holds one page in
//! memory and no statement runs for long. The hosts report pages the same way by host name
//! (`hosts.rs`); `--host HOST[:PORT]` is `host_filter.rs`. For the dashboard: the hosts in
//! backoff (`backoffs.rs`), the dead sites checked last (`latest_dead.rs`), and the verdicts
//! and each worker's checks per bucket of time (`over_time.rs`). The view's other
//! reads live with what they read: referrers and dead links by page (`crate::referrers`), a
//! site's verdict changes (`crate::history`).

mod backoffs;
mod host_filter;
mod hosts;
mod latest_dead;
mod over_time;

pub use backoffs::Backoff;
pub use host_filter::HostFilter;
use host_filter::Shape;
pub use hosts::HostRow;
pub use over_time::{ChecksIn, VerdictsIn};

use crate::db::{with_pool, Db};
use crate::error::Error;
use crate::queue::Queue;
use crate::sql::{cached, placeholders};
use crate::state::State;
use crate::verdict::{ErrorKind, Fragment, Verdict};

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
    /// How long the last check took, redirects included.
    pub latency_ms: Option<i32>,
    /// Redirects the last check followed.
    pub redirects: Option<i32>,
    /// Unix milliseconds of the last check that found the site alive, in any round.
    pub last_alive_at: Option<i64>,
    /// Checks in a row, over rounds, that did not find the site alive (0 once it is).
    pub consecutive_failures: i32,
    /// Why the verdict is what it is when the status does not say (a soft 404: what matched).
    pub detail: Option<String>,
    /// Pages (or files) the link was found on (`referrers.rs`); 0 for a seeded URL.
    pub found_count: i32,
    /// Unix milliseconds: when its current streak of dead results began (`confirm.rs`); none
    /// unless it is dead.
    pub dead_since: Option<i64>,
    /// Unix milliseconds: when `--confirm`'s policy confirmed it dead.
    pub confirmed_at: Option<i64>,
    /// The closest archived copy found for it (`--archive-lookup`, `archive.rs`).
    pub archived_url: Option<String>,
    /// Unix milliseconds: the archived copy's time.
    pub archived_at: Option<i64>,
    /// For a fragment's site (`page#section`): whether its page has the section.
    pub fragment: Option<Fragment>,
}

/// The columns a [`CheckedRow`] reads.
pub(crate) const CHECKED_COLUMNS: &str =
    "id, url, host, verdict, http_status, error_kind, final_url, \
     checked_at, attempts, latency_ms, redirects, last_alive_at, consecutive_failures, detail, found_count, \
     dead_since, confirmed_at, archived_url, archived_at, fragment";

#[derive(sqlx::FromRow)]
pub(crate) struct CheckedRow {
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
    redirects: Option<i32>,
    last_alive_at: Option<i64>,
    consecutive_failures: i32,
    detail: Option<String>,
    found_count: i32,
    dead_since: Option<i64>,
    confirmed_at: Option<i64>,
    archived_url: Option<String>,
    archived_at: Option<i64>,
    fragment: Option<String>,
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
            redirects: row.redirects,
            last_alive_at: row.last_alive_at,
            consecutive_failures: row.consecutive_failures,
            detail: row.detail,
            found_count: row.found_count,
            dead_since: row.dead_since,
            confirmed_at: row.confirmed_at,
            archived_url: row.archived_url,
            archived_at: row.archived_at,
            fragment: row.fragment.as_deref().map(str::parse).transpose()?,
        })
    }
}

/// Which of the sites with the verdicts asked a report keeps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Only {
    /// Every one.
    #[default]
    All,
    /// The dead sites that `--confirm`'s policy confirmed.
    Confirmed,
    /// The fragments (`page#section`) whose page, alive, lacks the section: `fragment` is
    /// `missing` (their verdict is the page's, alive).
    MissingFragments,
}

/// The filter of [`Reports::any_checked`] and [`Reports::checked_count`]: one of `n` verdicts
/// (bound in order), narrowed by `only`, of the host the shape names.
fn with_verdicts(n: usize, only: Only, host: Shape) -> String {
    format!(
        "verdict IN ({}) {}{}",
        placeholders(n),
        narrowed(only),
        host_filter::condition(host)
    )
}

/// The condition of `only`, after a verdict's (bound values are the names of the states and
/// verdicts, `sql::statement`'s, so nothing here is user input).
fn narrowed(only: Only) -> &'static str {
    match only {
        Only::All => "",
        Only::Confirmed => "AND confirmed_at IS NOT NULL ",
        Only::MissingFragments => "AND fragment = 'missing' ",
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

/// The read side of the queue: what the report, the dashboard and the progress bars read
/// (results, counts, hosts, workers, history). Obtained from [`Queue::reports`]; it borrows the
/// queue's database handle and writes nothing.
#[derive(Clone, Copy, Debug)]
pub struct Reports<'q> {
    pub(crate) db: &'q Db,
}

impl Queue {
    /// The read-side view of this queue: results, counts and history ([`Reports`]).
    pub fn reports(&self) -> Reports<'_> {
        Reports { db: &self.db }
    }
}

impl Reports<'_> {
    /// The database's clock, in Unix milliseconds (as [`Queue::now`]): what the ages in a
    /// report are measured against.
    pub async fn now(&self) -> Result<i64, Error> {
        crate::queue::now(self.db).await
    }
}

impl Reports<'_> {
    /// Up to `limit` sites with `verdict` (and of `host`, if given) whose id is above `after`,
    /// in id order. The next page starts after the last id of this one.
    pub async fn checked_page(
        &self,
        verdict: Verdict,
        host: Option<&HostFilter>,
        after: i64,
        limit: u32,
    ) -> Result<Vec<Checked>, Error> {
        self.page_of(verdict, Only::All, host, after, limit).await
    }

    /// [`Reports::checked_page`] of the fragments whose page lacks them ([`Only::MissingFragments`]).
    pub async fn missing_fragments_page(
        &self,
        host: Option<&HostFilter>,
        after: i64,
        limit: u32,
    ) -> Result<Vec<Checked>, Error> {
        self.page_of(Verdict::Alive, Only::MissingFragments, host, after, limit)
            .await
    }

    /// [`Reports::checked_page`] of the dead sites that `--confirm`'s policy confirmed.
    pub async fn confirmed_dead_page(
        &self,
        host: Option<&HostFilter>,
        after: i64,
        limit: u32,
    ) -> Result<Vec<Checked>, Error> {
        self.page_of(Verdict::Dead, Only::Confirmed, host, after, limit)
            .await
    }

    async fn page_of(
        &self,
        verdict: Verdict,
        only: Only,
        host: Option<&HostFilter>,
        after: i64,
        limit: u32,
    ) -> Result<Vec<Checked>, Error> {
        let key = (only, host_filter::shape(host));
        let sql = cached!(self.db.dialect(), key => (Only, Shape), |_, (only, host)| {
            format!(
                "SELECT {CHECKED_COLUMNS} FROM sites WHERE verdict = ? AND id > ? {}{} \
                 ORDER BY verdict, id LIMIT ?",
                narrowed(only),
                host_filter::condition(host)
            )
        });
        let rows: Vec<CheckedRow> = with_pool!(&self.db, pool => {
            let q = sqlx::query_as(&sql).bind(verdict.as_str()).bind(after);
            host_filter::bind(q, host).bind(i64::from(limit)).fetch_all(pool).await?
        });
        rows.into_iter().map(Checked::try_from).collect()
    }

    /// Whether any site (of `host`, if given) has one of `verdicts` (narrowed by `only`): one
    /// row read at most, through the `sites_verdict` index.
    pub async fn any_checked(
        &self,
        verdicts: &[Verdict],
        only: Only,
        host: Option<&HostFilter>,
    ) -> Result<bool, Error> {
        if verdicts.is_empty() {
            return Ok(false);
        }
        let key = (verdicts.len(), only, host_filter::shape(host));
        let sql = cached!(self.db.dialect(), key => (usize, Only, Shape), |_, (n, only, host)| {
            format!(
                "SELECT id FROM sites WHERE {} LIMIT 1",
                with_verdicts(n, only, host)
            )
        });
        let found: Option<(i64,)> = with_pool!(&self.db, pool => {
            let mut q = sqlx::query_as(&sql);
            for verdict in verdicts {
                q = q.bind(verdict.as_str());
            }
            host_filter::bind(q, host).fetch_optional(pool).await?
        });
        Ok(found.is_some())
    }

    /// How many sites (of `host`, if given) have one of `verdicts` (narrowed by `only`): what
    /// a report of them will hold, for formats that say it first.
    pub async fn checked_count(
        &self,
        verdicts: &[Verdict],
        only: Only,
        host: Option<&HostFilter>,
    ) -> Result<u64, Error> {
        if verdicts.is_empty() {
            return Ok(0);
        }
        let key = (verdicts.len(), only, host_filter::shape(host));
        let sql = cached!(self.db.dialect(), key => (usize, Only, Shape), |_, (n, only, host)| {
            format!(
                "SELECT COUNT(*) FROM sites WHERE {}",
                with_verdicts(n, only, host)
            )
        });
        let (count,): (i64,) = with_pool!(&self.db, pool => {
            let mut q = sqlx::query_as(&sql);
            for verdict in verdicts {
                q = q.bind(verdict.as_str());
            }
            host_filter::bind(q, host).fetch_one(pool).await?
        });
        Ok(count.max(0) as u64)
    }

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
    pub async fn verdict_counts(&self) -> Result<Vec<(Verdict, i64)>, Error> {
        let sql = cached!(
            self.db.dialect(),
            "SELECT verdict, COUNT(*) FROM sites WHERE verdict IS NOT NULL GROUP BY verdict"
        );
        let rows: Vec<(String, i64)> = with_pool!(&self.db, pool => {
            sqlx::query_as(sql)
            .fetch_all(pool)
            .await?
        });
        rows.into_iter().map(|(v, n)| Ok((v.parse()?, n))).collect()
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

    /// The registered workers, most recent heartbeat first.
    pub async fn workers(&self) -> Result<Vec<WorkerRow>, Error> {
        let sql = cached!(
            self.db.dialect(),
            "SELECT id, host, pid, started_at, heartbeat_at, checked FROM workers \
             ORDER BY heartbeat_at DESC"
        );
        Ok(with_pool!(&self.db, pool => {
            sqlx::query_as(sql)
            .fetch_all(pool)
            .await?
        }))
    }
}
