//! Host partitions: fleet-wide politeness.
//!
//! Every host belongs to one of [`PARTS`] partitions (the first two bytes of SHA-256 of its
//! name, mod [`PARTS`]; stored on each site at seed). A partition is leased like a site, by
//! update-then-select: one `UPDATE … LIMIT n` stamps the worker's parts token and a lease
//! expiry on free partitions, and the worker reads back what its token holds. A worker claims
//! sites only in the partitions it holds ([`Queue::claim_held`]), and its write-backs are fenced
//! by them too, so one worker at a time asks a host and its per-host limits are the fleet's.
//! The leases are [`Partitions`], a view of the queue ([`Queue::parts`]), with the work-aware
//! balance of `balance.rs`.
//!
//! The count is fixed, so a host never changes partition however many workers come and go
//! (a mod-N split by worker would remap every host at each change). 1,024 partitions give a
//! fleet of up to a few hundred workers a fair share each, and keep the lease table tiny.
//!
//! Hand-over: a worker over its fair share marks partitions as draining (no more claims
//! from them), and gives each back once none of its sites is in flight; only then may another
//! worker take it. A partition whose lease expired, or whose owner's heartbeat stopped, is free.

use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::db::{with_pool, Db};
use crate::error::Error;
use crate::queue::{millis, Queue};
use crate::retry::retry;
use crate::sql::{cached, limited_update};

/// Host partitions. Fixed: it is in the migrations (the `parts` rows, the SQL backfill).
pub const PARTS: u16 = 1024;

/// The partition of `host`: the first two bytes of its SHA-256, mod [`PARTS`] (MySQL computes
/// the same for old rows in a migration: `CONV(LEFT(SHA2(host, 256), 4), 16, 10) % 1024`).
pub fn part_of(host: &str) -> i16 {
    let digest = Sha256::digest(host.as_bytes());
    (u16::from_be_bytes([digest[0], digest[1]]) % PARTS) as i16
}

/// A partition nobody holds.
pub(crate) const FREE_PART: &str =
    "owner = NULL, token = NULL, expires_at = 0, draining = 0, heir_token = NULL, heir_owner = NULL";

/// Binds: owner. Whether the owner has a site of the partition (of the enclosing `UPDATE
/// parts`) in flight: a partition is handed over only once none is.
const IN_FLIGHT: &str =
    "(SELECT 1 FROM sites WHERE sites.state = {claimed} AND sites.part = parts.id AND sites.owner = ?)";

/// A partition a worker holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeldPart {
    pub id: i16,
    /// Being handed over: no more claims from it.
    pub draining: bool,
    /// Another worker asked for it (it is its heir's once nothing of it is in flight); the
    /// holder may decline ([`Partitions::decline_ask`]).
    pub asked: bool,
}

/// The host partitions' leases: taken, kept, handed over, given back, and asked for
/// (`balance.rs`). Obtained from [`Queue::parts`]; it borrows the queue's database handle.
#[derive(Clone, Copy, Debug)]
pub struct Partitions<'q> {
    pub(crate) db: &'q Db,
}

impl Queue {
    /// The host partitions' leases in this queue's database ([`Partitions`]).
    pub fn parts(&self) -> Partitions<'_> {
        Partitions { db: &self.db }
    }
}

