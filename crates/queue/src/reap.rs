//! Giving back the work of dead or stalled workers, and making old verdicts due again.
//!
//! Any number of processes reap (every worker, and `crawler-reap --every`); one of them acts
//! per interval, the holder of the fleet's one reaper lease. [`Reaping::reap_as_leader`] is
//! that contract, in one place: the lease's name, and how long it outlives its holder's
//! interval. All of it is [`Reaping`], a view of the queue ([`Queue::reaping`]).
//!
//! Each `UPDATE` rechecks the state and the expiry in its own `WHERE`, so a site completed
//! between a look and a write is never overwritten (River #1302), and works in bounded chunks so
//! that no statement holds locks on millions of rows.

use std::time::Duration;

use crate::db::with_pool;
use crate::dialect::Dialect;
use crate::error::Error;
use crate::parts::FREE_PART;
use crate::queue::{millis, Queue};
use crate::retry::retry;
use crate::sql::{cached, limited_update};

/// Rows per reaping statement.
const REAP_CHUNK: u32 = 1000;

/// The singleton lease under which the fleet reaps: the workers and `crawler-reap` take the
/// same one, so that one process reaps per interval however many run.
const REAPER: &str = "reap";

/// What a reap gave back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reaped {
    /// Claims whose lease had expired.
    pub expired: u64,
    /// Claims of workers whose heartbeat had stopped, before their lease expired.
    pub abandoned: u64,
    /// Done sites made due again by `recheck`.
    pub rechecked: u64,
    /// Dead sites made due again for a confirming check (`confirm.rs`).
    pub confirming: u64,
    /// Old verdict changes deleted by [`History::prune`](crate::History::prune), when the
    /// pass was asked to.
    pub pruned: Option<u64>,
}

/// A claim given back: the site pending again, owned by nobody.
const UNCLAIM: &str = "state = {pending}, owner = NULL, claim_token = NULL, expires_at = NULL";

/// Giving back the work of dead or stalled workers, and making old verdicts due again.
/// Obtained from [`Queue::reaping`]; it borrows the queue.
#[derive(Clone, Copy, Debug)]
pub struct Reaping<'q> {
    queue: &'q Queue,
}

impl Queue {
    /// Reaping this queue ([`Reaping`]).
    pub fn reaping(&self) -> Reaping<'_> {
        Reaping { queue: self }
    }
}

impl Reaping<'_> {
    /// Reaps (see [`Reaping::reap`]) if `id` holds the reaper lease or can take it, and returns
    /// what it gave back; `None` when another process holds the lease. A holder that reaps
    /// every `every` renews it each time; the lease lasts two intervals, so one late pass
    /// does not hand reaping to another process, and a holder that died is replaced after two.
    pub async fn reap_as_leader(
        &self,
        id: &str,
        dead_after: Duration,
        every: Duration,
    ) -> Result<Option<Reaped>, Error> {
        if !self.queue.leases().lead(REAPER, id, every * 2).await? {
            return Ok(None);
        }
        self.reap(dead_after).await.map(Some)
    }

    /// Gives the reaper lease up (at a clean shutdown), so that another process reaps at its
    /// next tick rather than after the lease expires.
    pub async fn resign_reaper(&self, id: &str) -> Result<(), Error> {
        self.queue.leases().resign(REAPER, id).await
    }

    /// Expired leases back to pending, and the claims of workers whose last heartbeat is older
    /// than `dead_after`; frees those workers' host partitions, then forgets them. (Partitions
    /// whose lease expired need no reaping: they are free to take as they are.)
    pub async fn reap(&self, dead_after: Duration) -> Result<Reaped, Error> {
        let dialect = self.queue.db.dialect();
        let reap_dead_parts = cached!(dialect, |_| {
            format!(
                "UPDATE parts SET {FREE_PART} \
                 WHERE owner IN (SELECT id FROM workers WHERE heartbeat_at < {{now}} - ?)"
            )
        });
        let forget_dead_workers = cached!(
            dialect,
            "DELETE FROM workers WHERE heartbeat_at < {now} - ?"
        );
        let expired = self
            .in_chunks(cached!(dialect, expired_leases), None)
            .await?;
        let abandoned = self
            .in_chunks(cached!(dialect, abandoned_claims), Some(millis(dead_after)))
            .await?;
        with_pool!(&self.queue.db, pool => {
            retry("free dead workers' partitions", || {
                sqlx::query(reap_dead_parts).bind(millis(dead_after)).execute(pool)
            })
            .await?;
            retry("forget dead workers", || {
                sqlx::query(forget_dead_workers).bind(millis(dead_after)).execute(pool)
            })
            .await?;
        });
        let confirming = self
            .in_chunks(cached!(dialect, due_to_confirm), None)
            .await?;
        Ok(Reaped {
            expired,
            abandoned,
            confirming,
            rechecked: 0,
            pruned: None,
        })
    }

    /// Done sites checked longer ago than `older_than` become due again (continuous monitoring).
    pub async fn recheck(&self, older_than: Duration) -> Result<u64, Error> {
        let sql = cached!(self.queue.db.dialect(), old_verdicts);
        self.in_chunks(sql, Some(millis(older_than))).await
    }

    /// Runs a limited statement until it changes fewer rows than a chunk.
    async fn in_chunks(&self, statement: &str, arg: Option<i64>) -> Result<u64, Error> {
        let mut total = 0;
        loop {
            let changed = with_pool!(&self.queue.db, pool => {
                retry("reap", || {
                    let mut q = sqlx::query(statement);
                    if let Some(arg) = arg {
                        q = q.bind(arg);
                    }
                    q.bind(i64::from(REAP_CHUNK)).execute(pool)
                })
                .await?
                .rows_affected()
            });
            total += changed;
            if changed < u64::from(REAP_CHUNK) {
                return Ok(total);
            }
        }
    }
}

/// For [`cached`]: expired leases back to pending. Binds: chunk.
fn expired_leases(dialect: Dialect) -> String {
    let filter = "state = {claimed} AND expires_at < {now}";
    limited_update(dialect, "sites", UNCLAIM, filter, "expires_at")
}

/// For [`cached`]: claims of workers whose heartbeat stopped back to pending. Binds:
/// dead-after ms, chunk.
fn abandoned_claims(dialect: Dialect) -> String {
    let filter =
        "state = {claimed} AND owner IN (SELECT id FROM workers WHERE heartbeat_at < {now} - ?)";
    limited_update(dialect, "sites", UNCLAIM, filter, "expires_at")
}

/// For [`cached`]: dead sites due for a confirming check (`confirm.rs`) back to pending.
/// Binds: chunk.
fn due_to_confirm(dialect: Dialect) -> String {
    limited_update(
        dialect,
        "sites",
        "state = {pending}, tries = 0, next_check_at = {now}, confirm_check_at = NULL",
        "state = {done} AND confirm_check_at <= {now}",
        "confirm_check_at",
    )
}

/// For [`cached`]: done sites checked longer ago than the bound become due. Binds:
/// older-than ms, chunk.
fn old_verdicts(dialect: Dialect) -> String {
    limited_update(
        dialect,
        "sites",
        "state = {pending}, tries = 0, next_check_at = {now}",
        "state = {done} AND next_check_at <= {now} - ?",
        "next_check_at",
    )
}
