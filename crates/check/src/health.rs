//! Whether a host can be reached at all: a failure that belongs to the host (no DNS answer,
//! refused, no route, TLS, no response) is decided once for the host, not rediscovered URL by
//! URL. Keyed by origin (`scheme://host:port`): one port of a host may refuse or hang where
//! another answers; a name that does not resolve fails on every port alike.
//!
//! Each origin's state ([`Reach`]) is kept in its host's entry of the book (`hosts/`); the
//! decisions and recoveries ([`Decisions`]) wait in the book for the worker to tell them. A
//! host starts `ok`. Its first such failure makes it *suspect*: its requests then go one at
//! a time, [`PROBE_GAP`] apart, each a probe of the host. [`DECIDE_AFTER`] failures in a row
//! (one more if the host ever answered this worker) decide it *unreachable*: every later check
//! of it ends at once with the host's cause and no request, and the worker writes the verdict
//! of all its pending URLs in one statement (`Hosts::decide`). Any answer at all (a 404 is
//! an answer) makes it `ok` again. A failure counts only if nothing answered since its request
//! was sent: a slow page on a live host times out without condemning the host.
//!
//! A decision is kept [`DECISION_TTL`]; after that the next check probes the host once more. A
//! host the fleet decided before (a recheck, another worker) starts one failure short of a
//! decision, so one probe decides it again (BUbiNG drops a host after its connection retries;
//! Heritrix resolves a host once and remembers the failure).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crawler_verdict::ErrorKind;
use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};
use tokio::time::Instant;

use crate::reply::{Cause, Failure};

/// Failures in a row that decide a host never seen answering.
pub(crate) const DECIDE_AFTER: u32 = 2;
/// The least time between two probes of a suspect host.
pub(crate) const PROBE_GAP: Duration = Duration::from_secs(1);
/// How long a decision stands before the host is probed again.
pub(crate) const DECISION_TTL: Duration = Duration::from_secs(600);

/// A host (an origin of it) decided unreachable, for the queue to write and the fleet to
/// know.
#[derive(Clone, Debug, PartialEq)]
pub struct HostDecision {
    pub host: String,
    /// `scheme://host[:port]`: the URLs decided are those under it.
    pub origin: String,
    /// The error kind every pending URL of it gets.
    pub kind: ErrorKind,
    /// Says that it was decided for the host, and why.
    pub detail: String,
}

/// What this worker decided of its hosts and has not told the fleet yet, kept by the host book
/// (`hosts/book.rs`); the reachability of each origin is in its host's entry.
#[derive(Default)]
pub(crate) struct Decisions {
    /// Decisions made and not yet taken by the writer.
    decided: Mutex<Vec<HostDecision>>,
    /// Hosts the fleet knew unreachable that answered, not yet taken by the writer.
    recovered: Mutex<Vec<String>>,
}

/// Whether one origin can be reached.
#[derive(Default)]
pub(crate) struct Reach {
    state: Mutex<State>,
    /// Held by the one request of a suspect host in flight.
    probe: Arc<AsyncMutex<()>>,
}

#[derive(Default)]
struct State {
    /// Host-level failures in a row, with no answer since.
    failures: u32,
    cause: Option<Cause>,
    answered_ever: bool,
    last_answer: Option<Instant>,
    last_failure: Option<Instant>,
    /// When the host was decided unreachable.
    decided_at: Option<Instant>,
    /// The fleet's `hosts` row says unreachable: an answer must be told.
    fleet_knows: bool,
}

/// How a request may go to its host.
pub(crate) enum Gate {
    /// The host is fine: go.
    Open,
    /// The host is suspect: this request is its probe, the only one in flight.
    Probe(#[allow(dead_code)] OwnedMutexGuard<()>),
}

impl State {
    fn threshold(&self) -> u32 {
        DECIDE_AFTER + u32::from(self.answered_ever)
    }

    fn decision(&self, now: Instant) -> Option<Cause> {
        let at = self.decided_at?;
        (now.duration_since(at) < DECISION_TTL)
            .then_some(self.cause)
            .flatten()
    }
}

impl Reach {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("reach lock poisoned")
    }

    /// May a request go now? `Err` with the cause when the origin is decided unreachable; a
    /// suspect origin's requests wait their turn to probe it.
    pub(crate) async fn gate(&self) -> Result<Gate, Cause> {
        {
            let state = self.state();
            if let Some(cause) = state.decision(Instant::now()) {
                return Err(cause);
            }
            if state.failures == 0 {
                return Ok(Gate::Open);
            }
        }
        let guard = self.probe.clone().lock_owned().await;
        let wait = {
            let state = self.state();
            let now = Instant::now();
            if let Some(cause) = state.decision(now) {
                return Err(cause);
            }
            if state.failures == 0 {
                return Ok(Gate::Open);
            }
            state
                .last_failure
                .map(|at| (at + PROBE_GAP).saturating_duration_since(now))
                .unwrap_or_default()
        };
        tokio::time::sleep(wait).await;
        Ok(Gate::Probe(guard))
    }

