//! The DNS resolver handed to reqwest: a cache in front of the system resolver, and the
//! `--public-only` filter on what it returns.
//!
//! Lists of millions of URLs name the same hosts over and over; without a cache every new
//! connection costs a `getaddrinfo` on the blocking pool. Failures are cached too, since a dead
//! domain usually appears many times. Concurrent look-ups of one name share a single query.
//!
//! A request that resolves its name before its limits (to find its server address, for the
//! address limits) waits for one of [`SYSTEM_LOOKUPS`] slots first: every check of a list of
//! new servers does that at once, and the system resolver's look-ups are threads, each
//! holding memory of its own. Waiting for a slot is waiting, not the name's time to answer:
//! only the look-up itself is timed. A look-up inside a connection (the connector's) takes
//! none: it already holds one of `--concurrency`'s.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use tokio::sync::{OnceCell, Semaphore};

use crate::address::AddressPolicy;

/// How long an answer is reused; `getaddrinfo` does not tell the record's TTL.
const TTL: Duration = Duration::from_secs(300);
/// How long "no such host" is remembered.
const NEGATIVE_TTL: Duration = Duration::from_secs(60);
/// Above this many names the cache is emptied, so memory stays flat however many hosts a list
/// names; 64k entries are a few megabytes.
const MAX_ENTRIES: usize = 65_536;
/// The system resolver's look-ups at once, at most, for requests that resolve before their
/// limits: each is a thread of the blocking pool while it runs (`getaddrinfo` blocks), and at
/// 20,000 new servers the 512 threads that tokio allows cost 35-60 MiB of the worker's peak
/// memory and made its drain 1.7 times as long (`benches/memory.rs`). Chromium runs 6 at once;
/// a stub resolver's answer takes milliseconds, so 64 answer thousands of names a second. A
/// look-up that runs out of its time gives its slot back, though its thread waits on for the
/// name: names whose DNS never answers (link rot has them) cost threads, as before, but never
/// hold up the others' look-ups.
const SYSTEM_LOOKUPS: usize = 64;

/// Why a name gave no address to connect to. Found again in reqwest's error chain by
/// `classify.rs`, which is how a DNS failure is told apart from a refused connection.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ResolveError {
    #[error("no address found for {0}")]
    NotFound(String),
    #[error("every address of {0} is refused by the public-only policy")]
    Denied(String),
}

/// A cached answer: the addresses, or `None` when the name does not resolve.
type Answer = Option<Arc<[IpAddr]>>;

/// What a look-up found.
#[derive(Clone)]
enum Looked {
    Answer(Answer),
    /// A look-up before a request's limits ran out of its time: every request waiting for it
    /// fails as it did, together, and the next one asks again.
    TimedOut,
}

/// A look-up before a request's limits took longer than it was given (its wait for a slot
/// not counted).
#[derive(Debug)]
pub(crate) struct TimedOut;

struct Entry {
    born: Instant,
    answer: OnceCell<Looked>,
}

impl Entry {
    fn expired(&self, now: Instant) -> bool {
        match self.answer.get() {
            None => false, // still being looked up
            Some(Looked::TimedOut) => true,
            Some(Looked::Answer(Some(_))) => now.duration_since(self.born) > TTL,
            Some(Looked::Answer(None)) => now.duration_since(self.born) > NEGATIVE_TTL,
        }
    }
}

/// The caching, filtering resolver; cheap to clone.
#[derive(Clone)]
pub(crate) struct CachingResolver {
    entries: Arc<Mutex<HashMap<String, Arc<Entry>>>>,
    allow: AddressPolicy,
    /// The DNS server asked instead of the system's resolver (`--dns-server`).
    server: Option<SocketAddr>,
    /// Slots of the system resolver's look-ups made before a request's limits.
    lookups: Arc<Semaphore>,
}

impl CachingResolver {
    pub(crate) fn new(allow: AddressPolicy, server: Option<SocketAddr>) -> Self {
        Self {
            entries: Arc::default(),
            allow,
            server,
            lookups: Arc::new(Semaphore::new(SYSTEM_LOOKUPS)),
        }
    }

    /// Forgets a failed look-up of `host`, so that the next request (a probe of a suspect
    /// host, `health.rs`) asks again rather than reusing the failure.
    pub(crate) fn forget_failure(&self, host: &str) {
        let mut entries = self.entries.lock().expect("dns cache lock poisoned");
        if entries
            .get(host)
            .is_some_and(|e| matches!(e.answer.get(), Some(Looked::Answer(None))))
        {
            entries.remove(host);
        }
    }

