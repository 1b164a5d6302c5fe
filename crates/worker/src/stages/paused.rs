//! Whether the fleet is paused, as this worker last read it (with its heartbeat, see
//! `upkeep.rs`). The claimer waits on it; the progress shows it.
//!
//! A watch channel rather than an atomic flag: a claimer waiting for the resume wakes the
//! moment the heartbeat reads it, not at its next poll.

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

#[derive(Debug)]
pub struct Paused(watch::Sender<bool>);

impl Default for Paused {
    fn default() -> Paused {
        Paused(watch::Sender::new(false))
    }
}

impl Paused {
    /// Records what the database says; returns whether that is news (a pause or a resume).
    pub fn set(&self, paused: bool) -> bool {
        self.0
            .send_if_modified(|now| std::mem::replace(now, paused) != paused)
    }

    pub fn is_paused(&self) -> bool {
        *self.0.borrow()
    }

    /// Waits until the fleet is not paused; returns whether `stop` came first.
    pub async fn wait_resumed(&self, stop: &CancellationToken) -> bool {
        let mut rx = self.0.subscribe();
        tokio::select! {
            _ = stop.cancelled() => true,
            _ = rx.wait_for(|paused| !paused) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn only_a_change_is_news() {
        let paused = Paused::default();
        assert!(!paused.set(false));
        assert!(paused.set(true));
        assert!(!paused.set(true));
        assert!(paused.is_paused());
        assert!(paused.set(false));
    }

    #[tokio::test]
    async fn a_waiting_claimer_wakes_at_the_resume_or_the_stop() {
        let paused = std::sync::Arc::new(Paused::default());
        paused.set(true);
        let stop = CancellationToken::new();
        let p = paused.clone();
        let waiter = tokio::spawn(async move { p.wait_resumed(&CancellationToken::new()).await });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiter.is_finished());
        paused.set(false);
        assert!(!waiter.await.unwrap());
        paused.set(true);
        stop.cancel();
        assert!(paused.wait_resumed(&stop).await);
    }
}
