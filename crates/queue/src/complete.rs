//! Writing results back: a few statements per batch, each fenced by the claim token.
//!
//! A final result sets the verdict and marks the site done. A transient one (the finding says
//! the failure may pass) sends the site back to pending, due again after a backoff, until its
//! attempts reach the limit; then that result is final. Either way, only rows the claim still
//! owns are written, and the count of the others comes back as `stale`. A write-back tells
//! what it stored ([`Completed`]): the verdicts, each site once when it gets its verdict, apart
//! from the retries and the deferrals, so that a worker's count tells the truth.
//!
//! Delays are bounded: every one is capped at [`MAX_DELAY`] (saturating), and a site deferred
//! past the queue's `defer_horizon` (a far `Retry-After`) gets its current result as its
//! verdict now, with the time the server allows kept as `next_check_at`, rather than staying
//! pending. A row the database refuses for good (say, a final URL longer than its column) is
//! isolated by halving its statement and stored as an `unstorable` error: one hostile answer
//! never holds up the rest of a write-back.
//!
//! A written row keeps its claim token: on SQLite and PostgreSQL, clearing it would move its
//! `sites_token` index entry (MySQL has none), for nothing, since every fence also requires the
//! claimed state and a token is never reused.

use std::collections::BTreeMap;

use futures::stream::{FuturesUnordered, StreamExt};

use crate::backoff::Backoff;
use crate::config::MAX_DELAY;
use crate::confirm::confirm_dead;
use crate::db::with_pool;
use crate::db::Dialect;
use crate::error::Error;
use crate::queue::{millis, Queue, Site};
use crate::retry::{is_transient, retry};
use crate::sql::{
    cached, case_by_id, owned_rows, owned_rows_binds, padded, placeholders, sites_using, SitesIndex,
};
use crate::verdict::{ErrorKind, Finding, Fragment, Next, Verdict, VerdictCounts};

/// Rows per statement at most: each row binds two parameters per column (under SQLite's
/// 32,766 and MySQL's 65,535), and the CASE lists stay short enough to evaluate cheaply.
const CHUNK: usize = 128;

/// The shortest first retry delay, whatever the configuration says (the worker's
/// `--retry-delay` is at least 100 ms already): a backoff starts above zero.
const MIN_RETRY_DELAY: std::time::Duration = std::time::Duration::from_millis(1);

// Statements are padded to a power of two by repeating the last row (`sql::padded`), which
// changes nothing (a CASE takes the first match; an IN list matches a row once). So a
// statement has one of 8 shapes, not one per chunk length: each connection prepares it once
// and keeps it in its statement cache, where varying shapes would be prepared again and
// again, and would fill every connection's cache with large statements.

/// A site's check result, to write back.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub site: Site,
    pub finding: Finding,
}

/// What a write-back did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Completed {
    /// Sites that got their verdict.
    pub done: u64,
    /// `done`, by the verdict stored: each site once, when it gets its verdict (a result sent
    /// back for a retry, or deferred, stores none).
    pub verdicts: VerdictCounts,
    /// Sites sent back to pending to be checked again later, after a transient failure.
    pub retrying: u64,
    /// Sites sent back to pending unchecked (their host was busy): not a try, and no verdict.
    pub deferred: u64,
    /// Results dropped because their claim had lost the site (lease expired or reaped).
    pub stale: u64,
}

impl std::ops::AddAssign for Completed {
    fn add_assign(&mut self, other: Completed) {
        self.done += other.done;
        self.verdicts += other.verdicts;
        self.retrying += other.retrying;
        self.deferred += other.deferred;
        self.stale += other.stale;
    }
}

/// What becomes of a site after its result: the verdict now, or back to pending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Decision {
    /// The result is the verdict; the site is due again no sooner than this many milliseconds
    /// from now (zero, or what the server asked for).
    Final { not_before: i64 },
    /// Back to pending after a try, due again in this many milliseconds.
    Retry { after: i64 },
    /// Back to pending unchecked (not a try), due again in this many milliseconds.
    Unchecked { after: i64 },
}

/// An outcome and how it is written: `delay` is the `Decision`'s milliseconds.
#[derive(Clone, Copy)]
struct Row<'a> {
    outcome: &'a Outcome,
    delay: i64,
}

