//! The checker: turns a URL into a verdict.
//!
//! [`Checker::check`] never fails: every URL ends in a [`Finding`], a dead link being data
//! rather than an error. One [`Checker`] is shared by all tasks of a worker, so the politeness
//! limits, the connection pool and the DNS cache are shared too.
//!
//! # Layout
//! - `mod.rs`: [`CheckConfig`], [`Checker`] (an [`Asker`] and a [`Soft404`]), the retry loop
//! - `redirect.rs`: one attempt — HEAD then GET, redirects followed hop by hop
//! - `head.rs`: whether a host's HEAD can be believed, so each hop costs one request where it can
//! - `client.rs`: the [`Asker`], which owns the client, the host book, the limits and the
//!   host decisions, and one request through them
//! - `cut.rs`: cutting a check off only before its first request, never once one is sent
//! - `reply.rs`: what those hand back: a request's `Reply` or `Failure`, an `Attempt`
//! - `requests.rs`: the requests counted for Prometheus (`--metrics`)
//! - `hosts.rs`: the host book, everything this worker knows of each host in one entry, and
//!   the one rule for forgetting it
//! - `ratelimit.rs`: per-host concurrency, rate and adaptive pace (429s); the global in-flight
//!   limit; the fleet's pause
//! - `health.rs`: whether a host can be reached at all, decided once for the host
//! - `resolve.rs`: the DNS cache, which also applies the public-only filter; `dns.rs`: the
//!   small DNS client of `--dns-server`
//! - `address.rs`: which addresses count as public
//! - `retry.rs`: backoff and `Retry-After`
//! - `classify.rs`: statuses and errors into verdicts, the last attempt into the finding
//! - `accept.rs`: which statuses count as alive (`--accept`, `--accept-host`)
//! - `auth.rs`: per-host basic auth; `cookies.rs`: the cookie jar, read only
//! - `soft404/`: soft 404s (`--soft-404`): probes, fingerprints, the decision
//! - `page.rs`: reading a page's body for `--follow` (and a robots.txt)

mod accept;
mod address;
mod auth;
mod classify;
mod client;
mod cookies;
mod cut;
mod dns;
mod head;
mod health;
mod hosts;
mod page;
mod ratelimit;
mod redirect;
mod reply;
pub(crate) mod requests;
mod resolve;
mod retry;
mod soft404;

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crawler_queue::filter::UrlFilter;
use crawler_queue::MAX_DELAY;
pub use crawler_queue::{ErrorKind, Finding, Next, Verdict};
use reqwest::header::HeaderMap;
use url::Url;

pub use self::accept::StatusSet;
use self::address::any_address;
pub use self::address::is_public;
pub use self::auth::BasicAuth;
pub(crate) use self::classify::is_throttling;
use self::client::Asker;
pub use self::cookies::CookieJar;
pub use self::cut::unless_cut;
pub use self::health::HostDecision;
pub(crate) use self::hosts::RobotsCell;
pub use self::page::{PAGE_CAP, ROBOTS_CAP};
use self::redirect::{attempt, Ask};
use self::reply::{Attempt, Failure};
use self::retry::{next_step, Step};
use self::soft404::Soft404;
pub use self::soft404::{ProbeStore, TTL as SOFT_404_TTL};

