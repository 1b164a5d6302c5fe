//! Politeness per server address (`--ip-concurrency`, `--ip-rate`): on top of each host's
//! limits, every request to one IP address, whatever name it was asked by, waits for that
//! address's slots and rate. Shared hosting puts hundreds of names on one server; per name
//! only, a hundred of them would get a hundred times the host limit.
//!
//! The address counted is the one the request connects to: the asker resolves the hop's name
//! first (through the client's own cached resolver, `resolve.rs`, which the connector asks
//! again and gets the same answer from), gates on the first address allowed (the one the
//! connector tries first), then sends. A name with several addresses is counted on the one it
//! uses; every redirect hop is gated on its own.
//!
//! # In a fleet: shares that add up to the limit
//! A worker without a fleet takes the whole budget of every address. A worker of a fleet
//! ([`AddressBook::share_with_fleet`]) takes a share: before its first request to an address
//! it registers as one of the address's holders (the worker's `share_addresses` stage and
//! `crawler_queue::addresses`), and it uses the address only once the database says it may:
//! its share is `limit / holders` (concurrency rounded down, at least one), the holders being
//! the live workers registered for the address, and it is confirmed once every other holder
//! has read the holders after it registered (so their shares already count it). An address
//! idle for [`IDLE`] is given back, and with it the share; a worker that stops gives back all
//! of its own. What the book knows is here; the database round trips are the worker's.
//!
//! The fleet's only worker ([`AddressBook::set_alone`]: it found no other live worker when it
//! started) registers nothing and waits for nothing: its addresses are its own from their
//! first request, until another worker starts. Then it registers every address it holds
//! ([`AddressBook::held`]) before that one may use any (`crawler_queue::addresses`), and
//! from then on shares as every worker of a fleet does.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

/// An address unused for this long is given back to the fleet (and forgotten by the book):
/// long enough to keep it between a host's requests (50 ms apart at the default rate), short
/// enough that a worker done with an address soon leaves its share to the others (the
/// politeness bench's `d` took 1.70 times its floor with 10 s, its tail at half the budget;
/// 1.46 with 3 s).
pub const IDLE: Duration = Duration::from_secs(3);
/// The book of a worker without a fleet is swept of idle addresses when it reaches this
/// many, then at twice what it kept.
const MIN_SWEEP: usize = 1024;
/// Host names remembered with their address for the fleet's reports, at most (then forgotten
/// and learned again).
const MAX_NAMES: usize = 65_536;
/// How long the rate's past counts: a request rate is judged over any one second, so a share
/// that joins others waits until their starts at their larger shares are out of every window
/// it is in (each holder tells when: [`AddressBook::clears`]; at most this long), and a share
/// that grows when another holder left waits this long (the leaver's last starts likewise).
const WINDOW: Duration = Duration::from_secs(1);
/// As the host rate's (`ratelimit.rs`): starts are spaced a fiftieth wider than `1 / rate`, so
/// that a request that arrives late does not bunch with the next.
const RATE_MARGIN: f64 = 1.02;

/// The limits of one server address, for the whole fleet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AddressLimit {
    /// Requests in flight to the address at most (`usize::MAX`: no limit).
    pub concurrency: usize,
    /// Requests started per second at most (`f64::INFINITY`: no limit).
    pub rate: f64,
}

impl AddressLimit {
    /// Whether it limits anything.
    pub fn is_on(&self) -> bool {
        self.concurrency != usize::MAX || self.rate.is_finite()
    }
}

/// Where an address stands with the fleet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Standing {
    /// Not registered: its requests wait until it is and the fleet confirms it.
    Unregistered,
    /// Handed to the worker to register (`AddressBook::wanted`), or registered.
    Registered,
}

