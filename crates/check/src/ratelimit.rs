//! Politeness: per host a concurrency limit, a rate and an adaptive pace ([`HostLimits`], kept
//! in the host's entry of the book, `hosts/`), then a global in-flight limit — taken in that
//! order for every request — and the fleet's pause switch ([`Limits`]).
//!
//! The host limits come first so that a request queued behind a slow or throttling host does
//! not hold one of the global slots that other hosts could use. A check waits for its host in
//! the worker (the host's semaphore is its queue, FIFO); the claimer keeps those queues short
//! (see [`Limits::backlogged`] and `stages/claimer.rs`), so nothing is claimed only to be given
//! back.
//!
//! # The pace: the answer about one URL slows its host, never stops it
//! A 429 or 503 takes an eighth off the host's rate when the host answered something else just
//! before (a throttle about its own URL), and halves it when it follows another throttle (the
//! host's own trouble), down to an eighth of its configured rate (the adaptive floor); every
//! other answer adds back a sixteenth (AIMD, as TCP and Nutch's fetcher adapt). A
//! `Retry-After` defers the whole host only when the throttling is host-wide: at least
//! [`HOST_WIDE_STREAK`] throttled answers in a row from at least two paths, over at least
//! [`HOST_WIDE_WINDOW`], with no other answer between (answers to requests sent together may
//! arrive in any order, so a streak must last before it says anything of the host). Otherwise
//! it is about its own URL, which waits for it (`retry.rs`). A host
//! deferred past the horizon (`--defer-horizon`) is not waited for: its checks end at once with
//! [`Limits::acquire`]'s `Err`, and the queue makes them due at the time the server allows.
//!
//! # The host's own cap: robots.txt's `Crawl-delay`
//! A host whose robots.txt asks for a `Crawl-delay` gets it as a floor under its spacing
//! ([`Limits::crawl_delay`]): its requests start at least that far apart, whatever the rate
//! and the pace would allow (a cap: the slower of the two applies). A host with a floor is
//! never forgotten by the book, so it keeps it.
//!
//! # A host's first request goes alone
//! The second request of a host starts only once its first has been answered (or failed), or
//! [`OPENING_CAP`] after it started, and its spacing counts from that answer: the first request
//! opens a connection, and when a worker starts on hundreds of hosts at once its write can
//! leave 50-100 ms after its turn, while the second, on that connection, leaves on time. Counted
//! from the turns, the two reached the server a few milliseconds apart, and 21 requests of a
//! host at 20/s fell within one second (the web bench: 1 to 9 hosts of 2,000 in a run, each at
//! its first arrivals). This costs a host one answer's time, once.
//!
//! # Turns at the rate keep their place
//! A request rarely starts on its turn to the microsecond: the timer fires on a millisecond's
//! tick, and the thread may be busy. Counted from each actual start, those delays add up (on
//! the web bench's busiest host, 3.9 s of a 149 s drain: 1.4 ms a request). So a request of a
//! host at its rate that starts at most its late credit after its turn ([`late_credit`]: a
//! tenth of the interval, at most 2 ms) counts as started on its turn, and the next turn stays
//! where it was; one later than that counts from its start, as every one did before. Any 21
//! turns of a host at 20/s so stay at least 1,020 ms less the credit apart, and the margin
//! ([`RATE_MARGIN`]) still absorbs 18 ms of lateness on the way to the server. Not in a host's
//! first [`WARM_UP`], while its connections open and its requests arrive late by tens of
//! milliseconds: there the delays counted from the starts are the slack. A slowed pace or a
//! `Crawl-delay` counts from the actual start.
//!
//! # Time
//! Every instant here is tokio's ([`Instant`]), the governor's too ([`TokioClock`]): in a run
//! that is the monotonic clock, and under paused time (tests) the limits keep it, so spacings
//! are exact there.

use std::ops::Add;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use governor::clock::{Clock, Reference};
use governor::middleware::NoOpMiddleware;
use governor::nanos::Nanos;
use governor::state::{InMemoryState, NotKeyed};
use governor::{Quota, RateLimiter};
use tokio::sync::{watch, Semaphore};
use tokio::time::Instant;

use crate::addresses::{Address, Waiter};
use crate::classify::is_throttling;
use crate::config::HostLimit;

/// The adaptive rate never goes below this share of the configured one: a path that always
/// answers 429 slows its host to an eighth, and the other paths are still checked.
const MIN_SHARE: f64 = 1.0 / 8.0;
/// Each answer that is not a throttle adds this share back (additive increase).
const STEP_UP: f64 = 1.0 / 16.0;
/// What a throttle leaves of the rate when the answer before it was not one: a server that
/// throttles one path now and then while its others answer. Halving there would cost the
/// host's big lists a quarter of their rate for nothing (the other paths show it can take it);
/// an eighth is won back by the next two answers, so a list whose paths each throttle once
/// (a per-URL limit) costs its host about 10 ms of its turns per throttle.
const LONE_THROTTLE: f64 = 7.0 / 8.0;
/// What a throttle leaves of the rate when it follows another one: the host is struggling.
const THROTTLE_IN_A_ROW: f64 = 1.0 / 2.0;
/// The base interval for a host with no rate limit, once it throttles: 10 requests a second.
const UNLIMITED_BASE: Duration = Duration::from_millis(100);
/// Throttled answers in a row (from at least two paths, over at least [`HOST_WIDE_WINDOW`])
/// that make a `Retry-After` host-wide.
pub(crate) const HOST_WIDE_STREAK: u32 = 3;
pub(crate) const HOST_WIDE_WINDOW: Duration = Duration::from_secs(2);
/// A host whose waiting checks each take this long to start, or longer, is one whose rate or
/// slots bound its checks (unless a worker's own limits do: a turn of microseconds).
const QUEUEING_TURN: Duration = Duration::from_millis(1);
/// The longest a host's second request waits for its first's answer (a host that does not
/// answer is not held up past it).
const OPENING_CAP: Duration = Duration::from_secs(1);
/// The limits over all hosts, shared by every check of one [`Checker`](crate::Checker).
pub(crate) struct Limits {
    /// Requests in flight over all hosts.
    global: Semaphore,
    /// Its permits: `--concurrency`.
    global_slots: usize,
    /// A host deferred further than this is not waited for (`--defer-horizon`).
    horizon: Duration,
    /// The fleet is paused (`crawler-reap --pause`): no request starts while it is.
    paused: watch::Sender<bool>,
}

