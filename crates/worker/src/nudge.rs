//! The claimer's wake-up call, given by the stages and the site checks that make work due
//! (its own module, so that neither depends on the other for it).

/// Wakes the claimer where it waits because nothing was due, when this worker has made
/// something due (a page's links, the fragments held for a page it read) or written back the
/// last site it held (a drain may be over): it claims at once rather than after the claimer's
/// `IDLE`, which stays the pace for what other workers do. A nudge while the claimer is busy is
/// kept (one permit), so none is lost between a claim and the wait.
#[derive(Debug, Default)]
pub struct Nudge(tokio::sync::Notify);

impl Nudge {
    pub fn nudge(&self) {
        self.0.notify_one();
    }

    /// Completes at the next nudge, or at once for one given since the last.
    pub async fn notified(&self) {
        self.0.notified().await
    }
}