/// How the checker asks. Defaults follow lychee where it has one (see `Default`).
#[derive(Debug, Clone)]
pub struct CheckConfig {
    /// Network time allowed for one attempt, redirects included (waits for limits excluded).
    pub timeout: Duration,
    /// Time allowed to establish a connection (DNS, TCP, TLS).
    pub connect_timeout: Duration,
    /// Extra attempts after a timeout, reset, 408, 429 or 5xx.
    pub retries: u32,
    /// Redirect hops followed before giving up with `redirects`.
    pub max_redirects: u32,
    /// Requests in flight to one host at most.
    pub host_concurrency: usize,
    /// Requests started per second per host at most (`f64::INFINITY`: no limit).
    pub host_rate: f64,
    /// Requests in flight over all hosts at most.
    pub concurrency: usize,
    /// Limits for particular hosts (the user's own servers), in place of `host_concurrency`
    /// and `host_rate`; by host name as in the URL (lower case, no port).
    pub host_limits: HashMap<String, HostLimit>,
    /// Names the crawler to the sites, so their operators know who is asking.
    pub user_agent: String,
    /// Accept invalid TLS certificates.
    pub insecure: bool,
    /// Refuse every address that is not globally routable (see [`is_public`]).
    pub public_only: bool,
    /// Longest `Retry-After` waited for in-process; a longer one ends the check with
    /// `retry_after` set, and the queue makes the URL due later.
    pub retry_after_cap: Duration,
    /// A host the server deferred further than this (a host-wide `Retry-After`) is not waited
    /// for: its checks end at once as `blocked`, due again at the time the server allows.
    pub defer_horizon: Duration,
    /// Ask this DNS server (UDP, then TCP) instead of the system's resolver (`--dns-server`).
    pub dns_server: Option<std::net::SocketAddr>,
    /// Sent with every request, to every host (`--header`); a name given here replaces the
    /// default of that name (`User-Agent` included).
    pub headers: HeaderMap,
    /// Credentials by host (lower case, no port): sent to that host only, on any hop that
    /// asks it, so never to another host after a redirect.
    pub basic_auth: HashMap<String, BasicAuth>,
    /// Headers by host (lower case, no port; `--host-header`): sent as `basic_auth` is, to
    /// that host only, on any hop that asks it; one replaces a `--header` of its name there.
    pub host_headers: HashMap<String, HeaderMap>,
    /// Cookies sent where they match (`--cookie-jar`); cookies sites set are not kept.
    pub cookies: Option<CookieJar>,
    /// Final statuses that count as alive, from any host; other 2xx are `error`.
    pub accept: StatusSet,
    /// More statuses that count as alive when this host (lower case, no port) gave the final
    /// answer.
    pub accept_hosts: HashMap<String, StatusSet>,
    /// Certificate authorities trusted besides webpki's roots and the system's (`--ca-cert`).
    pub ca_certs: Vec<reqwest::Certificate>,
    /// URLs left out by `--include`/`--exclude`: no request, the verdict `excluded`. The filter
    /// sees the URL as the queue holds it, as the seed's filter did.
    pub filter: UrlFilter,
    /// Compare alive pages with the host's answer to a path that cannot exist (`--soft-404`);
    /// a match is `dead`/`soft_404`.
    pub soft_404: bool,
}

/// The defaults of [`CheckConfig`], which the worker's options (`crawler-worker --help`) show
/// and take too.
pub mod defaults {
    use std::time::Duration;

    /// `--timeout`: one HTTP attempt, redirects included.
    pub const TIMEOUT: Duration = Duration::from_secs(20);
    /// `--connect-timeout`: DNS, TCP and TLS.
    pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
    /// `--retries`: in-process retries after a transient failure.
    pub const RETRIES: u32 = 2;
    /// `--max-redirects`: hops followed.
    pub const MAX_REDIRECTS: u32 = 10;
    /// `--host-concurrency`: requests in flight to one host.
    pub const HOST_CONCURRENCY: u32 = 8;
    /// `--host-rate`: requests started per second to one host.
    pub const HOST_RATE: f64 = 20.0;
    /// `--concurrency`: requests on the wire over all hosts.
    pub const CONCURRENCY: u32 = 512;
    /// `--max-retry-after`: the longest `Retry-After` waited for in-process.
    pub const RETRY_AFTER_CAP: Duration = Duration::from_secs(30);
    /// `--defer-horizon`: the queue's, one option for both.
    pub use crawler_queue::config::DEFAULT_DEFER_HORIZON as DEFER_HORIZON;
}