/// One address's share of its budget and what uses it.
#[derive(Debug)]
struct State {
    standing: Standing,
    /// Every other holder counts this worker: the share may be used.
    confirmed: bool,
    /// Live workers holding the address, this one included (1: alone).
    holders: u32,
    in_flight: usize,
    /// Requests on their way to the address (counted from [`AddressBook::enter`], their
    /// host's limits included): it is wanted, and kept.
    waiting: usize,
    /// Requests waiting for the address itself (its slots or its share): what the address
    /// holds up.
    queued: usize,
    /// No request starts before this (the rate).
    next: Instant,
    /// The last request's start.
    last_start: Option<Instant>,
    /// When a request last ended or started.
    last_used: Instant,
    /// Fewer holders, from when: a share grows only a [`WINDOW`] after another holder left.
    fewer: Option<(u32, Instant)>,
    /// The shortest gaps between this worker's starts lately ([`Gaps`]).
    gaps: Gaps,
    /// When the starts this worker made at a larger share are out of the window, if later
    /// than the last read: told to the fleet ([`AddressBook::clears`]).
    clear: Option<Instant>,
}

/// The shortest gap between two starts, over two spans that together cover at least the last
/// [`WINDOW`]: whether the starts of the last second were already spaced as a smaller share
/// spaces them. Three numbers, not a log of starts: a book may hold a hundred thousand addresses.
#[derive(Clone, Copy, Debug)]
struct Gaps {
    /// The current span's beginning (a start); it ends at the first start a [`WINDOW`] later.
    since: Instant,
    /// The shortest gap ending in the current span, and in the one before it.
    current: Option<Duration>,
    before: Option<Duration>,
}

impl Gaps {
    fn new(now: Instant) -> Self {
        Gaps {
            since: now,
            current: None,
            before: None,
        }
    }

    /// Counts a start at `now`, `gap` after the one before.
    fn start(&mut self, now: Instant, gap: Option<Duration>) {
        if now >= self.since + WINDOW {
            self.before = self.current.take();
            self.since = now;
        }
        if let Some(gap) = gap {
            self.current = Some(self.current.map_or(gap, |g| g.min(gap)));
        }
    }

    /// The shortest gap ending within the last [`WINDOW`] (or a little more), if any.
    fn shortest(&self) -> Option<Duration> {
        match (self.current, self.before) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// One server address's entry in the book.
#[derive(Debug)]
pub(crate) struct Address {
    ip: IpAddr,
    limit: AddressLimit,
    state: Mutex<State>,
    changed: Notify,
}

/// What the fleet's `address_holders` rows say of one address this worker holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AddressShare {
    pub ip: IpAddr,
    /// Live workers registered for it, this one included.
    pub holders: u32,
    /// Every other holder has read the holders since this worker registered.
    pub confirmed: bool,
    /// How long from the read until the other holders' starts at their larger shares are out
    /// of the window (their `clear_at`, [`AddressBook::clears`]): a newly confirmed share
    /// starts no earlier.
    pub clear_in: Duration,
}

/// What one address is doing now, for the fleet's per-address view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddressReport {
    pub ip: IpAddr,
    pub in_flight: usize,
    /// Requests waiting for the address itself (its slots, rate or share).
    pub waiting: usize,
    pub holders: u32,
}

/// Every address this worker asks, by IP; one per [`Checker`](crate::Checker).
pub struct AddressBook {
    limit: AddressLimit,
    map: Mutex<Map>,
    /// Wakes whoever registers addresses: one is wanted.
    wanted: Notify,
}

struct Map {
    addresses: HashMap<IpAddr, Arc<Address>>,
    sweep_at: usize,
    /// Host names and the address they were last asked at, not yet told to the fleet.
    names: HashMap<String, IpAddr>,
    /// Host names told, with their address (bounded by [`MAX_NAMES`]).
    told: HashMap<String, IpAddr>,
    /// Whose the budgets are. Under the map's lock, so that once a worker alone is no longer
    /// ([`Sharing::Alone`] to [`Sharing::Fleet`]) every address it made alone is in the map
    /// ([`AddressBook::held`]) and every later one waits.
    sharing: Sharing,
}

