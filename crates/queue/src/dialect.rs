//! Which SQL dialect a database speaks: what a URL names before connecting (`database_url.rs`),
//! what a pool speaks (`db.rs`), and what `sql.rs` writes each statement in. A module of its own
//! so that those three need not import each other for it.

/// Which SQL dialect a [`crate::Db`] speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    MySql,
    Postgres,
    Sqlite,
}

/// Writes to disjoint rows worth running at once on a database server (a write-back's
/// chunks): each is one statement on its own connection, and a server runs them on as many
/// threads. Two: four, on twice the connections, drained no faster (the politeness bench's z
/// on MariaDB).
const CONCURRENT_WRITES: usize = 2;

impl Dialect {
    /// How many writes to disjoint rows are worth running at once ([`CONCURRENT_WRITES`] on a
    /// server). SQLite writes one statement at a time whatever its callers do: one.
    pub(crate) fn concurrent_writes(self) -> usize {
        match self {
            Dialect::Sqlite => 1,
            Dialect::MySql | Dialect::Postgres => CONCURRENT_WRITES,
        }
    }
}
