//! Bounded waits for a condition, in place of a fixed sleep: a test waits as long as what it
//! expects takes to happen, and fails, saying what it waited for, when it does not happen in
//! time. A fixed wait stays only where the waiting is the fault itself (a database's outage),
//! said where it is.

use std::future::Future;
use std::time::{Duration, Instant};

use crawler_queue::Queue;

/// How often a condition is asked again: as pause.rs's polling did, often enough that a
/// wait ends within a heartbeat of what it waits for, rarely enough to load neither the
/// database nor a browser.
const POLL: Duration = Duration::from_millis(50);

/// Polls `probe` until it holds, up to `limit`; panics naming `what` if it never does.
pub async fn until<F: Future<Output = bool>>(
    what: &str,
    limit: Duration,
    mut probe: impl FnMut() -> F,
) {
    until_some(what, limit, || {
        let held = probe();
        async move { held.await.then_some(()) }
    })
    .await
}

/// Polls `probe` until it gives a value, up to `limit`, and returns it; panics naming `what`
/// if it never does.
pub async fn until_some<T, F: Future<Output = Option<T>>>(
    what: &str,
    limit: Duration,
    mut probe: impl FnMut() -> F,
) -> T {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(value) = probe().await {
            return value;
        }
        assert!(Instant::now() < deadline, "{what}: not within {limit:?}");
        tokio::time::sleep(POLL).await;
    }
}

/// Waits until the database's clock (the one leases and schedules are decided by) reads
/// `at` or later, in Unix milliseconds, up to a minute.
pub async fn until_database_time(queue: &Queue, at: i64) {
    until("the database's clock", Duration::from_secs(60), || async {
        queue.now().await.expect("read the database's clock") >= at
    })
    .await
}