/// Whose each address's budget is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sharing {
    /// This worker's: it has no fleet (the default of a [`Checker`](crate::Checker)).
    Own,
    /// The fleet's, this worker being its only one: a new address is held alone and confirmed
    /// from its first request, with no registration ([`AddressBook::set_alone`]).
    Alone,
    /// The fleet's ([`AddressBook::share_with_fleet`]): every address is registered and
    /// confirmed before a request goes to it.
    Fleet,
}

/// A request counted as waiting for its address until it holds a slot or gives up.
pub(crate) struct Waiter(Arc<Address>);

impl Drop for Waiter {
    fn drop(&mut self) {
        let mut state = self.0.state();
        state.waiting -= 1;
    }
}

impl AddressBook {
    pub(crate) fn new(limit: AddressLimit) -> Self {
        Self {
            limit,
            map: Mutex::new(Map {
                addresses: HashMap::new(),
                sweep_at: MIN_SWEEP,
                names: HashMap::new(),
                told: HashMap::new(),
                sharing: Sharing::Own,
            }),
            wanted: Notify::new(),
        }
    }

    /// The limits of every address.
    pub fn limit(&self) -> AddressLimit {
        self.limit
    }

    /// Whether addresses are limited at all.
    pub fn is_on(&self) -> bool {
        self.limit.is_on()
    }

    /// Takes a share of each address's budget from the fleet from now on, rather than all of
    /// it: every address must be registered ([`AddressBook::wanted`]) and confirmed
    /// ([`AddressBook::set_shares`]) before a request goes to it. Called before any request.
    pub fn share_with_fleet(&self) {
        self.map().sharing = Sharing::Fleet;
    }

    /// Makes this worker of a fleet ([`AddressBook::share_with_fleet`]) the fleet's only one
    /// (`alone`), or ends it: from then on, a new address waits for its registration and
    /// share. The addresses wanted meanwhile ([`AddressBook::wanted`]) are the caller's to
    /// settle: [`AddressBook::set_shares_of`] with no shares holds them alone.
    pub fn set_alone(&self, alone: bool) {
        let mut map = self.map();
        debug_assert_ne!(map.sharing, Sharing::Own, "alone in a fleet only");
        map.sharing = if alone {
            Sharing::Alone
        } else {
            Sharing::Fleet
        };
    }

    /// Whether this worker is the fleet's only one ([`AddressBook::set_alone`]).
    pub fn is_alone(&self) -> bool {
        self.map().sharing == Sharing::Alone
    }

