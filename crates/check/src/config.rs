//! How the checker asks: [`CheckConfig`], its [`defaults`], a host's own limits
//! ([`HostLimit`]), and the check that a configuration makes sense ([`validate`]). Every part
//! of the checker takes what it needs of it from here, never from the crate's root.

use std::collections::HashMap;
use std::time::Duration;

use crawler_verdict::UrlFilter;
use reqwest::header::HeaderMap;

use crate::accept::StatusSet;
use crate::auth::BasicAuth;
use crate::cookies::CookieJar;
use crate::error::CheckError;

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
    /// Requests in flight to one server address at most, over every name it serves and for
    /// the whole fleet (`usize::MAX`: no limit; `addresses.rs`).
    pub ip_concurrency: usize,
    /// Requests started per second to one server address at most, likewise
    /// (`f64::INFINITY`: no limit).
    pub ip_rate: f64,
    /// Limits for particular hosts (the user's own servers), in place of `host_concurrency`
    /// and `host_rate`; by host name as in the URL (lower case, no port).
    pub host_limits: HashMap<String, HostLimit>,
    /// Names the crawler to the sites, so their operators know who is asking.
    pub user_agent: String,
    /// Accept invalid TLS certificates.
    pub insecure: bool,
    /// Refuse every address that is not globally routable (see [`is_public`](crate::is_public)).
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
    /// How many hosts' worth of the host limits a server address gets when `--ip-concurrency`
    /// and `--ip-rate` are not given (the worker multiplies the host limits given): a server of
    /// one name never waits for its address, and a hundred names on one server get four times
    /// a host's limit rather than a hundred.
    pub const HOSTS_PER_ADDRESS: usize = 4;
    /// `--ip-concurrency` at the default host limits: requests in flight to one server address,
    /// for the whole fleet.
    pub const IP_CONCURRENCY: u32 = HOSTS_PER_ADDRESS as u32 * HOST_CONCURRENCY;
    /// `--ip-rate` at the default host limits: requests started per second to one server
    /// address, for the whole fleet.
    pub const IP_RATE: f64 = HOSTS_PER_ADDRESS as f64 * HOST_RATE;
    /// `--max-retry-after`: the longest `Retry-After` waited for in-process.
    pub const RETRY_AFTER_CAP: Duration = Duration::from_secs(30);
    /// `--defer-horizon`: the queue's, one option for both.
    pub use crawler_verdict::DEFER_HORIZON;
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
            ip_concurrency: defaults::IP_CONCURRENCY as usize,
            ip_rate: defaults::IP_RATE,
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

/// One request in about 17 minutes; below this the per-request interval stops making sense.
const MIN_HOST_RATE: f64 = 0.001;

pub(crate) fn validate(config: &CheckConfig) -> Result<(), CheckError> {
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
    if config.ip_concurrency == 0 {
        return fail("concurrency limits must be at least 1");
    }
    if config.ip_rate.is_nan() || config.ip_rate < MIN_HOST_RATE {
        return fail("the address rate must be at least 0.001 requests per second");
    }
    if limits.into_iter().any(|l| l.concurrency == 0) {
        return fail("concurrency limits must be at least 1");
    }
    Ok(())
}
