//! Connecting to the database: one [`Db`] over MySQL/MariaDB, PostgreSQL or SQLite, chosen by
//! the URL.
//!
//! sqlx's query API is the same for every backend, so the queue writes each operation once and
//! runs it on whichever pool this is with [`with_pool!`]; only the SQL text differs (`sql.rs`).

use std::str::FromStr;
use std::time::Duration;

use sqlx::mysql::{MySqlConnectOptions, MySqlPool, MySqlPoolOptions};
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};
use sqlx::{ConnectOptions, Connection, Executor};

use crate::database_url::DatabaseUrl;
pub use crate::dialect::Dialect;
use crate::error::Error;
use crate::retry::retry;

/// A pool of connections to the queue's database.
#[derive(Clone, Debug)]
pub enum Db {
    MySql(MySqlPool),
    Postgres(PgPool),
    Sqlite(SqlitePool),
}

/// Runs `$body` with `$pool` bound to the concrete pool of `$db`: the body is compiled once per
/// backend, so one piece of Rust serves them all.
macro_rules! with_pool {
    ($db:expr, $pool:ident => $body:expr) => {
        match $db {
            $crate::db::Db::MySql($pool) => $body,
            $crate::db::Db::Postgres($pool) => $body,
            $crate::db::Db::Sqlite($pool) => $body,
        }
    };
}
pub(crate) use with_pool;

/// How long a caller waits for a connection before the operation fails (and is retried): short,
/// so that a database that went away is noticed in seconds rather than hanging a worker.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);

/// SQLite waits this long for another process's write to finish before giving up.
const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// WAL pages after which a commit copies the log into the database file (a checkpoint, with
/// its two fsyncs). SQLite's default, 1,000 (4 MB), was passed at nearly every write-back: a
/// claim or a write-back dirties about a page per row (a batch's rows are scattered over the
/// table). At 10,000 (a log of 40 MB at most) a page written again and again (an index's
/// head, a busy table page) is copied once per checkpoint, not once per statement (docs/scale.md,
/// "SQLite"). What a commit guarantees is unchanged: it is in the log when it returns, so a
/// killed process loses nothing; with `synchronous = NORMAL` the log is synced at checkpoints,
/// so a power cut may roll the file back to the last one, as before, over a longer window.
const SQLITE_WAL_AUTOCHECKPOINT: &str = "10000";

/// Connections of a process to a SQLite database, whatever the caller asks for: one. In WAL
/// mode a connection discards its whole page cache whenever another connection has written
/// since its last statement, so with a pool of ten, where the claimer, the writer and the
/// keepers each take whichever connection is free, nearly every statement read its pages
/// again from the file (24 KiB of `read` calls per site in a zero-latency crawl). SQLite runs
/// one writer at a time anyway; a single connection keeps its cache ([`SQLITE_CACHE_KIB`]),
/// and the process's statements simply queue for it. Other processes (more workers, a
/// report) have connections of their own, as before.
const SQLITE_CONNECTIONS: u32 = 1;

/// The page cache of that connection, in KiB (SQLite's default is 2 MiB): enough for the
/// table and indexes of a list of about 200,000 sites, so that a claim and a write-back find
/// the pages of their scattered rows in memory. One connection per process, so at most this
/// much memory.
const SQLITE_CACHE_KIB: i64 = 64 * 1024;

static MYSQL_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations/mysql");
static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations/postgres");
pub(crate) static SQLITE_MIGRATIONS: sqlx::migrate::Migrator =
    sqlx::migrate!("../../migrations/sqlite");

/// What connecting does when a SQLite database file is not there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Missing {
    /// Creates it: the seed and the worker, which fill the queue.
    Create,
    /// Fails, naming the path: the report and the reaper, which only read or tidy a queue, and
    /// for which a new empty database would hide a mistyped path.
    Refuse,
}

impl Db {
    /// Connects and applies the migrations; a SQLite file that is not there is created.
    /// `max_connections` bounds the pool (on SQLite it is one, `SQLITE_CONNECTIONS`). A URL
    /// that cannot work fails before any connection ([`DatabaseUrl::dialect`]).
    pub async fn connect(url: &DatabaseUrl, max_connections: u32) -> Result<Db, Error> {
        Self::open(url, max_connections, Missing::Create).await
    }

    /// Like [`Db::connect`], but a SQLite file that is not there is `missing`'s to decide.
    pub async fn open(
        url: &DatabaseUrl,
        max_connections: u32,
        missing: Missing,
    ) -> Result<Db, Error> {
        let dialect = url.dialect()?;
        if missing == Missing::Refuse {
            if let Some(path) = missing_sqlite_file(url, dialect) {
                return Err(Error::NoDatabase { path });
            }
        }
        let db = Self::connect_pool(url, dialect, max_connections, missing)
            .await
            .map_err(|source| Error::Connect {
                url: url.redacted(),
                source,
            })?;
        db.migrate().await?;
        Ok(db)
    }