    /// After waiting for its limits, may a request that found the origin fine still go? `Err`
    /// when it was decided meanwhile, `Ok(false)` when it became suspect (the request goes
    /// back to wait for its turn to probe).
    pub(crate) fn still_open(&self) -> Result<bool, Cause> {
        let state = self.state();
        match state.decision(Instant::now()) {
            Some(cause) => Err(cause),
            None => Ok(state.failures == 0),
        }
    }

    /// The fleet decided the host unreachable before: one failed probe decides it again.
    pub(crate) fn suspect(&self, kind: ErrorKind) {
        let mut state = self.state();
        state.fleet_knows = true;
        if state.failures == 0 && state.decided_at.is_none() {
            state.failures = state.threshold() - 1;
            state.cause = Some(Cause::from_kind(kind));
        }
    }

    /// Whether it is decided unreachable now, and whether it is suspect (failing, undecided).
    pub(crate) fn standing(&self, now: Instant) -> (bool, bool) {
        let state = self.state();
        let decided = state.decision(now).is_some();
        (decided, !decided && state.failures > 0)
    }

    /// Whether forgetting it loses nothing: no failure counted, no decision standing.
    pub(crate) fn forgettable(&self, now: Instant) -> bool {
        let state = self.state();
        state.failures == 0 && state.decision(now).is_none()
    }
}

impl Decisions {
    /// `origin` of `host` answered (any status): it is reachable.
    pub(crate) fn answered(&self, host: &str, reach: &Reach) {
        let mut state = reach.state();
        state.failures = 0;
        state.decided_at = None;
        state.answered_ever = true;
        state.last_answer = Some(Instant::now());
        if std::mem::take(&mut state.fleet_knows) {
            drop(state);
            self.recovered
                .lock()
                .expect("recoveries lock poisoned")
                .push(host.to_owned());
        }
    }

    /// A request to `origin` of `host`, sent at `sent`, got no answer, for `failure`. Returns
    /// the cause when this decided the origin.
    pub(crate) fn failed(
        &self,
        (host, origin): (&str, &str),
        reach: &Reach,
        failure: Failure,
        sent: Instant,
    ) -> Option<Cause> {
        let cause = Cause::of(failure)?;
        let mut state = reach.state();
        if state.last_answer.is_some_and(|at| at >= sent) {
            return None;
        }
        let now = Instant::now();
        if state.decision(now).is_some() {
            return None;
        }
        state.failures += 1;
        state.cause = Some(cause);
        state.last_failure = Some(now);
        if state.failures < state.threshold() {
            return None;
        }
        state.decided_at = Some(now);
        state.fleet_knows = true;
        let decision = HostDecision {
            host: host.to_owned(),
            origin: origin.to_owned(),
            kind: cause.kind(),
            detail: format!(
                "decided for the host: {} ({} requests in a row without an answer)",
                cause.describe(),
                state.failures
            ),
        };
        drop(state);
        self.decided
            .lock()
            .expect("decisions lock poisoned")
            .push(decision);
        Some(cause)
    }

    /// Puts back a decision the writer could not write.
    pub(crate) fn retake(&self, decision: HostDecision) {
        self.decided
            .lock()
            .expect("decisions lock poisoned")
            .push(decision);
    }

    /// Hosts the fleet knew unreachable that answered since the last call.
    pub(crate) fn take_recoveries(&self) -> Vec<String> {
        std::mem::take(&mut *self.recovered.lock().expect("recoveries lock poisoned"))
    }

