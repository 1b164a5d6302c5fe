//! The lease queue: claim a batch, keep it, give it back.
//!
//! A claim is **update-then-select**: one autocommit `UPDATE … LIMIT n` stamps a fresh random
//! claim token, the owner and a lease expiry on due pending rows, then one `SELECT` by that token
//! reads the batch. Choosing and marking are one statement, so no two claimers get the same
//! site; selecting by token (not by owner) reads exactly this claim even when the owner holds
//! older batches. Every later write names the token: a worker that lost its lease changes nothing.
//!
//! PostgreSQL has no `UPDATE … LIMIT`: there the claim is one `WITH picked AS MATERIALIZED
//! (SELECT … FOR UPDATE SKIP LOCKED) UPDATE … WHERE id IN (SELECT id FROM picked) RETURNING
//! …`, which picks, marks and reads the batch at once, and concurrent claimers skip each other's
//! rows instead of waiting (`claim_returns` and `PICK` in `sql.rs`; the one branch is in
//! `claim_rows`).

use std::time::Duration;

use rand::Rng;

use sqlx::mysql::MySqlPool;
use sqlx::FromRow;

use crate::config::{ClaimMethod, QueueConfig};
use crate::db::{with_pool, Db};
use crate::error::Error;
use crate::retry::retry;
use crate::sql::{padded, placeholders, Statements};

/// A site's place in the queue, as stored in `sites.state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i8)]
pub enum State {
    /// Waiting for `next_check_at`, then claimable.
    Pending = 0,
    /// Held by a worker until `expires_at`.
    Claimed = 1,
    /// Has its current verdict.
    Done = 2,
}

impl State {
    /// Every state, with the name SQL text uses for it (`{pending}`, …; see `sql::statement`).
    pub const ALL: [(State, &'static str); 3] = [
        (State::Pending, "pending"),
        (State::Claimed, "claimed"),
        (State::Done, "done"),
    ];

    /// The number stored in `sites.state`.
    pub const fn as_sql(self) -> i16 {
        self as i16
    }

    /// The state stored as `n`, if any.
    pub fn from_sql(n: i64) -> Option<State> {
        State::ALL
            .iter()
            .map(|&(state, _)| state)
            .find(|state| i64::from(state.as_sql()) == n)
    }
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
    pub consecutive_failures: i32,
    /// The crawl this site is a page of, to be read for links if it is alive HTML
    /// (`crawler-seed --follow`); `None` for a link that is only checked.
    pub crawl: Option<i64>,
    /// Its distance in links from a start page of its crawl.
    pub depth: Option<i32>,
    /// The parts token the site was claimed under ([`Queue::claim_held`]): its write-back is
    /// fenced by the partition too, so a worker that lost the host writes nothing for it.
    #[sqlx(skip)]
    pub parts_token: Option<i64>,
}

/// The sites one claim got.
#[derive(Clone, Debug)]
pub struct Batch {
    pub token: i64,
    pub sites: Vec<Site>,
}

/// The partitions a claim may take sites from: those `token` holds, listed.
#[derive(Clone, Copy)]
struct Held<'a> {
    token: i64,
    parts: &'a [i16],
}

/// The queue over one database. Cheap to clone: clones share the connection pool.
#[derive(Clone, Debug)]
pub struct Queue {
    pub(crate) db: Db,
    pub(crate) config: QueueConfig,
}

/// Milliseconds for binding a duration; saturates rather than wraps.
pub(crate) fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

impl Queue {
    pub fn new(db: Db, config: QueueConfig) -> Queue {
        Queue { db, config }
    }

    pub fn db(&self) -> &Db {
        &self.db
    }