impl Outcome {
    /// Whether the result's verdict differs from the one the site had when claimed (a first
    /// verdict included): the verdict begins now.
    fn verdict_begins(&self) -> bool {
        self.site.last_verdict.as_deref() != Some(self.finding.verdict.as_str())
    }

    /// Whether the result replaces a verdict the site had (not its first, not the same).
    fn replaces_verdict(&self) -> bool {
        self.site.last_verdict.is_some() && self.verdict_begins()
    }
}

/// Which rows a write-back may change: each only while the claim that took it still owns it
/// (its own token), and, for claims made in held host partitions, only while the partition is
/// still held; or, for sections decided from their page's read without a claim
/// ([`Queue::complete_held`]), only while they are pending and were never checked.
#[derive(Clone, Copy, Debug)]
struct Fence {
    parts: Option<i64>,
    unclaimed: bool,
}

/// What a [`Fence`] requires, as the statements' cache keys tell them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Owned {
    /// By its claim's token.
    Claim,
    /// By its claim's token, in a partition still held.
    HeldClaim,
    /// By no claim: still pending, never checked.
    Unclaimed,
}

/// The `WHERE` of a fenced write of `rows` rows by id.
/// Each row is fenced by its own claim's token, so the results of many claims, checked side by
/// side, go back in one statement per chunk rather than one per claim (a write-back of 500
/// results came from some ten claims: 16 statements of about 32 rows on MariaDB, where 4 of
/// 128 do).
fn fenced(dialect: Dialect, rows: usize, owned: Owned) -> String {
    match owned {
        Owned::Claim => owned_rows(dialect, "{claimed}", rows),
        Owned::HeldClaim => format!(
            "{} AND part IN (SELECT id FROM parts WHERE token = ?)",
            owned_rows(dialect, "{claimed}", rows)
        ),
        // The state as an expression no index serves, which leaves the primary key: SQLite
        // planned `state = 0` on `sites_due`, reading every pending row for each statement.
        Owned::Unclaimed => format!(
            "state + 0 = {{pending}} AND verdict IS NULL AND id IN ({})",
            placeholders(rows)
        ),
    }
}

impl Fence {
    fn owned(&self) -> Owned {
        match (self.unclaimed, self.parts) {
            (true, _) => Owned::Unclaimed,
            (false, Some(_)) => Owned::HeldClaim,
            (false, None) => Owned::Claim,
        }
    }

    /// Binds what [`fenced`] asks for: each site's id and its claim's token, then the ids (the
    /// ids alone, unclaimed).
    fn bind<'q, 's, DB: sqlx::Database>(
        &self,
        mut q: sqlx::query::Query<'q, DB, <DB as sqlx::Database>::Arguments<'q>>,
        sites: impl Iterator<Item = &'s Site> + Clone,
    ) -> sqlx::query::Query<'q, DB, <DB as sqlx::Database>::Arguments<'q>>
    where
        i64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    {
        if self.unclaimed {
            for site in sites {
                q = q.bind(site.id);
            }
            return q;
        }
        for value in owned_rows_binds(sites.map(claimed)) {
            q = q.bind(value);
        }
        if let Some(parts) = self.parts {
            q = q.bind(parts);
        }
        q
    }
}

/// A site as the per-row fence binds it: its id and the token of the claim that took it.
fn claimed(site: &Site) -> (i64, i64) {
    (site.id, site.token)
}

/// The statement kinds a write-back uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Write {
    /// Verdicts, due again at once (for `--recheck-after`).
    Final,
    /// Verdicts whose next check the server deferred.
    Deferred,
    /// Back to pending.
    Retry,
    /// Back to pending, unchecked: counted apart from the retries.
    Unchecked,
}

impl Queue {
    /// Writes `outcomes` back; they may come from several claims. A row the database refuses
    /// for good never holds up the others: the statement is split until the row is alone, and
    /// that site gets an `error` verdict of kind `unstorable`.
    pub async fn complete(&self, outcomes: &[Outcome]) -> Result<Completed, Error> {
        let started = std::time::Instant::now();
        let completed = self.write_back(outcomes, false).await;
        crate::metrics::observe(crate::metrics::WRITE_BACK_SECONDS, started);
        completed
    }

