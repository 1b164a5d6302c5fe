//! Politeness: per host a concurrency limit, a rate and an adaptive penalty, then a global
//! in-flight limit — taken in that order for every request.
//!
//! The host limits come first so that a request queued behind a slow or penalised host does
//! not hold one of the global slots that other hosts could use.
//!
//! Before a check starts, [`Limits::admit`] asks whether its host could be asked within the
//! worker's patience: a host with too many requests queued for its rate, or in backoff (a
//! `Retry-After`, the 429/503 penalty), is not waited for; the check is deferred, and the site
//! goes back to the queue due when the host is expected free. So a throttling host defers its
//! own sites, never the others'.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crawler_queue::backoff::Backoff;
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use tokio::sync::Semaphore;

use super::HostLimit;

/// First penalty after a 429 or 503; it doubles on each one after, like lychee.
const PENALTY_MIN: Duration = Duration::from_millis(500);
const PENALTY_MAX: Duration = Duration::from_secs(30);
/// How a penalty grows: doubled by each 429 or 503 (and each failure past the third in a row),
/// halved by each answer (see `Pace::relax`).
const PENALTY: Backoff = Backoff::new(PENALTY_MIN, PENALTY_MAX);
/// Requests in a row that got no answer (timeouts, resets, refusals) after which a host is
/// slowed down as if it had answered 429: a server that struggles is not pressed harder (Nutch
/// purges a queue after 5 exceptions). A 5xx is an answer, often about one page only.
const FAILURES_BEFORE_PENALTY: u32 = 3;
/// A penalty is forgotten once the host has not complained for this long.
const PENALTY_MEMORY: Duration = Duration::from_secs(60);
/// The host map is swept for idle hosts whenever it doubles past this size.
const MIN_SWEEP: usize = 1024;

/// The limits shared by every check of one [`super::Checker`].
pub(crate) struct Limits {
    hosts: Mutex<HostMap>,
    /// Requests in flight over all hosts.
    global: Semaphore,
    /// The limits of a host without an override.
    default: HostLimit,
    /// Per-host limits the user set (`--host-limits`), by host name.
    overrides: HashMap<String, HostLimit>,
    clock: DefaultClock,
}

struct HostMap {
    map: HashMap<String, Arc<Host>>,
    /// Sweep when the map reaches this size: amortised O(1) per request, and the map never
    /// holds more than twice the hosts that are busy or still penalised.
    sweep_at: usize,
}

struct Host {
    /// Requests inside [`Limits::acquire`], waiting for a slot, the rate or the pace.
    waiting: AtomicUsize,
    /// Time between two requests at the host's rate (zero when unlimited).
    interval: Duration,
    slots: Semaphore,
    rate: Option<DefaultDirectRateLimiter>,
    pace: Mutex<Pace>,
}

/// The adaptive part: when a host may next be asked, and how far apart requests must be.
#[derive(Debug)]
struct Pace {
    penalty: Duration,
    penalized_at: Option<Instant>,
    /// No request starts before this.
    next: Instant,
    /// The server asked not to be asked before this (`Retry-After`, capped at
    /// `crawler_queue::MAX_DELAY`): checks are deferred until then, not waited for.
    deferred_until: Option<Instant>,
    /// The turns handed out to deferred checks end here (see [`Limits::admit`]).
    booked: Instant,
    last_used: Instant,
    /// Requests in a row that got no answer.
    failures: u32,
}

/// Held for the duration of one request; gives the host and global slots back when dropped.
pub(crate) struct Permit<'a> {
    limits: &'a Limits,
    host: Arc<Host>,
    /// Whether the global slot is held yet: a wait cancelled halfway gives back what it took.
    global: bool,
}

/// The time between two requests at `rate` per second (zero when unlimited).
fn interval_of(rate: f64) -> Duration {
    Duration::try_from_secs_f64(1.0 / rate).unwrap_or_default()
}

impl Limits {
    /// `default` applies to every host but those in `overrides`; a rate of `f64::INFINITY`
    /// means no rate limit.
    pub(crate) fn new(
        default: HostLimit,
        overrides: HashMap<String, HostLimit>,
        concurrency: usize,
    ) -> Self {
        Self {
            hosts: Mutex::new(HostMap {
                map: HashMap::new(),
                sweep_at: MIN_SWEEP,
            }),
            global: Semaphore::new(concurrency),
            default,
            overrides,
            clock: DefaultClock::default(),
        }
    }