/// One host's limits and pace.
pub(crate) struct HostLimits {
    /// Requests inside [`Limits::acquire`], waiting for a slot, the rate or the pace.
    waiting: AtomicUsize,
    /// Time between two requests at the host's configured rate (zero when unlimited).
    interval: Duration,
    concurrency: usize,
    /// How long its requests take, microseconds (a moving average; 0 before the first).
    latency_us: AtomicU64,
    slots: Semaphore,
    rate: Option<HostRate>,
    pace: Mutex<Pace>,
    /// Told when the host's first request has been answered ([`Opening`]).
    opened: tokio::sync::Notify,
}

/// Where a host stands with its first request (see "A host's first request goes alone").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Opening {
    /// None started yet.
    NotStarted,
    /// The first started then, and is not answered yet.
    First(Instant),
    /// The first was answered: requests start at the pace.
    Open,
}

/// A host's configured rate, on tokio's clock.
type HostRate = RateLimiter<NotKeyed, InMemoryState, TokioClock, NoOpMiddleware<TokioInstant>>;

/// The governor's time source: tokio's clock, so that a rate follows paused time as the rest
/// of the limits do (governor's own clocks read the machine's).
#[derive(Clone, Copy, Debug, Default)]
struct TokioClock;

/// An instant of [`TokioClock`] (the governor's traits are not tokio's type's to implement).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct TokioInstant(Instant);

impl Clock for TokioClock {
    type Instant = TokioInstant;

    fn now(&self) -> TokioInstant {
        TokioInstant(Instant::now())
    }
}

impl Reference for TokioInstant {
    fn duration_since(&self, earlier: Self) -> Nanos {
        self.0.saturating_duration_since(earlier.0).into()
    }

    fn saturating_sub(&self, duration: Nanos) -> Self {
        Self(self.0.checked_sub(duration.into()).unwrap_or(self.0))
    }
}

impl Add<Nanos> for TokioInstant {
    type Output = Self;

    fn add(self, other: Nanos) -> Self {
        Self(self.0 + Duration::from(other))
    }
}

/// The adaptive part: the host's current share of its rate, and when it may next be asked.
#[derive(Debug)]
struct Pace {
    /// The share of the configured rate in use, in `[MIN_SHARE, 1]`.
    share: f64,
    /// No request starts before this.
    next: Instant,
    /// The server asked the whole host not to be asked before this (a host-wide
    /// `Retry-After`, capped at `crawler_verdict::MAX_DELAY`).
    deferred_until: Option<Instant>,
    last_used: Instant,
    /// The turn of the last request that started: when it actually started (a turn reserved
    /// may start later, after the address's limits or a global slot), or, at the host's
    /// rate, the turn it was due at when it started at most [`late_credit`] after it (see the
    /// module's text). The next starts no sooner than the spacing after it.
    last_start: Option<Instant>,
    /// When the host's first request started.
    first_start: Option<Instant>,
    opening: Opening,
    /// The least time between two requests' starts: the host's `Crawl-delay` (zero: none).
    floor: Duration,
    /// Throttled answers in a row, since when, and (up to two) distinct paths among them.
    streak: u32,
    streak_since: Option<Instant>,
    streak_paths: Vec<String>,
}

/// What a host is doing now, for the progress line and the fleet's `hosts` rows.
#[derive(Clone, Debug, PartialEq)]
pub struct PaceReport {
    pub host: String,
    /// The rate in use (requests per second), below the configured one: throttled.
    pub rate: Option<f64>,
    /// Deferred by the server for this long yet.
    pub deferred: Option<Duration>,
}

/// Held for the duration of one request; gives the host and global slots back when dropped.
pub(crate) struct Permit<'a> {
    limits: &'a Limits,
    host: Arc<HostLimits>,
    /// Whether the global slot is held yet: a wait cancelled halfway gives back what it took.
    global: bool,
    /// When the request could start, for the host's latency.
    started: Option<Instant>,
    /// The server address's slot, once held (`addresses.rs`).
    address: Option<Arc<Address>>,
}

/// How much longer than `1 / rate` two requests' starts are apart. The rate is a promise about
/// what the server sees, and a request that reaches it late (a new connection, a busy
/// machine) bunches with the ones after it: at exactly `1 / rate` apart, a request 1 ms late
/// puts `rate + 1` arrivals in one second. A fiftieth longer absorbs 20 ms of lateness at
/// 1/s… 20/s (1 s / rate / 50 per request, over the rate's requests of a second).
const RATE_MARGIN: f64 = 1.02;

/// The time between two requests at `rate` per second (zero when unlimited), with the margin.
fn interval_of(rate: f64) -> Duration {
    Duration::try_from_secs_f64(RATE_MARGIN / rate).unwrap_or_default()
}

