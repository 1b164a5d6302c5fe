//! The host book: everything this worker knows of each host, in one entry per host (by name, lower
//! case, no port), and one rule for forgetting it. A bug in host policy starts here.
//!
//! An entry ([`Host`]) holds:
//! - its limits and pace (`ratelimit.rs`): slots, rate, the adaptive pace after 429/503, a
//!   host-wide deferral, robots.txt's `Crawl-delay` as a floor;
//! - how to ask it (`head.rs`): whether its HEAD answers can be believed;
//! - whether it can be reached (`health.rs`), per origin (`scheme://host:port`: one port may
//!   refuse where another answers);
//! - its robots.txt rules, per origin (loaded by `sites/robots.rs`);
//! - its soft-404 probes (`soft404/probe.rs`);
//! - what the fleet last said of it (the `hosts` row: [`Host::hear`]), and what this worker last
//!   told the fleet ([`HostBook::pace_changes`], [`Host::troubled`]).
//!
//! # Forgetting
//! One rule ([`Host::forgettable`]): an entry is dropped when nothing uses it (no check holds
//! it), its pace is idle at the full rate with no floor or deferral, no origin of it is failing
//! or decided, and the fleet holds no throttled rate of ours for it. What is dropped is cheap to
//! learn again: HEAD's trust from one more GET, robots.txt and soft-404 probes from the
//! database. The book is swept when it doubles past [`MIN_SWEEP`] entries: amortised O(1) per
//! look-up, and it never holds more than twice the hosts that are busy or remembered.
//!
//! The DNS cache (`resolve.rs`) is not here: it is the HTTP client's resolver, by DNS name and
//! the record's lifetime, for every name a redirect may reach.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crawler_links::Robots;
use crawler_queue::{ErrorKind, HostPace, HostState};
use tokio::sync::OnceCell;
use tokio::time::Instant;

use super::head::Head;
use super::health::Reach;
use super::ratelimit::{HostLimits, PaceReport};
use super::soft404::HostProbes;
use super::HostLimit;

/// Checks of a host counted for the fleet after its last failure (the fleet's error rate weighs
/// about the last hundred: `crawler_queue`'s `RECENT_CHECKS`).
const TROUBLED_CHECKS: u32 = 100;

/// The book is swept for forgettable hosts whenever it doubles past this size.
pub(crate) const MIN_SWEEP: usize = 1024;

/// A host's robots.txt, loaded once per origin by the first check that needs it.
pub(crate) type RobotsCell = Arc<OnceCell<Arc<Robots>>>;

/// Every host this worker knows.
pub(crate) struct HostBook {
    map: Mutex<Map>,
    /// The limits of a host without an override.
    default: HostLimit,
    /// Per-host limits the user set (`--host-limits`), by host name.
    overrides: HashMap<String, HostLimit>,
}

struct Map {
    hosts: HashMap<String, Arc<Host>>,
    /// Sweep when the book reaches this size.
    sweep_at: usize,
}

/// What this worker knows of one host.
pub(crate) struct Host {
    pub(crate) name: String,
    /// Its politeness: slots, rate, pace (an `Arc`: a request's permit holds it).
    pub(crate) limits: Arc<HostLimits>,
    /// What its HEAD answers have shown against its GETs.
    pub(crate) head: Mutex<Head>,
    /// Its soft-404 probes (`--soft-404`), by pattern.
    pub(crate) probes: Mutex<HostProbes>,
    /// Everything else, small and read together.
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Reachability, by origin.
    reach: HashMap<String, Arc<Reach>>,
    /// robots.txt, by origin.
    robots: HashMap<String, RobotsCell>,
    /// What the fleet's `hosts` row said when last read (unreachable: every origin starts
    /// suspect).
    fleet_said: Option<FleetSaid>,
    /// The pace last told the fleet (a throttled rate or a deferral), if any.
    pace_told: Option<HostPace>,
    /// Checks of the host still to count for the fleet since it last failed this worker (a
    /// timeout, a refused connection): its every check is counted, not only its failures, until
    /// [`TROUBLED_CHECKS`] went by without one, so its error rate comes back down.
    troubled: u32,
}