    /// Writes the verdicts of `outcomes`, sections held for their page's read
    /// ([`Added::held`](crate::Added::held)) and decided from it, as [`Queue::complete`] writes
    /// a claim's, but each only while it is still pending and has never been checked: one that
    /// a worker claimed meanwhile (its hold ended) is that worker's to write, and is left.
    /// Their verdicts are first verdicts, which the history does not record (`history.rs`).
    pub async fn complete_held(&self, outcomes: &[Outcome]) -> Result<Completed, Error> {
        debug_assert!(outcomes.iter().all(|o| o.site.last_verdict.is_none()));
        self.write_back(outcomes, true).await
    }

    async fn write_back(&self, outcomes: &[Outcome], unclaimed: bool) -> Result<Completed, Error> {
        // One group per parts token, kind of write and, for verdicts, the values that rows
        // share ([`Shared`]): each is one statement shape, with its shared values bound once
        // rather than in a `CASE` list per column. Rows of different claims go together: each
        // is fenced by its own token ([`fenced`]).
        type Key<'a> = (Option<i64>, u8, Option<Shared<'a>>);
        let mut by_group: BTreeMap<Key, (Write, Vec<Row>)> = BTreeMap::new();
        for outcome in outcomes {
            let (write, delay) = match self.decide(outcome) {
                Decision::Final { not_before: 0 } => (Write::Final, 0),
                Decision::Final { not_before } => (Write::Deferred, not_before),
                Decision::Retry { after } => (Write::Retry, after),
                Decision::Unchecked { after } => (Write::Unchecked, after),
            };
            let shared =
                matches!(write, Write::Final | Write::Deferred).then(|| Shared::of(outcome));
            let site = &outcome.site;
            by_group
                .entry((site.parts_token, write as u8, shared))
                .or_insert_with(|| (write, Vec::new()))
                .1
                .push(Row { outcome, delay });
        }
        let mut chunks = Vec::new();
        for (&(parts, _, _), (write, rows)) in &by_group {
            let fence = Fence { parts, unclaimed };
            chunks.extend(rows.chunks(CHUNK).map(|chunk| (fence, *write, chunk)));
        }
        // A few chunks at a time on a server: each is one statement on its own connection, on
        // rows no other chunk touches. So a write-back of 500 takes the time of two statements
        // rather than four, which was what held a fast worker's drain back (the writer was
        // busy all the time).
        let at_once = self.db.dialect().concurrent_writes();
        let mut chunks = chunks.into_iter();
        let mut writing = FuturesUnordered::new();
        let mut completed = Completed::default();
        let mut failed = None;
        loop {
            while failed.is_none() && writing.len() < at_once {
                let Some((fence, write, chunk)) = chunks.next() else {
                    break;
                };
                writing.push(self.write_isolating(fence, write, chunk));
            }
            // After a failure the chunks being written are let finish (none is cut off in
            // the middle of its statement), and no other starts.
            match writing.next().await {
                Some(Ok(written)) => completed += written,
                Some(Err(error)) => failed = failed.or(Some(error)),
                None => break,
            }
        }
        match failed {
            Some(error) => Err(error),
            None => Ok(completed),
        }
    }

    /// What becomes of the site after `outcome`. Every delay is capped at [`MAX_DELAY`]; one
    /// past the defer horizon makes the result the verdict now, due again after that delay.
    fn decide(&self, outcome: &Outcome) -> Decision {
        let asked = match outcome.finding.next {
            Next::Final => return Decision::Final { not_before: 0 },
            Next::Deferred { until } => {
                return Decision::Unchecked {
                    after: millis(until.min(MAX_DELAY)),
                }
            }
            Next::Transient { not_before } => not_before.unwrap_or_default().min(MAX_DELAY),
        };
        let attempts = outcome.site.tries.max(0) as u32 + 1;
        if attempts >= self.config.max_attempts {
            return Decision::Final {
                not_before: millis(asked),
            };
        }
        // `--retry-delay` doubling per attempt, ±20 % so that sites failing together spread.
        let backoff = Backoff::new(self.config.retry_delay.max(MIN_RETRY_DELAY), MAX_DELAY)
            .with_jitter(80, 120);
        let delay = backoff.delay(attempts).max(asked).min(MAX_DELAY);
        if delay > self.config.defer_horizon {
            Decision::Final {
                not_before: millis(delay),
            }
        } else {
            Decision::Retry {
                after: millis(delay),
            }
        }
    }

    /// Writes one chunk of one kind; on a permanent database error, halves it until the refused
    /// rows are alone, and writes each of those as an `unstorable` error.
    async fn write_isolating(
        &self,
        fence: Fence,
        write: Write,
        rows: &[Row<'_>],
    ) -> Result<Completed, Error> {
        let mut completed = Completed::default();
        let mut parts = vec![rows];
        while let Some(part) = parts.pop() {
            let result = match write {
                Write::Final | Write::Deferred => self.write_finals(fence, part, write).await,
                Write::Retry | Write::Unchecked => self.write_retries(fence, part).await,
            };
            match result {
                Ok(written) => {
                    match write {
                        Write::Retry => completed.retrying += written,
                        Write::Unchecked => completed.deferred += written,
                        Write::Final | Write::Deferred => {
                            completed.done += written;
                            completed.verdicts += self.verdicts_stored(fence, part, written).await;
                        }
                    }
                    completed.stale += part.len() as u64 - written;
                }
                Err(error) if is_transient(&error) => return Err(error.into()),
                Err(_) if part.len() > 1 => {
                    let (first, second) = part.split_at(part.len() / 2);
                    parts.extend([second, first]);
                }
                Err(error) => {
                    let site = &part[0].outcome.site;
                    tracing::warn!(%error, url = %site.url, "the database refused a result; storing it as an unstorable error");
                    completed += self.write_unstorable(fence, part[0].outcome).await?;
                }
            }
        }
        Ok(completed)
    }

    /// Writes verdicts that share their [`Shared`] values (a group of `write_back`'s): those
    /// are bound once, and only what differs by row (the final URL, the latency, a deferred
    /// row's delay) goes in `CASE id` lists.
    async fn write_finals(
        &self,
        fence: Fence,
        rows: &[Row<'_>],
        write: Write,
    ) -> Result<u64, sqlx::Error> {
        let rows = padded(rows);
        let confirm = self.config.confirm;
        let shared = Shared::of(rows[0].outcome);
        let key = (
            rows.len(),
            fence.owned(),
            write == Write::Deferred,
            shared.moved,
        );
        let sql = cached!(self.db.dialect(), key => (usize, Owned, bool, bool), |dialect, (n, owned, deferred, moved)| {
            finals(dialect, n, owned, deferred, moved)
        });
        // The verdicts these results replace go to the history first, read from the rows the
        // claim still holds: only where the verdict changed since the claim (a first verdict
        // replaces none; a recheck that finds what it found before costs the history nothing).
        // A failure fails the write-back, which is tried again, so no change goes unrecorded;
        // recording a verdict the site still has is true whatever follows (history.rs).
        let replaced: Vec<(i64, i64)> = rows
            .iter()
            .filter(|r| r.outcome.replaces_verdict())
            .map(|r| claimed(&r.outcome.site))
            .collect();
        if !replaced.is_empty() {
            self.history().record_replaced(&padded(&replaced)).await?;
        }
        let verdict = shared.verdict;
        let dead = i32::from(verdict == Verdict::Dead);
        // consecutive_failures = consecutive_failures × kept + added: reset by an answer, one
        // more after a failure, kept by a site not checked (neither a failure nor the end of a
        // streak of them).
        let (kept, added) = match verdict {
            Verdict::Alive => (0, 0),
            Verdict::Excluded => (1, 0),
            _ => (1, 1),
        };
        let written = with_pool!(&self.db, pool => {
            retry("complete", || {
                let mut q = sqlx::query(&sql);
                // In the order of the placeholders.
                if write == Write::Deferred {
                    for row in &rows {
                        q = q.bind(row.outcome.site.id).bind(row.delay);
                    }
                }
                q = q
                    .bind(i32::from(shared.begins))
                    .bind(i32::from(shared.begins))
                    .bind(verdict.as_str())
                    .bind(shared.status.map(i32::from))
                    .bind(shared.error_kind.map(|k| k.as_str()));
                for o in rows.iter().map(|r| r.outcome) {
                    q = q.bind(o.site.id).bind(o.finding.final_url.as_deref());
                }
                q = q.bind(shared.redirects as i32);
                for o in rows.iter().map(|r| r.outcome) {
                    let latency = millis(o.finding.latency).min(i32::MAX.into()) as i32;
                    q = q.bind(o.site.id).bind(latency);
                }
                // Where each has moved: once for `moved_at`, once for `moved_to`.
                for _ in 0..2 * usize::from(shared.moved) {
                    for o in rows.iter().map(|r| r.outcome) {
                        q = q.bind(o.site.id).bind(o.finding.moved_to.as_deref());
                    }
                }
                q = q
                    .bind(kept)
                    .bind(added)
                    .bind(shared.detail)
                    .bind(shared.fragment.map(|f| f.as_str()))
                    .bind(i32::from(verdict == Verdict::Alive))
                    .bind(dead)
                    .bind(dead)
                    .bind(dead)
                    .bind(i32::from(verdict == Verdict::Dead && confirm.is_some()))
                    .bind(confirm.map_or(0, |c| millis(c.interval())));
                fence.bind(q, rows.iter().map(|r| &r.outcome.site)).execute(pool)
            })
            .await?
            .rows_affected()
        });
        if let Some(policy) = confirm.filter(|_| verdict == Verdict::Dead) {
            let dead: Vec<(i64, i64)> = rows.iter().map(|r| claimed(&r.outcome.site)).collect();
            // A failure here loses nothing: the site stays due for its next confirming check,
            // which confirms it then.
            if let Err(error) = confirm_dead(&self.db, policy, &dead).await {
                tracing::warn!(%error, "cannot mark dead sites confirmed; their next check will");
            }
        }
        Ok(written)
    }

    /// The verdicts a final statement stored, `written` of `rows`: all of theirs when it changed
    /// every row. Otherwise some claims had lost rows meanwhile, and the database does not say
    /// which, so they are read back: the rows each row's own claim completed (a token is never
    /// reused, and a completed row keeps it).
    async fn verdicts_stored(&self, fence: Fence, rows: &[Row<'_>], written: u64) -> VerdictCounts {
        let verdicts = rows.iter().map(|r| r.outcome.finding.verdict);
        // Rows written by no claim share their verdict ([`Shared`]): any `written` of them.
        if written == rows.len() as u64 || fence.unclaimed {
            return verdicts.take(written as usize).collect();
        }
        let rows = padded(rows);
        let sql = cached!(self.db.dialect(), rows.len(), |dialect, n| {
            format!(
                "SELECT verdict FROM {} WHERE {}",
                sites_using(dialect, SitesIndex::Primary),
                owned_rows(dialect, "{done}", n)
            )
        });
        let stored: Result<Vec<String>, sqlx::Error> = with_pool!(&self.db, pool => {
            retry("read back the verdicts stored", || {
                let mut q = sqlx::query_scalar(&sql);
                for value in owned_rows_binds(rows.iter().map(|r| claimed(&r.outcome.site))) {
                    q = q.bind(value);
                }
                q.fetch_all(pool)
            })
            .await
        });
        let counts = stored.map_err(Error::from).and_then(|stored| {
            stored
                .iter()
                .map(|v| v.parse::<Verdict>().map_err(Error::from))
                .collect()
        });
        counts.unwrap_or_else(|error| {
            let error = crate::error::error_chain(&error);
            tracing::warn!(%error, "cannot read back which results were stored; counting the first ones");
            verdicts.take(written as usize).collect()
        })
    }

    async fn write_retries(&self, fence: Fence, rows: &[Row<'_>]) -> Result<u64, sqlx::Error> {
        let rows = padded(rows);
        let key = (rows.len(), fence.owned());
        let sql = cached!(self.db.dialect(), key => (usize, Owned), |dialect, (n, owned)| {
            let case = case_by_id(n);
            format!(
                "UPDATE {} SET state = {{pending}}, owner = NULL, expires_at = NULL, \
                 tries = {case}, next_check_at = {{now}} + {case} WHERE {}",
                sites_using(dialect, SitesIndex::Primary),
                fenced(dialect, n, owned)
            )
        });
        let written = with_pool!(&self.db, pool => {
            retry("complete", || {
                let mut q = sqlx::query(&sql);
                for row in &rows {
                    // A deferred site was not checked: not a try.
                    let tried = i32::from(!row.outcome.finding.next.is_deferred());
                    q = q.bind(row.outcome.site.id).bind(row.outcome.site.tries + tried);
                }
                for row in &rows {
                    q = q.bind(row.outcome.site.id).bind(row.delay);
                }
                fence.bind(q, rows.iter().map(|r| &r.outcome.site)).execute(pool)
            })
            .await?
            .rows_affected()
        });
        Ok(written)
    }

    /// Stores an `error` verdict of kind `unstorable` in place of a result the database
    /// refused: only bound values the schema always accepts.
    async fn write_unstorable(&self, fence: Fence, outcome: &Outcome) -> Result<Completed, Error> {
        let owned = fence.owned();
        let sql = cached!(self.db.dialect(), owned => Owned, |dialect, owned| {
            format!(
                "UPDATE {} SET checked_by = owner, state = {{done}}, owner = NULL, expires_at = NULL, \
                 checked_at = {{now}}, next_check_at = {{now}}, \
                 verdict_since = CASE WHEN verdict = ? THEN verdict_since ELSE {{now}} END, \
                 previous_verdict = CASE WHEN verdict = ? THEN previous_verdict ELSE verdict END, verdict = ?, \
                 http_status = NULL, error_kind = ?, final_url = NULL, redirects = 0, latency_ms = 0, \
                 moved_to = NULL, moved_at = NULL, \
                 tries = 0, detail = NULL, \
                 attempts = ?, consecutive_failures = consecutive_failures + 1, \
                 dead_streak = 0, dead_since = NULL, confirmed_at = NULL, confirm_check_at = NULL WHERE {}",
                sites_using(dialect, SitesIndex::Primary),
                fenced(dialect, 1, owned)
            )
        });
        let site = &outcome.site;
        if site
            .last_verdict
            .as_deref()
            .is_some_and(|v| v != Verdict::Error.as_str())
        {
            self.history().record_replaced(&[claimed(site)]).await?;
        }
        let written = with_pool!(&self.db, pool => {
            retry("complete", || {
                let q = sqlx::query(&sql)
                    .bind(Verdict::Error.as_str())
                    .bind(Verdict::Error.as_str())
                    .bind(Verdict::Error.as_str())
                    .bind(ErrorKind::Unstorable.as_str())
                    .bind(site.tries + 1);
                fence.bind(q, std::iter::once(site)).execute(pool)
            })
            .await?
            .rows_affected()
        });
        let mut verdicts = VerdictCounts::default();
        verdicts.add(Verdict::Error, written);
        Ok(Completed {
            done: written,
            verdicts,
            stale: 1 - written,
            ..Completed::default()
        })
    }
}

/// What the rows of one verdict statement share, bound once: the verdict and how it was
/// found. Only the final URL, the latency and a deferral's delay differ from row to row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Shared<'a> {
    verdict: Verdict,
    /// The verdict differs from the one the site had when claimed: it begins now.
    begins: bool,
    status: Option<u16>,
    error_kind: Option<ErrorKind>,
    redirects: u32,
    detail: Option<&'a str>,
    fragment: Option<Fragment>,
    /// The URL has moved (`Finding::moved_to`): where to is a row's own.
    moved: bool,
}

impl<'a> Shared<'a> {
    fn of(outcome: &'a Outcome) -> Self {
        let finding = &outcome.finding;
        Shared {
            verdict: finding.verdict,
            begins: outcome.verdict_begins(),
            status: finding.status,
            error_kind: finding.error_kind,
            redirects: finding.redirects,
            detail: finding.detail.as_deref(),
            fragment: finding.fragment,
            moved: finding.moved_to.is_some(),
        }
    }
}

/// The statement of a write of `rows` final results by id that share their [`Shared`]
/// values, fenced ([`fenced`], `held`); for a `deferred` write, due again after a delay per
/// row rather than at once. Every column reads only bound values and the row's old values,
/// never a column this statement changed before it (MySQL evaluates SET left to right with
/// the new values, SQLite and PostgreSQL with the old ones): `previous_verdict` reads
/// `verdict` before `verdict` is written, `checked_by` reads `owner`
/// (the claiming worker) before `owner` is cleared, `attempts` reads `tries` before
/// `tries` is reset, `moved_at` reads `moved_to` before `moved_to` is written (a `moved` write:
/// the rows' results have moved, each to its own URL; else neither is), and `confirm_check_at`
/// reads `confirmed_at` only for a dead result, which leaves `confirmed_at` as it was. The old row is the one the claim read (a claimed row
/// changes only by its claim's writes), so `tries + 1` is the attempts the verdict took.
fn finals(dialect: Dialect, rows: usize, owned: Owned, deferred: bool, moved: bool) -> String {
    let case = case_by_id(rows);
    let next_check_at = match deferred {
        true => format!("{{now}} + {case}"),
        false => "{now}".to_owned(),
    };
    let moved = match moved {
        true => format!(
            "moved_at = CASE WHEN moved_to = {case} THEN moved_at ELSE {{now}} END, \
             moved_to = {case}, "
        ),
        false => "moved_at = NULL, moved_to = NULL, ".to_owned(),
    };
    format!(
        "UPDATE {} SET checked_by = owner, state = {{done}}, owner = NULL, expires_at = NULL, \
         checked_at = {{now}}, next_check_at = {next_check_at}, \
         verdict_since = CASE WHEN ? = 1 THEN {{now}} ELSE verdict_since END, \
         previous_verdict = CASE WHEN ? = 1 THEN verdict ELSE previous_verdict END, verdict = ?, \
         http_status = ?, error_kind = ?, final_url = {case}, redirects = ?, latency_ms = {case}, \
         {moved}attempts = tries + 1, tries = 0, consecutive_failures = consecutive_failures * ? + ?, \
         detail = ?, fragment = ?, \
         last_alive_at = CASE WHEN ? = 1 THEN {{now}} ELSE last_alive_at END, \
         dead_streak = CASE WHEN ? = 1 THEN dead_streak + 1 ELSE 0 END, \
         dead_since = CASE WHEN ? = 1 THEN COALESCE(dead_since, {{now}}) ELSE NULL END, \
         confirmed_at = CASE WHEN ? = 1 THEN confirmed_at ELSE NULL END, \
         confirm_check_at = CASE WHEN ? = 1 AND confirmed_at IS NULL THEN {{now}} + ? ELSE NULL END \
         WHERE {}",
        sites_using(dialect, SitesIndex::Primary),
        fenced(dialect, rows, owned)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::tests::{sqlite_plan, sqlite_with_schema};
    use crate::sql::statement;

    #[tokio::test]
    async fn sections_decided_without_a_claim_are_written_through_the_primary_key() {
        let mut conn = sqlite_with_schema().await;
        // `state = 0` alone was planned on `sites_due`: every pending row, each statement.
        for n in [1, 64] {
            let sql = finals(Dialect::Sqlite, n, Owned::Unclaimed, false, false);
            let sql = statement(Dialect::Sqlite, &sql);
            let binds = sql.matches('?').count();
            let plan = sqlite_plan(&mut conn, &sql, binds).await;
            assert!(
                plan.lines()
                    .all(|step| step.contains("INTEGER PRIMARY KEY")),
                "{n} rows: {plan}"
            );
        }
    }

    #[tokio::test]
    async fn a_claims_rows_are_found_by_their_ids_on_sqlite() {
        use crate::sql::owned_ids;
        let mut conn = sqlite_with_schema().await;
        // `state = 1` was planned on `sites_due`: each write-back of 128 rows read every
        // claimed row and tested each against its 128 tokens; `state = 2`, every row done.
        for state in ["{claimed}", "{done}"] {
            for n in [1, 64] {
                for fence in [
                    owned_ids(Dialect::Sqlite, state, n),
                    owned_rows(Dialect::Sqlite, state, n),
                ] {
                    let sql = statement(
                        Dialect::Sqlite,
                        &format!("SELECT verdict FROM sites WHERE {fence}"),
                    );
                    let plan = sqlite_plan(&mut conn, &sql, sql.matches('?').count()).await;
                    assert!(
                        plan.lines()
                            .all(|step| step.contains("INTEGER PRIMARY KEY")),
                        "{state}, {n} rows: {plan}"
                    );
                }
            }
        }
    }
}