/// The most a request of a host at its rate may start after its turn and still leave the next
/// turn where it was: a tenth of the `interval`, at most [`MAX_LATE_CREDIT`].
fn late_credit(interval: Duration) -> Duration {
    (interval / 10).min(MAX_LATE_CREDIT)
}

/// A timer's tick and a busy thread start a request a millisecond or so after its turn;
/// counted from the start, each such delay was lost for good (the web bench's busiest host:
/// 3.9 s of 149 s). Up to this much is not: a tenth of the 20 ms the margin absorbs.
const MAX_LATE_CREDIT: Duration = Duration::from_millis(2);

/// How long after a host's first request its turns start to keep their place: while its
/// connections open, its requests reach it late by tens of milliseconds, and the next, on time,
/// would arrive close behind (the web bench, a first try with a 5 ms credit and none of this:
/// 2 hosts of 2,000 at 21 starts in their first second).
const WARM_UP: Duration = Duration::from_secs(2);

impl Limits {
    /// `concurrency` requests in flight over all hosts; a host deferred past `horizon` is not
    /// waited for.
    pub(crate) fn new(concurrency: usize, horizon: Duration) -> Self {
        Self {
            global: Semaphore::new(concurrency),
            global_slots: concurrency,
            horizon,
            paused: watch::Sender::new(false),
        }
    }

    /// Pauses (or resumes) every host: while paused no request starts; those on the wire
    /// finish, and checks waiting stay waiting.
    pub(crate) fn pause(&self, paused: bool) {
        self.paused
            .send_if_modified(|p| std::mem::replace(p, paused) != paused);
    }

    /// Waits until `host` may be asked, then its server `address` (when limited), then for a
    /// global slot, and while the fleet is paused; `Err(wait)` at once when the server deferred
    /// the whole host past the horizon.
    pub(crate) async fn acquire(
        &self,
        host: &Arc<HostLimits>,
        address: Option<Waiter>,
    ) -> Result<Permit<'_>, Duration> {
        let host = host.clone();
        host.waiting.fetch_add(1, Ordering::Relaxed);
        let _waiting = Waiting(host.clone());
        host.deferred_past(self.horizon)?;
        self.unpaused().await;
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
            started: None,
            address: None,
        };
        // The address's slot after the host's (a host queues for its own slots first, and holds
        // none of its server's while it does), and before the host's pace, whose turn is
        // reserved: a wait after it would start this request late, close to the next one.
        if let Some(waiter) = address {
            waiter.address().acquire_slot().await;
            permit.address = Some(waiter.address().clone());
        }
        let spacing = permit.host.wait_for_pace(self.horizon).await?;
        // The host's rate turn is taken only once the global slot is held, so a request starts
        // when it takes its turn: turns taken while waiting for a slot would all start together
        // when slots free up, a burst past the rate. A request whose turn has not come, or that
        // finds the fleet paused, gives its slot back while it waits.
        loop {
            self.global
                .acquire()
                .await
                .expect("global semaphore never closed")
                .forget();
            permit.global = true;
            if *self.paused.borrow() {
                self.global.add_permits(1);
                permit.global = false;
                self.unpaused().await;
                continue;
            }
            let now = Instant::now();
            permit.started = Some(now);
            // The host's first request goes alone (see the module's text).
            if permit.host.opening_wait(now).is_some() {
                self.global.add_permits(1);
                permit.global = false;
                permit.host.wait_for_opening().await;
                continue;
            }
            // The spacing of its turn from the last start (its turn, when it started at most
            // the late credit after it): a reserved turn that started later (waiting for a slot
            // or the address's rate) does not bring the next one closer. The spacing the turn
            // was reserved at, not a slower one a throttle set since: a throttle paces the turns
            // reserved after it (the web bench's busiest host lost 3 % of its pace when it
            // slowed the turns already taken).
            if let Some(at) = permit.host.pace_wait(now, spacing) {
                self.global.add_permits(1);
                permit.global = false;
                tokio::time::sleep_until(at).await;
                continue;
            }
            // The address's turn, then the host's: a turn of the address that the host's rate
            // refuses is given back.
            let turn = match permit.address.as_ref().map(|a| a.take_turn(now)) {
                Some(Err(at)) => {
                    self.global.add_permits(1);
                    permit.global = false;
                    tokio::time::sleep_until(at).await;
                    continue;
                }
                Some(Ok(turn)) => Some(turn),
                None => None,
            };
            let Some(rate) = &permit.host.rate else {
                permit.host.started(now);
                break;
            };
            match rate.check() {
                Ok(()) => {
                    permit.host.started(now);
                    break;
                }
                Err(not_until) => {
                    if let (Some(address), Some(turn)) = (&permit.address, turn) {
                        address.give_back(turn);
                    }
                    self.global.add_permits(1);
                    permit.global = false;
                    tokio::time::sleep_until(not_until.earliest_possible().0).await;
                }
            }
        }
        Ok(permit)
    }

    async fn unpaused(&self) {
        let mut paused = self.paused.subscribe();
        // The sender lives as long as `self`.
        let _ = paused.wait_for(|p| !*p).await;
    }

    /// Whether a quarter of the global slots (`--concurrency`) at least are free: the worker
    /// could start more requests than it does, so its hosts wait for their own pace, not for
    /// it.
    pub(crate) fn has_room(&self) -> bool {
        self.global.available_permits() * 4 >= self.global_slots
    }
}

