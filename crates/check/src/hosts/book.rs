//! The book itself ([`HostBook`]): one entry per host (by name, lower case, no port), made on
//! first use, the one rule for forgetting it, the host decisions waiting for the fleet, and
//! what the worker's stages ask of all of it ([`Checker::book`](crate::Checker::book)): they
//! name a host, and never hold its entry.
//!
//! # Forgetting
//! One rule ([`Host::forgettable`]): an entry is dropped when nothing uses it (no check holds
//! it), its pace is idle at the full rate with no floor or deferral, no origin of it is failing
//! or decided, and the fleet holds no throttled rate of ours for it. What is dropped is cheap to
//! learn again: HEAD's trust from one more GET, robots.txt and soft-404 probes from the
//! database. The book is swept when it doubles past [`MIN_SWEEP`] entries: amortised O(1) per
//! look-up, and it never holds more than twice the hosts that are busy or remembered.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crawler_verdict::MAX_DELAY;
use tokio::time::Instant;

use super::host::{Expected, FleetSaid, Host, RobotsCell};
use crate::config::HostLimit;
use crate::health::{Decisions, HostDecision};
use crate::ratelimit::PaceReport;

/// The book is swept for forgettable hosts whenever it doubles past this size.
pub(crate) const MIN_SWEEP: usize = 1024;

/// Every host this worker knows, and what it decided of them for the fleet. One per
/// [`Checker`](crate::Checker), which hands it to the worker's stages.
pub struct HostBook {
    map: Mutex<Map>,
    /// The limits of a host without an override.
    default: HostLimit,
    /// Per-host limits the user set (`--host-limits`), by host name.
    overrides: HashMap<String, HostLimit>,
    /// Host decisions and recoveries for the fleet, until the worker takes them.
    decisions: Decisions,
}

struct Map {
    hosts: HashMap<String, Arc<Host>>,
    /// Sweep when the book reaches this size.
    sweep_at: usize,
}

/// How many hosts are in each state, for the progress line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostCounts {
    pub unreachable: usize,
    pub suspect: usize,
    pub throttled: usize,
    pub deferred: usize,
}

impl HostBook {
    pub(crate) fn new(default: HostLimit, overrides: HashMap<String, HostLimit>) -> Self {
        Self {
            map: Mutex::new(Map {
                hosts: HashMap::new(),
                sweep_at: MIN_SWEEP,
            }),
            default,
            overrides,
            decisions: Decisions::default(),
        }
    }

    /// The entry of `name`, made (with the host's limits) when absent.
    pub(crate) fn host(&self, name: &str) -> Arc<Host> {
        let mut map = self.map.lock().expect("host book lock poisoned");
        if let Some(host) = map.hosts.get(name) {
            return host.clone();
        }
        if map.hosts.len() >= map.sweep_at {
            let now = Instant::now();
            map.hosts.retain(|_, h| !h.forgettable(now));
            map.sweep_at = (map.hosts.len() * 2).max(MIN_SWEEP);
        }
        let limit = self.overrides.get(name).unwrap_or(&self.default);
        let host = Arc::new(Host::new(name, limit));
        map.hosts.insert(name.to_owned(), host.clone());
        host
    }

    /// Counts a check of `name` (lower case, no port) as held by the worker until the guard
    /// is dropped.
    pub fn expect(&self, name: &str) -> Expected {
        Expected::new(self.host(name))
    }

    /// Every entry now (a snapshot: the book's lock is not held while they are read).
    fn all(&self) -> Vec<Arc<Host>> {
        let map = self.map.lock().expect("host book lock poisoned");
        map.hosts.values().cloned().collect()
    }

    /// The decisions made of the hosts' reachability, which the asker tells (`health.rs`).
    pub(crate) fn decisions(&self) -> &Decisions {
        &self.decisions
    }

    /// Takes in what the fleet's `hosts` row says of `host`, when it changed since last read
    /// (`host.rs`: `Host::hear`).
    pub fn hear(&self, host: &str, said: &FleetSaid) {
        self.host(host).hear(said, MAX_DELAY);
    }

    /// Spaces the starts of `host`'s requests at least `delay` apart (robots.txt's
    /// `Crawl-delay`): a cap under `--host-rate` and the adaptive pace.
    pub fn crawl_delay(&self, host: &str, delay: Duration) {
        self.host(host).limits().crawl_delay(delay);
    }

    /// The robots.txt of `origin` (of `host`), loaded once by the first check that needs it
    /// (the worker's `sites/robots.rs`), kept with the host.
    pub fn robots(&self, host: &str, origin: &str) -> RobotsCell {
        self.host(host).robots(origin)
    }

    /// Whether `checks` of `host` (`errors` of them failures) are counted for the fleet: the
    /// host is troubled (`host.rs`: `Host::troubled`).
    pub fn troubled(&self, host: &str, checks: u32, errors: u32) -> bool {
        self.host(host).troubled(checks, errors)
    }

    /// The paces to tell the fleet: hosts throttled or deferred whose pace changed since they
    /// were last told (a new rate, a longer deferral), and hosts told before that are back to
    /// their full rate (`rate: None`, no deferral: the fleet forgets the rate).
    pub fn pace_changes(&self) -> Vec<PaceReport> {
        let now = Instant::now();
        self.all()
            .iter()
            .filter_map(|h| h.pace_change(now))
            .collect()
    }

    /// Hosts with more checks waiting than they can start within `backlog` at their current
    /// pace: the claimer claims nothing more of them for now.
    pub fn backlogged(&self, backlog: Duration) -> Vec<String> {
        let now = Instant::now();
        self.all()
            .into_iter()
            .filter(|h| h.limits().backlog(now) > backlog)
            .map(|h| h.name().to_owned())
            .collect()
    }