    /// The decisions made since the last call.
    pub(crate) fn take_decisions(&self) -> Vec<HostDecision> {
        std::mem::take(&mut *self.decided.lock().expect("decisions lock poisoned"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stand_in::StandInBook;

    /// The health of origins by name, as a worker's book keeps it.
    #[derive(Default)]
    struct Origins {
        health: Decisions,
        reaches: StandInBook<Reach>,
    }

    impl Origins {
        fn reach(&self, origin: &str) -> Arc<Reach> {
            self.reaches.of(origin)
        }

        async fn gate(&self, origin: &str) -> Result<Gate, Cause> {
            self.reach(origin).gate().await
        }

        fn failed(&self, origin: &str, failure: Failure, sent: Instant) -> Option<Cause> {
            let url = url::Url::parse(origin).ok();
            let host = url.as_ref().and_then(|u| u.host_str()).unwrap_or(origin);
            let reach = self.reach(origin);
            self.health.failed((host, origin), &reach, failure, sent)
        }

        fn answered(&self, origin: &str) {
            self.health.answered(origin, &self.reach(origin));
        }

        fn suspect(&self, origin: &str, kind: ErrorKind) {
            self.reach(origin).suspect(kind);
        }

        fn take_decisions(&self) -> Vec<HostDecision> {
            self.health.take_decisions()
        }

        fn take_recoveries(&self) -> Vec<String> {
            self.health.take_recoveries()
        }
    }

    #[tokio::test]
    async fn a_decision_names_its_host_and_origin() {
        let health = Origins::default();
        let origin = "http://dead.example:8080";
        health.failed(origin, Failure::Refused, Instant::now());
        health.failed(origin, Failure::Refused, Instant::now());
        let decision = health.take_decisions().remove(0);
        assert_eq!(
            (decision.host.as_str(), decision.origin.as_str()),
            ("dead.example", origin)
        );
        assert_eq!(decision.kind, ErrorKind::Connect);
    }

    #[tokio::test(start_paused = true)]
    async fn two_failures_in_a_row_decide_a_host_once() {
        let health = Origins::default();
        let sent = Instant::now();
        assert!(matches!(health.gate("dead.example").await, Ok(Gate::Open)));
        assert_eq!(health.failed("dead.example", Failure::Dns, sent), None);
        assert!(matches!(
            health.gate("dead.example").await,
            Ok(Gate::Probe(_))
        ));
        assert_eq!(sent.elapsed(), PROBE_GAP, "the probe waits its gap");
        assert_eq!(
            health.failed("dead.example", Failure::Dns, Instant::now()),
            Some(Cause::Dns)
        );
        assert_eq!(health.gate("dead.example").await.err(), Some(Cause::Dns));
        let decisions = health.take_decisions();
        assert_eq!(decisions.len(), 1);
        assert_eq!(decisions[0].kind, ErrorKind::Dns);
        assert!(decisions[0].detail.starts_with("decided for the host"));
        assert_eq!(
            health.failed("dead.example", Failure::Dns, Instant::now()),
            None,
            "decided once"
        );
        assert!(health.take_decisions().is_empty());
    }

    #[tokio::test]
    async fn a_failure_sent_before_an_answer_does_not_count() {
        let health = Origins::default();
        let sent = Instant::now();
        health.answered("slow.example");
        for _ in 0..10 {
            assert_eq!(health.failed("slow.example", Failure::Timeout, sent), None);
        }
        assert!(matches!(health.gate("slow.example").await, Ok(Gate::Open)));
    }

    #[tokio::test]
    async fn a_url_level_failure_says_nothing_of_the_host() {
        let health = Origins::default();
        for _ in 0..5 {
            assert_eq!(
                health.failed("a.example", Failure::Redirects, Instant::now()),
                None
            );
        }
        assert!(matches!(health.gate("a.example").await, Ok(Gate::Open)));
    }

    #[tokio::test]
    async fn a_host_that_answered_before_needs_one_more_failure_and_an_answer_clears_it() {
        let health = Origins::default();
        health.answered("flaky.example");
        let later = || Instant::now() + Duration::from_millis(1);
        assert_eq!(
            health.failed("flaky.example", Failure::Refused, later()),
            None
        );
        assert_eq!(
            health.failed("flaky.example", Failure::Refused, later()),
            None
        );
        health.answered("flaky.example");
        assert!(matches!(health.gate("flaky.example").await, Ok(Gate::Open)));
        assert_eq!(
            health.failed("flaky.example", Failure::Refused, later()),
            None
        );
        assert_eq!(
            health.failed("flaky.example", Failure::Refused, later()),
            None
        );
        assert_eq!(
            health.failed("flaky.example", Failure::Refused, later()),
            Some(Cause::Refused)
        );
    }

    #[tokio::test]
    async fn a_host_the_fleet_decided_is_decided_again_by_one_probe() {
        let health = Origins::default();
        health.suspect("gone.example", ErrorKind::Dns);
        assert!(matches!(
            health.gate("gone.example").await,
            Ok(Gate::Probe(_))
        ));
        assert_eq!(
            health.failed("gone.example", Failure::Dns, Instant::now()),
            Some(Cause::Dns)
        );
        let standing = health.reach("gone.example").standing(Instant::now());
        assert_eq!(standing, (true, false), "decided");
        health.answered("gone.example");
        assert_eq!(
            health.take_recoveries(),
            ["gone.example"],
            "the fleet is told"
        );
        assert!(health.take_recoveries().is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn a_suspect_host_is_probed_one_request_at_a_time() {
        let health = Arc::new(Origins::default());
        health.failed("s.example", Failure::Timeout, Instant::now());
        let first = health.gate("s.example").await.unwrap();
        let second = {
            let health = health.clone();
            tokio::spawn(async move { health.gate("s.example").await.is_ok() })
        };
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert!(!second.is_finished(), "a second probe while one is out");
        health.answered("s.example");
        drop(first);
        assert!(second.await.unwrap());
    }
}
