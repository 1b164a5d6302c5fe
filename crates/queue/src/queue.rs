//! The lease queue: claim a batch, keep it, give it back.
//!
//! A claim is **update-then-select**: one autocommit `UPDATE` stamps a fresh random claim
//! token, the owner and a lease expiry on due pending rows, then one `SELECT` by that token
//! reads the batch (on MySQL, among the ids its claim picked: see `Stamped`). The `UPDATE`
//! decides which rows a claim gets (it stamps only rows still pending and due), so no two
//! claimers get the same site; selecting by token (not by owner) reads exactly this claim even
//! when the owner holds older batches. Every later write names
//! the token: a worker that lost its lease changes nothing.
//!
//! Which rows the `UPDATE` may stamp is picked per dialect (`ClaimShape` in `sql.rs`): on
//! MySQL by a plain read of the `sites_due` index before it (`ClaimShape::PickThenMark`: the
//! `UPDATE` stamps those of the ids still due), on SQLite by a subquery in it, and on
//! PostgreSQL, which has no `UPDATE … LIMIT`, by a `WITH picked AS MATERIALIZED (SELECT … FOR
//! UPDATE SKIP LOCKED) UPDATE … WHERE id IN (SELECT id FROM picked)`, in which concurrent
//! claimers skip each other's rows instead of waiting (`sql::limited_update`). A claim in held
//! partitions reads its batch in a later statement everywhere, which keeps only the sites of
//! partitions still held (`Queue::read_batch`); PostgreSQL's claim outside partitions
//! returns its batch (`ClaimShape::StampReturning`).

use std::borrow::Cow;
use std::time::Duration;

use rand::Rng;

use sqlx::mysql::MySqlPool;
use sqlx::{FromRow, Row};

use crate::config::{ClaimMethod, QueueConfig};
use crate::db::{with_pool, Db, Dialect};
use crate::error::Error;
use crate::retry::retry;
use crate::sql::{
    cached, choose_skip_locked, claim_any, claim_held, mark, mark_chosen, owned_ids, padded,
    placeholders, sites_using, ClaimShape, SitesIndex, CLAIMED_COLUMNS,
};

/// The partitions a parts token holds and is not handing over (binds: the token).
const HELD_PARTS: &str = "SELECT id FROM parts WHERE token = ? AND draining = 0";

/// Where a read of a batch finds the rows its claim stamped ([`Queue::read_batch`]).
#[derive(Clone, Copy, Debug)]
enum Stamped<'a> {
    /// By the claim token, in the `sites_token` index: SQLite's and PostgreSQL's claims do not
    /// tell which rows they stamped.
    ByToken,
    /// Among these ids, through the primary key: MySQL's claims picked them first. So MySQL
    /// reads nothing by token, and `sites` has no index by token there, one entry fewer for
    /// every claim to move and every seeded row to add.
    Among(&'a [i64]),
}

/// The read of a batch, `among` that many ids or by token, with a `held` column when the
/// claim was made in held partitions (binds: the parts token if so, the claim token, the ids).
fn read_claimed(dialect: Dialect, among: Option<usize>, held: bool) -> String {
    let held = match held {
        true => format!(", CASE WHEN part IN ({HELD_PARTS}) THEN 1 ELSE 0 END AS held"),
        false => String::new(),
    };
    let (sites, fence) = match among {
        Some(n) => (
            sites_using(dialect, SitesIndex::Primary),
            owned_ids(dialect, "{claimed}", n),
        ),
        None => ("sites", "claim_token = ? AND state = {claimed}".to_owned()),
    };
    format!("SELECT {CLAIMED_COLUMNS}{held} FROM {sites} WHERE {fence}")
}

/// One claimed site, with what the queue needs to write its result back.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct Site {
    pub id: i64,
    /// The claim that holds this site; every write-back is fenced by it.
    #[sqlx(rename = "claim_token")]
    pub token: i64,
    pub url: String,
    pub host: String,
    /// The host's partition (see `parts.rs`).
    pub part: i16,
    /// Checks already made in this round that ended in a transient failure.
    pub tries: i32,
    /// The crawl this site is a page of, to be read for links if it is alive HTML
    /// (`crawler-seed --follow`); `None` for a link that is only checked.
    pub crawl: Option<i64>,
    /// Its distance in links from a start page of its crawl.
    pub depth: Option<i32>,
    /// Its verdict when it was claimed (`None` before its first): a write-back records a
    /// verdict change in the history only for the sites whose verdict changed (`history.rs`).
    #[sqlx(rename = "verdict")]
    pub last_verdict: Option<String>,
    /// The parts token the site was claimed under ([`Queue::claim_held`]): its write-back is
    /// fenced by the partition too, so a worker that lost the host writes nothing for it.
    #[sqlx(skip)]
    pub parts_token: Option<i64>,
}

