//! The shared HTTP client and one request through it ([`Asker`]): politeness first, then the
//! request under what is left of the attempt's time budget.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use reqwest::header::{
    HeaderMap, HeaderName, CONNECTION, CONTENT_ENCODING, CONTENT_TYPE, LOCATION, RETRY_AFTER,
};
use reqwest::{redirect::Policy, Method, Response};
use url::Url;

use crate::accept::accepts;
use crate::address::{guard, AddressPolicy};
use crate::addresses::{AddressBook, AddressLimit};
use crate::ask::Ask;
use crate::auth::authorize;
use crate::classify::failure_of;
use crate::config::{CheckConfig, HostLimit};
use crate::health::Gate;
use crate::hosts::{Host, HostBook};
use crate::page;
use crate::ratelimit::Limits;
use crate::reply::{Failure, Reply};
use crate::requests::{record_request, InFlight};
use crate::resolve::CachingResolver;
use crate::retry::parse_retry_after;

/// A GET reads at most this much of the body: enough to reuse the connection after a small
/// page, never enough to matter on an endless one.
const BODY_PREFIX: usize = 4096;
/// A body kept for the soft-404 comparison (`--soft-404`) is read up to this, never further.
pub(crate) const BODY_KEPT: usize = 64 * 1024;
/// Bounds memory on HTTP/2 the way hyper's defaults already bound HTTP/1 headers.
const MAX_HEADER_LIST: u32 = 256 * 1024;
/// Cloudflare marks its challenge pages with this header.
const CF_MITIGATED: HeaderName = HeaderName::from_static("cf-mitigated");
/// Idle keep-alive connections are closed after this (hyper's pool looks every 90 ms at
/// least). A long list spreads a host's URLs over the whole crawl, so a connection is mostly
/// reused for a redirect hop, the GET after a HEAD, or the host's next turn (50 ms apart at
/// the default rate, under this at any rate of 2 a second or more); a longer timeout holds a
/// socket (some 40 KB with its buffers) for every host seen in that time, thousands a second
/// over a list of distinct hosts. The memory bench, 20,000 URLs on 2,000 / 20,000 hosts: peak
/// RSS 204 / 692 MiB at 5 s, 146 / 314 MiB at 500 ms, 150 / 220 MiB at 200 ms.
///
/// A request asks the server to close the connection (`Connection: close`) when its host is
/// not to be asked again soon (`Host::asked_again`): the worker holds no other check of it,
/// none waits for its limits, and it was not asked within this timeout before. On a list
/// whose hosts are asked once, no connection is left idle then: the same bench with the
/// address limits off, 159-169 / 222-276 MiB before, 154-157 / 99-125 MiB after (and at the
/// defaults 202-236 / 389-392 before, 173 / 251-261 after, together with the worker's
/// `share_addresses` writing the address names outside its rounds).
const POOL_IDLE: Duration = Duration::from_millis(500);
/// Idle keep-alive connections kept per host: RFC 2616's two connections to a server. More
/// are opened while a host has more requests in flight, and closed when they end, so the
/// pool does not keep a connection for every request of a host's past bursts.
const POOL_IDLE_PER_HOST: usize = 2;

impl Reply {
    fn of(headers: &HeaderMap, status: u16, accepted: bool) -> Self {
        let location = headers
            .get(LOCATION)
            .map(|v| String::from_utf8_lossy(v.as_bytes()));
        let retry_after = headers.get(RETRY_AFTER).and_then(|v| v.to_str().ok());
        Reply {
            status,
            location: location.map(|v| v.into_owned()),
            retry_after: retry_after.and_then(|v| parse_retry_after(v, SystemTime::now())),
            cf_mitigated: headers.contains_key(CF_MITIGATED),
            accepted,
            body: None,
        }
    }
}

/// The one client every check shares: keep-alive pool, HTTP/2 by ALPN, no automatic
/// redirects (each hop is checked), no decompression (reqwest's gzip features are off), no
/// proxy (a proxy would bypass the public-only filter). Certificates are checked against
/// webpki's roots, the system's and `ca_certs`; cookies come from the jar alone.
fn build_client(
    config: &CheckConfig,
    resolver: CachingResolver,
) -> reqwest::Result<reqwest::Client> {
    let mut builder = reqwest::Client::builder()
        .user_agent(config.user_agent.as_str())
        .default_headers(config.headers.clone())
        .redirect(Policy::none())
        .connect_timeout(config.connect_timeout)
        .danger_accept_invalid_certs(config.insecure)
        .dns_resolver(Arc::new(resolver))
        .no_proxy()
        .tcp_nodelay(true)
        .pool_idle_timeout(POOL_IDLE)
        .pool_max_idle_per_host(POOL_IDLE_PER_HOST)
        .http2_max_header_list_size(MAX_HEADER_LIST);
    for cert in &config.ca_certs {
        builder = builder.add_root_certificate(cert.clone());
    }
    if let Some(jar) = &config.cookies {
        builder = builder.cookie_provider(Arc::new(jar.clone()));
    }
    builder.build()
}