    fn map(&self) -> MutexGuard<'_, Map> {
        self.map.lock().expect("address book lock poisoned")
    }

    /// Counts a request to `ip` (asked by the name `host`) as waiting for the address, its
    /// entry made when absent.
    pub(crate) fn enter(&self, ip: IpAddr, host: &str) -> Waiter {
        let mut map = self.map();
        if map.told.get(host) != Some(&ip) && map.names.len() < MAX_NAMES {
            map.names.insert(host.to_owned(), ip);
        }
        let address = match map.addresses.get(&ip) {
            Some(address) => address.clone(),
            None => {
                // Without a fleet, nothing gives idle addresses back (`take_idle`): swept here.
                if map.sharing == Sharing::Own && map.addresses.len() >= map.sweep_at {
                    let now = Instant::now();
                    map.addresses.retain(|_, a| !a.idle(now, Duration::ZERO));
                    map.sweep_at = (map.addresses.len() * 2).max(MIN_SWEEP);
                }
                let alone = map.sharing != Sharing::Fleet;
                let address = Arc::new(Address::new(ip, self.limit, alone));
                map.addresses.insert(ip, address.clone());
                address
            }
        };
        let unregistered = {
            let mut state = address.state();
            state.waiting += 1;
            state.standing == Standing::Unregistered
        };
        drop(map);
        if unregistered {
            self.wanted.notify_one();
        }
        Waiter(address)
    }

    /// Waits until an address is wanted (a request waits for one not registered), or `within`.
    pub async fn wait_for_wanted(&self, within: Duration) {
        let _ = tokio::time::timeout(within, self.wanted.notified()).await;
    }

    /// The addresses that requests wait for and that are not registered: the caller registers
    /// them now (they count as registered from here; [`AddressBook::unregister`] if that
    /// failed).
    pub fn wanted(&self) -> Vec<IpAddr> {
        let map = self.map();
        let mut wanted = Vec::new();
        for (ip, address) in &map.addresses {
            let mut state = address.state();
            if state.standing == Standing::Unregistered && state.waiting > 0 {
                state.standing = Standing::Registered;
                wanted.push(*ip);
            }
        }
        wanted
    }

    /// Requests waiting for an address whose share the fleet has not confirmed yet (a new
    /// address waits for the worker's next round): none for a worker without a fleet or alone
    /// in it.
    pub fn waiting_for_fleet(&self) -> usize {
        let map = self.map();
        map.addresses
            .values()
            .map(|a| {
                let state = a.state();
                if state.confirmed {
                    0
                } else {
                    state.waiting
                }
            })
            .sum()
    }

    /// Marks `ips` as not registered (their registration failed): asked again next time.
    pub fn unregister(&self, ips: &[IpAddr]) {
        let map = self.map();
        for ip in ips {
            if let Some(address) = map.addresses.get(ip) {
                let mut state = address.state();
                state.standing = Standing::Unregistered;
                state.confirmed = false;
            }
        }
    }

    /// The registered addresses idle for [`IDLE`] (nothing in flight or waiting): forgotten by
    /// the book from now on; the caller gives them back to the fleet.
    pub fn take_idle(&self) -> Vec<IpAddr> {
        let now = Instant::now();
        let mut map = self.map();
        let mut idle = Vec::new();
        map.addresses.retain(|ip, address| {
            let forget = address.idle(now, IDLE);
            if forget && address.state().standing == Standing::Registered {
                idle.push(*ip);
            }
            !forget
        });
        idle
    }

    /// Every address held, for giving them all back.
    pub fn held(&self) -> Vec<IpAddr> {
        let map = self.map();
        map.addresses
            .iter()
            .filter(|(_, a)| a.state().standing == Standing::Registered)
            .map(|(ip, _)| *ip)
            .collect()
    }

    /// Applies what the fleet says of the registered addresses: those in `shares` get their
    /// holders and confirmation, every other registered one is held by this worker alone.
    pub fn set_shares(&self, shares: &[AddressShare]) {
        let shared: HashMap<IpAddr, &AddressShare> = shares.iter().map(|s| (s.ip, s)).collect();
        let map = self.map();
        for (ip, address) in &map.addresses {
            address.set_share_from(shared.get(ip).copied());
        }
    }

    /// As [`AddressBook::set_shares`], for the addresses `read` only (a read of those alone):
    /// those in `shares` get their holders and confirmation, the others of `read` are held
    /// by this worker alone; every other address is left as it is.
    pub fn set_shares_of(&self, read: &[IpAddr], shares: &[AddressShare]) {
        let shared: HashMap<IpAddr, &AddressShare> = shares.iter().map(|s| (s.ip, s)).collect();
        let map = self.map();
        for ip in read {
            if let Some(address) = map.addresses.get(ip) {
                address.set_share_from(shared.get(ip).copied());
            }
        }
    }

    /// Whether every address has no more in flight than its share: the other holders may
    /// count on the shares this worker read.
    pub fn within_shares(&self) -> bool {
        let map = self.map();
        map.addresses.values().all(|a| {
            let state = a.state();
            state.in_flight <= a.slots(state.holders)
        })
    }

    /// The addresses whose share shrank while starts closer than its new spacing were in the
    /// window, with how long until they are out: the fleet is told (`clear_at`) before this
    /// worker acknowledges the read that shrank them, and a worker joining waits that long
    /// rather than a whole window.
    pub fn clears(&self) -> Vec<(IpAddr, Duration)> {
        let now = Instant::now();
        let map = self.map();
        map.addresses
            .values()
            .filter_map(|a| {
                let clear = a.state().clear.filter(|&c| c > now)?;
                Some((a.ip, clear - now))
            })
            .collect()
    }

    /// Host names asked at an address not yet told, with it; told from now on.
    pub fn take_names(&self) -> Vec<(String, IpAddr)> {
        let mut map = self.map();
        let names: Vec<(String, IpAddr)> = map.names.drain().collect();
        if map.told.len() + names.len() > MAX_NAMES {
            map.told.clear();
        }
        for (name, ip) in &names {
            map.told.insert(name.clone(), *ip);
        }
        names
    }

    /// The addresses that requests wait for (their slots or their share, not their hosts'
    /// limits), those with the most waiting first.
    pub fn reports(&self) -> Vec<AddressReport> {
        let map = self.map();
        let mut reports: Vec<AddressReport> = map
            .addresses
            .values()
            .filter_map(|a| {
                let state = a.state();
                (state.queued > 0).then(|| AddressReport {
                    ip: a.ip,
                    in_flight: state.in_flight,
                    waiting: state.queued,
                    holders: state.holders,
                })
            })
            .collect();
        reports.sort_by(|a, b| b.waiting.cmp(&a.waiting).then(a.ip.cmp(&b.ip)));
        reports
    }
}