impl Partitions<'_> {
    /// Leases up to `n` free partitions to `owner` under `token`; returns how many it got.
    pub async fn take(
        &self,
        owner: &str,
        token: i64,
        n: u32,
        lease: Duration,
    ) -> Result<u64, Error> {
        let sql = cached!(self.db.dialect(), |dialect| {
            limited_update(
                dialect,
                "parts",
                "owner = ?, token = ?, expires_at = {now} + ?, draining = 0",
                "expires_at <= {now}",
                "expires_at, id",
            )
        });
        Ok(with_pool!(self.db, pool => {
            retry("take parts", || {
                sqlx::query(sql)
                    .bind(owner)
                    .bind(token)
                    .bind(millis(lease))
                    .bind(i64::from(n))
                    .execute(pool)
            })
            .await?
            .rows_affected()
        }))
    }

    /// Extends the lease of every partition `token` holds, and returns them. A partition
    /// missing from the answer was lost (its lease expired and another worker took it).
    pub async fn keep(&self, token: i64, lease: Duration) -> Result<Vec<HeldPart>, Error> {
        let sql = cached!(
            self.db.dialect(),
            "UPDATE parts SET expires_at = {now} + ? WHERE token = ?"
        );
        let held = cached!(
            self.db.dialect(),
            "SELECT id, draining, heir_token FROM parts WHERE token = ?"
        );
        let rows: Vec<(i16, i16, Option<i64>)> = with_pool!(self.db, pool => {
            retry("keep parts", || sqlx::query(sql).bind(millis(lease)).bind(token).execute(pool))
                .await?;
            retry("held parts", || {
                sqlx::query_as(held)
                    .bind(token)
                    .fetch_all(pool)
            })
            .await?
        });
        Ok(rows
            .into_iter()
            .map(|(id, draining, heir)| HeldPart {
                id,
                draining: draining != 0,
                asked: heir.is_some(),
            })
            .collect())
    }

    /// Starts handing over `n` of the partitions `token` holds: no more claims from them.
    pub async fn drain(&self, token: i64, n: u32) -> Result<u64, Error> {
        let sql = cached!(self.db.dialect(), |dialect| {
            limited_update(
                dialect,
                "parts",
                "draining = 1",
                "token = ? AND draining = 0",
                "id DESC",
            )
        });
        Ok(with_pool!(self.db, pool => {
            retry("drain parts", || sqlx::query(sql).bind(token).bind(i64::from(n)).execute(pool))
                .await?
                .rows_affected()
        }))
    }

    /// Gives back the draining partitions of `token` in which `owner` has no site in flight:
    /// to the worker that asked for it, if one did (its heir, see `balance.rs`; leased for
    /// `lease` from now), else free for anyone.
    pub async fn release_drained(
        &self,
        token: i64,
        owner: &str,
        lease: Duration,
    ) -> Result<u64, Error> {
        // The heir's columns are read before they are cleared: MySQL assigns left to right,
        // SQLite and PostgreSQL from the old row.
        let to_heirs = cached!(self.db.dialect(), |_| {
            format!(
                "UPDATE parts SET owner = heir_owner, token = heir_token, \
                 expires_at = {{now}} + ?, draining = 0, heir_token = NULL, heir_owner = NULL \
                 WHERE token = ? AND draining = 1 AND heir_token IS NOT NULL AND NOT EXISTS {IN_FLIGHT}"
            )
        });
        // Only those with no heir: one whose last site ended between the two statements is
        // the heir's at the next round, never free for a third worker.
        let free = cached!(self.db.dialect(), |_| {
            format!(
                "UPDATE parts SET {FREE_PART} \
                 WHERE token = ? AND draining = 1 AND heir_token IS NULL AND NOT EXISTS {IN_FLIGHT}"
            )
        });
        Ok(with_pool!(self.db, pool => {
            let handed = retry("hand partitions to their heirs", || {
                sqlx::query(to_heirs).bind(millis(lease)).bind(token).bind(owner).execute(pool)
            })
            .await?
            .rows_affected();
            handed + retry("release drained parts", || {
                sqlx::query(free).bind(token).bind(owner).execute(pool)
            })
            .await?
            .rows_affected()
        }))
    }

    /// Gives back every partition `token` holds (a worker stopping), having first withdrawn
    /// its requests for others' partitions: a request left behind would have the holder hand
    /// the partition to a worker that is gone, to sit there until its lease expires (seen in
    /// the late-joining worker's test). Withdrawn first, so a hand-over that lands before the
    /// withdrawal is given back by the release.
    pub async fn release(&self, token: i64) -> Result<u64, Error> {
        let withdraw = cached!(
            self.db.dialect(),
            "UPDATE parts SET heir_token = NULL, heir_owner = NULL WHERE heir_token = ?"
        );
        let release = cached!(self.db.dialect(), |_| {
            format!("UPDATE parts SET {FREE_PART} WHERE token = ?")
        });
        Ok(with_pool!(self.db, pool => {
            retry("withdraw partition requests", || {
                sqlx::query(withdraw).bind(token).execute(pool)
            })
            .await?;
            retry("release parts", || sqlx::query(release).bind(token).execute(pool))
                .await?
                .rows_affected()
        }))
    }

    /// Whether a worker other than `token`'s is handing partitions over: they will be free
    /// (or its heir's) once their checks end, so a worker short of its share looks again soon.
    pub async fn draining_elsewhere(&self, token: i64) -> Result<bool, Error> {
        let sql = cached!(
            self.db.dialect(),
            "SELECT COUNT(*) FROM parts WHERE draining = 1 AND token <> ?"
        );
        let n: i64 = with_pool!(self.db, pool => {
            retry("partitions draining", || sqlx::query_scalar(sql).bind(token).fetch_one(pool))
                .await?
        });
        Ok(n > 0)
    }

    /// Workers whose heartbeat is younger than `dead_after`.
    pub async fn live_workers(&self, dead_after: Duration) -> Result<u64, Error> {
        let sql = cached!(
            self.db.dialect(),
            "SELECT COUNT(*) FROM workers WHERE heartbeat_at >= {now} - ?"
        );
        let n: i64 = with_pool!(self.db, pool => {
            retry("live workers", || sqlx::query_scalar(sql).bind(millis(dead_after)).fetch_one(pool))
                .await?
        });
        Ok(n.max(0) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_always_falls_in_the_same_partition_within_range() {
        assert_eq!(
            part_of("example.com"),
            889,
            "as MySQL's backfill computes it"
        );
        for host in [
            "a.example",
            "b.example",
            "127.0.0.1",
            "xn--bcher-kva.example",
        ] {
            let part = part_of(host);
            assert!((0..PARTS as i16).contains(&part));
            assert_eq!(part, part_of(host));
        }
    }
}
