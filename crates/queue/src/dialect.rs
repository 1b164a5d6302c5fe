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