/// The sites one claim got.
#[derive(Clone, Debug)]
pub struct Batch {
    /// The claim's token, random and never 0; 0 when no claim was made (a claim in no
    /// partitions).
    pub token: i64,
    pub sites: Vec<Site>,
}

/// The partitions a claim may take sites from: those `token` holds, listed.
#[derive(Clone, Copy)]
struct HeldParts<'a> {
    token: i64,
    parts: &'a [i16],
}

/// A 0/1 column computed in SQL, which MySQL and SQLite send as a 64-bit integer and
/// PostgreSQL as a 32-bit one.
fn flag<R: Row>(row: &R, column: &str) -> Result<bool, sqlx::Error>
where
    for<'c> &'c str: sqlx::ColumnIndex<R>,
    i64: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    i32: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    let n = match row.try_get::<i64, _>(column) {
        Ok(n) => n,
        Err(_) => row.try_get::<i32, _>(column)?.into(),
    };
    Ok(n != 0)
}

/// Ids per statement of an extension at most (a power of two: `sql::padded`).
const EXTEND_CHUNK: usize = 1024;

/// What a claim stamps on the rows it takes, bound in this order.
struct Stamp<'a> {
    owner: &'a str,
    token: i64,
    lease: i64,
}

/// Which rows a claim picks: due ones in these partitions (none: any), `n` at most.
struct Pick<'a> {
    parts: &'a [i16],
    n: i64,
}

/// A claim's query: `Stamp` and `Pick` bind their parameters to it, the stamp's first (owner,
/// token, lease), then the pick's (the partitions, n); MySQL's pick takes the pick's alone.
type ClaimQuery<'q, DB> = sqlx::query::Query<'q, DB, <DB as sqlx::Database>::Arguments<'q>>;

impl Stamp<'_> {
    fn bind<'q, DB: sqlx::Database>(&self, q: ClaimQuery<'q, DB>) -> ClaimQuery<'q, DB>
    where
        i64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
        String: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    {
        q.bind(self.owner.to_owned())
            .bind(self.token)
            .bind(self.lease)
    }
}

impl Pick<'_> {
    fn bind<'q, DB: sqlx::Database>(&self, mut q: ClaimQuery<'q, DB>) -> ClaimQuery<'q, DB>
    where
        i64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
        i16: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    {
        for &part in self.parts {
            q = q.bind(part);
        }
        q.bind(self.n)
    }
}

/// The queue over one database: what moves work. Seed, claim in held partitions, extend,
/// complete and give back sites; the workers' heartbeat, pausing. Cheap to clone: clones share
/// the connection pool.
///
/// The rest are views borrowed from it, each in its own module: the host partitions' leases
/// ([`Queue::parts`]), what the fleet learned of its hosts ([`Queue::hosts`]), recursive
/// checking ([`Queue::follow`]) and pages' anchors ([`Queue::anchors`]), reaping
/// ([`Queue::reaping`]), what only reads the results (reports, the dashboard, counts, history:
/// [`Queue::reports`]) and the soft-404 probe store ([`Queue::probes`]).
#[derive(Clone, Debug)]
pub struct Queue {
    pub(crate) db: Db,
    pub(crate) config: QueueConfig,
}

/// Milliseconds for binding a duration; saturates rather than wraps.
pub(crate) fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// The clock of database `db`, in Unix milliseconds: [`Queue::now`], and
/// [`Reports::now`](crate::Reports::now) for the times a report compares with it.
pub(crate) async fn now(db: &Db) -> Result<i64, Error> {
    let sql = cached!(db.dialect(), "SELECT {now}");
    Ok(with_pool!(db, pool => {
        retry("now", || sqlx::query_scalar::<_, i64>(sql).fetch_one(pool)).await?
    }))
}

impl Queue {
    pub fn new(db: Db, config: QueueConfig) -> Queue {
        Queue { db, config }
    }

    pub fn db(&self) -> &Db {
        &self.db
    }

    /// Claims up to `n` due sites for `owner`, leased for `lease`, in any partition. An empty
    /// batch means nothing is due now.
    ///
    /// For tests and benchmarks only (the `testing` feature): a worker claims in the partitions
    /// it holds ([`Queue::claim_held`], [`Queue::claim_in_parts`]), which is what keeps a host
    /// to one worker at a time.
    #[cfg(any(test, feature = "testing"))]
    pub async fn claim(&self, owner: &str, n: u32, lease: Duration) -> Result<Batch, Error> {
        self.claim_in(None, owner, n, lease).await
    }

