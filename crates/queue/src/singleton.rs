//! Periodic work that exactly one process does, however many run it: a lease row per job,
//! taken with compare-and-set.
//!
//! `UPDATE leases SET owner = ?, expires_at = now + ttl WHERE name = ? AND (owner = ? OR
//! expires_at <= now)` matches one row only for the holder (renewing) or when the lease has
//! lapsed; one matched row means the caller holds it. Everyone else skips the job. A holder that
//! stops renewing loses the lease after `ttl`, and the next contender takes it. The view
//! [`Leases`] ([`Queue::leases`]).

use std::time::Duration;

use crate::db::{with_pool, Db};
use crate::error::Error;
use crate::queue::{millis, Queue};
use crate::retry::retry;
use crate::sql::{cached, insert_ignore};

/// The fleet's leases of periodic jobs (the reaper, the archiver, the notifier): one row per
/// job. Obtained from [`Queue::leases`]; it borrows the queue's database handle.
#[derive(Clone, Copy, Debug)]
pub struct Leases<'q> {
    db: &'q Db,
}

impl Queue {
    /// The leases of the fleet's periodic jobs ([`Leases`]).
    pub fn leases(&self) -> Leases<'_> {
        Leases { db: &self.db }
    }
}

impl Leases<'_> {
    /// Takes or renews the lease `name` for `owner` for `ttl`. Returns whether the caller holds it
    /// now, i.e. should run the job this time.
    pub(crate) async fn lead(&self, name: &str, owner: &str, ttl: Duration) -> Result<bool, Error> {
        let lease_row = cached!(self.db.dialect(), |dialect| {
            insert_ignore(dialect, "INTO leases (name, expires_at) VALUES (?, 0)")
        });
        // One matched row means the caller holds the lease.
        let take_lease = cached!(
            self.db.dialect(),
            "UPDATE leases SET owner = ?, expires_at = {now} + ?, runs = runs + 1 \
             WHERE name = ? AND (owner = ? OR expires_at <= {now})"
        );
        let held = with_pool!(self.db, pool => {
            retry("lease row", || sqlx::query(lease_row).bind(name).execute(pool)).await?;
            retry("take lease", || {
                sqlx::query(take_lease)
                    .bind(owner)
                    .bind(millis(ttl))
                    .bind(name)
                    .bind(owner)
                    .execute(pool)
            })
            .await?
            .rows_affected()
        });
        Ok(held == 1)
    }

    /// Gives the lease up, so another process may take it at once (at a clean shutdown).
    pub async fn resign(&self, name: &str, owner: &str) -> Result<(), Error> {
        let sql = cached!(
            self.db.dialect(),
            "UPDATE leases SET expires_at = 0 WHERE name = ? AND owner = ?"
        );
        with_pool!(self.db, pool => {
            retry("resign", || {
                sqlx::query(sql)
                    .bind(name)
                    .bind(owner)
                    .execute(pool)
            })
            .await?;
        });
        Ok(())
    }

    /// [`Leases::lead`], for the tests of leases (the `testing` feature): the queue's jobs take
    /// their leases themselves (`reap_as_leader`, `Archive::lead`).
    #[cfg(any(test, feature = "testing"))]
    pub async fn try_lead(&self, name: &str, owner: &str, ttl: Duration) -> Result<bool, Error> {
        self.lead(name, owner, ttl).await
    }

    /// How many times the lease `name` has been taken or renewed: the number of runs of its job.
    /// For the tests (the `testing` feature).
    #[cfg(any(test, feature = "testing"))]
    pub async fn runs(&self, name: &str) -> Result<i64, Error> {
        let sql = cached!(self.db.dialect(), "SELECT runs FROM leases WHERE name = ?");
        let runs = with_pool!(self.db, pool => {
            sqlx::query_scalar::<_, i64>(sql)
                .bind(name)
                .fetch_optional(pool)
                .await?
        });
        Ok(runs.unwrap_or(0))
    }
}