    /// The cache entry for `host`, made fresh when absent or stale.
    fn entry(&self, host: &str) -> Arc<Entry> {
        let now = Instant::now();
        let mut entries = self.entries.lock().expect("dns cache lock poisoned");
        if let Some(entry) = entries.get(host).filter(|e| !e.expired(now)) {
            return entry.clone();
        }
        if entries.len() >= MAX_ENTRIES {
            entries.retain(|_, e| !e.expired(now));
            if entries.len() >= MAX_ENTRIES {
                entries.clear();
            }
        }
        let entry = Arc::new(Entry {
            born: now,
            answer: OnceCell::new(),
        });
        entries.insert(host.to_owned(), entry.clone());
        entry
    }

    /// What the cache has for `host`, looked up when absent or stale; `bounded`, for a
    /// look-up before a request's limits.
    async fn cached(&self, host: &str, bounded: Option<Bounded<'_>>) -> Looked {
        let entry = self.entry(host);
        let looked = entry
            .answer
            .get_or_init(|| lookup(host, self.server, bounded))
            .await;
        looked.clone()
    }

    /// The answer for `host`, as the connector asks inside a connection: no slot, no time-out
    /// of its own (the connection's bounds it).
    async fn answer(&self, host: &str) -> Answer {
        match self.cached(host, None).await {
            Looked::Answer(answer) => answer,
            // Another request's look-up, which this one waited for, ran out of its time.
            Looked::TimedOut => match lookup(host, self.server, None).await {
                Looked::Answer(answer) => answer,
                Looked::TimedOut => None, // not bounded: never
            },
        }
    }

    /// The first address of `host` the policy allows, the one the connector tries first
    /// (`None`: the name does not resolve, or every address is refused), looked up before a
    /// request's limits: [`TimedOut`] when the look-up took longer than `within`, not counting
    /// its wait for a slot.
    pub(crate) async fn first_allowed(
        &self,
        host: &str,
        within: Duration,
    ) -> Result<Option<IpAddr>, TimedOut> {
        let slots = &*self.lookups;
        match self.cached(host, Some(Bounded { slots, within })).await {
            Looked::Answer(answer) => {
                Ok(answer.and_then(|ips| ips.iter().copied().find(|ip| (self.allow)(*ip))))
            }
            Looked::TimedOut => Err(TimedOut),
        }
    }

    pub(crate) async fn resolve_host(self, host: String) -> Result<Vec<SocketAddr>, ResolveError> {
        let answer = self.answer(&host).await;
        let ips = answer
            .as_ref()
            .ok_or_else(|| ResolveError::NotFound(host.clone()))?;
        let allowed: Vec<SocketAddr> = ips
            .iter()
            .filter(|ip| (self.allow)(**ip))
            .map(|ip| SocketAddr::new(*ip, 0))
            .collect();
        if allowed.is_empty() {
            return Err(ResolveError::Denied(host));
        }
        Ok(allowed)
    }
}

impl Resolve for CachingResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let this = self.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addrs = this.resolve_host(host).await?;
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// How a look-up before a request's limits is bounded: a look-up of the system resolver
/// waits for one of `slots`, and holds it until it answers or runs out of its time; the
/// look-up itself, not its wait for a slot, has `within`.
struct Bounded<'a> {
    slots: &'a Semaphore,
    within: Duration,
}

/// Asks the system resolver, or `server`, as `bounded` says. Names under `.invalid` fail at
/// once, as RFC 6761 asks.
async fn lookup(host: &str, server: Option<SocketAddr>, bounded: Option<Bounded<'_>>) -> Looked {
    if is_reserved_invalid(host) {
        return Looked::Answer(None);
    }
    if let Ok(ip) = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<IpAddr>()
    {
        return Looked::Answer(Some(Arc::from([ip])));
    }
    let within = bounded.as_ref().map(|b| b.within);
    if let Some(server) = server {
        return match timed(within, crate::dns::lookup(server, host)).await {
            Ok(ips) => Looked::Answer((!ips.is_empty()).then(|| ips.into())),
            Err(TimedOut) => Looked::TimedOut,
        };
    }
    let _slot = match &bounded {
        // Never closed.
        Some(b) => b.slots.acquire().await.ok(),
        None => None,
    };
    let host = host.to_owned();
    let looked_up = tokio::task::spawn_blocking(move || {
        std::net::ToSocketAddrs::to_socket_addrs(&(host.as_str(), 0))
    });
    match timed(within, looked_up).await {
        Ok(Ok(Ok(addrs))) => {
            let ips: Vec<IpAddr> = addrs.map(|a| a.ip()).collect();
            Looked::Answer((!ips.is_empty()).then(|| ips.into()))
        }
        Ok(_) => Looked::Answer(None),
        Err(TimedOut) => Looked::TimedOut,
    }
}