    /// Claims up to `n` due sites for `owner`, leased for `lease`, only in the host partitions
    /// that `parts_token` holds (and is not handing over); the sites carry the token, which
    /// fences their write-back. An empty batch means nothing is due there now.
    ///
    /// The partitions are read first and bound as a list: with `part IN (SELECT … FROM parts)`
    /// MariaDB ran the subquery per row and a claim in a quarter of the partitions of a
    /// million sites took 200–400 ms; with the list it filters the `sites_due` scan by it. A
    /// partition lost between the two statements is caught by the read of the batch, which
    /// keeps only sites of partitions still held and gives the others back at once.
    pub async fn claim_held(
        &self,
        parts_token: i64,
        owner: &str,
        n: u32,
        lease: Duration,
    ) -> Result<Batch, Error> {
        let sql = cached!(self.db.dialect(), |_| format!("{HELD_PARTS} ORDER BY id"));
        let parts: Vec<i16> = with_pool!(&self.db, pool => {
            retry("claimable parts", || {
                sqlx::query_scalar(sql).bind(parts_token).fetch_all(pool)
            })
            .await?
        });
        self.claim_in_parts(parts_token, &parts, owner, n, lease)
            .await
    }

    /// Like [`Queue::claim_held`], in the partitions `parts` that the caller knows it holds
    /// under `parts_token` (a worker's keeper reads them every round, `Partitions::keep`), so that
    /// a claim is two statements, not three. A partition of the list lost meanwhile costs
    /// nothing: the read of the batch keeps only sites of partitions the token still holds,
    /// and gives the others back at once. The worker leaves out the partitions of hosts it
    /// has enough of already (claim by host readiness).
    pub async fn claim_in_parts(
        &self,
        parts_token: i64,
        parts: &[i16],
        owner: &str,
        n: u32,
        lease: Duration,
    ) -> Result<Batch, Error> {
        if parts.is_empty() {
            return Ok(Batch {
                token: 0,
                sites: Vec::new(),
            });
        }
        let mut parts = parts.to_vec();
        parts.sort_unstable();
        let held = HeldParts {
            token: parts_token,
            parts: &padded(&parts),
        };
        let mut batch = self.claim_in(Some(held), owner, n, lease).await?;
        for site in &mut batch.sites {
            site.parts_token = Some(parts_token);
        }
        Ok(batch)
    }

    /// Claims and reads a batch, timed for the `crawler_claim_seconds` histogram.
    async fn claim_in(
        &self,
        held: Option<HeldParts<'_>>,
        owner: &str,
        n: u32,
        lease: Duration,
    ) -> Result<Batch, Error> {
        let started = std::time::Instant::now();
        let batch = self.claim_rows(held, owner, n, lease).await;
        crate::metrics::observe(crate::metrics::CLAIM_SECONDS, started);
        batch
    }

    async fn claim_rows(
        &self,
        held: Option<HeldParts<'_>>,
        owner: &str,
        n: u32,
        lease: Duration,
    ) -> Result<Batch, Error> {
        // Random, so a token never repeats across processes and restarts; positive for tidiness.
        let token = rand::rng().random_range(1..i64::MAX);
        if let (ClaimMethod::SkipLocked, Db::MySql(pool)) = (self.config.claim, &self.db) {
            return self
                .claim_skip_locked(pool, held, owner, n, lease, token)
                .await;
        }
        let dialect = self.db.dialect();
        let shape = ClaimShape::of(dialect);
        let claim = match held {
            Some(held) => cached!(dialect, held.parts.len(), claim_held),
            None => Cow::Borrowed(cached!(dialect, claim_any)),
        };
        let stamp = Stamp {
            owner,
            token,
            lease: millis(lease),
        };
        let pick = Pick {
            parts: held.map_or(&[][..], |h| h.parts),
            n: i64::from(n),
        };
        if let (ClaimShape::PickThenMark, Db::MySql(pool)) = (shape, &self.db) {
            return self.pick_then_mark(pool, &claim, stamp, pick, held).await;
        }
        with_pool!(&self.db, pool => {
            let claim = || pick.bind(stamp.bind(sqlx::query(&claim)));
            // A retried UPDATE whose first try did land claims more rows under the same token; the
            // SELECT below then reads them all, so nothing is left orphaned until its lease
            // expires. PostgreSQL's claim outside partitions returns its rows, so it reads them
            // back only when it was retried.
            if shape == ClaimShape::StampReturning && held.is_none() {
                let mut tries = 0;
                let rows = retry("claim", || {
                    tries += 1;
                    claim().fetch_all(pool)
                })
                .await?;
                if tries == 1 {
                    let sites = rows.iter().map(Site::from_row).collect::<Result<_, _>>()?;
                    return Ok(Batch { token, sites });
                }
            } else {
                retry("claim", || claim().execute(pool)).await?;
            }
        });
        self.read_batch(token, Stamped::ByToken, held).await
    }

