//! What this process's SQLite database did: statements run, commits, rows written. On MySQL
//! and PostgreSQL the server counts its own work (its status counters); SQLite runs inside the
//! process, so the process counts it, through hooks each connection gets when it opens. A
//! worker logs the totals when it stops (at debug level: `RUST_LOG=crawler_worker::run=debug`),
//! and the politeness benchmark prints them per site.
//!
//! The counts are the process's, over every SQLite connection it opened: a commit is one a
//! transaction or an autocommit statement made (SQLite's commit hook); a statement is one
//! that began to run (its trace, `SQLITE_TRACE_STMT`: `BEGIN` and `COMMIT` included, as in a
//! server's count); a row written is one inserted, updated or deleted (the update hook).

use std::ffi::{c_int, c_uint, c_void};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use sqlx::sqlite::SqliteConnection;

/// Counters that connections add to.
struct Counters {
    statements: AtomicU64,
    commits: AtomicU64,
    rows_written: AtomicU64,
}

impl Counters {
    const fn new() -> Counters {
        Counters {
            statements: AtomicU64::new(0),
            commits: AtomicU64::new(0),
            rows_written: AtomicU64::new(0),
        }
    }

    fn read(&self) -> SqliteWork {
        SqliteWork {
            statements: self.statements.load(Relaxed),
            commits: self.commits.load(Relaxed),
            rows_written: self.rows_written.load(Relaxed),
        }
    }
}

/// The process's counters, which every connection of a [`crate::Db`] adds to.
static PROCESS: Counters = Counters::new();

/// The totals so far, over every SQLite connection of this process.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SqliteWork {
    pub statements: u64,
    pub commits: u64,
    pub rows_written: u64,
}

impl SqliteWork {
    /// The totals now.
    pub fn now() -> SqliteWork {
        PROCESS.read()
    }
}

/// `statements 1234, commits 56, rows written 7890`: the line a worker logs when it stops,
/// and which the politeness benchmark reads back ([`SqliteWork::parse`]).
impl fmt::Display for SqliteWork {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "statements {}, commits {}, rows written {}",
            self.statements, self.commits, self.rows_written
        )
    }
}

impl SqliteWork {
    /// The counts in `text` as [`Display`](fmt::Display) writes them; `None` if it is not that.
    pub fn parse(text: &str) -> Option<SqliteWork> {
        let count = |part: Option<&str>, name: &str| part?.strip_prefix(name)?.parse().ok();
        let mut parts = text.trim().split(", ");
        let work = SqliteWork {
            statements: count(parts.next(), "statements ")?,
            commits: count(parts.next(), "commits ")?,
            rows_written: count(parts.next(), "rows written ")?,
        };
        parts.next().is_none().then_some(work)
    }
}

/// Sums the work of several processes (the workers of one crawl).
impl std::ops::AddAssign for SqliteWork {
    fn add_assign(&mut self, other: SqliteWork) {
        self.statements += other.statements;
        self.commits += other.commits;
        self.rows_written += other.rows_written;
    }
}

/// Counts what `conn` does from now on, in the process's totals.
pub(crate) async fn count(conn: &mut SqliteConnection) -> Result<(), sqlx::Error> {
    count_into(conn, &PROCESS).await
}

async fn count_into(
    conn: &mut SqliteConnection,
    counters: &'static Counters,
) -> Result<(), sqlx::Error> {
    let mut handle = conn.lock_handle().await?;
    handle.set_commit_hook(move || {
        counters.commits.fetch_add(1, Relaxed);
        true // the commit goes ahead
    });
    handle.set_update_hook(move |_| {
        counters.rows_written.fetch_add(1, Relaxed);
    });
    let db = handle.as_raw_handle().as_ptr();
    let context = counters as *const Counters as *mut c_void;
    // SAFETY: `db` is this connection's open handle, locked for us. The context is a
    // `&'static Counters`, so it outlives the connection; the callback only adds to one of its
    // atomics and reads none of its other arguments.
    unsafe {
        libsqlite3_sys::sqlite3_trace_v2(
            db,
            libsqlite3_sys::SQLITE_TRACE_STMT as c_uint,
            Some(on_statement),
            context,
        );
    }
    Ok(())
}

/// SQLite's trace callback: a statement began to run. `context` is the `&'static Counters`
/// that [`count_into`] registered.
unsafe extern "C" fn on_statement(
    _event: c_uint,
    context: *mut c_void,
    _statement: *mut c_void,
    _text: *mut c_void,
) -> c_int {
    // SAFETY: see `count_into`: a shared reference to a static, used only through atomics.
    let counters = unsafe { &*(context as *const Counters) };
    counters.statements.fetch_add(1, Relaxed);
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::sqlite::SqliteConnectOptions;
    use sqlx::{ConnectOptions, Executor};

    #[tokio::test]
    async fn a_connection_counts_its_statements_commits_and_rows() {
        let mut conn = SqliteConnectOptions::new()
            .in_memory(true)
            .connect()
            .await
            .unwrap();
        static MINE: Counters = Counters::new();
        count_into(&mut conn, &MINE).await.unwrap();
        conn.execute("CREATE TABLE t (x INTEGER)").await.unwrap();
        let before = MINE.read();
        conn.execute("INSERT INTO t VALUES (1), (2), (3)")
            .await
            .unwrap();
        conn.execute("BEGIN").await.unwrap();
        conn.execute("UPDATE t SET x = x + 1").await.unwrap();
        conn.execute("DELETE FROM t WHERE x = 2").await.unwrap();
        conn.execute("COMMIT").await.unwrap();
        let after = MINE.read();
        // Five statements; two commits (the autocommit INSERT, then COMMIT); three rows
        // inserted, three updated, one deleted.
        assert_eq!(
            (
                after.statements - before.statements,
                after.commits - before.commits,
                after.rows_written - before.rows_written
            ),
            (5, 2, 7),
            "{before} → {after}"
        );
        let work = SqliteWork {
            statements: 1,
            commits: 2,
            rows_written: 3,
        };
        assert_eq!(work.to_string(), "statements 1, commits 2, rows written 3");
        assert_eq!(SqliteWork::parse(&work.to_string()), Some(work));
        assert_eq!(SqliteWork::parse("statements 1, commits 2"), None);
        assert_eq!(
            SqliteWork::parse("statements 1, commits 2, rows written 3, more"),
            None
        );
    }
}