/// `future`, given `within` if any.
async fn timed<F: std::future::Future>(
    within: Option<Duration>,
    future: F,
) -> Result<F::Output, TimedOut> {
    match within {
        Some(within) => tokio::time::timeout(within, future)
            .await
            .map_err(|_| TimedOut),
        None => Ok(future.await),
    }
}

fn is_reserved_invalid(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    host == "invalid" || host.ends_with(".invalid")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::address::{any_address, is_public};

    #[test]
    fn names_under_invalid_are_reserved() {
        assert!(is_reserved_invalid("nothing.invalid"));
        assert!(is_reserved_invalid("A.B.INVALID."));
        assert!(!is_reserved_invalid("invalid.example.com"));
    }

    #[tokio::test]
    async fn an_invalid_name_is_not_found() {
        let resolver = CachingResolver::new(any_address, None);
        let err = resolver.resolve_host("x.invalid".into()).await.unwrap_err();
        assert!(matches!(err, ResolveError::NotFound(_)));
    }

    #[tokio::test]
    async fn localhost_is_denied_under_public_only() {
        let resolver = CachingResolver::new(is_public, None);
        let err = resolver.resolve_host("localhost".into()).await.unwrap_err();
        assert!(matches!(err, ResolveError::Denied(_)));
        let open = CachingResolver::new(any_address, None);
        assert!(!open
            .resolve_host("localhost".into())
            .await
            .unwrap()
            .is_empty());
    }

    #[tokio::test]
    async fn a_second_lookup_is_served_from_the_cache() {
        let resolver = CachingResolver::new(any_address, None);
        resolver
            .clone()
            .resolve_host("localhost".into())
            .await
            .unwrap();
        let first = resolver.entry("localhost");
        let second = resolver.entry("localhost");
        assert!(Arc::ptr_eq(&first, &second));
        assert!(first.answer.get().is_some());
    }

    /// Every look-up slot of `resolver`, held until dropped.
    async fn every_slot(resolver: &CachingResolver) -> tokio::sync::OwnedSemaphorePermit {
        let slots = resolver.lookups.clone();
        slots
            .acquire_many_owned(SYSTEM_LOOKUPS as u32)
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn a_lookup_before_the_limits_waits_for_a_slot_and_the_wait_is_not_timed() {
        let resolver = CachingResolver::new(any_address, None);
        let taken = every_slot(&resolver).await;
        let asking = {
            let resolver = resolver.clone();
            tokio::spawn(async move {
                resolver
                    .first_allowed("localhost", Duration::from_millis(200))
                    .await
            })
        };
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(!asking.is_finished(), "a look-up ran without a slot");
        drop(taken);
        let address = asking.await.unwrap().expect("timed out waiting for a slot");
        assert!(address.is_some_and(|ip| ip.is_loopback()));
    }

    #[tokio::test]
    async fn the_connector_takes_no_slot() {
        let resolver = CachingResolver::new(any_address, None);
        let _taken = every_slot(&resolver).await;
        let resolving = resolver.resolve_host("localhost".into());
        let addresses = tokio::time::timeout(Duration::from_secs(10), resolving)
            .await
            .expect("the connector's look-up waited for a slot")
            .unwrap();
        assert!(!addresses.is_empty());
    }

    #[tokio::test]
    async fn requests_waiting_for_one_lookup_time_out_together() {
        // A DNS server that never answers.
        let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let resolver = CachingResolver::new(any_address, Some(silent.local_addr().unwrap()));
        let within = Duration::from_millis(300);
        let started = tokio::time::Instant::now();
        let asking: Vec<_> = (0..5)
            .map(|_| {
                let resolver = resolver.clone();
                tokio::spawn(async move { resolver.first_allowed("silent.test", within).await })
            })
            .collect();
        for asked in asking {
            assert!(asked.await.unwrap().is_err(), "a silent name answered");
        }
        let took = started.elapsed();
        assert!(
            took < within * 3,
            "five requests for one silent name took {took:?}: one time-out after another"
        );
        // The next request asks again rather than taking the time-out as an answer.
        assert!(resolver.entry("silent.test").answer.get().is_none());
    }
}
