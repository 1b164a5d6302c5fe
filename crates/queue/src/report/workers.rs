//! The registered workers, as the workers table knows them.

use super::reports::Reports;
use crate::db::with_pool;
use crate::error::Error;
use crate::sql::cached;

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

impl Reports<'_> {
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
