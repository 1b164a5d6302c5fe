//! Reading results: pages of checked sites and of hosts for the report, and counts for
//! summaries, progress bars and `--drain`. All of it is [`Reports`], the read-side view of the
//! queue ([`Queue::reports`]); the queue itself only moves work.
//!
//! Pages are keyset-paginated per verdict, in the order the sites got it
//! (`WHERE verdict = ? AND (verdict_since, id) > (?, ?) ORDER BY verdict_since, id LIMIT ?`,
//! served by the `sites_verdict` index, `(verdict, verdict_since, id)`), so a report of
//! millions of rows holds one page in memory and no statement runs for long, and the sites
//! whose verdict changed since a time ([`Scope::changed_since`]) are a range of the same
//! index. The hosts report pages the same way by host name
//! (`hosts.rs`); `--host HOST[:PORT]` is `host_filter.rs`. For the dashboard: the hosts in
//! backoff (`backoffs.rs`), the dead sites checked last (`latest_dead.rs`), and the verdicts
//! and each worker's checks per bucket of time (`over_time.rs`). The view's other
//! reads live with what they read: referrers and dead links by page (`crate::referrers`), a
//! site's verdict changes (`crate::history`).

mod backoffs;
mod changes;
mod host_filter;
mod hosts;
mod latest_dead;
mod over_time;

pub use backoffs::Backoff;
pub use changes::{ChangeCount, Changed, ChangesIn};
pub use host_filter::HostFilter;
use host_filter::Shape;
pub use hosts::HostRow;
pub use over_time::{ChecksIn, VerdictsIn};

use crate::db::{with_pool, Db};
use crate::error::Error;
use crate::queue::Queue;
use crate::sql::{cached, placeholders, sites_using, SitesIndex};
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
    /// Unix milliseconds: when its current verdict began (the check that found it), its first
    /// or a change.
    pub changed_at: i64,
    /// The verdict the current one replaced; none for a site's first verdict.
    pub previous_verdict: Option<Verdict>,
    /// Where a permanent redirect sends it: the URL to write instead.
    pub moved_to: Option<String>,
    /// Unix milliseconds: when it began to answer through that redirect.
    pub moved_at: Option<i64>,
}

/// The columns a [`CheckedRow`] reads.
pub(crate) const CHECKED_COLUMNS: &str =
    "id, url, host, verdict, http_status, error_kind, final_url, \
     checked_at, attempts, latency_ms, redirects, last_alive_at, consecutive_failures, detail, found_count, \
     dead_since, confirmed_at, archived_url, archived_at, fragment, verdict_since, previous_verdict, moved_to, \
     moved_at";

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
    verdict_since: Option<i64>,
    previous_verdict: Option<String>,
    moved_to: Option<String>,
    moved_at: Option<i64>,
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
            changed_at: row.verdict_since.or(row.checked_at).unwrap_or(0),
            previous_verdict: row
                .previous_verdict
                .as_deref()
                .map(str::parse)
                .transpose()?,
            moved_to: row.moved_to,
            moved_at: row.moved_at,
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
    /// The links a permanent redirect sends elsewhere: `moved_to` is the URL to write instead.
    /// In the order they moved (`moved_at`, the `sites_moved` index); `Scope::changed_since`
    /// keeps those that moved since.
    Moved,
}

impl Only {
    /// The time its sites are read in the order of, and a window of changes is of: when they
    /// moved, or when their verdict began.
    fn since_column(self) -> &'static str {
        match self {
            Only::Moved => "moved_at",
            Only::All | Only::Confirmed | Only::MissingFragments => "verdict_since",
        }
    }
}

/// Which sites of a verdict a report reads: some of them ([`Only`]), of one host, whose
/// verdict began at or after a time.
#[derive(Clone, Copy, Debug, Default)]
pub struct Scope<'a> {
    pub only: Only,
    pub host: Option<&'a HostFilter>,
    /// Unix milliseconds: only the sites whose current verdict began then or later (a first
    /// verdict or a change: `crawler-report --changed-since`).
    pub changed_since: Option<i64>,
}

/// What shapes a [`Scope`]'s condition (its values are bound).
type ScopeShape = (Only, Shape, bool);

impl Scope<'_> {
    fn shape(&self) -> ScopeShape {
        (
            self.only,
            host_filter::shape(self.host),
            self.changed_since.is_some(),
        )
    }
}

/// Binds what [`scope_condition`] asks for.
fn bind_scope<'q, DB: sqlx::Database, O>(
    q: sqlx::query::QueryAs<'q, DB, O, <DB as sqlx::Database>::Arguments<'q>>,
    scope: Scope<'q>,
) -> sqlx::query::QueryAs<'q, DB, O, <DB as sqlx::Database>::Arguments<'q>>
where
    i64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    &'q str: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    i32: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    let q = match scope.changed_since {
        Some(since) => q.bind(since),
        None => q,
    };
    host_filter::bind(q, scope.host)
}