/// What the fleet's `hosts` row says of a host that this worker acts on.
#[derive(Clone, Debug, PartialEq)]
struct FleetSaid {
    rate: Option<f64>,
    unreachable: Option<ErrorKind>,
    backoff_secs: u64,
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
        let host = Arc::new(Host {
            name: name.to_owned(),
            limits: Arc::new(HostLimits::new(limit)),
            head: Mutex::default(),
            probes: Mutex::default(),
            state: Mutex::default(),
        });
        map.hosts.insert(name.to_owned(), host.clone());
        host
    }

    /// The entry of `name` if the book has one.
    #[cfg(test)]
    pub(crate) fn known(&self, name: &str) -> Option<Arc<Host>> {
        let map = self.map.lock().expect("host book lock poisoned");
        map.hosts.get(name).cloned()
    }

    /// Every entry now (a snapshot: the book's lock is not held while they are read).
    pub(crate) fn all(&self) -> Vec<Arc<Host>> {
        let map = self.map.lock().expect("host book lock poisoned");
        map.hosts.values().cloned().collect()
    }

    /// The paces to tell the fleet: hosts throttled or deferred whose pace changed since they
    /// were last told (a new rate, a longer deferral), and hosts told before that are back to
    /// their full rate (`rate: None`, no deferral: the fleet forgets the rate).
    pub(crate) fn pace_changes(&self) -> Vec<HostPace> {
        let now = Instant::now();
        let mut changes = Vec::new();
        for host in self.all() {
            let report = host.limits.report(&host.name, now).map(|p| HostPace {
                host: p.host,
                rate: p.rate,
                deferred: p.deferred.unwrap_or_default(),
            });
            let mut state = host.state();
            let change = match (&state.pace_told, &report) {
                (None, None) => None,
                (Some(_), None) => Some(HostPace {
                    host: host.name.clone(),
                    rate: None,
                    deferred: Duration::ZERO,
                }),
                (Some(told), Some(now))
                    if told.rate == now.rate && now.deferred <= told.deferred =>
                {
                    None
                }
                (_, Some(now)) => Some(now.clone()),
            };
            if let Some(change) = change {
                state.pace_told = report;
                changes.push(change);
            }
        }
        changes
    }

    /// Hosts with more checks waiting than they can start within `backlog` at their current
    /// pace: the claimer claims nothing more of them for now.
    pub(crate) fn backlogged(&self, backlog: Duration) -> Vec<String> {
        let now = Instant::now();
        self.all()
            .into_iter()
            .filter(|h| h.limits.backlog(now) > backlog)
            .map(|h| h.name.clone())
            .collect()
    }

    /// The hosts throttled or deferred now.
    pub(crate) fn pace_reports(&self) -> Vec<PaceReport> {
        let now = Instant::now();
        self.all()
            .iter()
            .filter_map(|h| h.limits.report(&h.name, now))
            .collect()
    }

    /// Hosts decided unreachable (an origin of theirs) and hosts suspect now.
    pub(crate) fn reach_counts(&self) -> (usize, usize) {
        let now = Instant::now();
        let mut counts = (0, 0);
        for host in self.all() {
            let state = host.state();
            let (decided, suspect) = state.reach.values().fold((false, false), |(d, s), r| {
                let (rd, rs) = r.standing(now);
                (d || rd, s || rs)
            });
            if decided {
                counts.0 += 1;
            } else if suspect {
                counts.1 += 1;
            }
        }
        counts
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.map.lock().unwrap().hosts.len()
    }
}