impl Address {
    fn new(ip: IpAddr, limit: AddressLimit, alone: bool) -> Self {
        let now = Instant::now();
        Self {
            ip,
            limit,
            state: Mutex::new(State {
                standing: if alone {
                    Standing::Registered
                } else {
                    Standing::Unregistered
                },
                confirmed: alone,
                holders: 1,
                in_flight: 0,
                waiting: 0,
                queued: 0,
                next: now,
                last_start: None,
                last_used: now,
                fewer: None,
                gaps: Gaps::new(now),
                clear: None,
            }),
            changed: Notify::new(),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().expect("address lock poisoned")
    }

    /// This worker's slots at the address, with `holders` sharing it: at least one.
    fn slots(&self, holders: u32) -> usize {
        if self.limit.concurrency == usize::MAX {
            return usize::MAX;
        }
        (self.limit.concurrency / holders.max(1) as usize).max(1)
    }

    /// The time between two starts with `holders` sharing the rate (zero: no rate).
    fn spacing(&self, holders: u32) -> Duration {
        if !self.limit.rate.is_finite() {
            return Duration::ZERO;
        }
        Duration::try_from_secs_f64(RATE_MARGIN * f64::from(holders.max(1)) / self.limit.rate)
            .unwrap_or_default()
    }

    fn idle(&self, now: Instant, after: Duration) -> bool {
        let state = self.state();
        state.waiting == 0
            && state.in_flight == 0
            && now >= state.next
            && now.saturating_duration_since(state.last_used) >= after
    }

    /// What a read of the fleet says: `share`, or held by this worker alone (not listed).
    fn set_share_from(&self, share: Option<&AddressShare>) {
        let (holders, confirmed, clear_in) = share.map_or((1, true, Duration::ZERO), |s| {
            (s.holders, s.confirmed, s.clear_in)
        });
        self.set_share(holders, confirmed, clear_in);
    }

    fn set_share(&self, holders: u32, confirmed: bool, clear_in: Duration) {
        let mut state = self.state();
        if state.standing != Standing::Registered {
            return;
        }
        let now = Instant::now();
        if holders < state.holders {
            // A larger share: once the holders that left are out of the window.
            let since = match state.fewer {
                Some((_, since)) => since,
                None => now,
            };
            state.fewer = Some((holders, since));
            if now >= since + WINDOW {
                state.holders = holders;
                state.fewer = None;
            }
        } else {
            state.fewer = None;
            if holders > state.holders {
                // A smaller share spaces the next start from the last at once. The starts of
                // the last second, if closer than that, must leave the window before another
                // worker's share may count on this one's: when, the fleet is told.
                let spacing = self.spacing(holders);
                if let Some(last) = state.last_start {
                    state.next = state.next.max(last + spacing);
                    let close = state.gaps.shortest().is_some_and(|gap| gap < spacing);
                    if close && now < last + WINDOW {
                        state.clear =
                            Some(state.clear.map_or(last + WINDOW, |c| c.max(last + WINDOW)));
                    }
                }
                state.holders = holders;
            }
        }
        if confirmed && !state.confirmed && state.holders > 1 {
            // Joining others: their starts at their larger shares leave the window first
            // (each told when; at most a window from the read).
            state.next = state.next.max(now + clear_in.min(WINDOW));
        }
        state.confirmed = confirmed;
        drop(state);
        self.changed.notify_waiters();
    }

    /// Waits for a slot of this worker's share (and, in a fleet, for the share itself).
    pub(crate) async fn acquire_slot(&self) {
        {
            // Most often a slot is free: taken without waiting for news.
            let mut state = self.state();
            if self.take_slot(&mut state) {
                return;
            }
            state.queued += 1;
        }
        let _queued = Queued(self);
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if self.take_slot(&mut self.state()) {
                return;
            }
            changed.await;
        }
    }