    /// MySQL's claim (`ClaimShape::PickThenMark`): picks the ids of due sites from the index, then
    /// stamps the claim on those still pending and due, and reads the batch. The stamp is the
    /// one `UPDATE` that decides, as in the other dialects' claim: a site another claimer took
    /// meanwhile is no longer pending, so no two claims get the same site.
    async fn pick_then_mark(
        &self,
        pool: &MySqlPool,
        pick_sql: &str,
        stamp: Stamp<'_>,
        pick: Pick<'_>,
        held: Option<HeldParts<'_>>,
    ) -> Result<Batch, Error> {
        let picked: Vec<i64> = retry("pick due sites", || {
            let mut q = sqlx::query_scalar(pick_sql);
            for &part in pick.parts {
                q = q.bind(part);
            }
            q.bind(pick.n).fetch_all(pool)
        })
        .await?;
        if picked.is_empty() {
            return Ok(Batch {
                token: stamp.token,
                sites: Vec::new(),
            });
        }
        let ids = padded(&picked);
        let marks = cached!(self.db.dialect(), ids.len(), mark);
        retry("claim", || {
            let mut q = stamp.bind(sqlx::query(&marks));
            for id in &ids {
                q = q.bind(id);
            }
            q.execute(pool)
        })
        .await?;
        self.read_batch(stamp.token, Stamped::Among(&picked), held)
            .await
    }

    /// Reads the batch claim `token` stamped (`among` the ids it stamped, where the claim knows
    /// them): in held partitions, only the sites of partitions still held; the others (a
    /// partition lost, or asked for, since the caller read its list) are given back at once, by
    /// id, so that no site is both kept and given back.
    async fn read_batch(
        &self,
        token: i64,
        among: Stamped<'_>,
        held: Option<HeldParts<'_>>,
    ) -> Result<Batch, Error> {
        let ids = match among {
            Stamped::Among(ids) => Some(padded(ids)),
            Stamped::ByToken => None,
        };
        // One statement decides, so a partition asked for meanwhile cannot have its sites both
        // kept and given back.
        let key = (ids.as_ref().map(Vec::len), held.is_some());
        let sql = cached!(self.db.dialect(), key => (Option<usize>, bool), |dialect, (among, held)| {
            read_claimed(dialect, among, held)
        });
        let rows: Vec<(Site, bool)> = with_pool!(&self.db, pool => {
            let rows = retry("read batch", || {
                let mut q = sqlx::query(&sql);
                if let Some(held) = held {
                    q = q.bind(held.token);
                }
                q = q.bind(token);
                for id in ids.iter().flatten() {
                    q = q.bind(id);
                }
                q.fetch_all(pool)
            })
            .await?;
            rows.iter()
                .map(|row| {
                    let held = held.is_none() || flag(row, "held")?;
                    Ok((Site::from_row(row)?, held))
                })
                .collect::<Result<_, sqlx::Error>>()?
        });
        let mut sites = Vec::with_capacity(rows.len());
        let mut lost = Vec::new();
        for (site, held) in rows {
            match held {
                true => sites.push(site),
                false => lost.push(site.id),
            }
        }
        if !lost.is_empty() {
            self.release(token, &lost, Duration::ZERO).await?;
        }
        Ok(Batch { token, sites })
    }