impl HostLimits {
    /// The limits of a host: `limit`'s slots and rate (`f64::INFINITY`: no rate), at full pace.
    pub(crate) fn new(limit: &HostLimit) -> Self {
        let interval = interval_of(limit.rate);
        Self {
            waiting: AtomicUsize::new(0),
            interval,
            concurrency: limit.concurrency,
            latency_us: AtomicU64::new(0),
            slots: Semaphore::new(limit.concurrency),
            // Under the pace's turns by the late credit: requests on their turns are never
            // refused, and none starts sooner than that after the one before.
            rate: Quota::with_period(interval - late_credit(interval))
                .map(|q| RateLimiter::direct_with_clock(q, TokioClock)),
            pace: Mutex::new(Pace::new(Instant::now())),
            opened: tokio::sync::Notify::new(),
        }
    }

    fn pace(&self) -> std::sync::MutexGuard<'_, Pace> {
        self.pace.lock().expect("pace lock poisoned")
    }

    /// Defers every check of the host until `wait` from now (at least): what the fleet learned
    /// of it (a host-wide `Retry-After` seen by the worker that held it before).
    pub(crate) fn defer(&self, wait: Duration) {
        let until = Instant::now() + wait;
        let mut pace = self.pace();
        pace.deferred_until = Some(pace.deferred_until.map_or(until, |u| u.max(until)));
    }

    /// Starts the host's requests at least `delay` apart from now on (robots.txt's
    /// `Crawl-delay`), counting from the last one sent; of two delays, the longer holds.
    pub(crate) fn crawl_delay(&self, delay: Duration) {
        let mut pace = self.pace();
        pace.floor = pace.floor.max(delay);
        pace.next = pace.next.max(pace.last_used + pace.floor);
    }

    /// Starts the host at `rate` requests per second (the fleet's last rate for it), when that
    /// is below its configured rate.
    pub(crate) fn start_at(&self, rate: f64) {
        let configured = self.configured_rate();
        if rate.is_finite() && rate > 0.0 && rate < configured {
            self.pace().share = (rate / configured).clamp(MIN_SHARE, 1.0);
        }
    }

    /// An answer that is not a throttle, as [`Permit::record`] takes it.
    #[cfg(test)]
    pub(crate) fn answered(&self) {
        self.pace().answered(self.base());
    }

    /// Sets how many checks wait for the host.
    #[cfg(test)]
    pub(crate) fn waiting(&self, checks: usize) {
        self.waiting.store(checks, Ordering::Relaxed);
    }

    /// Sets how long the host's requests take.
    #[cfg(test)]
    pub(crate) fn latency(&self, latency: Duration) {
        self.latency_us
            .store(latency.as_micros() as u64, Ordering::Relaxed);
    }

    fn configured_rate(&self) -> f64 {
        1.0 / self.base().as_secs_f64()
    }

    /// The interval the share applies to.
    fn base(&self) -> Duration {
        if self.interval.is_zero() {
            UNLIMITED_BASE
        } else {
            self.interval
        }
    }

    /// `Err(wait)` when the host is deferred further than `horizon` from now.
    fn deferred_past(&self, horizon: Duration) -> Result<(), Duration> {
        let pace = self.pace.lock().expect("pace lock poisoned");
        let wait = pace
            .deferred_until
            .map(|until| until.saturating_duration_since(Instant::now()))
            .unwrap_or_default();
        if wait > horizon {
            Err(wait)
        } else {
            Ok(())
        }
    }

    /// Waits for the pace (the adaptive spacing and a host-wide `Retry-After` within the
    /// horizon); `Err(wait)` when a deferral past the horizon came meanwhile.
    async fn wait_for_pace(&self, horizon: Duration) -> Result<Duration, Duration> {
        let now = Instant::now();
        let (at, spacing) = {
            let mut pace = self.pace.lock().expect("pace lock poisoned");
            let spacing = pace.spacing(self.base());
            (pace.reserve(now, spacing), spacing)
        };
        if at.saturating_duration_since(now) > horizon {
            return Err(at - now);
        }
        if at > now {
            tokio::time::sleep_until(at).await;
        }
        Ok(spacing)
    }

    /// When a request whose turn was reserved at `reserved` spacing may start, if later than
    /// `now`: that spacing from the last request's start ([`Pace::last_start`]: its turn when it
    /// started at most the late credit after it), or the pace's spacing now if
    /// shorter (an answer since sped the host up; a throttle since slows later turns only).
    fn pace_wait(&self, now: Instant, reserved: Duration) -> Option<Instant> {
        let pace = self.pace();
        // Never under the rate's interval (the governor keeps it too, less the late credit).
        let spacing = reserved.min(pace.spacing(self.base())).max(self.interval);
        let at = pace.last_start? + spacing;
        (at > now).then_some(at)
    }

    /// A request starts now: at its turn, when it is a turn of the rate, the host is warm and
    /// the turn came at most the late credit ago; else now.
    fn started(&self, now: Instant) {
        let mut pace = self.pace();
        let first = *pace.first_start.get_or_insert(now);
        let on_grid = pace.spacing(self.base()) <= self.interval && now >= first + WARM_UP;
        let turn = pace.last_start.map(|last| last + self.interval);
        pace.last_start = Some(match turn {
            Some(turn) if on_grid && turn <= now && now - turn <= late_credit(self.interval) => {
                turn
            }
            _ => now,
        });
        if pace.opening == Opening::NotStarted {
            pace.opening = Opening::First(now);
        }
    }

    /// Until when a request that could start `now` waits for the host's first answer: while
    /// the first request is out, up to [`OPENING_CAP`] after it started.
    fn opening_wait(&self, now: Instant) -> Option<Instant> {
        let mut pace = self.pace();
        match pace.opening {
            Opening::First(at) if now < at + OPENING_CAP => Some(at + OPENING_CAP),
            Opening::First(_) => {
                pace.opening = Opening::Open;
                None
            }
            Opening::NotStarted | Opening::Open => None,
        }
    }

    /// Waits until the host's first request is answered, or [`OPENING_CAP`] after it started.
    async fn wait_for_opening(&self) {
        let opened = self.opened.notified();
        tokio::pin!(opened);
        opened.as_mut().enable();
        if let Some(until) = self.opening_wait(Instant::now()) {
            tokio::select! {
                _ = opened => {}
                _ = tokio::time::sleep_until(until) => {}
            }
        }
    }

    /// A request that started is over, answered or not: the first one opens the host, and the
    /// next start is spaced from now (when its answer came, after its request reached the
    /// server) rather than from its turn.
    fn ended(&self, now: Instant) {
        let mut pace = self.pace();
        if let Opening::First(_) = pace.opening {
            pace.opening = Opening::Open;
            pace.last_start = pace.last_start.max(Some(now));
            drop(pace);
            self.opened.notify_waiters();
        }
    }

    /// Whether another request of this host waits for its limits: its connection is wanted
    /// again soon.
    pub(crate) fn has_waiting(&self) -> bool {
        self.waiting.load(Ordering::Relaxed) > 0
    }

    /// Whether checks queue for this host: as many wait as it has slots, and each turn takes a
    /// millisecond at least, so its rate or its slots bound them, not the worker's own limits.
    pub(crate) fn is_queueing(&self) -> bool {
        self.waiting.load(Ordering::Relaxed) >= self.concurrency
            && self.turn(&self.pace.lock().expect("pace lock poisoned")) >= QUEUEING_TURN
    }

    /// How long the checks waiting for this host take to start at its current pace.
    pub(crate) fn backlog(&self, now: Instant) -> Duration {
        let waiting = self.waiting.load(Ordering::Relaxed);
        let pace = self.pace.lock().expect("pace lock poisoned");
        // As many as the host's slots start at once, unless a Crawl-delay spaces them.
        if waiting <= self.concurrency && pace.floor.is_zero() {
            return Duration::ZERO;
        }
        let deferred = pace
            .deferred_until
            .map(|u| u.saturating_duration_since(now))
            .unwrap_or_default();
        // Without a rate, a waiting check takes about a request's time; count a tenth of a
        // second each, so a host without limits is not backlogged by a few dozen.
        let turn = match self.turn(&pace) {
            Duration::ZERO => UNLIMITED_BASE / self.concurrency as u32,
            turn => turn,
        };
        deferred + turn.saturating_mul(waiting as u32)
    }

    /// The time one waiting check takes to start: the pace's spacing, or the requests' own
    /// time shared by the host's slots, whichever is longer (a slow host is backlogged by a
    /// few, a fast one by many).
    fn turn(&self, pace: &Pace) -> Duration {
        let latency = Duration::from_micros(self.latency_us.load(Ordering::Relaxed));
        pace.spacing(self.base())
            .max(self.interval)
            .max(latency / self.concurrency as u32)
    }

    pub(crate) fn report(&self, name: &str, now: Instant) -> Option<PaceReport> {
        let pace = self.pace.lock().expect("pace lock poisoned");
        let rate = (pace.share < 1.0).then(|| self.configured_rate() * pace.share);
        let deferred = pace
            .deferred_until
            .map(|u| u.saturating_duration_since(now))
            .filter(|d| !d.is_zero());
        (rate.is_some() || deferred.is_some()).then(|| PaceReport {
            host: name.to_owned(),
            rate,
            deferred,
        })
    }

    /// Whether the pace is idle: at the full rate, with no floor or deferral, and no turn
    /// reserved ahead (the book forgets such a host: a fresh entry has the same limits).
    pub(crate) fn idle(&self, now: Instant) -> bool {
        let pace = self.pace.lock().expect("pace lock poisoned");
        now >= pace.next
            && now >= pace.last_used + self.interval
            && pace.share >= 1.0
            && pace.floor.is_zero()
            && pace.deferred_until.is_none_or(|until| now >= until)
    }
}