    async fn connect_pool(
        url: &DatabaseUrl,
        dialect: Dialect,
        max_connections: u32,
        missing: Missing,
    ) -> Result<Db, sqlx::Error> {
        if dialect == Dialect::Postgres {
            let raw = format!("postgres:{}", url.after_scheme());
            // Notices (the migrator's "relation already exists, skipping" on every start) are
            // not news: only warnings and errors come back.
            let options = PgConnectOptions::from_str(&raw)?
                .options([("client_min_messages", "warning")])
                .log_statements(tracing::log::LevelFilter::Trace);
            probe(&options).await?;
            // READ COMMITTED is PostgreSQL's default (see `sql::MYSQL_SESSION`).
            let pool = PgPoolOptions::new()
                .max_connections(max_connections)
                .acquire_timeout(ACQUIRE_TIMEOUT)
                .connect_with(options)
                .await?;
            Ok(Db::Postgres(pool))
        } else if dialect == Dialect::MySql {
            let raw = format!("mysql:{}", url.after_scheme());
            let options = MySqlConnectOptions::from_str(&raw)?
                .log_statements(tracing::log::LevelFilter::Trace);
            probe(&options).await?;
            let pool = MySqlPoolOptions::new()
                .max_connections(max_connections)
                .acquire_timeout(ACQUIRE_TIMEOUT)
                .after_connect(|conn, _| {
                    Box::pin(async move {
                        conn.execute(crate::sql::MYSQL_SESSION).await?;
                        Ok(())
                    })
                })
                .connect_with(options)
                .await?;
            Ok(Db::MySql(pool))
        } else {
            let options = sqlite_options(url)?
                .create_if_missing(missing == Missing::Create)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(sqlx::sqlite::SqliteSynchronous::Normal)
                .pragma("wal_autocheckpoint", SQLITE_WAL_AUTOCHECKPOINT)
                .pragma("cache_size", (-SQLITE_CACHE_KIB).to_string())
                .busy_timeout(SQLITE_BUSY_TIMEOUT)
                .log_statements(tracing::log::LevelFilter::Trace);
            // Processes opening a new file at once race to switch it to WAL, and SQLite
            // answers a loser "database is locked" without waiting (a deadlock, to it).
            let pool = retry("connect", || {
                SqlitePoolOptions::new()
                    .max_connections(max_connections.min(SQLITE_CONNECTIONS))
                    .acquire_timeout(ACQUIRE_TIMEOUT)
                    .after_connect(|conn, _| Box::pin(crate::sqlite_work::count(conn)))
                    .connect_with(options.clone())
            })
            .await?;
            Ok(Db::Sqlite(pool))
        }
    }

    /// Applies the embedded migrations; safe when several processes start at the same moment.
    ///
    /// On MySQL, migrators queue on a named lock; on PostgreSQL, on sqlx's advisory lock (taken
    /// by `Migrator::run` there). SQLite has no such lock, so two processes may
    /// both find a migration missing; the loser's insert into `_sqlx_migrations` fails, and on
    /// the second try it finds the migration applied (the DDL itself is idempotent).
    pub async fn migrate(&self) -> Result<(), Error> {
        let mut tries = 0;
        loop {
            let result = match self {
                Db::MySql(pool) => migrate_mysql(pool).await,
                Db::Postgres(pool) => POSTGRES_MIGRATIONS.run(pool).await,
                Db::Sqlite(pool) => SQLITE_MIGRATIONS.run(pool).await,
            };
            match result {
                Ok(()) => return Ok(()),
                Err(_) if tries < 3 && self.dialect() == Dialect::Sqlite => {
                    tries += 1;
                    tokio::time::sleep(Duration::from_millis(50 * tries)).await;
                }
                Err(source) => return Err(Error::Migrate(source)),
            }
        }
    }

    /// Which SQL dialect this database speaks.
    pub fn dialect(&self) -> Dialect {
        match self {
            Db::MySql(_) => Dialect::MySql,
            Db::Postgres(_) => Dialect::Postgres,
            Db::Sqlite(_) => Dialect::Sqlite,
        }
    }

    /// `text` finished for this database, as the queue finishes its own statements: `{now}`
    /// and the states' names filled in, `?` numbered on PostgreSQL. For tests and tools that
    /// run SQL of their own on whichever backend this is.
    pub fn statement(&self, text: &str) -> String {
        crate::sql::statement(self.dialect(), text)
    }