/// What asks the servers, and all it knows of them: the client, the host book (which keeps
/// the decisions for the fleet too), the limits over all hosts. One per
/// [`Checker`](crate::Checker), shared by its checks; what they need of it is in its methods.
pub(crate) struct Asker {
    config: CheckConfig,
    client: reqwest::Client,
    /// Everything this worker knows of each host.
    book: HostBook,
    /// The limits over all hosts, and the pause.
    limits: Limits,
    /// Every server address asked, and its share of the address's budget.
    addresses: AddressBook,
    /// The client's resolver, to forget a failed look-up before a probe.
    resolver: CachingResolver,
    /// Which addresses may be connected to; also inside the client's resolver.
    allow: AddressPolicy,
}

impl Asker {
    /// The asker of `config`, connecting only where `allow` says.
    pub(crate) fn new(config: CheckConfig, allow: AddressPolicy) -> reqwest::Result<Self> {
        let resolver = CachingResolver::new(allow, config.dns_server);
        let client = build_client(&config, resolver.clone())?;
        let default = HostLimit {
            concurrency: config.host_concurrency,
            rate: config.host_rate,
        };
        Ok(Asker {
            book: HostBook::new(default, config.host_limits.clone()),
            limits: Limits::new(config.concurrency, config.defer_horizon),
            addresses: AddressBook::new(AddressLimit {
                concurrency: config.ip_concurrency,
                rate: config.ip_rate,
            }),
            client,
            resolver,
            allow,
            config,
        })
    }

    /// How the checker asks.
    pub(crate) fn config(&self) -> &CheckConfig {
        &self.config
    }

    /// Everything this worker knows of each host.
    pub(crate) fn book(&self) -> &HostBook {
        &self.book
    }

    /// Every server address asked, and its share of the address's budget.
    pub(crate) fn addresses(&self) -> &AddressBook {
        &self.addresses
    }

    /// The entry of `name` in the book, made when absent.
    pub(crate) fn host(&self, name: &str) -> Arc<Host> {
        self.book.host(name)
    }

    /// Refuses what must not be asked: schemes other than http(s), and addresses the policy
    /// refuses (`address.rs`).
    pub(crate) fn guard(&self, url: &Url) -> Result<(), Failure> {
        guard(self.allow, url)
    }

    /// Pauses or resumes every request (`ratelimit.rs`).
    pub(crate) fn pause(&self, paused: bool) {
        self.limits.pause(paused);
    }

    /// Whether a quarter of the global slots at least are free (`ratelimit.rs`).
    pub(crate) fn has_room(&self) -> bool {
        self.limits.has_room()
    }

    /// One request to `url` of `host` (its entry of the book), after the host's and the global
    /// limits; `budget` is the attempt's remaining time and shrinks by the time spent on the
    /// network (not waiting for limits). As `ask` says, a GET keeps the first [`BODY_KEPT`]
    /// bytes of a 2xx text body in the reply (or what its reading wants), and the check's cut
    /// is marked before the request goes.
    pub(crate) async fn fetch(
        &self,
        host: &Host,
        method: Method,
        url: &Url,
        budget: &mut Duration,
        ask: Ask<'_>,
    ) -> Result<Reply, Failure> {
        // Reachability is the origin's (a port may refuse where another answers); politeness
        // the host's.
        let origin = url.origin().ascii_serialization();
        let reach = host.reach(&origin);
        // The host's health first (a suspect host's requests wait for its probe), then its
        // limits; what was learned while waiting for those is looked at again.
        let (_gate, permit) = loop {
            let gate = reach.gate().await.map_err(Failure::HostDown)?;
            if matches!(gate, Gate::Probe(_)) {
                self.resolver.forget_failure(host.name());
            }
            // The address the connector will use, resolved now (and cached for it), so its
            // limits are waited for before the request is sent. A name that does not answer in
            // the connect timeout fails as the connection would have.
            let resolving = tokio::time::Instant::now();
            let wait = self.config.connect_timeout.min(*budget);
            let Ok(address) = self.address_of(url, wait).await else {
                if let Some(cut) = ask.cut {
                    cut.sent();
                }
                record_request(None);
                *budget = budget.saturating_sub(resolving.elapsed());
                let names = (host.name(), origin.as_str());
                let decisions = self.book.decisions();
                if let Some(cause) = decisions.failed(names, &reach, Failure::Timeout, resolving) {
                    tracing::info!(%origin, cause = cause.describe(), "host decided unreachable");
                }
                return Err(Failure::Timeout);
            };
            let address = address.map(|ip| self.addresses.enter(ip, host.name()));
            let permit = self.limits.acquire(host.limits(), address).await;
            let permit = permit.map_err(Failure::Busy)?;
            if matches!(gate, Gate::Probe(_)) || reach.still_open().map_err(Failure::HostDown)? {
                break (gate, permit);
            }
        };
        if let Some(cut) = ask.cut {
            cut.sent();
        }
        let started = tokio::time::Instant::now();
        let in_flight = InFlight::start();
        let keep_alive = host.asked_again(started, POOL_IDLE);
        let result = self
            .send(method, url, started + *budget, keep_alive, ask)
            .await;
        drop(in_flight);
        record_request(result.as_ref().ok().map(|reply| reply.status));
        *budget = budget.saturating_sub(started.elapsed());
        let decisions = self.book.decisions();
        match &result {
            Ok(reply) => {
                decisions.answered(host.name(), &reach);
                permit.record(reply.status, reply.retry_after, url.path());
            }
            Err(failure) => {
                let names = (host.name(), origin.as_str());
                if let Some(cause) = decisions.failed(names, &reach, *failure, started) {
                    tracing::info!(%origin, cause = cause.describe(), "host decided unreachable");
                }
            }
        }
        result
    }

