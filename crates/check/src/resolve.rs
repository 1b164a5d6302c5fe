//! The DNS resolver handed to reqwest: a cache in front of the system resolver, and the
//! `--public-only` filter on what it returns.
//!
//! Lists of millions of URLs name the same hosts over and over; without a cache every new
//! connection costs a `getaddrinfo` on the blocking pool. Failures are cached too, since a dead
//! domain usually appears many times. Concurrent look-ups of one name share a single query.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use tokio::sync::OnceCell;

use crate::address::AddressPolicy;

/// How long an answer is reused; `getaddrinfo` does not tell the record's TTL.
const TTL: Duration = Duration::from_secs(300);
/// How long "no such host" is remembered.
const NEGATIVE_TTL: Duration = Duration::from_secs(60);
/// Above this many names the cache is emptied, so memory stays flat however many hosts a list
/// names; 64k entries are a few megabytes.
const MAX_ENTRIES: usize = 65_536;

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

struct Entry {
    born: Instant,
    answer: OnceCell<Answer>,
}

impl Entry {
    fn expired(&self, now: Instant) -> bool {
        match self.answer.get() {
            None => false, // still being looked up
            Some(Some(_)) => now.duration_since(self.born) > TTL,
            Some(None) => now.duration_since(self.born) > NEGATIVE_TTL,
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
}

impl CachingResolver {
    pub(crate) fn new(allow: AddressPolicy, server: Option<SocketAddr>) -> Self {
        Self {
            entries: Arc::default(),
            allow,
            server,
        }
    }

    /// Forgets a failed look-up of `host`, so that the next request (a probe of a suspect
    /// host, `health.rs`) asks again rather than reusing the failure.
    pub(crate) fn forget_failure(&self, host: &str) {
        let mut entries = self.entries.lock().expect("dns cache lock poisoned");
        if entries
            .get(host)
            .is_some_and(|e| matches!(e.answer.get(), Some(None)))
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

    /// The cached answer for `host`, looked up when absent or stale.
    async fn answer(&self, host: &str) -> Answer {
        let entry = self.entry(host);
        let answer = entry.answer.get_or_init(|| lookup(host, self.server)).await;
        answer.clone()
    }

    /// The first address of `host` the policy allows, the one the connector tries first
    /// (`None`: the name does not resolve, or every address is refused).
    pub(crate) async fn first_allowed(&self, host: &str) -> Option<IpAddr> {
        let ips = self.answer(host).await?;
        ips.iter().copied().find(|ip| (self.allow)(*ip))
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

/// Asks the system resolver, or `server`. Names under `.invalid` fail at once, as RFC 6761
/// asks.
async fn lookup(host: &str, server: Option<SocketAddr>) -> Answer {
    if is_reserved_invalid(host) {
        return None;
    }
    if let Ok(ip) = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<IpAddr>()
    {
        return Some(Arc::from([ip]));
    }
    if let Some(server) = server {
        let ips = crate::dns::lookup(server, host).await;
        return (!ips.is_empty()).then(|| ips.into());
    }
    let addrs = tokio::net::lookup_host((host, 0)).await.ok()?;
    let ips: Vec<IpAddr> = addrs.map(|a| a.ip()).collect();
    (!ips.is_empty()).then(|| ips.into())
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
}
