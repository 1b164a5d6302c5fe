//! Cutting a check off only where that is free: before its first request, never after.
//!
//! A worker cuts off the checks of a host partition it loses or hands over, so that the next
//! holder gets their sites at once (`stages/checking.rs`). A check cut off once it had sent a
//! request would have its site checked again by the next holder, and the server would see
//! that request twice. So [`unless_cut`] lets `stop` act only while the check has sent nothing
//! (it waits for its host's turn, `client.rs`); from its first request on, the check runs to
//! its end: its redirect hops, its GET after a HEAD and its retries, within its own time
//! budget and retry limit.

use std::future::Future;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

tokio::task_local! {
    /// Whether the check of this task has sent nothing yet (true) or has sent a request.
    static WAITING: watch::Sender<bool>;
}

/// Runs `check` to its end, or until `stop` is cancelled while the check has sent nothing:
/// `None` then, and the server has seen no request of it.
pub async fn unless_cut<F: Future>(stop: &CancellationToken, check: F) -> Option<F::Output> {
    let (waiting, mut watched) = watch::channel(true);
    let cut = async move {
        stop.cancelled().await;
        // Pending for good once the check has sent a request (the sender lives in the
        // check's scope, which outlives this future).
        let _ = watched.wait_for(|waiting| *waiting).await;
    };
    WAITING
        .scope(waiting, async {
            tokio::select! {
                output = check => Some(output),
                () = cut => None,
            }
        })
        .await
}

/// Says that the current check is sending a request: from now on it is not cut off. Outside
/// [`unless_cut`] (a checker used on its own) it does nothing.
pub(crate) fn sent() {
    let _ = WAITING.try_with(|waiting| waiting.send_replace(false));
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::time::Duration;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_check_that_sent_nothing_is_cut_off() {
        let stop = CancellationToken::new();
        let sent_anything = Mutex::new(false);
        let check = async {
            tokio::time::sleep(Duration::from_secs(60)).await;
            sent();
            *sent_anything.lock().unwrap() = true;
        };
        let cancel = async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            stop.cancel();
        };
        let (cut, ()) = tokio::join!(unless_cut(&stop, check), cancel);
        assert_eq!(cut, None);
        assert!(!*sent_anything.lock().unwrap());
    }

    #[tokio::test(start_paused = true)]
    async fn a_check_that_sent_a_request_runs_to_its_end() {
        let stop = CancellationToken::new();
        let steps = Mutex::new(Vec::new());
        let check = async {
            sent();
            steps.lock().unwrap().push("sent");
            tokio::time::sleep(Duration::from_millis(100)).await;
            // A redirect hop, a GET after a HEAD or a retry waits for its host again.
            tokio::time::sleep(Duration::from_millis(100)).await;
            sent();
            steps.lock().unwrap().push("sent again");
            "answered"
        };
        let cancel = async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            stop.cancel();
        };
        let (cut, ()) = tokio::join!(unless_cut(&stop, check), cancel);
        assert_eq!(cut, Some("answered"));
        assert_eq!(*steps.lock().unwrap(), ["sent", "sent again"]);
    }
}
