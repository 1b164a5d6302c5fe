//! One host's entry in the book ([`Host`]): its limits and pace, HEAD's trust, the
//! reachability and robots.txt of each origin, its soft-404 probes, what the fleet last said
//! of it ([`FleetSaid`]) and what this worker last told the fleet. The entry decides what its
//! facts mean (whether it may be forgotten, what pace to tell); the book only finds it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crawler_links::Robots;
use crawler_verdict::ErrorKind;
use tokio::sync::OnceCell;
use tokio::time::Instant;

use super::probes::{HostProbes, ProbesOf};
use crate::config::HostLimit;
use crate::head::Head;
use crate::health::Reach;
use crate::ratelimit::{HostLimits, PaceReport};
use crate::reply::{Failure, Reply};

/// Checks of a host counted for the fleet after its last failure (the fleet's error rate weighs
/// about the last hundred: the queue's `RECENT_CHECKS`).
const TROUBLED_CHECKS: u32 = 100;

/// A host's robots.txt, loaded once per origin by the first check that needs it.
pub type RobotsCell = Arc<OnceCell<Arc<Robots>>>;

/// What this worker knows of one host.
pub(crate) struct Host {
    name: String,
    /// Its politeness: slots, rate, pace (an `Arc`: a request's permit holds it).
    limits: Arc<HostLimits>,
    /// What its HEAD answers have shown against its GETs.
    head: Mutex<Head>,
    /// Its soft-404 probes (`--soft-404`), by pattern.
    probes: Mutex<HostProbes>,
    /// Everything else, small and read together.
    state: Mutex<State>,
    /// The checks of this host that the worker holds ([`Expected`]).
    expected: AtomicUsize,
}

/// A check of a host that the worker holds, from when it is claimed until it ends: while
/// another is held, the host's connection is kept for it (`asker.rs`).
pub struct Expected(Arc<Host>);

impl Expected {
    pub(crate) fn new(host: Arc<Host>) -> Self {
        host.expected.fetch_add(1, Ordering::Relaxed);
        Expected(host)
    }
}

impl Drop for Expected {
    fn drop(&mut self) {
        self.0.expected.fetch_sub(1, Ordering::Relaxed);
    }
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
    pace_told: Option<PaceReport>,
    /// Checks of the host still to count for the fleet since it last failed this worker (a
    /// timeout, a refused connection): its every check is counted, not only its failures, until
    /// [`TROUBLED_CHECKS`] went by without one, so its error rate comes back down.
    troubled: u32,
    /// When its last request was sent.
    last_sent: Option<Instant>,
}

/// What the fleet's `hosts` row says of a host that this worker acts on
/// ([`HostBook::hear`](crate::HostBook::hear)).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FleetSaid {
    /// Not to be asked for this long yet (a host-wide `Retry-After`; zero when none).
    pub backoff: Duration,
    /// The rate it was last asked at, while it throttled (requests per second).
    pub rate: Option<f64>,
    /// Decided unreachable, for this cause.
    pub unreachable: Option<ErrorKind>,
}

impl FleetSaid {
    /// Whether `other` says the same, to the second of its backoff: the row read again with
    /// its backoff a moment shorter is no news.
    fn same_as(&self, other: &FleetSaid) -> bool {
        self.rate == other.rate
            && self.unreachable == other.unreachable
            && self.backoff.as_secs() == other.backoff.as_secs()
    }
}

impl Host {
    /// The entry of `name`, with `limit`'s slots and rate, knowing nothing else yet.
    pub(crate) fn new(name: &str, limit: &HostLimit) -> Host {
        Host {
            name: name.to_owned(),
            limits: Arc::new(HostLimits::new(limit)),
            head: Mutex::default(),
            probes: Mutex::default(),
            state: Mutex::default(),
            expected: AtomicUsize::new(0),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().expect("host state lock poisoned")
    }

    /// Its name: lower case, no port.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Its slots, rate and pace.
    pub(crate) fn limits(&self) -> &Arc<HostLimits> {
        &self.limits
    }

    /// Whether its connection is wanted again soon, for a request sent `now`: another of its
    /// requests waits for its limits, the worker holds another of its checks, or its last
    /// request went `within` before this one (a host asked that often is asked again).
    pub(crate) fn asked_again(&self, now: Instant, within: Duration) -> bool {
        let last = self.state().last_sent.replace(now);
        self.limits.has_waiting()
            || self.expected.load(Ordering::Relaxed) > 1
            || last.is_some_and(|last| now.saturating_duration_since(last) < within)
    }

    /// Its name and soft-404 probes, as the probes' source (`soft404/probe.rs`) takes them.
    pub(crate) fn probes(&self) -> ProbesOf<'_> {
        (&self.name, &self.probes)
    }

    /// Whether the book may drop this entry (see the book's docs, `book.rs`).
    pub(crate) fn forgettable(self: &Arc<Self>, now: Instant) -> bool {
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
        self.head().get_first() || self.limits.is_queueing()
    }

