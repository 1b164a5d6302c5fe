//! Waiting until a starting server accepts a login.

use std::future::Future;
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

use sqlx::{Connection, MySqlConnection};

/// How long a server may take to accept a login.
pub(super) const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// How a wait for a starting server ended.
pub(super) enum Readiness {
    Ready,
    /// The server exited (and is reaped) before it accepted a login.
    Exited(ExitStatus),
    TimedOut,
}

/// Polls a login at `url` until one succeeds, `child` exits or [`READY_TIMEOUT`] passes.
pub(super) fn wait(child: &mut Child, url: &str) -> Readiness {
    let deadline = Instant::now() + READY_TIMEOUT;
    block_on(async {
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                return Readiness::Exited(status);
            }
            let login = tokio::time::timeout(Duration::from_secs(5), MySqlConnection::connect(url));
            if let Ok(Ok(connection)) = login.await {
                let _ = connection.close().await;
                return Readiness::Ready;
            }
            if Instant::now() > deadline {
                return Readiness::TimedOut;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    })
}

/// Runs `future` on a runtime of its own thread, so that the synchronous `start()` and
/// `restart()` work both inside a test's runtime and outside any.
pub(crate) fn block_on<F>(future: F) -> F::Output
where
    F: Future + Send,
    F::Output: Send,
{
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("cannot build a tokio runtime")
                    .block_on(future)
            })
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}