    /// `Err(wait)` when a request to `host` could not start within `patience`: the requests
    /// already queued for it at its rate, its penalty and any `Retry-After` come first.
    ///
    /// A check turned away books the next free turn of the host after the ones already booked,
    /// and the wait returned runs to it: a host with more sites than its rate allows gets them
    /// back one turn apart (a Mercator-like schedule kept in the queue's `next_check_at`), rather
    /// than all at once to be turned away again.
    pub(crate) fn admit(&self, host: &str, patience: Duration) -> Result<(), Duration> {
        let host = self.host(host);
        let now = Instant::now();
        let mut pace = host.pace.lock().expect("pace lock poisoned");
        let until = pace.next.max(pace.deferred_until.unwrap_or(now));
        let queued = host.waiting.load(Ordering::Relaxed) as u32;
        let turn = host.interval.max(pace.penalty);
        let wait = until.saturating_duration_since(now) + turn.saturating_mul(queued);
        if wait <= patience {
            return Ok(());
        }
        let at = pace.booked.max(now + wait);
        pace.booked = at + turn;
        Err(at - now)
    }

    /// Slows `host` down as after a complaint, unless it already is: the fleet saw it failing
    /// lately (see `crawler_queue::HostState::failing`).
    pub(crate) fn slow(&self, host: &str) {
        let host = self.host(host);
        let mut pace = host.pace.lock().expect("pace lock poisoned");
        if pace.penalty.is_zero() {
            pace.penalize(Instant::now(), Duration::ZERO);
        }
    }

    /// Defers every check of `host` for `wait` from now (at least).
    pub(crate) fn defer(&self, host: &str, wait: Duration) {
        let host = self.host(host);
        let until = Instant::now() + wait;
        let mut pace = host.pace.lock().expect("pace lock poisoned");
        pace.deferred_until = Some(pace.deferred_until.map_or(until, |u| u.max(until)));
    }

    /// Waits until `host` may be asked again, then for a global slot; `Err(wait)` instead when
    /// the host's pace (a penalty or `Retry-After` that came meanwhile) would keep this request
    /// waiting longer than `patience`.
    pub(crate) async fn acquire(
        &self,
        host: &str,
        patience: Duration,
    ) -> Result<Permit<'_>, Duration> {
        let host = self.host(host);
        host.waiting.fetch_add(1, Ordering::Relaxed);
        let _waiting = Waiting(host.clone());
        // Permits are forgotten here and given back by `Permit::drop`: no Arc per semaphore.
        host.slots
            .acquire()
            .await
            .expect("host semaphore never closed")
            .forget();
        let mut permit = Permit {
            limits: self,
            host,
            global: false,
        };
        permit.host.wait_for_pace(patience).await?;
        // The host's rate turn is taken only once the global slot is held, so a request starts
        // when it takes its turn: turns taken while waiting for a slot would all start together
        // when slots free up, a burst past the rate. A request whose turn has not come gives
        // its slot back while it waits, so no slot waits for a host.
        loop {
            self.global
                .acquire()
                .await
                .expect("global semaphore never closed")
                .forget();
            permit.global = true;
            let Some(rate) = &permit.host.rate else { break };
            match rate.check() {
                Ok(()) => break,
                Err(not_until) => {
                    self.global.add_permits(1);
                    permit.global = false;
                    tokio::time::sleep(not_until.wait_time_from(self.clock.now())).await;
                }
            }
        }
        Ok(permit)
    }

    fn host(&self, name: &str) -> Arc<Host> {
        let mut hosts = self.hosts.lock().expect("host map lock poisoned");
        if let Some(host) = hosts.map.get(name) {
            return host.clone();
        }
        if hosts.map.len() >= hosts.sweep_at {
            let now = Instant::now();
            hosts
                .map
                .retain(|_, h| Arc::strong_count(h) > 1 || !h.idle(now));
            hosts.sweep_at = (hosts.map.len() * 2).max(MIN_SWEEP);
        }
        let limit = self.overrides.get(name).unwrap_or(&self.default);
        let interval = interval_of(limit.rate);
        let host = Arc::new(Host {
            waiting: AtomicUsize::new(0),
            interval,
            slots: Semaphore::new(limit.concurrency),
            rate: Quota::with_period(interval)
                .map(|q| RateLimiter::direct_with_clock(q, self.clock.clone())),
            pace: Mutex::new(Pace::new(Instant::now())),
        });
        hosts.map.insert(name.to_owned(), host.clone());
        host
    }

    #[cfg(test)]
    fn hosts_tracked(&self) -> usize {
        self.hosts.lock().unwrap().map.len()
    }
}

