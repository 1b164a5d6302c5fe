//! The workers table: who is working, and whether they are still alive.

use crate::db::with_pool;
use crate::error::Error;
use crate::queue::Queue;
use crate::retry::retry;
use crate::sql::{cached, inserted, upsert};

impl Queue {
    /// Records a worker as started now (replacing an earlier worker of the same id).
    pub async fn register(&self, id: &str, host: &str, pid: u32) -> Result<(), Error> {
        let sql = cached!(self.db.dialect(), |dialect| {
            let new = |column: &str| inserted(dialect, column);
            format!(
                "{} host = {}, pid = {}, started_at = {}, heartbeat_at = {}, checked = 0, alone = 0",
                upsert(
                    dialect,
                    "INTO workers (id, host, pid, started_at, heartbeat_at) \
                     VALUES (?, ?, ?, {now}, {now})",
                    "id"
                ),
                new("host"),
                new("pid"),
                new("started_at"),
                new("heartbeat_at"),
            )
        });
        with_pool!(&self.db, pool => {
            retry("register", || {
                sqlx::query(sql).bind(id).bind(host).bind(i64::from(pid)).execute(pool)
            })
            .await?;
        });
        Ok(())
    }

    /// Says the worker is alive and has checked `checked` sites so far. Returns false when its
    /// row is gone (a reaper took it for dead): the caller should register again.
    pub async fn heartbeat(&self, id: &str, checked: u64) -> Result<bool, Error> {
        let sql = cached!(
            self.db.dialect(),
            "UPDATE workers SET heartbeat_at = {now}, checked = ? WHERE id = ?"
        );
        let checked = i64::try_from(checked).unwrap_or(i64::MAX);
        let found = with_pool!(&self.db, pool => {
            retry("heartbeat", || sqlx::query(sql).bind(checked).bind(id).execute(pool))
                .await?
                .rows_affected()
        });
        Ok(found > 0)
    }

    /// Removes a worker that stopped cleanly.
    pub async fn deregister(&self, id: &str) -> Result<(), Error> {
        let sql = cached!(self.db.dialect(), "DELETE FROM workers WHERE id = ?");
        with_pool!(&self.db, pool => {
            retry("deregister", || sqlx::query(sql).bind(id).execute(pool))
                .await?;
        });
        Ok(())
    }
}