    pub(crate) fn sql(&self) -> &'static Statements {
        Statements::get(self.db.dialect())
    }

    /// Claims up to `n` due sites for `owner`, leased for `lease`. An empty batch means nothing
    /// is due now.
    pub async fn claim(&self, owner: &str, n: u32, lease: Duration) -> Result<Batch, Error> {
        self.claim_in(None, owner, n, lease).await
    }

    /// Like [`Queue::claim`], only in the host partitions that `parts_token` holds (and is not
    /// handing over); the sites carry the token, which fences their write-back.
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
        self.claim_held_except(parts_token, &[], owner, n, lease)
            .await
    }

    /// Like [`Queue::claim_held`], leaving out the partitions `except` (those of hosts the
    /// worker has enough of already, waiting for their turn: claim by host readiness).
    pub async fn claim_held_except(
        &self,
        parts_token: i64,
        except: &[i16],
        owner: &str,
        n: u32,
        lease: Duration,
    ) -> Result<Batch, Error> {
        let sql =
            self.statement("SELECT id FROM parts WHERE token = ? AND draining = 0 ORDER BY id");
        let parts: Vec<i16> = with_pool!(&self.db, pool => {
            retry("claimable parts", || {
                sqlx::query_scalar(&sql).bind(parts_token).fetch_all(pool)
            })
            .await?
        });
        let parts: Vec<i16> = parts.into_iter().filter(|p| !except.contains(p)).collect();
        let token = rand::rng().random_range(1..i64::MAX);
        if parts.is_empty() {
            return Ok(Batch {
                token,
                sites: Vec::new(),
            });
        }
        let held = Held {
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
        held: Option<Held<'_>>,
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
        held: Option<Held<'_>>,
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
        let sql = self.sql();
        let claim = match held {
            Some(held) => self.statement(
                &sql.claim_held
                    .replace("{parts}", &placeholders(held.parts.len())),
            ),
            None => sql.claim.clone(),
        };
        with_pool!(&self.db, pool => {
            let claim = || {
                let mut q = sqlx::query(&claim)
                    .bind(owner)
                    .bind(token)
                    .bind(millis(lease));
                for part in held.iter().flat_map(|h| h.parts) {
                    q = q.bind(part);
                }
                q = q.bind(i64::from(n));
                match held {
                    Some(held) if sql.claim_returns => q.bind(held.token),
                    _ => q,
                }
            };
            // A retried UPDATE whose first try did land claims more rows under the same token; the
            // SELECT below then reads them all, so nothing is left orphaned until its lease
            // expires. PostgreSQL's claim returns its rows (only those of held partitions), so
            // it reads them back only when it was retried.
            let claimed = if sql.claim_returns {
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
                0
            } else {
                retry("claim", || claim().execute(pool)).await?.rows_affected()
            };
            let sites = retry("read batch", || {
                match held {
                    Some(held) => sqlx::query_as::<_, Site>(&sql.select_held_batch)
                        .bind(token)
                        .bind(held.token),
                    None => sqlx::query_as::<_, Site>(&sql.select_batch).bind(token),
                }
                .fetch_all(pool)
            })
            .await?;
            if let Some(held) = held.filter(|_| (sites.len() as u64) < claimed) {
                retry("give back sites of lost partitions", || {
                    sqlx::query(&sql.unclaim_lost).bind(token).bind(held.token).execute(pool)
                })
                .await?;
            }
            Ok(Batch { token, sites })
        })
    }

    /// The alternative claim (`ClaimMethod::SkipLocked`): choose and lock due rows, skipping
    /// rows other claimers hold locked, then mark them, in one transaction.
    async fn claim_skip_locked(
        &self,
        pool: &MySqlPool,
        held: Option<Held<'_>>,
        owner: &str,
        n: u32,
        lease: Duration,
        token: i64,
    ) -> Result<Batch, Error> {
        let in_parts = match held {
            Some(held) => format!("AND part IN ({})", placeholders(held.parts.len())),
            None => String::new(),
        };
        let choose = self.statement(&format!(
            "SELECT id, ? AS claim_token, url, host, part, tries, consecutive_failures, crawl, depth \
             FROM sites FORCE INDEX (sites_due) WHERE state = {{pending}} AND next_check_at <= {{now}} \
             {in_parts} ORDER BY next_check_at, id LIMIT ? FOR UPDATE SKIP LOCKED"
        ));
        let sites = retry("claim", || async {
            let mut tx = pool.begin().await?;
            let mut choose = sqlx::query_as(&choose).bind(token);
            for part in held.iter().flat_map(|h| h.parts) {
                choose = choose.bind(part);
            }
            let sites: Vec<Site> = choose.bind(i64::from(n)).fetch_all(&mut *tx).await?;
            if !sites.is_empty() {
                let mark = self.statement(&format!(
                    "UPDATE {} SET state = {{claimed}}, owner = ?, claim_token = ?, \
                     expires_at = {{now}} + ? WHERE id IN ({})",
                    self.sql().sites_by_id,
                    placeholders(sites.len())
                ));
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
        let sql = self.sql();
        let kept = with_pool!(&self.db, pool => {
            retry("extend", || {
                sqlx::query(&sql.extend).bind(millis(lease)).bind(token).execute(pool)
            })
            .await?
            .rows_affected()
        });
        if kept as usize >= ids.len() {
            return Ok(Vec::new());
        }
        let owned: Vec<i64> = with_pool!(&self.db, pool => {
            retry("owned", || sqlx::query_scalar(&sql.owned).bind(token).fetch_all(pool)).await?
        });
        Ok(ids
            .iter()
            .copied()
            .filter(|id| !owned.contains(id))
            .collect())
    }

    /// Gives back the sites `ids` of claim `token`, due again after `delay` (zero at shutdown).
    /// Returns how many it still owned. Attempts are not counted: the sites were not checked.
    pub async fn release(&self, token: i64, ids: &[i64], delay: Duration) -> Result<u64, Error> {
        let mut released = 0;
        for chunk in ids.chunks(1000) {
            let sql = self.statement(&format!(
                "UPDATE {} SET state = {{pending}}, owner = NULL, claim_token = NULL, \
                 expires_at = NULL, next_check_at = {{now}} + ? \
                 WHERE claim_token = ? AND state = {{claimed}} AND id IN ({})",
                self.sql().sites_by_id,
                placeholders(chunk.len())
            ));
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
        let sql = self.sql();
        Ok(with_pool!(&self.db, pool => {
            retry("now", || sqlx::query_scalar::<_, i64>(&sql.now).fetch_one(pool)).await?
        }))
    }

    /// A statement built per call, finished for this database (see [`crate::sql::statement`]).
    pub(crate) fn statement(&self, text: &str) -> String {
        crate::sql::statement(self.db.dialect(), text)
    }
}