/// Counts a request as waiting for its host until dropped (also when its wait is cancelled).
struct Waiting(Arc<HostLimits>);

impl Drop for Waiting {
    fn drop(&mut self) {
        self.0.waiting.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        if let Some(started) = self.started.filter(|_| self.global) {
            self.host.ended(Instant::now());
            let sample = started.elapsed().as_micros().min(u128::from(u64::MAX)) as u64;
            let old = self.host.latency_us.load(Ordering::Relaxed);
            let new = if old == 0 {
                sample
            } else {
                old - old / 8 + sample / 8
            };
            self.host.latency_us.store(new, Ordering::Relaxed);
        }
        self.host.slots.add_permits(1);
        if let Some(address) = &self.address {
            address.release_slot();
        }
        if self.global {
            self.limits.global.add_permits(1);
        }
    }
}

impl Permit<'_> {
    /// Tells the host's pace what the server answered for `path`: 429 and 503 lower the
    /// host's rate ([`Pace::throttled`]), any other answer raises it a step. A `Retry-After`
    /// defers the whole host when the throttling is host-wide; the URL that got it waits for
    /// it anyway (`retry.rs`).
    pub(crate) fn record(&self, status: u16, retry_after: Option<Duration>, path: &str) {
        let mut pace = self.host.pace.lock().expect("pace lock poisoned");
        let now = Instant::now();
        if is_throttling(status) {
            let base = self.host.base();
            pace.throttled(now, path, base);
            if let Some(asked) = retry_after.filter(|_| pace.host_wide(now)) {
                let until = now + asked;
                pace.deferred_until = Some(pace.deferred_until.map_or(until, |u| u.max(until)));
            }
        } else {
            pace.answered(self.host.base());
        }
    }
}