    /// Takes a slot of the share if it may be used and one is free.
    fn take_slot(&self, state: &mut State) -> bool {
        let free = state.confirmed && state.in_flight < self.slots(state.holders);
        if free {
            state.in_flight += 1;
            state.last_used = Instant::now();
        }
        free
    }

    /// Gives a slot back.
    pub(crate) fn release_slot(&self) {
        let queued = {
            let mut state = self.state();
            state.in_flight -= 1;
            state.last_used = Instant::now();
            state.queued
        };
        // Only a request counted as queued waits for news (it counts itself before it looks).
        if queued > 0 {
            self.changed.notify_waiters();
        }
    }

    /// Takes a turn of the rate now: `Ok(turn)` ([`Address::give_back`] undoes it), or
    /// `Err(at)`, the earliest a turn comes.
    pub(crate) fn take_turn(&self, now: Instant) -> Result<Turn, Instant> {
        let mut state = self.state();
        if state.next > now {
            return Err(state.next);
        }
        let turn = Turn {
            next: state.next,
            last_start: state.last_start,
            gaps: state.gaps,
        };
        state.next = now + self.spacing(state.holders);
        let gap = state
            .last_start
            .map(|last| now.saturating_duration_since(last));
        state.gaps.start(now, gap);
        state.last_start = Some(now);
        Ok(turn)
    }

    /// Gives back a turn taken by [`Address::take_turn`] and not used (the host's rate said
    /// no).
    pub(crate) fn give_back(&self, turn: Turn) {
        let mut state = self.state();
        state.next = turn.next;
        state.last_start = turn.last_start;
        state.gaps = turn.gaps;
    }
}

/// Counts a request as waiting for the address itself until dropped (its wait cancelled too).
struct Queued<'a>(&'a Address);

impl Drop for Queued<'_> {
    fn drop(&mut self) {
        self.0.state().queued -= 1;
    }
}

/// What a turn of the rate changed, to undo it.
#[derive(Debug)]
pub(crate) struct Turn {
    next: Instant,
    last_start: Option<Instant>,
    gaps: Gaps,
}