/// The condition of a scope of `shape`, after a verdict's (bound values are the names of the
/// states and verdicts, `sql::statement`'s, so nothing here is user input): the time, then
/// the host, bound by [`Scope::bind`].
fn scope_condition((only, host, since): ScopeShape) -> String {
    let since = match since {
        true => format!("AND {} >= ? ", only.since_column()),
        false => String::new(),
    };
    let only = match only {
        Only::All => "",
        Only::Confirmed => "AND confirmed_at IS NOT NULL ",
        Only::MissingFragments => "AND fragment = 'missing' ",
        Only::Moved => "AND moved_at IS NOT NULL ",
    };
    format!("{only}{since}{}", host_filter::condition(host))
}

/// The filter of [`Reports::any_checked`] and [`Reports::checked_count`]: one of `n` verdicts
/// (bound in order), then the scope's condition.
fn with_verdicts(n: usize, scope: ScopeShape) -> String {
    format!(
        "verdict IN ({}) {}",
        placeholders(n),
        scope_condition(scope)
    )
}

/// Where the next page of a verdict starts: after this site, in the order the sites got the
/// verdict (`verdict_since`, then id), or moved ([`Only::Moved`]). [`After::START`] starts at
/// the first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct After {
    since: i64,
    id: i64,
}

impl After {
    pub const START: After = After {
        since: i64::MIN,
        id: i64::MIN,
    };

    /// After `site`, the last of a page of `only`.
    pub fn site(site: &Checked, only: Only) -> After {
        let since = match only {
            Only::Moved => site.moved_at.unwrap_or(i64::MAX),
            Only::All | Only::Confirmed | Only::MissingFragments => site.changed_at,
        };
        After { since, id: site.id }
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
    /// Up to `limit` sites with `verdict`, of `scope`, after `after`, in the order they got
    /// the verdict. The next page starts after the last site of this one ([`After::site`]).
    pub async fn checked_page(
        &self,
        verdict: Verdict,
        scope: Scope<'_>,
        after: After,
        limit: u32,
    ) -> Result<Vec<Checked>, Error> {
        let sql = cached!(self.db.dialect(), scope.shape() => ScopeShape, |dialect, shape| {
            let (only, _, _) = shape;
            let key = only.since_column();
            // Moved links through their own index: MariaDB would read the verdict's range.
            let sites = match only {
                Only::Moved => sites_using(dialect, SitesIndex::Moved),
                Only::All | Only::Confirmed | Only::MissingFragments => "sites",
            };
            // `{key} >= ?` repeats the OR's bound so that PostgreSQL starts the index range
            // there (an OR alone is a filter to it: each page read the range from its start).
            format!(
                "SELECT {CHECKED_COLUMNS} FROM {sites} WHERE verdict = ? \
                 AND {key} >= ? AND ({key} > ? OR ({key} = ? AND id > ?)) {} \
                 ORDER BY {key}, id LIMIT ?",
                scope_condition(shape)
            )
        });
        let rows: Vec<CheckedRow> = with_pool!(&self.db, pool => {
            let q = sqlx::query_as(&sql)
                .bind(verdict.as_str())
                .bind(after.since)
                .bind(after.since)
                .bind(after.since)
                .bind(after.id);
            bind_scope(q, scope).bind(i64::from(limit)).fetch_all(pool).await?
        });
        rows.into_iter().map(Checked::try_from).collect()
    }

    /// Whether any site of `scope` has one of `verdicts`: one row read at most, through the
    /// `sites_verdict` index.
    pub async fn any_checked(&self, verdicts: &[Verdict], scope: Scope<'_>) -> Result<bool, Error> {
        if verdicts.is_empty() {
            return Ok(false);
        }
        let key = (verdicts.len(), scope.shape());
        let sql = cached!(self.db.dialect(), key => (usize, ScopeShape), |_, (n, shape)| {
            format!("SELECT id FROM sites WHERE {} LIMIT 1", with_verdicts(n, shape))
        });
        let found: Option<(i64,)> = with_pool!(&self.db, pool => {
            let mut q = sqlx::query_as(&sql);
            for verdict in verdicts {
                q = q.bind(verdict.as_str());
            }
            bind_scope(q, scope).fetch_optional(pool).await?
        });
        Ok(found.is_some())
    }

    /// How many sites of `scope` have one of `verdicts`: what a report of them will hold, for
    /// formats that say it first.
    pub async fn checked_count(
        &self,
        verdicts: &[Verdict],
        scope: Scope<'_>,
    ) -> Result<u64, Error> {
        if verdicts.is_empty() {
            return Ok(0);
        }
        let key = (verdicts.len(), scope.shape());
        let sql = cached!(self.db.dialect(), key => (usize, ScopeShape), |_, (n, shape)| {
            format!("SELECT COUNT(*) FROM sites WHERE {}", with_verdicts(n, shape))
        });
        let (count,): (i64,) = with_pool!(&self.db, pool => {
            let mut q = sqlx::query_as(&sql);
            for verdict in verdicts {
                q = q.bind(verdict.as_str());
            }
            bind_scope(q, scope).fetch_one(pool).await?
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