impl Host {
    /// Waits for the pace (the penalty and `Retry-After`); `Err(wait)` when that is longer than
    /// `patience`.
    async fn wait_for_pace(&self, patience: Duration) -> Result<(), Duration> {
        let now = Instant::now();
        let at = {
            let mut pace = self.pace.lock().expect("pace lock poisoned");
            match pace.deferred_until {
                Some(until) if until.saturating_duration_since(now) > patience => until,
                _ => pace.reserve(now),
            }
        };
        if at.saturating_duration_since(now) > patience {
            return Err(at - now);
        }
        if at > now {
            tokio::time::sleep_until(at.into()).await;
        }
        Ok(())
    }

    /// Forgetting an idle host loses nothing: a fresh entry would behave the same.
    fn idle(&self, now: Instant) -> bool {
        let pace = self.pace.lock().expect("pace lock poisoned");
        now >= pace.next
            && now >= pace.last_used + self.interval
            && pace.penalty_forgotten(now)
            && pace.deferred_until.is_none_or(|until| now >= until)
    }
}

/// Counts a request as waiting for its host until dropped (also when its wait is cancelled).
struct Waiting(Arc<Host>);

impl Drop for Waiting {
    fn drop(&mut self) {
        self.0.waiting.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        self.host.slots.add_permits(1);
        if self.global {
            self.limits.global.add_permits(1);
        }
    }
}

impl Permit<'_> {
    /// Tells the host's pace what the server answered: 429 and 503 slow the host down (requests
    /// in process wait at least `hold`, new checks are deferred for all of `retry_after`), any
    /// other answer relaxes it.
    pub(crate) fn record(&self, status: u16, retry_after: Option<Duration>, hold: Duration) {
        let mut pace = self.host.pace.lock().expect("pace lock poisoned");
        if matches!(status, 429 | 503) {
            let now = Instant::now();
            pace.penalize(now, hold);
            if let Some(asked) = retry_after {
                let until = now + asked;
                pace.deferred_until = Some(pace.deferred_until.map_or(until, |u| u.max(until)));
            }
        } else {
            pace.relax();
        }
    }
}

impl Permit<'_> {
    /// Tells the host's pace that the request got no answer (timeout, reset, refused).
    pub(crate) fn record_failure(&self) {
        let mut pace = self.host.pace.lock().expect("pace lock poisoned");
        pace.fail(Instant::now());
    }
}

impl Pace {
    fn new(now: Instant) -> Self {
        Self {
            penalty: Duration::ZERO,
            penalized_at: None,
            next: now,
            deferred_until: None,
            booked: now,
            last_used: now,
            failures: 0,
        }
    }

    /// One more failure in a row; the third and every one after slows the host down.
    fn fail(&mut self, now: Instant) {
        self.failures += 1;
        if self.failures >= FAILURES_BEFORE_PENALTY {
            self.penalize(now, Duration::ZERO);
        }
    }

    fn penalty_forgotten(&self, now: Instant) -> bool {
        match self.penalized_at {
            Some(at) => now >= at + PENALTY_MEMORY,
            None => true,
        }
    }

    /// The instant the caller may start; requests are spaced `penalty` apart.
    fn reserve(&mut self, now: Instant) -> Instant {
        if self.penalty_forgotten(now) {
            self.penalty = Duration::ZERO;
            self.penalized_at = None;
        }
        let at = self.next.max(now);
        self.next = at + self.penalty;
        self.last_used = at;
        at
    }

    fn penalize(&mut self, now: Instant, retry_after: Duration) {
        self.penalty = PENALTY.after(self.penalty);
        self.penalized_at = Some(now);
        self.next = self.next.max(now + self.penalty.max(retry_after));
    }

