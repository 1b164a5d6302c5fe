//! Retrying transient database failures: deadlocks (MySQL 1213, PostgreSQL 40P01), lock wait
//! timeouts (1205), serialization failures (40001), SQLite's busy database, and lost
//! connections. None of them may cost a site.
//!
//! On a Galera cluster (docs/galera.md) a transaction that lost a certification conflict to
//! another node's, at commit or aborted by it, fails with 1213 too, and is retried as a
//! deadlock; a node cut off from the cluster's majority answers 1047 until it is back. MySQL
//! group replication in multi-primary mode rolls a conflicting transaction back with 3101.

use std::future::Future;
use std::time::Duration;

use sqlx::mysql::MySqlDatabaseError;
use sqlx::postgres::PgDatabaseError;

/// MySQL/MariaDB error numbers that mean "try again".
const MYSQL_TRANSIENT: &[u16] = &[
    1205, // lock wait timeout
    1213, // deadlock; on Galera also a lost certification conflict
    1047, // Galera: the node is not part of the primary component (yet, or for now)
    3101, // group replication: rolled back at commit for a certification conflict
    1053, // server shutdown in progress
    1927, // connection was killed
    2006, // server has gone away
    2013, // lost connection during query
];

/// PostgreSQL SQLSTATEs that mean "try again"; besides these, every code of class 08
/// (connection exception).
const POSTGRES_TRANSIENT: &[&str] = &[
    "40001", // serialization failure
    "40P01", // deadlock detected
    "57P01", // admin shutdown: the server stops, or the connection was terminated
    "57P02", // crash shutdown
    "57P03", // cannot connect now: the server is starting or stopping
    "53300", // too many connections
];

/// SQLite result codes that mean "try again": BUSY, LOCKED, and their extended codes.
const SQLITE_TRANSIENT: &[&str] = &["5", "6", "261", "262", "517", "773"];

/// Whether `error` may pass if the operation is tried again.
pub fn is_transient(error: &sqlx::Error) -> bool {
    match error {
        sqlx::Error::Io(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::Tls(_)
        | sqlx::Error::Protocol(_)
        | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(db) => {
            if let Some(mysql) = db.try_downcast_ref::<MySqlDatabaseError>() {
                MYSQL_TRANSIENT.contains(&mysql.number())
            } else if let Some(postgres) = db.try_downcast_ref::<PgDatabaseError>() {
                let code = postgres.code();
                code.starts_with("08") || POSTGRES_TRANSIENT.contains(&code)
            } else {
                db.code()
                    .is_some_and(|code| SQLITE_TRANSIENT.contains(&code.as_ref()))
            }
        }
        _ => false,
    }
}

/// How long one operation keeps retrying before its error reaches the caller. Deadlocks clear in
/// milliseconds; a restarting database takes longer, and the worker's own loop waits for that.
const RETRY_FOR: Duration = Duration::from_secs(10);

/// The wait between tries: 10 ms doubling to 1 s, each scaled by 0.5 to 1.5, so that
/// transactions that deadlocked together do not collide again.
const BETWEEN_TRIES: crate::backoff::Backoff =
    crate::backoff::Backoff::new(Duration::from_millis(10), Duration::from_secs(1))
        .with_jitter(50, 150);

/// Runs `op` until it succeeds, fails for good, or has retried transient failures for
/// [`RETRY_FOR`], waiting [`BETWEEN_TRIES`] between tries. Every error is counted under `what`
/// (see [`crate::metrics`]).
pub async fn retry<T, F, Fut>(what: &'static str, mut op: F) -> Result<T, sqlx::Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, sqlx::Error>>,
{
    let started = tokio::time::Instant::now();
    let mut failures = 0;
    loop {
        match op().await {
            Err(e) if is_transient(&e) && started.elapsed() < RETRY_FOR => {
                crate::metrics::database_error(what, true);
                tracing::debug!(error = %e, "{what}: transient database error, retrying");
                failures += 1;
                tokio::time::sleep(BETWEEN_TRIES.delay(failures)).await;
            }
            Err(e) => {
                crate::metrics::database_error(what, false);
                return Err(e);
            }
            ok => return ok,
        }
    }
}
