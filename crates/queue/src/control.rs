//! Fleet-wide control: pausing and resuming every worker at once.
//!
//! The switch is one row of the `fleet` table. Workers read it with their heartbeat, so a
//! pause reaches the whole fleet within one `--heartbeat`, wherever its machines are, and
//! holds across worker restarts: a worker that starts while the fleet is paused claims nothing.
//! A paused worker finishes what it holds and keeps its leases; it only stops claiming. The
//! view [`Control`] ([`Queue::control`]).

use crate::db::{with_pool, Db};
use crate::error::Error;
use crate::queue::Queue;
use crate::retry::retry;
use crate::sql::cached;

/// Whether the fleet is paused, and since when.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, sqlx::FromRow)]
pub struct FleetState {
    pub paused: bool,
    /// Unix milliseconds (the database's clock) of the last pause or resume; 0 if never.
    pub changed_at: i64,
}

/// The fleet's switch: pause, resume, and whether it is paused. Obtained from
/// [`Queue::control`]; it borrows the queue's database handle.
#[derive(Clone, Copy, Debug)]
pub struct Control<'q> {
    db: &'q Db,
}

impl Queue {
    /// The fleet's switch ([`Control`]).
    pub fn control(&self) -> Control<'_> {
        Control { db: &self.db }
    }
}

impl Control<'_> {
    /// Pauses the fleet: workers stop claiming at their next heartbeat. Returns whether this
    /// call changed anything (false when it was paused already).
    pub async fn pause(&self) -> Result<bool, Error> {
        self.set_paused(true).await
    }

    /// Resumes the fleet: workers claim again at their next heartbeat. Returns whether this
    /// call changed anything (false when it was not paused).
    pub async fn resume(&self) -> Result<bool, Error> {
        self.set_paused(false).await
    }

    /// Whether the fleet is paused.
    pub async fn is_paused(&self) -> Result<bool, Error> {
        Ok(self.fleet_state().await?.paused)
    }

    /// The switch and when it last changed.
    pub async fn fleet_state(&self) -> Result<FleetState, Error> {
        let sql = cached!(
            self.db.dialect(),
            "SELECT paused, changed_at FROM fleet WHERE id = 1"
        );
        let row: Option<(i16, i64)> = with_pool!(self.db, pool => {
            retry("fleet state", || sqlx::query_as(sql).fetch_optional(pool))
            .await?
        });
        Ok(
            row.map_or_else(FleetState::default, |(paused, changed_at)| FleetState {
                paused: paused != 0,
                changed_at,
            }),
        )
    }

    /// Sets the switch; `changed_at` moves only when it changes, so it tells since when.
    async fn set_paused(&self, paused: bool) -> Result<bool, Error> {
        let sql = cached!(
            self.db.dialect(),
            "UPDATE fleet SET paused = ?, changed_at = {now} WHERE id = 1 AND paused <> ?"
        );
        let flag = i16::from(paused);
        let changed = with_pool!(self.db, pool => {
            retry("pause or resume", || sqlx::query(sql).bind(flag).bind(flag).execute(pool))
                .await?
                .rows_affected()
        });
        Ok(changed > 0)
    }
}