impl Host {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("host state lock poisoned")
    }

    /// Whether the book may drop this entry (see the module's docs).
    fn forgettable(self: &Arc<Self>, now: Instant) -> bool {
        let state = self.state();
        Arc::strong_count(self) == 1
            && Arc::strong_count(&self.limits) == 1
            && self.limits.idle(now)
            && state.pace_told.is_none()
            && state.troubled == 0
            && state.reach.values().all(|r| r.forgettable(now))
    }

    /// Whether the host's next request starts with GET: checks queue for it (its rate or its
    /// slots bound them, `ratelimit.rs`), or its HEAD is not to be believed (`head.rs`).
    pub(crate) fn asks_get_first(&self) -> bool {
        self.head.lock().expect("head lock poisoned").get_first() || self.limits.is_queueing()
    }

    /// The reachability of `origin` (one of this host's), made when absent: suspect at once if
    /// the fleet decided the host unreachable.
    pub(crate) fn reach(&self, origin: &str) -> Arc<Reach> {
        let mut state = self.state();
        if let Some(reach) = state.reach.get(origin) {
            return reach.clone();
        }
        let reach = Arc::new(Reach::default());
        if let Some(kind) = state.fleet_said.as_ref().and_then(|f| f.unreachable) {
            reach.suspect(kind);
        }
        state.reach.insert(origin.to_owned(), reach.clone());
        reach
    }

    /// The robots.txt cell of `origin`, made empty when absent.
    pub(crate) fn robots(&self, origin: &str) -> RobotsCell {
        self.state()
            .robots
            .entry(origin.to_owned())
            .or_default()
            .clone()
    }

    /// Takes in what the fleet's `hosts` row says of this host, if it changed since last read
    /// (applying the same row every keeper round would undo what this worker learned since):
    /// a host-wide deferral is waited out, a throttling host starts at its last rate, and a
    /// host decided unreachable is probed once, on each origin, before its checks go on.
    pub(crate) fn hear(&self, row: &HostState, horizon_cap: Duration) {
        let said = FleetSaid {
            rate: row.rate,
            unreachable: row.unreachable,
            backoff_secs: row.backoff.as_secs(),
        };
        let reaches: Vec<Arc<Reach>> = {
            let mut state = self.state();
            if state.fleet_said.as_ref() == Some(&said) {
                return;
            }
            state.fleet_said = Some(said);
            state.reach.values().cloned().collect()
        };
        if !row.backoff.is_zero() {
            self.limits.defer(row.backoff.min(horizon_cap));
        }
        if let Some(rate) = row.rate {
            self.limits.start_at(rate);
        }
        if let Some(kind) = row.unreachable {
            for reach in reaches {
                reach.suspect(kind);
            }
        }
    }

    /// Whether `checks` of the host, `errors` of them failures, are counted for the fleet: yes
    /// when one failed, and for [`TROUBLED_CHECKS`] checks after the last failure.
    pub(crate) fn troubled(&self, checks: u32, errors: u32) -> bool {
        let mut state = self.state();
        if errors > 0 {
            state.troubled = TROUBLED_CHECKS;
            return true;
        }
        let counted = state.troubled > 0;
        state.troubled = state.troubled.saturating_sub(checks);
        counted
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
        book.host("troubled.example").troubled(1, 1);
        book.host("slow.example")
            .limits
            .crawl_delay(Duration::from_secs(5));
        book.host("throttled.example").limits.start_at(2.0);
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
    fn a_host_that_failed_is_counted_until_a_hundred_checks_went_by_without_a_failure() {
        let book = book();
        let host = book.host("flaky.example");
        assert!(
            !host.troubled(10, 0),
            "a healthy host's checks are not counted"
        );
        assert!(host.troubled(5, 1));
        assert!(host.troubled(60, 0));
        assert!(host.troubled(40, 0));
        assert!(!host.troubled(10, 0), "a hundred clean checks later");
    }

    #[test]
    fn paces_are_told_when_they_change_and_once_more_when_back_to_full_rate() {
        let book = book();
        book.host("a.example").limits.start_at(2.5);
        let told = book.pace_changes();
        assert_eq!(told.len(), 1);
        assert_eq!(told[0].rate, Some(2.5));
        assert!(book.pace_changes().is_empty(), "unchanged: not told again");
        book.host("a.example").limits.start_at(10.0);
        // start_at never raises the rate: raise it as answers would.
        for _ in 0..20 {
            book.host("a.example").limits.answered();
        }
        let back = book.pace_changes();
        assert_eq!(back.len(), 1);
        assert_eq!((back[0].rate, back[0].deferred), (None, Duration::ZERO));
        assert!(book.pace_changes().is_empty());
    }

    #[test]
    fn a_host_with_more_waiting_than_its_rate_starts_soon_is_backlogged() {
        let book = book(); // 4 in flight, 10/s
        book.host("big.example").limits.waiting(50); // 5 s at 10/s
        book.host("small.example").limits.waiting(4);
        assert_eq!(book.backlogged(Duration::from_secs(2)), ["big.example"]);
        assert!(book.backlogged(Duration::from_secs(10)).is_empty());
        // A slow host: 20 waiting, each request 2 s over its 4 slots, is 10 s of waiting.
        let slow = book.host("slow.example");
        slow.limits.waiting(20);
        slow.limits.latency(Duration::from_secs(2));
        let mut backlogged = book.backlogged(Duration::from_secs(2));
        backlogged.sort();
        assert_eq!(backlogged, ["big.example", "slow.example"]);
        // A crawl delay makes a few a backlog.
        let delayed = book.host("delayed.example");
        delayed.limits.crawl_delay(Duration::from_secs(10));
        delayed.limits.waiting(3);
        assert!(book
            .backlogged(Duration::from_secs(2))
            .contains(&"delayed.example".into()));
    }

    #[test]
    fn a_host_is_asked_get_first_when_its_checks_queue_or_its_head_lies() {
        let book = book();
        book.host("busy.example").limits.waiting(4);
        book.host("calm.example").limits.waiting(3);
        assert!(book.host("busy.example").asks_get_first());
        assert!(!book.host("calm.example").asks_get_first());
        // No rate and quick answers: the worker's own limits hold the checks, not the host.
        let unlimited = HostLimit {
            concurrency: 8,
            rate: f64::INFINITY,
        };
        let book = HostBook::new(unlimited, HashMap::new());
        let fast = book.host("fast.example");
        fast.limits.waiting(100);
        fast.limits.latency(Duration::from_millis(1));
        assert!(!fast.asks_get_first());
        fast.limits.latency(Duration::from_millis(800));
        assert!(fast.asks_get_first(), "a slow host's slots");
    }

    #[test]
    fn the_fleets_rate_is_where_a_host_starts_never_above_its_own() {
        let book = book();
        book.host("slow.example").limits.start_at(2.5);
        book.host("fast.example").limits.start_at(50.0);
        let reports = book.pace_reports();
        assert_eq!(reports.len(), 1);
        assert_eq!(
            (reports[0].host.as_str(), reports[0].rate),
            ("slow.example", Some(2.5))
        );
    }

    #[tokio::test]
    async fn the_fleets_word_is_taken_once_per_change_and_reaches_every_origin() {
        let book = book();
        let host = book.host("gone.example");
        let http = host.reach("http://gone.example");
        let row = HostState {
            host: "gone.example".into(),
            backoff: Duration::ZERO,
            recent_checks: 0,
            recent_errors: 0,
            rate: None,
            unreachable: Some(ErrorKind::Dns),
        };
        host.hear(&row, Duration::from_secs(3600));
        let now = Instant::now();
        assert_eq!(
            http.standing(now),
            (false, true),
            "suspect on its known origin"
        );
        let https = host.reach("https://gone.example");
        assert_eq!(https.standing(now), (false, true), "and on a new one");
    }
}
