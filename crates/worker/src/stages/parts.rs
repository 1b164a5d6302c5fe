//! The host partitions this worker holds ([`Parts`]), each with a token cancelled when it is
//! lost or handed over: what the claimer claims in, what the checks of its hosts watch, and
//! what the keeper (`keeper.rs`) brings up to date every round.
//!
//! A partition lost (its lease expired while this worker was stalled, and another took it), or
//! starting to be handed over, cuts off the checks on its hosts that have sent nothing yet
//! (they wait for their host), and their sites are given back, due at once, for whoever holds
//! it next. A check that has sent a request runs to its end (`crawler-check`'s `cut.rs`):
//! cut, its site would be requested again by the next holder.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use crawler_queue::HeldPart;
use rand::Rng;
use tokio_util::sync::CancellationToken;

/// The partitions held, each with a token cancelled when it is lost or handed over.
pub struct Parts {
    /// This worker's parts token: fresh per run, stamped on every partition it takes.
    pub token: i64,
    held: Mutex<HashMap<i16, Holding>>,
    /// The claimer's last claim found nothing due in the partitions held.
    idle: AtomicBool,
}

/// This worker's hold on one partition: how to stop its work, and whether it is being handed
/// over.
struct Holding {
    /// Cancelled when the partition is lost, or starts being handed over.
    stop: CancellationToken,
    /// Being handed over: when it goes, it was given back, not lost.
    draining: bool,
}

impl Default for Parts {
    fn default() -> Self {
        Parts {
            token: rand::rng().random_range(1..i64::MAX),
            held: Mutex::default(),
            idle: AtomicBool::new(false),
        }
    }
}

impl Parts {
    /// A token that is cancelled when partition `part` is lost or starts being handed over
    /// (already cancelled if it is being handed over); `None` if it is not held.
    pub fn watch(&self, part: i16) -> Option<CancellationToken> {
        let held = self.held.lock().expect("parts lock poisoned");
        held.get(&part).map(|h| h.stop.child_token())
    }

    /// Replaces the held set with what the database says; cancels the ones gone, and returns
    /// how many of them were lost (gone without being handed over).
    pub(super) fn update(&self, now_held: &[HeldPart]) -> usize {
        let mut held = self.held.lock().expect("parts lock poisoned");
        let mut kept: HashMap<i16, Holding> = HashMap::with_capacity(now_held.len());
        for part in now_held {
            // A partition that went draining and is held again, not draining (given back and
            // taken again by this worker, within one keeper round): a fresh token, or every
            // check of its hosts would be cut off, given back and claimed again, forever (a
            // four-worker drain of the web bench hung so, on one site).
            let stop = match held.remove(&part.id) {
                Some(h) if !h.stop.is_cancelled() => h.stop,
                _ => CancellationToken::new(),
            };
            let draining = part.draining;
            if draining {
                stop.cancel();
            }
            kept.insert(part.id, Holding { stop, draining });
        }
        let mut lost = 0;
        for (_, gone) in held.drain() {
            lost += usize::from(!gone.draining);
            gone.stop.cancel();
        }
        *held = kept;
        lost
    }

    /// Takes note of partitions a claim just found held by this worker's token (the database
    /// said so in the claim's own read) but the keeper has not seen yet: taken or handed over
    /// since its last round. Without this, their sites would be dropped as if lost.
    pub fn adopt(&self, parts: impl IntoIterator<Item = i16>) {
        let mut held = self.held.lock().expect("parts lock poisoned");
        for id in parts {
            held.entry(id).or_insert_with(|| Holding {
                stop: CancellationToken::new(),
                draining: false,
            });
        }
    }

    /// Tells what the claimer's last claim found: sites, or nothing due.
    pub fn claimed(&self, sites: usize) {
        self.idle.store(sites == 0, Ordering::Relaxed);
    }

    /// Whether the claimer's last claim found nothing due.
    pub fn is_idle(&self) -> bool {
        self.idle.load(Ordering::Relaxed)
    }

    /// How many partitions are held, those being handed over included (the metrics' gauge).
    pub fn count(&self) -> usize {
        self.held.lock().expect("parts lock poisoned").len()
    }

    /// The partitions held and not being handed over.
    pub fn active(&self) -> Vec<i16> {
        let held = self.held.lock().expect("parts lock poisoned");
        held.iter()
            .filter(|(_, h)| !h.draining)
            .map(|(&id, _)| id)
            .collect()
    }

    /// Cancels everything (the worker is stopping and gives its partitions back).
    pub fn clear(&self) {
        for (_, held) in self.held.lock().expect("parts lock poisoned").drain() {
            held.stop.cancel();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lost_partition_cancels_its_watchers() {
        let parts = Parts::default();
        let held = |ids: &[i16]| -> Vec<HeldPart> {
            ids.iter()
                .map(|&id| HeldPart {
                    id,
                    draining: false,
                    asked: false,
                })
                .collect()
        };
        assert_eq!(parts.update(&held(&[1, 2])), 0);
        let on_two = parts.watch(2).expect("held");
        assert!(parts.watch(3).is_none());
        assert_eq!(parts.update(&held(&[1])), 1);
        assert!(on_two.is_cancelled());
        assert!(!parts.watch(1).unwrap().is_cancelled());
    }

    #[test]
    fn a_partition_starting_its_hand_over_cuts_its_checks_off() {
        let parts = Parts::default();
        let part = |draining| HeldPart {
            id: 4,
            draining,
            asked: false,
        };
        parts.update(&[part(false)]);
        let watching = parts.watch(4).unwrap();
        parts.update(&[part(true)]);
        assert!(watching.is_cancelled());
        assert!(
            parts.watch(4).unwrap().is_cancelled(),
            "a site claimed before the hand-over is not checked"
        );
    }

    #[test]
    fn a_partition_handed_over_and_taken_back_is_worked_again() {
        let parts = Parts::default();
        let part = |draining| HeldPart {
            id: 7,
            draining,
            asked: false,
        };
        parts.update(&[part(true)]);
        assert!(parts.watch(7).unwrap().is_cancelled());
        // Freed and taken again by this worker before the keeper saw it go.
        parts.update(&[part(false)]);
        assert!(
            !parts.watch(7).unwrap().is_cancelled(),
            "its checks would be cut off forever"
        );
        assert_eq!(parts.active(), [7]);
    }

    #[test]
    fn a_partition_a_claim_found_is_adopted_until_the_keeper_knows() {
        let parts = Parts::default();
        assert!(parts.watch(9).is_none());
        parts.adopt([9, 9]);
        assert!(!parts.watch(9).unwrap().is_cancelled());
        assert_eq!(parts.active(), [9]);
    }

    #[test]
    fn a_partition_handed_over_is_not_counted_as_lost() {
        let parts = Parts::default();
        parts.update(&[HeldPart {
            id: 5,
            draining: true,
            asked: false,
        }]);
        assert_eq!(parts.update(&[]), 0);
    }
}