    /// The address a request to `url` connects to: the first its name resolves to that the
    /// policy allows, which the connector tries first (`None` when addresses are not limited,
    /// or the name does not resolve: the request fails without reaching a server). A host of
    /// `--host-limits` is not counted at its address: its limits are the operator's word for
    /// their own server. `Err` when the name did not answer `within` (its wait for a look-up
    /// slot not counted).
    async fn address_of(
        &self,
        url: &Url,
        within: Duration,
    ) -> Result<Option<std::net::IpAddr>, crate::resolve::TimedOut> {
        let Some(name) = url.host_str() else {
            return Ok(None);
        };
        if !self.addresses.is_on() || self.config.host_limits.contains_key(name) {
            return Ok(None);
        }
        self.resolver.first_allowed(name, within).await
    }

    async fn send(
        &self,
        method: Method,
        url: &Url,
        deadline: tokio::time::Instant,
        keep_alive: bool,
        ask: Ask<'_>,
    ) -> Result<Reply, Failure> {
        let config = &self.config;
        let mut request = self.client.request(method.clone(), url.clone());
        if !keep_alive {
            // Nothing else of the host waits: its connection is not kept (see [`POOL_IDLE`]).
            request = request.header(CONNECTION, "close");
        }
        let request = authorize(request, url, &config.basic_auth, &config.host_headers).send();
        let response = match tokio::time::timeout_at(deadline, request).await {
            Err(_elapsed) => return Err(Failure::Timeout),
            Ok(result) => result.map_err(|e| failure_of(&e))?,
        };
        let status = response.status().as_u16();
        let host = url.host_str().unwrap_or_default();
        let accepted = accepts(&config.accept, &config.accept_hosts, host, status);
        let mut reply = Reply::of(response.headers(), status, accepted);
        let reading = ask.reading;
        let wanted = match reading {
            Some(reading) => page::wanted(reading, response.headers()),
            None => is_plain_text(response.headers()),
        };
        let keep = ask.keep_body && (200..300).contains(&status) && wanted;
        if method == Method::GET {
            // The status is known; a body that fails or never ends changes nothing (a kept
            // body is what arrived in time).
            let limit = match reading {
                Some(reading) if keep => reading.cap,
                _ if keep => BODY_KEPT,
                _ => BODY_PREFIX,
            };
            let mut kept = keep.then(Vec::new);
            let _ =
                tokio::time::timeout_at(deadline, read_prefix(response, limit, &mut kept)).await;
            reply.body = kept;
        }
        Ok(reply)
    }
}

/// Reads up to `limit` bytes (into `kept`, if given, never past `limit`), then drops the rest
/// (and with it the connection, if the body was longer).
async fn read_prefix(mut response: Response, limit: usize, kept: &mut Option<Vec<u8>>) {
    let mut read = 0;
    while read < limit {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if let Some(kept) = kept {
                    kept.extend_from_slice(&chunk[..chunk.len().min(limit - read)]);
                }
                read += chunk.len();
            }
            _ => return,
        }
    }
}

/// A body worth comparing as text: HTML, XML or plain text (or unlabelled), not compressed.
fn is_plain_text(headers: &HeaderMap) -> bool {
    let encoded = headers
        .get(CONTENT_ENCODING)
        .is_some_and(|v| !v.as_bytes().eq_ignore_ascii_case(b"identity"));
    let text = headers.get(CONTENT_TYPE).is_none_or(|v| {
        let v = String::from_utf8_lossy(v.as_bytes()).to_ascii_lowercase();
        v.starts_with("text/") || v.contains("html") || v.contains("xml")
    });
    text && !encoded
}