impl Default for CheckConfig {
    fn default() -> Self {
        Self {
            timeout: defaults::TIMEOUT,
            connect_timeout: defaults::CONNECT_TIMEOUT,
            retries: defaults::RETRIES,
            max_redirects: defaults::MAX_REDIRECTS,
            host_concurrency: defaults::HOST_CONCURRENCY as usize,
            host_rate: defaults::HOST_RATE,
            concurrency: defaults::CONCURRENCY as usize,
            host_limits: HashMap::new(),
            user_agent: user_agent(None),
            insecure: false,
            public_only: false,
            retry_after_cap: defaults::RETRY_AFTER_CAP,
            defer_horizon: defaults::DEFER_HORIZON,
            dns_server: None,
            headers: HeaderMap::new(),
            basic_auth: HashMap::new(),
            host_headers: HashMap::new(),
            cookies: None,
            accept: StatusSet::success(),
            accept_hosts: HashMap::new(),
            ca_certs: Vec::new(),
            filter: UrlFilter::default(),
            soft_404: false,
        }
    }
}

/// `crawler/VERSION`, and `(+CONTACT)` when the operator gives a way to reach them
/// (`--contact`): the crawler names itself, and points to nobody it does not speak for.
pub fn user_agent(contact: Option<&str>) -> String {
    let name = concat!("crawler/", env!("CARGO_PKG_VERSION"));
    match contact {
        Some(contact) => format!("{name} (+{contact})"),
        None => name.to_owned(),
    }
}

/// One host's politeness limits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostLimit {
    /// Requests in flight at most.
    pub concurrency: usize,
    /// Requests started per second at most (`f64::INFINITY`: no limit).
    pub rate: f64,
}