    /// Halves the penalty, and gives back the slot reserved under the old one.
    fn relax(&mut self) {
        self.failures = 0;
        self.penalty /= 2;
        if self.penalty < PENALTY_MIN {
            self.penalty = Duration::ZERO;
        }
        self.next = self.next.min(self.last_used + self.penalty);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Limits of 8 in flight and 10 requests per second per host, 16 in all.
    fn at_ten_per_second() -> Limits {
        let limit = HostLimit {
            concurrency: 8,
            rate: 10.0,
        };
        Limits::new(limit, HashMap::new(), 16)
    }

    /// Limits with no rate, `host` requests in flight per host and `global` in all.
    fn unlimited(host: usize, global: usize) -> Limits {
        let limit = HostLimit {
            concurrency: host,
            rate: f64::INFINITY,
        };
        Limits::new(limit, HashMap::new(), global)
    }

    #[test]
    fn penalty_doubles_from_half_a_second_up_to_thirty() {
        let now = Instant::now();
        let mut pace = Pace::new(now);
        let seen: Vec<u64> = (0..8)
            .map(|_| {
                pace.penalize(now, Duration::ZERO);
                pace.penalty.as_millis() as u64
            })
            .collect();
        assert_eq!(seen, [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000]);
    }

    #[test]
    fn penalty_decays_on_success_and_spaces_requests_meanwhile() {
        let now = Instant::now();
        let mut pace = Pace::new(now);
        pace.penalize(now, Duration::ZERO);
        pace.penalize(now, Duration::ZERO); // 1 s
        let first = pace.reserve(now);
        assert_eq!(first, now + Duration::from_secs(1));
        assert_eq!(pace.reserve(now), first + Duration::from_secs(1));
        pace.relax();
        assert_eq!(pace.penalty, PENALTY_MIN);
        pace.relax();
        assert_eq!(pace.penalty, Duration::ZERO);
        assert_eq!(
            pace.reserve(now),
            first + Duration::from_secs(1),
            "no slot kept in reserve"
        );
    }

    #[test]
    fn retry_after_holds_the_host_longer_than_the_penalty() {
        let now = Instant::now();
        let mut pace = Pace::new(now);
        pace.penalize(now, Duration::from_secs(5));
        assert_eq!(pace.reserve(now), now + Duration::from_secs(5));
    }

    #[test]
    fn three_failures_in_a_row_slow_a_host_and_an_answer_resets_the_count() {
        let now = Instant::now();
        let mut pace = Pace::new(now);
        pace.fail(now);
        pace.fail(now);
        assert_eq!(pace.penalty, Duration::ZERO, "two may be bad luck");
        pace.relax();
        pace.fail(now);
        pace.fail(now);
        assert_eq!(pace.penalty, Duration::ZERO, "an answer in between");
        pace.fail(now);
        assert_eq!(pace.penalty, PENALTY_MIN);
        pace.fail(now);
        assert_eq!(
            pace.penalty,
            2 * PENALTY_MIN,
            "each failure after doubles it"
        );
    }

    #[test]
    fn a_host_the_fleet_saw_failing_starts_slowed_once() {
        let limits = at_ten_per_second();
        limits.slow("down.example");
        limits.slow("down.example");
        let host = limits.host("down.example");
        assert_eq!(host.pace.lock().unwrap().penalty, PENALTY_MIN);
    }

    #[test]
    fn penalty_is_forgotten_after_a_quiet_minute() {
        let now = Instant::now();
        let mut pace = Pace::new(now);
        pace.penalize(now, Duration::ZERO);
        let later = now + PENALTY_MEMORY;
        assert_eq!(pace.reserve(later), later);
        assert_eq!(pace.penalty, Duration::ZERO);
    }

    #[tokio::test]
    async fn idle_hosts_are_dropped_so_the_map_stays_bounded() {
        let limits = unlimited(4, 16);
        for i in 0..10 * MIN_SWEEP {
            drop(
                limits
                    .acquire(&format!("host{i}.example"), Duration::MAX)
                    .await
                    .unwrap(),
            );
        }
        assert!(
            limits.hosts_tracked() <= MIN_SWEEP,
            "{}",
            limits.hosts_tracked()
        );
    }

    #[tokio::test]
    async fn a_wait_cancelled_halfway_gives_its_slots_back() {
        let limits = unlimited(1, 1);
        let held = limits.acquire("a.example", Duration::MAX).await.unwrap();
        let waiting = limits.acquire("b.example", Duration::MAX); // gets b's slot, then waits for the global one
        let cancelled = tokio::time::timeout(Duration::from_millis(20), waiting).await;
        assert!(cancelled.is_err());
        drop(held);
        let again = tokio::time::timeout(
            Duration::from_secs(1),
            limits.acquire("b.example", Duration::MAX),
        );
        assert!(
            again.await.is_ok(),
            "b's slot and the global slot are free again"
        );
    }

    #[tokio::test]
    async fn a_host_in_backoff_or_with_a_long_queue_is_not_admitted() {
        let limits = at_ten_per_second(); // 10 requests per second
        let patience = Duration::from_secs(1);
        assert_eq!(limits.admit("a.example", patience), Ok(()));
        let permit = limits.acquire("a.example", Duration::MAX).await.unwrap();
        permit.record(429, Some(Duration::from_secs(3600)), Duration::ZERO);
        let wait = limits.admit("a.example", patience).unwrap_err();
        assert!(wait > Duration::from_secs(3590), "{wait:?}");
        assert_eq!(
            limits.admit("b.example", patience),
            Ok(()),
            "other hosts go on"
        );
        // Twenty requests queued at 10/s are two seconds of waiting: more than the patience.
        let queued = limits.host("c.example");
        queued.waiting.store(20, Ordering::Relaxed);
        assert!(limits.admit("c.example", patience).is_err());
        queued.waiting.store(5, Ordering::Relaxed);
        assert_eq!(limits.admit("c.example", patience), Ok(()));
    }

    #[tokio::test]
    async fn sites_turned_away_are_booked_one_turn_apart() {
        let limits = at_ten_per_second();
        limits
            .host("d.example")
            .waiting
            .store(30, Ordering::Relaxed); // 3 s of queue at 10/s
        let waits: Vec<Duration> = (0..5)
            .map(|_| {
                limits
                    .admit("d.example", Duration::from_secs(1))
                    .unwrap_err()
            })
            .collect();
        for pair in waits.windows(2) {
            let gap = pair[1].saturating_sub(pair[0]);
            assert!(
                gap >= Duration::from_millis(95) && gap <= Duration::from_millis(105),
                "{waits:?}"
            );
        }
        assert!(waits[0] >= Duration::from_millis(2900), "{waits:?}");
    }

    #[tokio::test]
    async fn a_host_with_an_override_gets_its_own_limits() {
        let mine = HostLimit {
            concurrency: 3,
            rate: f64::INFINITY,
        };
        let overrides = HashMap::from([("mine.example".to_owned(), mine)]);
        let one = HostLimit {
            concurrency: 1,
            rate: f64::INFINITY,
        };
        let limits = Limits::new(one, overrides, 16);
        let mut held = Vec::new();
        for _ in 0..3 {
            held.push(limits.acquire("mine.example", Duration::MAX).await.unwrap());
        }
        held.push(
            limits
                .acquire("other.example", Duration::MAX)
                .await
                .unwrap(),
        );
        let fourth = limits.acquire("mine.example", Duration::MAX);
        assert!(tokio::time::timeout(Duration::from_millis(50), fourth)
            .await
            .is_err());
        let second = limits.acquire("other.example", Duration::MAX);
        assert!(tokio::time::timeout(Duration::from_millis(50), second)
            .await
            .is_err());
    }

    #[tokio::test]
    async fn requests_start_at_the_host_rate_even_after_waiting_for_a_global_slot() {
        let rate = HostLimit {
            concurrency: 8,
            rate: 10.0,
        };
        let limits = Limits::new(rate, HashMap::new(), 1);
        let blocker = limits
            .acquire("other.example", Duration::MAX)
            .await
            .unwrap();
        let release = async {
            tokio::time::sleep(Duration::from_millis(500)).await;
            drop(blocker);
        };
        let starts = futures::future::join_all((0..4).map(|_| async {
            let permit = limits.acquire("h.example", Duration::MAX).await.unwrap();
            let started = Instant::now();
            drop(permit);
            started
        }));
        let ((), mut starts) = tokio::join!(release, starts);
        starts.sort();
        for pair in starts.windows(2) {
            let gap = pair[1] - pair[0];
            assert!(gap >= Duration::from_millis(90), "started {gap:?} apart");
        }
    }

    #[tokio::test]
    async fn a_busy_host_is_kept() {
        let limits = unlimited(4, 16);
        let held = limits.acquire("busy.example", Duration::MAX).await.unwrap();
        for i in 0..2 * MIN_SWEEP {
            drop(
                limits
                    .acquire(&format!("host{i}.example"), Duration::MAX)
                    .await
                    .unwrap(),
            );
        }
        assert!(Arc::ptr_eq(&held.host, &limits.host("busy.example")));
    }
}
