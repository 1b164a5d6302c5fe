//! Cutting a check off only where that is free: before its first request, never after.
//!
//! A worker cuts off the checks of a host partition it loses or hands over, so that the next
//! holder gets their sites at once (`stages/checking.rs`). A check cut off once it had sent a
//! request would have its site checked again by the next holder, and the server would see
//! that request twice. So [`unless_cut`] lets `stop` act only while the check has sent nothing
//! (it waits for its host's turn); from its first request on, the check runs to its end: its
//! redirect hops, its GET after a HEAD and its retries, within its own time budget and retry
//! limit.
//!
//! Whether a check has sent anything is its [`Cut`], passed along with the check: the caller
//! gives it to [`unless_cut`] and to the checker ([`Checker::cut_by`](crate::Checker::cut_by)),
//! whose asker marks it before each request ([`Cut::sent`]).

use std::future::Future;
use std::sync::Arc;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// Whether one check has sent nothing yet (it may be cut off) or has sent a request (it runs
/// to its end). Cheap to clone: the clones are the same check's.
#[derive(Clone, Debug)]
pub struct Cut {
    /// True until the check sends its first request.
    waiting: Arc<watch::Sender<bool>>,
}

impl Default for Cut {
    fn default() -> Self {
        Cut {
            waiting: Arc::new(watch::Sender::new(true)),
        }
    }
}

impl Cut {
    /// Says that the check is sending a request: from now on it is not cut off. A `Cut` no
    /// [`unless_cut`] watches (a checker used on its own) only remembers it.
    pub(crate) fn sent(&self) {
        self.waiting.send_replace(false);
    }
}

/// Runs `check` to its end, or until `stop` is cancelled while the check has sent nothing
/// (`cut` is the check's): `None` then, and the server has seen no request of it.
pub async fn unless_cut<F: Future>(
    stop: &CancellationToken,
    cut: &Cut,
    check: F,
) -> Option<F::Output> {
    let mut watched = cut.waiting.subscribe();
    let cut = async move {
        stop.cancelled().await;
        // Pending for good once the check has sent a request (the sender lives in `cut`,
        // which outlives this future).
        let _ = watched.wait_for(|waiting| *waiting).await;
    };
    tokio::select! {
        output = check => Some(output),
        () = cut => None,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::time::Duration;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_check_that_sent_nothing_is_cut_off() {
        let stop = CancellationToken::new();
        let cut = Cut::default();
        let sent_anything = Mutex::new(false);
        let check = async {
            tokio::time::sleep(Duration::from_secs(60)).await;
            cut.sent();
            *sent_anything.lock().unwrap() = true;
        };
        let cancel = async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            stop.cancel();
        };
        let (outcome, ()) = tokio::join!(unless_cut(&stop, &cut, check), cancel);
        assert_eq!(outcome, None);
        assert!(!*sent_anything.lock().unwrap());
    }

    #[tokio::test(start_paused = true)]
    async fn a_check_that_sent_a_request_runs_to_its_end() {
        let stop = CancellationToken::new();
        let cut = Cut::default();
        let steps = Mutex::new(Vec::new());
        let check = async {
            cut.sent();
            steps.lock().unwrap().push("sent");
            tokio::time::sleep(Duration::from_millis(100)).await;
            // A redirect hop, a GET after a HEAD or a retry waits for its host again.
            tokio::time::sleep(Duration::from_millis(100)).await;
            cut.sent();
            steps.lock().unwrap().push("sent again");
            "answered"
        };
        let cancel = async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            stop.cancel();
        };
        let (outcome, ()) = tokio::join!(unless_cut(&stop, &cut, check), cancel);
        assert_eq!(outcome, Some("answered"));
        assert_eq!(*steps.lock().unwrap(), ["sent", "sent again"]);
    }
}