    /// Hosts decided unreachable, suspect, throttled and deferred now.
    pub fn counts(&self) -> HostCounts {
        let now = Instant::now();
        let mut counts = HostCounts::default();
        for host in self.all() {
            match host.standing(now) {
                (true, _) => counts.unreachable += 1,
                (false, true) => counts.suspect += 1,
                (false, false) => {}
            }
            if let Some(pace) = host.pace(now) {
                counts.throttled += usize::from(pace.rate.is_some());
                counts.deferred += usize::from(pace.deferred.is_some());
            }
        }
        counts
    }

    /// Hosts decided unreachable since the last call, for the queue to write.
    pub fn take_decisions(&self) -> Vec<HostDecision> {
        self.decisions.take_decisions()
    }

    /// Puts back a decision the queue could not write, to be taken again.
    pub fn retake_decision(&self, decision: HostDecision) {
        self.decisions.retake(decision);
    }

    /// Hosts the fleet knew unreachable that answered since the last call.
    pub fn take_recoveries(&self) -> Vec<String> {
        self.decisions.take_recoveries()
    }

    /// The entry of `name` if the book has one.
    #[cfg(test)]
    fn known(&self, name: &str) -> Option<Arc<Host>> {
        let map = self.map.lock().expect("host book lock poisoned");
        map.hosts.get(name).cloned()
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.map.lock().unwrap().hosts.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn book() -> HostBook {
        let limit = HostLimit {
            concurrency: 4,
            rate: 10.0,
        };
        HostBook::new(limit, HashMap::new())
    }

    #[test]
    fn idle_hosts_are_forgotten_so_the_book_stays_bounded() {
        // No rate: a host is idle as soon as nothing uses it.
        let unlimited = HostLimit {
            concurrency: 4,
            rate: f64::INFINITY,
        };
        let book = HostBook::new(unlimited, HashMap::new());
        for i in 0..10 * MIN_SWEEP {
            book.host(&format!("host{i}.example"));
        }
        assert!(book.len() <= 2 * MIN_SWEEP, "{}", book.len());
    }

    #[test]
    fn a_host_in_use_or_remembering_something_is_kept() {
        let book = book();
        let held = book.host("busy.example");
        book.troubled("troubled.example", 1, 1);
        book.crawl_delay("slow.example", Duration::from_secs(5));
        book.host("throttled.example").limits().start_at(2.0);
        book.pace_changes();
        for i in 0..4 * MIN_SWEEP {
            book.host(&format!("host{i}.example"));
        }
        assert!(Arc::ptr_eq(&held, &book.host("busy.example")));
        for name in ["troubled.example", "slow.example", "throttled.example"] {
            assert!(book.known(name).is_some(), "{name} was forgotten");
        }
    }

    #[test]
    fn paces_are_told_when_they_change_and_once_more_when_back_to_full_rate() {
        let book = book();
        book.host("a.example").limits().start_at(2.5);
        let told = book.pace_changes();
        assert_eq!(told.len(), 1);
        assert_eq!(told[0].rate, Some(2.5));
        assert!(book.pace_changes().is_empty(), "unchanged: not told again");
        book.host("a.example").limits().start_at(10.0);
        // start_at never raises the rate: raise it as answers would.
        for _ in 0..20 {
            book.host("a.example").limits().answered();
        }
        let back = book.pace_changes();
        assert_eq!(back.len(), 1);
        assert_eq!((back[0].rate, back[0].deferred), (None, None));
        assert!(book.pace_changes().is_empty());
    }

    #[test]
    fn a_host_with_more_waiting_than_its_rate_starts_soon_is_backlogged() {
        let book = book(); // 4 in flight, 10/s
        book.host("big.example").limits().waiting(50); // 5 s at 10/s
        book.host("small.example").limits().waiting(4);
        assert_eq!(book.backlogged(Duration::from_secs(2)), ["big.example"]);
        assert!(book.backlogged(Duration::from_secs(10)).is_empty());
        // A slow host: 20 waiting, each request 2 s over its 4 slots, is 10 s of waiting.
        let slow = book.host("slow.example");
        slow.limits().waiting(20);
        slow.limits().latency(Duration::from_secs(2));
        let mut backlogged = book.backlogged(Duration::from_secs(2));
        backlogged.sort();
        assert_eq!(backlogged, ["big.example", "slow.example"]);
        // A crawl delay makes a few a backlog.
        let delayed = book.host("delayed.example");
        delayed.limits().crawl_delay(Duration::from_secs(10));
        delayed.limits().waiting(3);
        assert!(book
            .backlogged(Duration::from_secs(2))
            .contains(&"delayed.example".into()));
    }

    #[test]
    fn the_fleets_rate_is_where_a_host_starts_never_above_its_own() {
        let book = book();
        book.hear(
            "slow.example",
            &FleetSaid {
                rate: Some(2.5),
                ..FleetSaid::default()
            },
        );
        book.host("fast.example").limits().start_at(50.0);
        let counts = book.counts();
        assert_eq!((counts.throttled, counts.deferred), (1, 0));
        let told = book.pace_changes();
        assert_eq!(told.len(), 1);
        assert_eq!(
            (told[0].host.as_str(), told[0].rate),
            ("slow.example", Some(2.5))
        );
    }

    #[tokio::test]
    async fn hosts_are_counted_by_their_worst_origin() {
        let book = book();
        book.hear(
            "gone.example",
            &FleetSaid {
                unreachable: Some(crawler_verdict::ErrorKind::Dns),
                ..FleetSaid::default()
            },
        );
        book.host("gone.example").reach("http://gone.example");
        book.host("fine.example").reach("http://fine.example");
        assert_eq!(
            book.counts(),
            HostCounts {
                suspect: 1,
                ..HostCounts::default()
            }
        );
    }
}