impl Waiter {
    /// The address waited for.
    pub(crate) fn address(&self) -> &Arc<Address> {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, last])
    }

    const LIMIT: AddressLimit = AddressLimit {
        concurrency: 4,
        rate: 10.0,
    };

    #[tokio::test(start_paused = true)]
    async fn alone_a_worker_takes_the_whole_budget() {
        let book = AddressBook::new(LIMIT);
        let waiter = book.enter(ip(1), "a.example");
        let address = waiter.address().clone();
        for _ in 0..4 {
            address.acquire_slot().await;
        }
        let fifth = address.acquire_slot();
        assert!(tokio::time::timeout(Duration::from_millis(50), fifth)
            .await
            .is_err());
        let now = Instant::now();
        assert!(address.take_turn(now).is_ok());
        let at = address.take_turn(now).unwrap_err();
        assert_eq!(at - now, Duration::from_millis(102));
        assert!(book.wanted().is_empty(), "nothing to register alone");
    }

    #[tokio::test(start_paused = true)]
    async fn in_a_fleet_an_address_waits_for_its_share_then_takes_its_part() {
        let book = AddressBook::new(LIMIT);
        book.share_with_fleet();
        let waiter = book.enter(ip(2), "b.example");
        let address = waiter.address().clone();
        let first = address.acquire_slot();
        assert!(
            tokio::time::timeout(Duration::from_millis(50), first)
                .await
                .is_err(),
            "not registered yet"
        );
        assert_eq!(book.wanted(), [ip(2)]);
        assert!(book.wanted().is_empty(), "handed out once");
        let share = AddressShare {
            ip: ip(2),
            holders: 2,
            confirmed: false,
            // The other holder's closer starts leave the window 400 ms after the read.
            clear_in: Duration::from_millis(400),
        };
        book.set_shares(&[share]);
        let first = address.acquire_slot();
        assert!(
            tokio::time::timeout(Duration::from_millis(50), first)
                .await
                .is_err(),
            "not confirmed yet"
        );
        book.set_shares(&[AddressShare {
            confirmed: true,
            ..share
        }]);
        address.acquire_slot().await;
        address.acquire_slot().await;
        let third = address.acquire_slot();
        assert!(
            tokio::time::timeout(Duration::from_millis(50), third)
                .await
                .is_err(),
            "half of 4 slots"
        );
        let now = Instant::now();
        assert_eq!(
            address.take_turn(now).unwrap_err() - now,
            Duration::from_millis(350),
            "joining others: until their closer starts are out of the window"
        );
        tokio::time::sleep(WINDOW).await;
        let now = Instant::now();
        assert!(address.take_turn(now).is_ok());
        assert_eq!(
            address.take_turn(now).unwrap_err() - now,
            Duration::from_millis(204),
            "half of the rate"
        );
        assert!(book.within_shares());
        // Alone again: the whole budget, once the other holder's starts are out of the window.
        book.set_shares(&[]);
        let third = address.acquire_slot();
        assert!(
            tokio::time::timeout(Duration::from_millis(50), third)
                .await
                .is_err(),
            "the other holder's share is not taken at once"
        );
        tokio::time::sleep(WINDOW).await;
        book.set_shares(&[]);
        address.acquire_slot().await;
    }

    #[tokio::test(start_paused = true)]
    async fn a_share_that_shrinks_tells_when_its_closer_starts_leave_the_window() {
        // Starts `gap` apart at the whole budget (10 a second: 102 ms at the closest), then a
        // second holder, whose share spaces them 204 ms.
        async fn shrunk(gap: Duration) -> (AddressBook, Instant) {
            let book = AddressBook::new(LIMIT);
            book.share_with_fleet();
            let waiter = book.enter(ip(11), "k.example");
            let address = waiter.address().clone();
            assert_eq!(book.wanted(), [ip(11)]);
            book.set_shares(&[]);
            let mut last = Instant::now();
            for _ in 0..3 {
                last = Instant::now();
                address.take_turn(last).expect("a turn");
                tokio::time::sleep(gap).await;
            }
            book.set_shares(&[AddressShare {
                ip: ip(11),
                holders: 2,
                confirmed: true,
                clear_in: Duration::ZERO,
            }]);
            (book, last)
        }
        let (book, last) = shrunk(Duration::from_millis(102)).await;
        assert_eq!(
            book.clears(),
            [(ip(11), last + WINDOW - Instant::now())],
            "starts closer than the new spacing: out of the window a second after the last"
        );
        tokio::time::sleep(WINDOW).await;
        assert!(book.clears().is_empty(), "out of the window now");
        let (book, _) = shrunk(Duration::from_millis(250)).await;
        assert!(
            book.clears().is_empty(),
            "starts already spaced as the smaller share: clear at once"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn requests_wait_for_the_fleet_until_their_address_is_confirmed() {
        let alone = AddressBook::new(LIMIT);
        let _waiter = alone.enter(ip(4), "d.example");
        assert_eq!(
            alone.waiting_for_fleet(),
            0,
            "alone: its own from the start"
        );
        let book = AddressBook::new(LIMIT);
        book.share_with_fleet();
        let waiters: Vec<Waiter> = (0..3).map(|_| book.enter(ip(5), "e.example")).collect();
        let other = book.enter(ip(6), "f.example");
        assert_eq!(book.waiting_for_fleet(), 4);
        assert_eq!(book.wanted().len(), 2);
        assert_eq!(book.waiting_for_fleet(), 4, "registered, not yet confirmed");
        book.set_shares(&[AddressShare {
            ip: ip(6),
            holders: 2,
            confirmed: false,
            clear_in: Duration::ZERO,
        }]);
        assert_eq!(
            book.waiting_for_fleet(),
            1,
            "e.example's address is confirmed"
        );
        drop(other);
        assert_eq!(book.waiting_for_fleet(), 0);
        drop(waiters);
    }

    #[tokio::test(start_paused = true)]
    async fn the_fleets_only_worker_holds_its_addresses_until_it_is_not_alone() {
        let book = AddressBook::new(LIMIT);
        book.share_with_fleet();
        let early = book.enter(ip(8), "h.example");
        book.set_alone(true);
        let waiter = book.enter(ip(9), "i.example");
        assert_eq!(
            book.wanted(),
            [ip(8)],
            "only the address wanted before it was alone"
        );
        assert_eq!(
            book.waiting_for_fleet(),
            1,
            "alone: a new address is its own at once"
        );
        book.set_shares_of(&[ip(8)], &[]);
        assert_eq!(book.waiting_for_fleet(), 0);
        book.set_alone(false);
        let mut held = book.held();
        held.sort();
        assert_eq!(
            held,
            [ip(8), ip(9)],
            "every address it took alone, to register"
        );
        let later = book.enter(ip(10), "j.example");
        assert_eq!(
            book.waiting_for_fleet(),
            1,
            "no longer alone: a new address waits for its share"
        );
        assert_eq!(book.wanted(), [ip(10)]);
        drop((early, waiter, later));
    }

    #[tokio::test(start_paused = true)]
    async fn a_read_of_new_addresses_leaves_the_others_as_they_are() {
        let book = AddressBook::new(LIMIT);
        book.share_with_fleet();
        let _old = book.enter(ip(7), "g.example");
        assert_eq!(book.wanted(), [ip(7)]);
        book.set_shares(&[AddressShare {
            ip: ip(7),
            holders: 2,
            confirmed: false,
            clear_in: Duration::ZERO,
        }]);
        let _new = book.enter(ip(8), "h.example");
        assert_eq!(book.wanted(), [ip(8)]);
        assert_eq!(book.waiting_for_fleet(), 2);
        book.set_shares_of(&[ip(8)], &[]);
        assert_eq!(
            book.waiting_for_fleet(),
            1,
            "the new address is this worker's alone; the other still waits for its holder"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn an_idle_address_is_given_back() {
        let book = AddressBook::new(LIMIT);
        book.share_with_fleet();
        let waiter = book.enter(ip(3), "c.example");
        assert_eq!(book.wanted(), [ip(3)]);
        book.set_shares(&[]);
        waiter.address().acquire_slot().await;
        waiter.address().release_slot();
        drop(waiter);
        assert!(book.take_idle().is_empty(), "not idle long enough");
        tokio::time::sleep(IDLE).await;
        assert_eq!(book.take_idle(), [ip(3)]);
        assert!(book.held().is_empty());
        assert_eq!(book.take_names(), [("c.example".to_owned(), ip(3))]);
        let _again = book.enter(ip(3), "c.example");
        assert_eq!(book.wanted(), [ip(3)], "registered again");
        assert!(book.take_names().is_empty(), "the name was told");
    }
}
