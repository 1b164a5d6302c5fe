//! Retrying transient database failures: deadlocks (MySQL 1213), lock wait timeouts (1205),
//! SQLite's busy database, and lost connections. None of them may cost a site.

use std::future::Future;
use std::time::Duration;

use rand::Rng;
use sqlx::mysql::MySqlDatabaseError;

/// MySQL/MariaDB error numbers that mean "try again".
const MYSQL_TRANSIENT: &[u16] = &[
    1205, // lock wait timeout
    1213, // deadlock
    1053, // server shutdown in progress
    1927, // connection was killed
    2006, // server has gone away
    2013, // lost connection during query
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

/// Runs `op` until it succeeds, fails for good, or has retried transient failures for
/// [`RETRY_FOR`]; waits 10 ms doubling to 1 s, with jitter, between tries. Every error is
/// counted under `what` (see [`crate::metrics`]).
pub async fn retry<T, F, Fut>(what: &'static str, mut op: F) -> Result<T, sqlx::Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, sqlx::Error>>,
{
    let started = tokio::time::Instant::now();
    let mut wait = Duration::from_millis(10);
    loop {
        match op().await {
            Err(e) if is_transient(&e) && started.elapsed() < RETRY_FOR => {
                crate::metrics::database_error(what, true);
                tracing::debug!(error = %e, "{what}: transient database error, retrying");
                let jitter = rand::rng().random_range(0.5..1.5);
                tokio::time::sleep(wait.mul_f64(jitter)).await;
                wait = (wait * 2).min(Duration::from_secs(1));
            }
            Err(e) => {
                crate::metrics::database_error(what, false);
                return Err(e);
            }
            ok => return ok,
        }
    }
}