    /// Learns from the GET asked after a HEAD that could not decide (`head.rs`).
    pub(crate) fn learn_head(&self, head: &Result<Reply, Failure>, get: &Result<Reply, Failure>) {
        self.head().learn(head, get);
    }

    fn head(&self) -> MutexGuard<'_, Head> {
        self.head.lock().expect("head lock poisoned")
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

    /// Whether an origin of the host is decided unreachable now, and whether one is suspect.
    pub(crate) fn standing(&self, now: Instant) -> (bool, bool) {
        let state = self.state();
        state.reach.values().fold((false, false), |(d, s), r| {
            let (rd, rs) = r.standing(now);
            (d || rd, s || rs)
        })
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
    /// a host-wide deferral is waited out (at most `horizon_cap`), a throttling host starts at
    /// its last rate, and a host decided unreachable is probed once, on each origin, before its
    /// checks go on.
    pub(crate) fn hear(&self, said: &FleetSaid, horizon_cap: Duration) {
        let reaches: Vec<Arc<Reach>> = {
            let mut state = self.state();
            if state.fleet_said.as_ref().is_some_and(|s| s.same_as(said)) {
                return;
            }
            state.fleet_said = Some(said.clone());
            state.reach.values().cloned().collect()
        };
        if !said.backoff.is_zero() {
            self.limits.defer(said.backoff.min(horizon_cap));
        }
        if let Some(rate) = said.rate {
            self.limits.start_at(rate);
        }
        if let Some(kind) = said.unreachable {
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

    /// The host's pace now, if it is throttled or deferred.
    pub(crate) fn pace(&self, now: Instant) -> Option<PaceReport> {
        self.limits.report(&self.name, now)
    }

    /// The pace to tell the fleet, if it changed since last told (a new rate, a longer
    /// deferral), or the host is back to its full rate after a pace was told (`rate: None`,
    /// no deferral: the fleet forgets the rate). Remembered as told.
    pub(crate) fn pace_change(&self, now: Instant) -> Option<PaceReport> {
        let report = self.pace(now);
        let mut state = self.state();
        let change = match (&state.pace_told, &report) {
            (None, None) => None,
            (Some(_), None) => Some(PaceReport {
                host: self.name.clone(),
                rate: None,
                deferred: None,
            }),
            (Some(told), Some(now)) if told.rate == now.rate && now.deferred <= told.deferred => {
                None
            }
            (_, Some(now)) => Some(now.clone()),
        };
        if change.is_some() {
            state.pace_told = report;
        }
        change
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(name: &str, concurrency: usize, rate: f64) -> Host {
        Host::new(name, &HostLimit { concurrency, rate })
    }

    #[test]
    fn a_host_that_failed_is_counted_until_a_hundred_checks_went_by_without_a_failure() {
        let host = host("flaky.example", 4, 10.0);
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
    fn a_host_is_asked_get_first_when_its_checks_queue_or_its_head_lies() {
        let busy = host("busy.example", 4, 10.0);
        let calm = host("calm.example", 4, 10.0);
        busy.limits.waiting(4);
        calm.limits.waiting(3);
        assert!(busy.asks_get_first());
        assert!(!calm.asks_get_first());
        // No rate and quick answers: the worker's own limits hold the checks, not the host.
        let fast = host("fast.example", 8, f64::INFINITY);
        fast.limits.waiting(100);
        fast.limits.latency(Duration::from_millis(1));
        assert!(!fast.asks_get_first());
        fast.limits.latency(Duration::from_millis(800));
        assert!(fast.asks_get_first(), "a slow host's slots");
    }

    #[tokio::test]
    async fn the_fleets_word_is_taken_once_per_change_and_reaches_every_origin() {
        let host = host("gone.example", 4, 10.0);
        let http = host.reach("http://gone.example");
        let said = FleetSaid {
            unreachable: Some(ErrorKind::Dns),
            ..FleetSaid::default()
        };
        host.hear(&said, Duration::from_secs(3600));
        let now = Instant::now();
        assert_eq!(
            http.standing(now),
            (false, true),
            "suspect on its known origin"
        );
        let https = host.reach("https://gone.example");
        assert_eq!(https.standing(now), (false, true), "and on a new one");
        assert_eq!(host.standing(now), (false, true));
    }

    #[test]
    fn the_same_word_a_moment_later_is_no_news() {
        let host = host("slow.example", 4, 10.0);
        let said = |backoff_ms, rate| FleetSaid {
            backoff: Duration::from_millis(backoff_ms),
            rate,
            unreachable: None,
        };
        assert!(said(30_900, Some(2.0)).same_as(&said(30_100, Some(2.0))));
        assert!(!said(30_900, Some(2.0)).same_as(&said(29_900, Some(2.0))));
        assert!(!said(30_900, Some(2.0)).same_as(&said(30_900, None)));
        host.hear(&said(0, Some(2.5)), Duration::from_secs(60));
        assert_eq!(host.pace(Instant::now()).and_then(|p| p.rate), Some(2.5));
    }
}