impl Pace {
    fn new(now: Instant) -> Self {
        Self {
            share: 1.0,
            next: now,
            deferred_until: None,
            last_used: now,
            last_start: None,
            first_start: None,
            opening: Opening::NotStarted,
            floor: Duration::ZERO,
            streak: 0,
            streak_since: None,
            streak_paths: Vec::new(),
        }
    }

    /// The time between two requests at the current share (zero at the full rate: the
    /// governor spaces those), never less than the host's floor.
    fn spacing(&self, base: Duration) -> Duration {
        let adaptive = if self.share >= 1.0 {
            Duration::ZERO
        } else {
            base.div_f64(self.share)
        };
        adaptive.max(self.floor)
    }

    /// The instant the caller may start; requests are spaced at the current share, and none
    /// starts before a host-wide `Retry-After` ends.
    fn reserve(&mut self, now: Instant, spacing: Duration) -> Instant {
        let mut at = self.next.max(now);
        if let Some(until) = self.deferred_until {
            if until <= now {
                self.deferred_until = None;
            } else {
                at = at.max(until);
            }
        }
        self.next = at + spacing;
        self.last_used = at;
        at
    }

    /// A 429 or 503: an eighth off the rate when it comes alone, half when it follows another
    /// throttle, down to the floor.
    fn throttled(&mut self, now: Instant, path: &str, base: Duration) {
        let keep = if self.streak == 0 {
            LONE_THROTTLE
        } else {
            THROTTLE_IN_A_ROW
        };
        self.share = (self.share * keep).max(MIN_SHARE);
        self.next = self.next.max(now + self.spacing(base));
        self.streak += 1;
        self.streak_since.get_or_insert(now);
        if self.streak_paths.len() < 2 && !self.streak_paths.iter().any(|p| p == path) {
            self.streak_paths.push(path.to_owned());
        }
    }

    /// Whether the throttling is the host's, not one URL's.
    fn host_wide(&self, now: Instant) -> bool {
        self.streak >= HOST_WIDE_STREAK
            && self.streak_paths.len() >= 2
            && self
                .streak_since
                .is_some_and(|since| now.duration_since(since) >= HOST_WIDE_WINDOW)
    }

    /// Any answer but a throttle: a step back up, and the streak is over. The turn reserved
    /// at the slower pace is given back, so the faster one applies at once.
    fn answered(&mut self, base: Duration) {
        self.share = (self.share + STEP_UP).min(1.0);
        self.next = self.next.min(self.last_used + self.spacing(base));
        self.streak = 0;
        self.streak_since = None;
        self.streak_paths.clear();
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::stand_in::StandInBook;

    const HOUR: Duration = Duration::from_secs(3600);

    /// The global limits and a host's own, by name (the host book's part in this).
    struct Hosts {
        limits: Limits,
        book: StandInBook<HostLimits>,
    }

    impl Hosts {
        fn new(default: HostLimit, overrides: HashMap<String, HostLimit>, global: usize) -> Self {
            let book = StandInBook::new(move |name: &str| {
                HostLimits::new(overrides.get(name).unwrap_or(&default))
            });
            Hosts {
                limits: Limits::new(global, Duration::from_secs(60)),
                book,
            }
        }

        fn host(&self, name: &str) -> Arc<HostLimits> {
            self.book.of(name)
        }

        async fn acquire(&self, name: &str) -> Result<Permit<'_>, Duration> {
            self.limits.acquire(&self.host(name), None).await
        }

        fn pause(&self, paused: bool) {
            self.limits.pause(paused)
        }
    }

    /// Limits of 8 in flight and 10 requests per second per host, 16 in all.
    fn at_ten_per_second() -> Hosts {
        let limit = HostLimit {
            concurrency: 8,
            rate: 10.0,
        };
        Hosts::new(limit, HashMap::new(), 16)
    }

    /// Limits with no rate, `host` requests in flight per host and `global` in all.
    fn unlimited(host: usize, global: usize) -> Hosts {
        let limit = HostLimit {
            concurrency: host,
            rate: f64::INFINITY,
        };
        Hosts::new(limit, HashMap::new(), global)
    }

    #[test]
    fn throttles_in_a_row_halve_the_rate_down_to_an_eighth_and_answers_add_a_sixteenth() {
        let now = Instant::now();
        let base = Duration::from_millis(100);
        let mut pace = Pace::new(now);
        let shares: Vec<f64> = (0..5)
            .map(|_| {
                pace.throttled(now, "/a", base);
                pace.share
            })
            .collect();
        assert_eq!(shares, [0.875, 0.4375, 0.21875, 0.125, 0.125]);
        assert_eq!(pace.spacing(base), Duration::from_millis(800));
        pace.answered(base);
        assert_eq!(pace.share, 0.125 + STEP_UP);
        for _ in 0..20 {
            pace.answered(base);
        }
        assert_eq!(pace.share, 1.0);
        assert_eq!(pace.spacing(base), Duration::ZERO);
    }

    #[test]
    fn a_throttle_between_answers_takes_an_eighth_off() {
        let now = Instant::now();
        let base = Duration::from_millis(100);
        let mut pace = Pace::new(now);
        pace.throttled(now, "/a", base);
        assert_eq!(pace.share, 0.875);
        pace.answered(base);
        assert_eq!(pace.share, 0.875 + STEP_UP);
        pace.throttled(now, "/a", base);
        assert_eq!(pace.share, (0.875 + STEP_UP) * 0.875);
    }

