//! [`Reports`], the read side of the queue: the view every report method is of, obtained from
//! [`Queue::reports`].

use crate::db::Db;
use crate::error::Error;
use crate::queue::Queue;

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
