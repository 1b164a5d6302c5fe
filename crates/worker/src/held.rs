//! What this worker holds: the sites it claimed and has not yet written back, by claim.
//!
//! The claimer adds, the writer removes once a result is stored (or found stale), the lease
//! keeper extends what is here, and at shutdown what is left is given back.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use crawler_queue::Batch;

/// Claim token → ids of its sites not yet written back. A std mutex: every critical section
/// is a few hash-map operations, never held across an await.
#[derive(Debug, Default)]
pub struct Held(Mutex<HashMap<i64, HashSet<i64>>>);

impl Held {
    pub fn add(&self, batch: &Batch) {
        let ids = batch.sites.iter().map(|s| s.id).collect();
        self.0.lock().unwrap().insert(batch.token, ids);
    }

    /// Forgets one site (written back, or lost to another worker).
    pub fn remove(&self, token: i64, id: i64) {
        let mut held = self.0.lock().unwrap();
        if let Some(ids) = held.get_mut(&token) {
            ids.remove(&id);
            if ids.is_empty() {
                held.remove(&token);
            }
        }
    }

    /// Each claim with the ids it still holds.
    pub fn snapshot(&self) -> Vec<(i64, Vec<i64>)> {
        let held = self.0.lock().unwrap();
        held.iter()
            .map(|(token, ids)| (*token, ids.iter().copied().collect()))
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        self.0.lock().unwrap().is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crawler_queue::Site;

    fn site(id: i64) -> Site {
        Site {
            id,
            token: 7,
            url: String::new(),
            host: String::new(),
            tries: 0,
            consecutive_failures: 0,
        }
    }

    #[test]
    fn a_claim_is_forgotten_when_its_last_site_is_written() {
        let held = Held::default();
        held.add(&Batch {
            token: 7,
            sites: vec![site(1), site(2)],
        });
        held.remove(7, 1);
        assert_eq!(held.snapshot(), vec![(7, vec![2])]);
        held.remove(7, 2);
        held.remove(7, 2);
        assert!(held.is_empty());
    }
}