    #[test]
    fn an_answer_gives_back_the_turn_reserved_at_the_slower_pace() {
        let now = Instant::now();
        let base = Duration::from_millis(100);
        let mut pace = Pace::new(now);
        pace.throttled(now, "/a", base);
        pace.throttled(now, "/b", base); // in a row: 7/16 of the rate, 228 ms apart
        let spacing = pace.spacing(base);
        let at = pace.reserve(now + spacing, spacing);
        assert_eq!(spacing, base.div_f64(0.4375));
        assert_eq!(pace.next, at + spacing);
        pace.answered(base);
        assert!(pace.next < at + spacing, "{:?}", pace.next - at);
    }

    #[test]
    fn a_retry_after_is_host_wide_only_after_a_streak_from_two_paths() {
        let now = Instant::now();
        let base = Duration::from_millis(100);
        let mut pace = Pace::new(now);
        let later = now + HOST_WIDE_WINDOW;
        for _ in 0..5 {
            pace.throttled(now, "/always-429", base);
        }
        assert!(!pace.host_wide(later), "one path is that URL's business");
        pace.answered(base);
        pace.throttled(now, "/a", base);
        pace.throttled(now, "/b", base);
        assert!(!pace.host_wide(later), "two in a row may be chance");
        pace.throttled(now, "/c", base);
        assert!(
            !pace.host_wide(now),
            "answers sent together arrive in any order"
        );
        assert!(pace.host_wide(later));
    }

    #[tokio::test(start_paused = true)]
    async fn one_throttling_path_never_defers_the_host() {
        let limits = at_ten_per_second();
        let mut starts = Vec::new();
        for _ in 0..5 {
            let permit = limits.acquire("a.example").await.unwrap();
            starts.push(Instant::now());
            permit.record(429, Some(HOUR), "/always");
        }
        // Slowed, never stopped: seven eighths of the rate after the first 429, then half
        // after each one in a row, down to an eighth: 102 ms (10/s with the margin) / 0.875,
        // / 0.4375, / 0.21875, / 0.125 apart (tokio's timer wakes on the next whole millisecond).
        assert_eq!(after(starts[0], &starts), millis([0, 117, 351, 818, 1634]));
        let host = limits.host("a.example");
        assert!(host.pace.lock().unwrap().deferred_until.is_none());
        assert!(host.deferred_past(Duration::ZERO).is_ok());
    }

