//! What this worker holds: the sites it claimed and has not yet written back, by claim.
//!
//! The claimer adds, the writer marks a site while its result is being written and removes
//! it once stored (or found stale), the lease keeper extends what is here, and at shutdown
//! what is left is given back.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use crawler_queue::Batch;
use tokio::sync::Notify;

/// The sites this worker claimed and has not yet written back, by claim. A std mutex: every
/// critical section is a few hash-map operations, never held across an await.
#[derive(Debug, Default)]
pub struct HeldSites {
    sites: Mutex<Sites>,
    /// Told when the last site held is forgotten: a draining claimer waits for it rather
    /// than for a fixed pause (`claimer.rs`).
    emptied: Notify,
}

#[derive(Debug, Default)]
struct Sites {
    /// Claim token → ids of its sites not yet written back, each with its host partition.
    by_token: HashMap<i64, HashMap<i64, i16>>,
    /// (token, id) of the sites whose result the writer is storing. Such a site may already
    /// be done in the database while it is still held here: it is not lost.
    writing: HashSet<(i64, i64)>,
}

impl Sites {
    fn remove(&mut self, token: i64, id: i64) {
        self.writing.remove(&(token, id));
        if let Some(ids) = self.by_token.get_mut(&token) {
            ids.remove(&id);
            if ids.is_empty() {
                self.by_token.remove(&token);
            }
        }
    }
}

impl HeldSites {
    pub fn add(&self, batch: &Batch) {
        let ids = batch.sites.iter().map(|s| (s.id, s.part)).collect();
        self.sites.lock().unwrap().by_token.insert(batch.token, ids);
    }

    /// Marks sites whose result is about to be written, until [`HeldSites::remove`].
    pub fn writing(&self, sites: impl IntoIterator<Item = (i64, i64)>) {
        self.sites.lock().unwrap().writing.extend(sites);
    }

    /// Forgets one site (written back, or lost to another worker).
    pub fn remove(&self, token: i64, id: i64) {
        let mut held = self.sites.lock().unwrap();
        held.remove(token, id);
        self.tell_if_empty(&held);
    }

    fn tell_if_empty(&self, held: &Sites) {
        if held.by_token.is_empty() {
            self.emptied.notify_waiters();
        }
    }

    /// Returns once nothing is held (at once if nothing is).
    pub async fn emptied(&self) {
        let emptied = self.emptied.notified();
        tokio::pin!(emptied);
        // Registered before the look, so that an emptying in between is not missed.
        emptied.as_mut().enable();
        if self.is_empty() {
            return;
        }
        emptied.await;
    }

    /// Of `ids`, which the claim `token` no longer owns in the database, forgets and returns
    /// those really lost to another worker: not the ones written meanwhile, nor those being
    /// written (their claim ends in the database before it ends here).
    pub fn lose(&self, token: i64, ids: &[i64]) -> Vec<i64> {
        let mut held = self.sites.lock().unwrap();
        let lost: Vec<i64> = ids
            .iter()
            .copied()
            .filter(|id| {
                !held.writing.contains(&(token, *id))
                    && held
                        .by_token
                        .get(&token)
                        .is_some_and(|ids| ids.contains_key(id))
            })
            .collect();
        for &id in &lost {
            held.remove(token, id);
        }
        self.tell_if_empty(&held);
        lost
    }

    /// Each claim with the ids it still holds.
    pub fn snapshot(&self) -> Vec<(i64, Vec<i64>)> {
        let held = self.sites.lock().unwrap();
        held.by_token
            .iter()
            .map(|(token, ids)| (*token, ids.keys().copied().collect()))
            .collect()
    }

    /// Sites held, all claims together.
    pub fn count(&self) -> usize {
        let held = self.sites.lock().unwrap();
        held.by_token.values().map(HashMap::len).sum()
    }

    /// The host partitions of the sites held: those whose hosts this worker is working.
    pub fn parts(&self) -> HashSet<i16> {
        let held = self.sites.lock().unwrap();
        held.by_token
            .values()
            .flat_map(|ids| ids.values().copied())
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        self.sites.lock().unwrap().by_token.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crawler_queue::Site;
    use futures::FutureExt;

    fn site(id: i64) -> Site {
        crawler_tests::findings::claimed_site(id, "127.0.0.1")
    }

    #[test]
    fn a_claim_is_forgotten_when_its_last_site_is_written_and_so_are_its_partitions() {
        let held = HeldSites::default();
        held.add(&Batch {
            token: 7,
            sites: vec![site(1), site(2)],
        });
        held.add(&Batch {
            token: 8,
            sites: vec![Site { part: 5, ..site(3) }],
        });
        assert_eq!(held.parts(), HashSet::from([0, 5]));
        held.remove(8, 3);
        assert_eq!(
            held.parts(),
            HashSet::from([0]),
            "no site of partition 5 is held"
        );
        held.remove(7, 1);
        assert_eq!(held.snapshot(), vec![(7, vec![2])]);
        assert_eq!(held.count(), 1);
        held.remove(7, 2);
        held.remove(7, 2);
        assert!(held.is_empty());
        held.emptied()
            .now_or_never()
            .expect("nothing held: at once");
        assert!(held.parts().is_empty());
        assert_eq!(held.count(), 0);
    }

    #[tokio::test]
    async fn a_wait_for_nothing_held_ends_when_the_last_site_is_written() {
        let held = std::sync::Arc::new(HeldSites::default());
        held.add(&Batch {
            token: 7,
            sites: vec![site(1)],
        });
        let waiting = tokio::spawn({
            let held = held.clone();
            async move { held.emptied().await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        held.remove(7, 1);
        tokio::time::timeout(std::time::Duration::from_secs(5), waiting)
            .await
            .expect("woken when emptied")
            .unwrap();
    }

    #[test]
    fn a_site_written_or_being_written_is_not_lost() {
        let held = HeldSites::default();
        held.add(&Batch {
            token: 7,
            sites: vec![site(1), site(2), site(3), site(4)],
        });
        held.writing([(7, 1)]); // its result is being stored
        held.remove(7, 2); // stored between the snapshot and the extension
        assert_eq!(held.lose(7, &[1, 2, 3]), vec![3]);
        let mut left = held.snapshot().pop().unwrap().1;
        left.sort();
        assert_eq!(left, vec![1, 4]);
        held.remove(7, 1);
        assert_eq!(held.lose(7, &[1]), Vec::<i64>::new());
        assert_eq!(held.snapshot(), vec![(7, vec![4])]);
    }
}