    /// The alternative claim (`ClaimMethod::SkipLocked`): choose and lock due rows, skipping
    /// rows other claimers hold locked, then mark them, in one transaction.
    async fn claim_skip_locked(
        &self,
        pool: &MySqlPool,
        held: Option<HeldParts<'_>>,
        owner: &str,
        n: u32,
        lease: Duration,
        token: i64,
    ) -> Result<Batch, Error> {
        let dialect = self.db.dialect();
        let choose = match held {
            Some(held) => cached!(dialect, held.parts.len(), |dialect, n| {
                choose_skip_locked(dialect, &format!("AND part IN ({})", placeholders(n)))
            }),
            None => Cow::Borrowed(cached!(dialect, |dialect| choose_skip_locked(dialect, ""))),
        };
        let sites = retry("claim", || async {
            let mut tx = pool.begin().await?;
            let mut choose = sqlx::query_as(&choose).bind(token);
            for part in held.iter().flat_map(|h| h.parts) {
                choose = choose.bind(part);
            }
            let sites: Vec<Site> = choose.bind(i64::from(n)).fetch_all(&mut *tx).await?;
            if !sites.is_empty() {
                let mark = cached!(dialect, sites.len(), mark_chosen);
                let mut q = sqlx::query(&mark)
                    .bind(owner)
                    .bind(token)
                    .bind(millis(lease));
                for site in &sites {
                    q = q.bind(site.id);
                }
                q.execute(&mut *tx).await?;
            }
            tx.commit().await?;
            Ok(sites)
        })
        .await?;
        // The partitions were read before the sites were chosen: the read of the batch keeps
        // only those still held, as after the other claims.
        if held.is_some() && !sites.is_empty() {
            let ids: Vec<i64> = sites.iter().map(|site| site.id).collect();
            return self.read_batch(token, Stamped::Among(&ids), held).await;
        }
        Ok(Batch { token, sites })
    }

    /// Prolongs the lease on what `token` still owns, to `lease` from now. Returns the ids of
    /// `ids` that it no longer owns (reaped, or given to another worker): their results will be
    /// rejected, so the caller may stop working on them.
    pub async fn extend(
        &self,
        token: i64,
        ids: &[i64],
        lease: Duration,
    ) -> Result<Vec<i64>, Error> {
        // By id, through the primary key: by token, PostgreSQL was seen reading every claimed
        // row of the fleet (see `sql::owned_ids`); and MySQL has no index by token.
        let mut lost = Vec::new();
        for chunk in ids.chunks(EXTEND_CHUNK) {
            let padded = padded(chunk);
            let extend = cached!(self.db.dialect(), padded.len(), |dialect, n| {
                format!(
                    "UPDATE {} SET expires_at = {{now}} + ? WHERE {}",
                    sites_using(dialect, SitesIndex::Primary),
                    owned_ids(dialect, "{claimed}", n)
                )
            });
            let kept = with_pool!(&self.db, pool => {
                retry("extend", || {
                    let mut q = sqlx::query(&extend).bind(millis(lease)).bind(token);
                    for id in &padded {
                        q = q.bind(id);
                    }
                    q.execute(pool)
                })
                .await?
                .rows_affected()
            });
            if kept as usize >= chunk.len() {
                continue;
            }
            // Some of the chunk are lost: which ones, by id again.
            let owned = cached!(self.db.dialect(), padded.len(), |dialect, n| {
                format!(
                    "SELECT id FROM {} WHERE {}",
                    sites_using(dialect, SitesIndex::Primary),
                    owned_ids(dialect, "{claimed}", n)
                )
            });
            let owned: Vec<i64> = with_pool!(&self.db, pool => {
                retry("owned", || {
                    let mut q = sqlx::query_scalar(&owned).bind(token);
                    for id in &padded {
                        q = q.bind(id);
                    }
                    q.fetch_all(pool)
                })
                .await?
            });
            lost.extend(chunk.iter().filter(|id| !owned.contains(id)));
        }
        Ok(lost)
    }

    /// Gives back the sites `ids` of claim `token`, due again after `delay` (zero at shutdown).
    /// Returns how many it still owned. Attempts are not counted: the sites were not checked.
    pub async fn release(&self, token: i64, ids: &[i64], delay: Duration) -> Result<u64, Error> {
        let mut released = 0;
        for chunk in ids.chunks(1000) {
            let sql = cached!(self.db.dialect(), chunk.len(), |dialect, n| {
                format!(
                    "UPDATE {} SET state = {{pending}}, owner = NULL, claim_token = NULL, \
                     expires_at = NULL, next_check_at = {{now}} + ? \
                     WHERE {}",
                    sites_using(dialect, SitesIndex::Primary),
                    owned_ids(dialect, "{claimed}", n)
                )
            });
            released += with_pool!(&self.db, pool => {
                retry("release", || {
                    let mut query = sqlx::query(&sql).bind(millis(delay)).bind(token);
                    for id in chunk {
                        query = query.bind(id);
                    }
                    query.execute(pool)
                })
                .await?
                .rows_affected()
            });
        }
        Ok(released)
    }

    /// The database's clock, in Unix milliseconds.
    pub async fn now(&self) -> Result<i64, Error> {
        now(&self.db).await
    }
}