    #[tokio::test(start_paused = true)]
    async fn a_throttle_slows_the_turns_taken_after_it_not_one_already_taken() {
        let limits = at_ten_per_second();
        let start = Instant::now();
        let first = limits.acquire("a.example").await.unwrap();
        // The second request takes its turn at the full rate, and waits for the rate's 102 ms.
        let second = limits.acquire("a.example");
        tokio::pin!(second);
        assert!(futures::poll!(&mut second).is_pending());
        first.record(429, None, "/a");
        drop(first);
        let second = second.await.unwrap();
        let second_at = Instant::now();
        second.record(200, None, "/b");
        drop(second);
        // The third takes its turn after the throttle: 102 ms / (7/8 + 1/16) from the second.
        let _third = limits.acquire("a.example").await.unwrap();
        assert_eq!(
            after(start, &[second_at, Instant::now()]),
            millis([102, 211])
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_hosts_second_request_starts_after_its_first_answer_or_the_cap() {
        let limits = Arc::new(at_ten_per_second());
        let start = Instant::now();
        let first = limits.acquire("a.example").await.unwrap();
        let second = {
            let limits = limits.clone();
            tokio::spawn(async move {
                let _permit = limits.acquire("a.example").await.unwrap();
                Instant::now()
            })
        };
        // Answered 300 ms after it started: the second goes a spacing (102 ms) after that.
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(
            !second.is_finished(),
            "the second went before the first's answer"
        );
        drop(first);
        let second_at = second.await.unwrap();
        assert_eq!(after(start, &[second_at]), millis([402]));
        // A first request that never answers holds the others up to the cap only.
        let start = Instant::now();
        let _hung = limits.acquire("b.example").await.unwrap();
        let _next = limits.acquire("b.example").await.unwrap();
        assert_eq!(after(start, &[Instant::now()]), millis([1000]));
    }

    #[tokio::test(start_paused = true)]
    async fn a_host_deferred_past_the_horizon_is_not_waited_for() {
        let limits = at_ten_per_second();
        for path in ["/a", "/b", "/c"] {
            let permit = limits.acquire("a.example").await.unwrap();
            // The streak began a while ago: it is the host's.
            let started = Instant::now() - HOST_WIDE_WINDOW;
            permit
                .host
                .pace
                .lock()
                .unwrap()
                .streak_since
                .get_or_insert(started);
            permit.record(429, Some(HOUR), path);
        }
        let wait = match limits.acquire("a.example").await {
            Err(wait) => wait,
            Ok(_) => panic!("a host deferred for an hour was asked"),
        };
        assert_eq!(wait, HOUR, "the server's whole wait, at once");
        let before = Instant::now();
        assert!(
            limits.acquire("b.example").await.is_ok(),
            "other hosts go on"
        );
        assert_eq!(before.elapsed(), Duration::ZERO, "other hosts do not wait");
        let report = limits.host("a.example").report("a.example", Instant::now());
        assert_eq!(report.and_then(|r| r.deferred), Some(HOUR));
    }

    #[tokio::test(start_paused = true)]
    async fn no_request_starts_while_paused_and_waiting_ones_start_on_resume() {
        let limits = Arc::new(unlimited(4, 16));
        limits.pause(true);
        let waiting = {
            let limits = limits.clone();
            tokio::spawn(async move {
                let _permit = limits.acquire("a.example").await.unwrap();
            })
        };
        tokio::time::sleep(Duration::from_secs(60)).await;
        assert!(!waiting.is_finished(), "a request started while paused");
        limits.pause(false);
        tokio::time::timeout(Duration::from_secs(1), waiting)
            .await
            .expect("resumed at once")
            .unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_wait_cancelled_halfway_gives_its_slots_back() {
        let limits = unlimited(1, 1);
        let held = limits.acquire("a.example").await.unwrap();
        let waiting = limits.acquire("b.example"); // gets b's slot, then waits for the global one
        let cancelled = tokio::time::timeout(Duration::from_millis(20), waiting).await;
        assert!(cancelled.is_err());
        drop(held);
        let again = tokio::time::timeout(Duration::from_secs(1), limits.acquire("b.example"));
        assert!(
            again.await.is_ok(),
            "b's slot and the global slot are free again"
        );
    }

    #[tokio::test(start_paused = true)]
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
        let limits = Hosts::new(one, overrides, 16);
        let mut held = Vec::new();
        for _ in 0..3 {
            held.push(limits.acquire("mine.example").await.unwrap());
        }
        held.push(limits.acquire("other.example").await.unwrap());
        let fourth = limits.acquire("mine.example");
        assert!(tokio::time::timeout(Duration::from_millis(50), fourth)
            .await
            .is_err());
        let second = limits.acquire("other.example");
        assert!(tokio::time::timeout(Duration::from_millis(50), second)
            .await
            .is_err());
    }

    /// How long after `start` each of `starts` came, soonest first (paused time: exact).
    fn after(start: Instant, starts: &[Instant]) -> Vec<Duration> {
        let mut after: Vec<Duration> = starts.iter().map(|s| *s - start).collect();
        after.sort();
        after
    }

    fn millis<const N: usize>(millis: [u64; N]) -> [Duration; N] {
        millis.map(Duration::from_millis)
    }

    #[tokio::test(start_paused = true)]
    async fn a_turn_at_the_rate_started_a_little_late_leaves_the_next_in_place() {
        let ms = Duration::from_millis;
        // 10/s: 102 ms apart with the margin, a late credit of 2 ms.
        let limit = HostLimit {
            concurrency: 8,
            rate: 10.0,
        };
        let host = HostLimits::new(&limit);
        let t0 = Instant::now();
        host.started(t0);
        // In its first two seconds, a turn started late counts from its start.
        host.started(t0 + ms(103));
        assert_eq!(
            host.pace_wait(t0 + ms(150), Duration::ZERO),
            Some(t0 + ms(205))
        );
        // Warm: 1 ms late, the next turn is 102 ms after the last one's, not after its start.
        host.started(t0 + ms(3000));
        host.started(t0 + ms(3103));
        assert_eq!(
            host.pace_wait(t0 + ms(3150), Duration::ZERO),
            Some(t0 + ms(3204))
        );
        // 20 ms late: counted from its start.
        host.started(t0 + ms(3224));
        assert_eq!(
            host.pace_wait(t0 + ms(3250), Duration::ZERO),
            Some(t0 + ms(3326))
        );
        // A Crawl-delay (turns reserved at its spacing) counts from the actual start.
        host.crawl_delay(ms(200));
        host.started(t0 + ms(3527));
        assert_eq!(host.pace_wait(t0 + ms(3600), ms(200)), Some(t0 + ms(3727)));
    }

    #[tokio::test(start_paused = true)]
    async fn requests_start_at_the_host_rate_even_after_waiting_for_a_global_slot() {
        let rate = HostLimit {
            concurrency: 8,
            rate: 10.0,
        };
        let limits = Hosts::new(rate, HashMap::new(), 1);
        let begun = Instant::now();
        let blocker = limits.acquire("other.example").await.unwrap();
        let release = async {
            tokio::time::sleep(Duration::from_millis(500)).await;
            drop(blocker);
        };
        let starts = futures::future::join_all((0..4).map(|_| async {
            let permit = limits.acquire("h.example").await.unwrap();
            let started = Instant::now();
            drop(permit);
            started
        }));
        let ((), starts) = tokio::join!(release, starts);
        // The first when the slot frees, then one per 102 ms (10/s with the margin): no burst
        // of turns taken while waiting for the slot.
        assert_eq!(after(begun, &starts), millis([500, 602, 704, 806]));
    }

    #[tokio::test(start_paused = true)]
    async fn a_crawl_delay_spaces_its_hosts_requests_whatever_the_rate() {
        let limits = unlimited(8, 16);
        let delay = Duration::from_millis(100);
        // The robots.txt request, then its delay: the next request counts from it.
        let robots = limits.acquire("slow.example").await.unwrap();
        let sent = Instant::now();
        limits.host("slow.example").crawl_delay(delay);
        robots.record(200, None, "/robots.txt");
        drop(robots);
        let starts = futures::future::join_all((0..3).map(|_| async {
            let permit = limits.acquire("slow.example").await.unwrap();
            let started = Instant::now();
            // An answer raises the pace, never above the floor.
            permit.record(200, None, "/");
            started
        }))
        .await;
        assert_eq!(after(sent, &starts), millis([100, 200, 300]));
        let other = Instant::now();
        for _ in 0..5 {
            drop(limits.acquire("other.example").await.unwrap());
        }
        // Paced by the delay, these five would take 400 ms.
        assert_eq!(other.elapsed(), Duration::ZERO, "other hosts go on");
        let later = Instant::now() + HOUR;
        assert!(
            !limits.host("slow.example").idle(later),
            "a host with a delay keeps it"
        );
    }
}