/// Why a [`Checker`] could not be built.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("invalid check configuration: {0}")]
    InvalidConfig(&'static str),
    #[error("cannot build the http client")]
    Client(#[source] reqwest::Error),
}

/// Checks URLs; cheap to clone, and meant to be shared by every task of a worker.
#[derive(Clone)]
pub struct Checker {
    /// What asks the servers, and all it knows of them (`client.rs`).
    asker: Arc<Asker>,
    /// Soft-404 detection (`--soft-404`), asking through `asker`.
    soft404: Arc<Soft404>,
}

impl Checker {
    pub fn new(config: CheckConfig) -> Result<Checker, CheckError> {
        let allow = if config.public_only {
            is_public
        } else {
            any_address
        };
        Self::with_address_policy(config, allow)
    }

    /// Like [`Checker::new`], with `allow` in place of [`is_public`] when `public_only` is on.
    /// Tests use it: every server they can start is on loopback, which is never public.
    #[doc(hidden)]
    pub fn with_address_policy(
        config: CheckConfig,
        allow: fn(IpAddr) -> bool,
    ) -> Result<Checker, CheckError> {
        validate(&config)?;
        let allow = if config.public_only {
            allow
        } else {
            any_address
        };
        let soft404 = Soft404 {
            on: config.soft_404,
            ..Soft404::default()
        };
        let asker = Asker::new(config, allow).map_err(CheckError::Client)?;
        Ok(Checker {
            asker: Arc::new(asker),
            soft404: Arc::new(soft404),
        })
    }

    /// Takes in what the fleet's `hosts` row says of a host, when it changed since last read
    /// (`hosts.rs`: [`hosts::Host::hear`]).
    pub fn hear_of_host(&self, row: &crawler_queue::HostState) {
        self.asker.hosts.host(&row.host).hear(row, MAX_DELAY);
    }

    /// Spaces the starts of `host`'s requests at least `delay` apart (robots.txt's
    /// `Crawl-delay`): a cap under `--host-rate` and the adaptive pace.
    pub fn crawl_delay(&self, host: &str, delay: Duration) {
        self.asker.hosts.host(host).limits.crawl_delay(delay);
    }

    /// The robots.txt of `origin` (of `host`), loaded once by the first check that needs it
    /// (`sites/robots.rs`), kept with the host.
    pub(crate) fn robots_of(&self, host: &str, origin: &str) -> RobotsCell {
        self.asker.hosts.host(host).robots(origin)
    }

    /// Whether `checks` of `host` (`errors` of them failures) are counted for the fleet: the
    /// host is troubled (`hosts.rs`: [`hosts::Host::troubled`]).
    pub(crate) fn host_troubled(&self, host: &str, checks: u32, errors: u32) -> bool {
        self.asker.hosts.host(host).troubled(checks, errors)
    }

    /// The paces to tell the fleet: those changed since last told (`hosts.rs`).
    pub(crate) fn pace_changes(&self) -> Vec<crawler_queue::HostPace> {
        self.asker.hosts.pace_changes()
    }

    /// Pauses or resumes every request of this worker (`crawler-reap --pause`): while paused
    /// none starts; those on the wire finish, and the checks waiting keep waiting.
    pub fn pause(&self, paused: bool) {
        self.asker.limits.pause(paused);
    }

    /// Hosts decided unreachable since the last call, for the queue to write.
    pub fn take_host_decisions(&self) -> Vec<HostDecision> {
        self.asker.decisions.take_decisions()
    }

    /// Puts back a decision the queue could not write, to be taken again.
    pub fn retake_host_decision(&self, decision: HostDecision) {
        self.asker.decisions.retake(decision);
    }

    /// Hosts the fleet knew unreachable that answered since the last call.
    pub fn take_host_recoveries(&self) -> Vec<String> {
        self.asker.decisions.take_recoveries()
    }

    /// Whether this worker has room on the wire (a quarter of `--concurrency` free at least).
    pub fn has_room(&self) -> bool {
        self.asker.limits.has_room()
    }

    /// Hosts with more checks waiting than they can start within `backlog`.
    pub fn backlogged_hosts(&self, backlog: Duration) -> Vec<String> {
        self.asker.hosts.backlogged(backlog)
    }

    /// Hosts decided unreachable, suspect, throttled and deferred now.
    pub fn host_counts(&self) -> HostCounts {
        let (unreachable, suspect) = self.asker.hosts.reach_counts();
        let paces = self.asker.hosts.pace_reports();
        HostCounts {
            unreachable,
            suspect,
            throttled: paces.iter().filter(|p| p.rate.is_some()).count(),
            deferred: paces.iter().filter(|p| p.deferred.is_some()).count(),
        }
    }

    /// Shares soft-404 probes through `store` (the database): a host's probe is made once
    /// per fleet, and reused by whichever worker holds the host next.
    pub fn share_probes(&self, store: Arc<dyn ProbeStore>) {
        self.soft404.source.share_in(store);
    }

    /// Checks one URL, retries included, and says what was found.
    pub async fn check(&self, url: &str) -> Finding {
        self.check_keeping(url, None).await.0
    }

    /// [`Checker::check`]; with `reading`, every hop is a GET and the final answer's body
    /// comes back too, when it is what `reading` wants (`page.rs`).
    async fn check_keeping(
        &self,
        url: &str,
        reading: Option<page::Reading>,
    ) -> (Finding, Option<Vec<u8>>) {
        let started = Instant::now();
        let seeded = url;
        if !self.asker.config.filter.allows(url) {
            return (Finding::excluded(), None);
        }
        let url = match self.start_url(url) {
            Ok(url) => url,
            Err(failure) => {
                let finding = Attempt::failed(failure).into_finding(0, started.elapsed(), None);
                return (finding, None);
            }
        };
        let probe = match self.soft404.host_probe(&self.asker, &url).await {
            Ok(probe) => probe,
            Err(wait) => return (deferred_by_server(wait), None),
        };
        let mut attempts = 0;
        let mut ask = Ask {
            keep_body: probe.is_some() || reading.is_some(),
            get_first: false,
        };
        loop {
            attempts += 1;
            let attempt = page::scoped(reading, attempt(&self.asker, &url, ask)).await;
            if let Some(wait) = attempt.busy() {
                return (deferred_by_server(wait), None);
            }
            match next_step(&attempt, attempts, &self.asker.config) {
                Step::Retry(wait) => {
                    // A GET decides whatever the answer: a retry asks once, not HEAD then GET.
                    ask.get_first = true;
                    tokio::time::sleep(wait).await
                }
                Step::Stop { retry_after } => {
                    let body = reading.and_then(|_| page::body_of(&attempt));
                    let soft = match &probe {
                        // Boxed, as the probe is (`Soft404::host_probe`): only `--soft-404` asks.
                        Some(p) => {
                            match Box::pin(self.soft404.of(&self.asker, &url, &attempt, p)).await {
                                Ok(soft) => soft,
                                Err(wait) => return (deferred_by_server(wait), None),
                            }
                        }
                        None => None,
                    };
                    let finding = attempt.into_finding(attempts, started.elapsed(), retry_after);
                    let finding = self.soft404.finding(seeded, finding, soft).await;
                    return (finding, body);
                }
            }
        }
    }
}

impl Checker {
    /// The URL to start from, or why it cannot be asked at all (then no attempt is made).
    fn start_url(&self, url: &str) -> Result<Url, Failure> {
        let mut url = Url::parse(url.trim()).map_err(|_| Failure::Protocol)?;
        url.set_fragment(None);
        redirect::guard(self.asker.allow, &url)?;
        Ok(url)
    }
}

/// How many hosts are in each state, for the progress line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostCounts {
    pub unreachable: usize,
    pub suspect: usize,
    pub throttled: usize,
    pub deferred: usize,
}