    /// Closes every connection; waits for those in use to be returned.
    pub async fn close(&self) {
        with_pool!(self, pool => pool.close().await)
    }
}

/// sqlx's options for the SQLite database `url` names, as the URL gives them.
fn sqlite_options(url: &DatabaseUrl) -> Result<SqliteConnectOptions, sqlx::Error> {
    SqliteConnectOptions::from_str(&format!("sqlite:{}", url.after_scheme()))
}

/// The path of the SQLite file `url` names, if it names one (not an in-memory database) and no
/// such file exists.
fn missing_sqlite_file(url: &DatabaseUrl, dialect: Dialect) -> Option<String> {
    let rest = url.after_scheme();
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    let in_memory =
        path.trim_start_matches('/') == ":memory:" || query.split('&').any(|o| o == "mode=memory");
    if dialect != Dialect::Sqlite || in_memory {
        return None;
    }
    let options = sqlite_options(url).ok()?;
    let path = options.get_filename();
    (!path.exists()).then(|| path.display().to_string())
}

/// One connection attempt, bounded in time, before the pool: a pool that cannot connect only
/// says it timed out, where this says why (refused, unknown host, access denied).
async fn probe<O: ConnectOptions>(options: &O) -> Result<(), sqlx::Error>
where
    O::Connection: Sized,
{
    match tokio::time::timeout(ACQUIRE_TIMEOUT, options.connect()).await {
        Ok(conn) => conn?.close().await,
        Err(_) => Err(sqlx::Error::PoolTimedOut),
    }
}

/// Runs the MySQL migrations under a named lock held by the migrating connection. sqlx's own
/// lock is `GET_LOCK(<integer>, -1)` with its result ignored: MariaDB rejects integer lock names
/// and returns at once for a negative timeout, so it serializes nothing there.
async fn migrate_mysql(pool: &MySqlPool) -> Result<(), sqlx::migrate::MigrateError> {
    let mut conn = pool.acquire().await?;
    let locked: Option<i64> = sqlx::query_scalar(crate::sql::MYSQL_MIGRATE_LOCK)
        .fetch_one(&mut *conn)
        .await?;
    if locked != Some(1) {
        return Err(sqlx::migrate::MigrateError::Execute(sqlx::Error::Protocol(
            "timed out waiting for another process to finish migrating".into(),
        )));
    }
    let result = MYSQL_MIGRATIONS.run_direct(&mut *conn).await;
    sqlx::query(crate::sql::MYSQL_MIGRATE_UNLOCK)
        .execute(&mut *conn)
        .await?;
    result
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An SQLite database in memory with the schema, for statements' plans.
    pub(crate) async fn sqlite_with_schema() -> sqlx::SqliteConnection {
        use sqlx::ConnectOptions;
        let mut conn = sqlx::sqlite::SqliteConnectOptions::new()
            .in_memory(true)
            .connect()
            .await
            .unwrap();
        SQLITE_MIGRATIONS.run(&mut conn).await.unwrap();
        conn
    }

    /// SQLite's plan of `sql`, its `n` parameters bound to keys no row has: one step a line.
    pub(crate) async fn sqlite_plan(
        conn: &mut sqlx::SqliteConnection,
        sql: &str,
        n: usize,
    ) -> String {
        use sqlx::Row;
        let explain = format!("EXPLAIN QUERY PLAN {sql}");
        let mut q = sqlx::query(&explain);
        for i in 0..n {
            q = q.bind((i as u64).to_le_bytes().to_vec());
        }
        let rows = q.fetch_all(conn).await.unwrap();
        let steps: Vec<String> = rows.iter().map(|row| row.get("detail")).collect();
        steps.join("\n")
    }

    fn missing(url: &str) -> Option<String> {
        let url = DatabaseUrl::new(url);
        missing_sqlite_file(&url, url.dialect().unwrap())
    }

    #[test]
    fn a_sqlite_file_that_is_not_there_is_named() {
        assert_eq!(
            missing("sqlite:///nonexistent/typo.db?mode=rwc"),
            Some("/nonexistent/typo.db".into())
        );
        assert_eq!(missing("sqlite://Cargo.toml"), None);
    }

    #[test]
    fn in_memory_and_server_databases_are_never_missing() {
        for url in [
            "sqlite::memory:",
            "sqlite://:memory:",
            "sqlite://x.db?mode=memory",
            "mysql://u@db.example/crawl",
            "postgres://u@db.example/crawl",
        ] {
            assert_eq!(missing(url), None, "{url}");
        }
    }
}