/// The finding of a site not checked because the server deferred its whole host for `wait`,
/// past the horizon: `blocked` now, due again when the server allows (the queue keeps a delay
/// past its horizon as the next check, not as a retry).
fn deferred_by_server(wait: Duration) -> Finding {
    let wait = wait.min(MAX_DELAY);
    let until = httpdate::fmt_http_date(std::time::SystemTime::now() + wait);
    Finding::blocked_for(wait, format!("deferred by the server until {until}"))
}

/// One request in about 17 minutes; below this the per-request interval stops making sense.
const MIN_HOST_RATE: f64 = 0.001;

fn validate(config: &CheckConfig) -> Result<(), CheckError> {
    let fail = |why| Err(CheckError::InvalidConfig(why));
    if config.timeout.is_zero() || config.connect_timeout.is_zero() {
        return fail("timeouts must be positive");
    }
    if config.host_concurrency == 0 || config.concurrency == 0 {
        return fail("concurrency limits must be at least 1");
    }
    let limits = config.host_limits.values();
    let rates = std::iter::once(config.host_rate).chain(limits.clone().map(|l| l.rate));
    if rates
        .into_iter()
        .any(|rate| rate.is_nan() || rate < MIN_HOST_RATE)
    {
        return fail("the host rate must be at least 0.001 requests per second");
    }
    if limits.into_iter().any(|l| l.concurrency == 0) {
        return fail("concurrency limits must be at least 1");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_configuration_is_valid() {
        assert!(Checker::new(CheckConfig::default()).is_ok());
    }

    #[test]
    fn a_zero_or_meaningless_rate_is_refused() {
        for host_rate in [0.0, -1.0, f64::NAN, 1e-300] {
            let config = CheckConfig {
                host_rate,
                ..CheckConfig::default()
            };
            assert!(matches!(
                Checker::new(config),
                Err(CheckError::InvalidConfig(_))
            ));
        }
        let unlimited = CheckConfig {
            host_rate: f64::INFINITY,
            ..CheckConfig::default()
        };
        assert!(Checker::new(unlimited).is_ok());
    }

    #[test]
    fn checks_can_run_on_any_task() {
        fn assert_send<T: Send + 'static>(_: T) {}
        let checker = Checker::new(CheckConfig::default()).unwrap();
        assert_send(async move { checker.check("http://a.example/").await });
    }

    #[tokio::test]
    async fn a_string_that_is_not_a_url_is_a_protocol_error_without_attempts() {
        let checker = Checker::new(CheckConfig::default()).unwrap();
        let finding = checker.check("not a url").await;
        assert_eq!(finding.verdict, Verdict::Error);
        assert_eq!(finding.error_kind, Some(ErrorKind::Protocol));
        assert_eq!(finding.attempts, 0);
        let finding = checker.check("ftp://a.example/file").await;
        assert_eq!(finding.error_kind, Some(ErrorKind::Protocol));
    }
}
