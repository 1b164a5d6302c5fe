//! The worker's options (`crawler-worker --help`) and the validated configuration built from them.

use std::net::SocketAddr;
use std::time::Duration;

use crawler_cli::bounds::{parse_id, DurationRange, INTERVAL};
use crawler_cli::duration_default;
use crawler_cli::{DatabaseArgs, FilterArgs, LogArgs, ReapArgs};
use crawler_queue::config::{DEFAULT_MAX_ATTEMPTS, DEFAULT_RETRY_DELAY};
use crawler_queue::{ClaimMethod, Confirm, QueueConfig};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use crate::options::{
    by_host, parse_accept_host, parse_basic_auth, parse_ca_cert, parse_contact, parse_header,
    parse_host_header, parse_user_agent, quiet, read_cookie_jar, CaBundle,
};
use crawler_check::{defaults, user_agent, BasicAuth, CheckConfig, StatusSet};

/// `--lease`: extended every third, and a claim must outlive a slow database round trip.
const LEASE: DurationRange = DurationRange::at_least(Duration::from_secs(1));
/// `--timeout`, `--connect-timeout`.
const TIMEOUT: DurationRange = DurationRange::at_least(Duration::from_millis(1));
/// `--retry-delay`: shorter would bring a failing site straight back.
const RETRY_DELAY: DurationRange = DurationRange::at_least(Duration::from_millis(100));
/// `--grace`, `--max-retry-after`: zero means not waiting at all.
const WAIT: DurationRange = DurationRange::at_least(Duration::ZERO);

/// Claims batches of sites from the queue and checks them over HTTP, until stopped.
#[derive(Debug, clap::Parser)]
#[command(name = "crawler-worker", version, long_about = None, args_override_self = true)]
pub struct Args {
    #[command(flatten)]
    pub database: DatabaseArgs,

    /// -q, -v, --log-format.
    #[command(flatten)]
    pub log: LogArgs,

    /// This worker's name in the queue, 1 to 255 characters. Default: HOST:PID.
    #[arg(long, env = "CRAWLER_WORKER_ID", value_parser = parse_id)]
    pub id: Option<String>,

    /// Requests on the wire at once, over all hosts; a check waiting for its host (its
    /// concurrency, rate or backoff) holds none, so this bounds sockets, not politeness.
    #[arg(long, env = "CRAWLER_CONCURRENCY", default_value_t = defaults::CONCURRENCY, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub concurrency: u32,

    /// Sites per claim. The next batch is claimed while this one is checked.
    #[arg(long, env = "CRAWLER_BATCH_SIZE", default_value_t = 500, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub batch_size: u32,

    /// How long a claim is held without news from this worker; extended every third of it
    /// while the worker works. A worker killed mid-batch delays its sites by at most this.
    /// Between 1s and 30d.
    #[arg(long, env = "CRAWLER_LEASE", default_value = "2m", value_parser = LEASE.parser())]
    pub lease: Duration,

    /// Time given to checks in flight to finish after SIGINT/SIGTERM; the rest is given back.
    /// At most 30d.
    #[arg(long, env = "CRAWLER_GRACE", default_value = "10s", value_parser = WAIT.parser())]
    pub grace: Duration,

    /// How to claim on MySQL/MariaDB: update-then-select (one UPDATE … LIMIT, then a SELECT by
    /// claim token), or skip-locked (SELECT … FOR UPDATE SKIP LOCKED, then UPDATE, in one
    /// transaction). SQLite always uses update-then-select.
    #[arg(long, env = "CRAWLER_CLAIM", value_enum, default_value_t = ClaimMethod::default().into())]
    pub claim: Claim,

    /// Exit 0 once every site in the queue has a verdict, instead of waiting for more.
    #[arg(long, env = "CRAWLER_DRAIN")]
    pub drain: bool,

    /// How often the worker says it is alive. Between 100ms and 30d.
    #[arg(long, env = "CRAWLER_HEARTBEAT", default_value = "10s", value_parser = INTERVAL.parser())]
    pub heartbeat: Duration,

    /// --dead-after, as crawler-reap takes it.
    #[command(flatten)]
    pub reap: ReapArgs,

    /// How often the fleet reaps expired and abandoned claims; whichever process holds the
    /// reaper's lease does it, one per interval however many run. Between 100ms and 30d.
    #[arg(long, env = "CRAWLER_REAP_EVERY", default_value = "30s", value_parser = INTERVAL.parser())]
    pub reap_every: Duration,

    /// Checks of a site ending in a transient failure (timeout, reset, 408, 429, 5xx) before
    /// that failure is its verdict; each check already retries in-process (--retries).
    #[arg(long, env = "CRAWLER_ATTEMPTS", default_value_t = DEFAULT_MAX_ATTEMPTS, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub attempts: u32,

    /// Wait before checking again a site whose check failed transiently (after its in-process
    /// retries); doubles each time. Between 100ms and 30d.
    #[arg(long, env = "CRAWLER_RETRY_DELAY", default_value = duration_default!(DEFAULT_RETRY_DELAY), value_parser = RETRY_DELAY.parser())]
    pub retry_delay: Duration,

    /// Time allowed for one HTTP attempt, redirects included. Between 1ms and 30d.
    #[arg(long, env = "CRAWLER_TIMEOUT", default_value = duration_default!(defaults::TIMEOUT), value_parser = TIMEOUT.parser())]
    pub timeout: Duration,

    /// Time allowed to connect (DNS, TCP, TLS). Between 1ms and 30d.
    #[arg(long, env = "CRAWLER_CONNECT_TIMEOUT", default_value = duration_default!(defaults::CONNECT_TIMEOUT), value_parser = TIMEOUT.parser())]
    pub connect_timeout: Duration,

    /// In-process retries after a reset, 408, 429 or 5xx (a timeout once at most; never after
    /// DNS failures or refusals, which are decided for the host), with exponential backoff and
    /// jitter.
    #[arg(long, env = "CRAWLER_RETRIES", default_value_t = defaults::RETRIES)]
    pub retries: u32,

    /// Redirect hops followed before the verdict is error/redirects.
    #[arg(long, env = "CRAWLER_MAX_REDIRECTS", default_value_t = defaults::MAX_REDIRECTS)]
    pub max_redirects: u32,

    /// Requests in flight to one host at most.
    #[arg(long, env = "CRAWLER_HOST_CONCURRENCY", default_value_t = defaults::HOST_CONCURRENCY, value_parser = clap::value_parser!(u32).range(1..))]
    pub host_concurrency: u32,

    /// Requests per second to one host at most; slowed further while a host answers 429/503.
    #[arg(long, env = "CRAWLER_HOST_RATE", default_value_t = defaults::HOST_RATE)]
    pub host_rate: f64,

    /// Requests in flight to one server address at most, over every host name on it and for the
    /// whole fleet (the workers asking it share this); on top of the per-host limits. 0: no
    /// limit. [default: four hosts' worth, 4 × --host-concurrency]
    #[arg(long, env = "CRAWLER_IP_CONCURRENCY")]
    pub ip_concurrency: Option<u32>,

    /// Requests per second to one server address at most, over every host name on it and for
    /// the whole fleet (the workers asking it share this); on top of the per-host limits. 0:
    /// no limit. [default: four hosts' worth, 4 × --host-rate]
    #[arg(long, env = "CRAWLER_IP_RATE")]
    pub ip_rate: Option<f64>,

    /// Per-host limits in place of --host-concurrency and --host-rate, for your own servers:
    /// a file of lines `HOST CONCURRENCY RATE` (`#` comments). Give every worker the same file.
    #[arg(long, env = "CRAWLER_HOST_LIMITS", value_name = "FILE")]
    pub host_limits: Option<String>,

    /// Longest Retry-After waited for in-process; a longer one gives the site back to the
    /// queue, due after that time. At most 30d.
    #[arg(long, env = "CRAWLER_MAX_RETRY_AFTER", default_value = duration_default!(defaults::RETRY_AFTER_CAP), value_parser = WAIT.parser())]
    pub max_retry_after: Duration,

    /// A site, or a whole host, the server defers further than this (a long Retry-After, or
    /// the retry backoff) gets its verdict now (blocked for 429, error for 503; "deferred by
    /// the server until …" for the host's other sites), with the time the server allows kept
    /// as its next check, instead of staying pending; so --drain ends. Every delay from a
    /// server is capped at 30 days. 1s to 30d.
    #[arg(long, env = "CRAWLER_DEFER_HORIZON", default_value = duration_default!(defaults::DEFER_HORIZON), value_parser = LEASE.parser())]
    pub defer_horizon: Duration,

    /// Resolve names with this DNS server (IP or IP:PORT, port 53 by default; A and AAAA over
    /// UDP) instead of the system's resolver.
    #[arg(long, env = "CRAWLER_DNS_SERVER", value_name = "IP[:PORT]", value_parser = parse_dns_server)]
    pub dns_server: Option<SocketAddr>,

    /// The User-Agent header. Default: crawler/VERSION, and (+URL) with --contact.
    #[arg(long, env = "CRAWLER_USER_AGENT", value_parser = parse_user_agent)]
    pub user_agent: Option<String>,

    /// Accept invalid TLS certificates.
    #[arg(long, env = "CRAWLER_INSECURE")]
    pub insecure: bool,

    /// Refuse loopback, private, link-local (cloud metadata), multicast and unspecified
    /// addresses, on every redirect hop: for lists of untrusted URLs.
    #[arg(long, env = "CRAWLER_PUBLIC_ONLY")]
    pub public_only: bool,

    /// Where site operators can reach whoever runs the crawl (an http, https or mailto URL):
    /// the User-Agent becomes crawler/VERSION (+URL). Not with --user-agent.
    #[arg(long, env = "CRAWLER_CONTACT", value_name = "URL", value_parser = parse_contact, conflicts_with = "user_agent")]
    pub contact: Option<String>,

    /// A header sent with every request, to every host, as 'NAME: VALUE'; repeatable. It
    /// replaces a default of that name (User-Agent included). For credentials, prefer
    /// --basic-auth, which goes to one host. In CRAWLER_HEADER, one header a line.
    #[arg(long = "header", env = "CRAWLER_HEADER", value_name = "NAME: VALUE", value_parser = quiet(parse_header), value_delimiter = '\n', hide_env_values = true)]
    pub headers: Vec<(HeaderName, HeaderValue)>,

    /// A header for one host only, 'HOST=NAME: VALUE' (the host in lower case, without port);
    /// repeatable. Sent to that host alone, on every request and redirect hop that asks it,
    /// never to another host, not even after a redirect to one: for an API token. Never
    /// printed. In CRAWLER_HOST_HEADER, one a line.
    #[arg(long = "host-header", env = "CRAWLER_HOST_HEADER", value_name = "HOST=NAME: VALUE", value_parser = quiet(parse_host_header), value_delimiter = '\n', hide_env_values = true)]
    pub host_headers: Vec<(String, (HeaderName, HeaderValue))>,

    /// Basic auth for one host, HOST=USER:PASSWORD (the host in lower case, without port);
    /// repeatable. Sent to that host only, never to another after a redirect; a URL with its
    /// own user name keeps it. Never printed. Commas separate entries, here and in
    /// CRAWLER_BASIC_AUTH, so a password cannot hold one.
    #[arg(long, env = "CRAWLER_BASIC_AUTH", value_name = "HOST=USER:PASSWORD", value_parser = quiet(parse_basic_auth), value_delimiter = ',', hide_env_values = true)]
    pub basic_auth: Vec<(String, BasicAuth)>,

    /// Cookies to send where they match, from a Netscape cookies.txt (as curl -c writes it).
    /// Read once at start; cookies that sites set are not kept, and the file is never written.
    #[arg(long, env = "CRAWLER_COOKIE_JAR", value_name = "FILE")]
    pub cookie_jar: Option<String>,

    /// Final statuses that count as alive, from any host: codes and inclusive ranges, as
    /// lychee takes them (200..=299,403; A..B leaves B out). Other 2xx become error; redirects
    /// are followed whatever it says.
    #[arg(
        long,
        env = "CRAWLER_ACCEPT",
        value_name = "CODES",
        default_value_t = StatusSet::success()
    )]
    pub accept: StatusSet,

    /// More statuses that count as alive when this host gave the final answer, in addition to
    /// --accept: HOST=CODES (intranet.example=403,429); repeatable. In CRAWLER_ACCEPT_HOST,
    /// separated by spaces.
    #[arg(long, env = "CRAWLER_ACCEPT_HOST", value_name = "HOST=CODES", value_parser = parse_accept_host, value_delimiter = ' ')]
    pub accept_host: Vec<(String, StatusSet)>,

    /// Also trust the certificate authorities in this PEM file (one or more certificates),
    /// such as a corporate CA. Webpki's roots and the system's are trusted anyway.
    #[arg(long, env = "CRAWLER_CA_CERT", value_name = "FILE", value_parser = parse_ca_cert)]
    pub ca_cert: Option<CaBundle>,

    /// --include/--exclude: sites left out get no request, and the verdict excluded.
    #[command(flatten)]
    pub filter: FilterArgs,

    /// Serve Prometheus metrics at http://ADDR/metrics, ADDR an IP address and port
    /// (127.0.0.1:9100); bound there only. Off by default. Not authenticated: keep it on
    /// loopback or a private network.
    #[arg(long, env = "CRAWLER_METRICS", value_name = "ADDR")]
    pub metrics: Option<SocketAddr>,

    /// Find soft 404s: dead pages that answer 200 (a "not found" template, a redirect home or
    /// to a login page, an app shell for every path). Each host is asked once, or twice when
    /// it answers 200 with a page (within its limits, shared by the fleet for 24 h), for a
    /// path at its root that cannot exist; a page's own directory and extension are probed
    /// too only when the page looks missing (its title, noindex, a redirect) and the host's
    /// probe did not match it. An alive page that matches a probe's answer is dead, error kind
    /// soft_404, with what it matched in the report's detail (a site alive at its last check
    /// is checked again 10 min later to confirm). Pages are asked with GET (no HEAD) and up to
    /// 64 KiB of a text body is read. Off by default.
    #[arg(long, env = "CRAWLER_SOFT_404")]
    pub soft_404: bool,

    /// Confirm dead sites over time, as N:SPAN (3:3d is InternetArchiveBot's rule): a dead
    /// site is checked again every SPAN/N until it has N dead results in a row spanning SPAN,
    /// and is then confirmed (crawler-report --dead --confirmed, --fail-on confirmed-dead); an
    /// alive or other result starts its streak over. The reaper (any worker, or crawler-reap)
    /// makes it due. Give every worker the same policy. Off by default.
    #[arg(long, env = "CRAWLER_CONFIRM", value_name = "N:SPAN")]
    pub confirm: Option<Confirm>,

    /// Look up an archived copy of each dead site (the closest to when it was last alive) in
    /// a Wayback-compatible availability API (--archive-api), for the reports' archived_url.
    /// One worker of the fleet at a time asks, at --archive-rate; a URL is asked once; the
    /// checks never wait for it. A worker that drains looks up what is left before it exits.
    #[arg(long, env = "CRAWLER_ARCHIVE_LOOKUP")]
    pub archive_lookup: bool,

    /// The availability API --archive-lookup asks (GET URL?url=…&timestamp=…).
    #[arg(
        long,
        env = "CRAWLER_ARCHIVE_API",
        value_name = "URL",
        default_value = "https://archive.org/wayback/available"
    )]
    pub archive_api: url::Url,

    /// Requests per second to the archive at most, for the whole fleet.
    #[arg(long, env = "CRAWLER_ARCHIVE_RATE", default_value_t = 1.0)]
    pub archive_rate: f64,
}

/// `--claim`: [`ClaimMethod`] as the command line names it (the queue crate has no clap).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Claim {
    /// One autocommit `UPDATE … ORDER BY … LIMIT n` stamps a fresh token, then a `SELECT` by
    /// that token reads the batch. Concurrent claimers wait for each other's row locks.
    UpdateThenSelect,
    /// `SELECT … FOR UPDATE SKIP LOCKED`, then `UPDATE … WHERE id IN (…)`, in one
    /// transaction: concurrent claimers skip each other's rows instead of waiting.
    SkipLocked,
}

impl From<ClaimMethod> for Claim {
    fn from(method: ClaimMethod) -> Self {
        match method {
            ClaimMethod::UpdateThenSelect => Claim::UpdateThenSelect,
            ClaimMethod::SkipLocked => Claim::SkipLocked,
        }
    }
}

impl From<Claim> for ClaimMethod {
    fn from(claim: Claim) -> Self {
        match claim {
            Claim::UpdateThenSelect => ClaimMethod::UpdateThenSelect,
            Claim::SkipLocked => ClaimMethod::SkipLocked,
        }
    }
}

/// `--dns-server`: an IP address, with a port or 53.
fn parse_dns_server(s: &str) -> Result<SocketAddr, String> {
    s.parse::<SocketAddr>()
        .or_else(|_| {
            s.parse::<std::net::IpAddr>()
                .map(|ip| SocketAddr::new(ip, 53))
        })
        .map_err(|_| format!("not an IP address or IP:PORT: {s:?}"))
}

/// Everything a worker runs with, validated.
#[derive(Clone, Debug)]
pub struct WorkerConfig {
    pub id: String,
    pub batch_size: u32,
    pub lease: Duration,
    pub grace: Duration,
    pub drain: bool,
    pub heartbeat: Duration,
    pub dead_after: Duration,
    pub reap_every: Duration,
    /// Where to serve `/metrics`; `None`: no metrics.
    pub metrics: Option<SocketAddr>,
    /// `--archive-lookup`'s API and rate; `None`: no lookups.
    pub archive: Option<crate::archive::ArchiveConfig>,
    pub queue: QueueConfig,
    pub check: CheckConfig,
}

impl Args {
    /// Checks the options against each other and builds the configuration.
    pub fn into_config(mut self) -> Result<(crawler_queue::DatabaseUrl, WorkerConfig), String> {
        self.reap.check_heartbeat(self.heartbeat)?;
        if self.host_rate.is_nan() || self.host_rate < 0.001 {
            return Err("--host-rate must be at least 0.001 (one request per 1000 s)".into());
        }
        if self
            .ip_rate
            .is_some_and(|r| r.is_nan() || (r != 0.0 && r < 0.001))
        {
            return Err("--ip-rate must be 0 (no limit) or at least 0.001".into());
        }
        if self.archive_rate.is_nan() || !(0.001..=1000.0).contains(&self.archive_rate) {
            return Err("--archive-rate must be between 0.001 and 1000".into());
        }
        if !matches!(self.archive_api.scheme(), "http" | "https") {
            return Err("--archive-api must be an http or https URL".into());
        }
        let mut check = CheckConfig {
            timeout: self.timeout,
            connect_timeout: self.connect_timeout,
            retries: self.retries,
            max_redirects: self.max_redirects,
            host_concurrency: self.host_concurrency as usize,
            host_rate: self.host_rate,
            concurrency: self.concurrency as usize,
            // Unset: four hosts' worth of the host limits given, so that a server of one name
            // never waits for its address whatever its host limits are.
            ip_concurrency: match self.ip_concurrency {
                Some(0) => usize::MAX,
                Some(n) => n as usize,
                None => {
                    (self.host_concurrency as usize).saturating_mul(defaults::HOSTS_PER_ADDRESS)
                }
            },
            ip_rate: match self.ip_rate {
                Some(0.0) => f64::INFINITY,
                Some(rate) => rate,
                None => self.host_rate * defaults::HOSTS_PER_ADDRESS as f64,
            },
            insecure: self.insecure,
            public_only: self.public_only,
            retry_after_cap: self.max_retry_after,
            defer_horizon: self.defer_horizon,
            dns_server: self.dns_server,
            soft_404: self.soft_404,
            ..CheckConfig::default()
        };
        self.request_options(&mut check)?;
        if let Some(path) = &self.host_limits {
            check.host_limits = crate::host_limits::read(path)?;
        }
        let config = WorkerConfig {
            id: self.id.unwrap_or_else(crawler_cli::default_id),
            batch_size: self.batch_size,
            lease: self.lease,
            grace: self.grace,
            drain: self.drain,
            heartbeat: self.heartbeat,
            dead_after: self.reap.dead_after,
            reap_every: self.reap_every,
            metrics: self.metrics,
            archive: self.archive_lookup.then(|| crate::archive::ArchiveConfig {
                api: self.archive_api.clone(),
                rate: self.archive_rate,
            }),
            queue: QueueConfig {
                claim: self.claim.into(),
                max_attempts: self.attempts,
                retry_delay: self.retry_delay,
                defer_horizon: self.defer_horizon,
                confirm: self.confirm,
            },
            check,
        };
        Ok((self.database.database_url, config))
    }

    /// How to ask: the user agent, headers, credentials, cookies, accepted statuses, CAs.
    fn request_options(&mut self, check: &mut CheckConfig) -> Result<(), String> {
        check.user_agent = match self.user_agent.take() {
            Some(agent) => agent,
            None => user_agent(self.contact.as_deref()),
        };
        check.headers = std::mem::take(&mut self.headers).into_iter().collect();
        check.basic_auth = by_host("--basic-auth", std::mem::take(&mut self.basic_auth))?;
        for (host, (name, value)) in std::mem::take(&mut self.host_headers) {
            let headers: &mut HeaderMap = check.host_headers.entry(host).or_default();
            headers.append(name, value);
        }
        check.accept = self.accept.clone();
        check.accept_hosts = by_host("--accept-host", std::mem::take(&mut self.accept_host))?;
        check.ca_certs = self
            .ca_cert
            .take()
            .map(|bundle| bundle.0)
            .unwrap_or_default();
        check.cookies = self
            .cookie_jar
            .as_deref()
            .map(read_cookie_jar)
            .transpose()?;
        check.filter = std::mem::take(&mut self.filter).into();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    fn config(args: &[&str]) -> Result<WorkerConfig, String> {
        let args = Args::try_parse_from([&["crawler-worker"], args].concat()).unwrap();
        args.into_config().map(|(_, config)| config)
    }

    #[test]
    fn the_defaults_are_valid() {
        assert!(config(&[]).is_ok());
    }

    #[test]
    fn metrics_are_off_unless_given_an_address_and_a_bad_one_names_the_option() {
        assert_eq!(config(&[]).unwrap().metrics, None);
        let on = config(&["--metrics", "127.0.0.1:9100"]).unwrap().metrics;
        assert_eq!(on, Some("127.0.0.1:9100".parse().unwrap()));
        for bad in ["localhost:9100", "9100", "127.0.0.1", "[::1]"] {
            let error = Args::try_parse_from(["crawler-worker", "--metrics", bad]).unwrap_err();
            assert!(
                error.to_string().contains("--metrics <ADDR>"),
                "{bad}: {error}"
            );
        }
    }

    #[test]
    fn an_address_gets_four_hosts_worth_of_the_host_limits_given_unless_told() {
        let limits = |args: &[&str]| {
            let check = config(args).unwrap().check;
            (check.ip_concurrency, check.ip_rate)
        };
        assert_eq!(limits(&[]), (32, 80.0));
        // A crawl of one's own server at a high host rate is not held to the default's 80/s.
        let fast = ["--host-concurrency", "10", "--host-rate", "1000000"];
        assert_eq!(limits(&fast), (40, 4_000_000.0));
        let given = [
            "--host-rate",
            "1000",
            "--ip-concurrency",
            "5",
            "--ip-rate",
            "30",
        ];
        assert_eq!(limits(&given), (5, 30.0));
        assert_eq!(
            limits(&["--ip-concurrency", "0", "--ip-rate", "0"]),
            (usize::MAX, f64::INFINITY)
        );
        assert!(config(&["--ip-rate", "0.0001"])
            .unwrap_err()
            .starts_with("--ip-rate must be 0"));
    }

    #[test]
    fn a_dead_after_within_two_heartbeats_is_refused() {
        let error = config(&["--heartbeat", "10s", "--dead-after", "19s"]).unwrap_err();
        assert!(error.starts_with("--dead-after (19s) must be at least twice --heartbeat (10s)"));
        assert!(config(&["--heartbeat", "10s", "--dead-after", "20s"]).is_ok());
    }

    #[test]
    fn request_options_reach_the_check_config() {
        let ca = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../check/tests/check/fixtures/ca.pem"
        );
        let mut jar = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut jar, b"a.example\tFALSE\t/\tFALSE\t0\tsid\tabc\n").unwrap();
        let check = config(&[
            "--header",
            "X-Token: abc",
            "--basic-auth",
            "Intranet.example=op:p:w",
            "--host-header",
            "API.example=Authorization: Bearer t",
            "--host-header",
            "api.example=X-Two: 2",
            "--accept",
            "200,403",
            "--accept-host",
            "intranet.example=429",
            "--ca-cert",
            ca,
            "--cookie-jar",
            jar.path().to_str().unwrap(),
            "--contact",
            "mailto:ops@example.com",
            "--exclude",
            "[.]pdf$",
        ])
        .unwrap()
        .check;
        assert_eq!(check.headers["x-token"], "abc");
        assert_eq!(
            check.basic_auth["intranet.example"],
            BasicAuth::new("op", "p:w")
        );
        assert_eq!(
            check.host_headers["api.example"]["authorization"],
            "Bearer t"
        );
        assert_eq!(check.host_headers["api.example"]["x-two"], "2");
        assert_eq!(check.host_headers.len(), 1);
        assert_eq!(check.accept.to_string(), "200,403");
        assert_eq!(check.accept_hosts["intranet.example"].to_string(), "429");
        assert_eq!(check.ca_certs.len(), 1);
        assert_eq!(check.cookies.map(|jar| jar.len()), Some(1));
        let version = env!("CARGO_PKG_VERSION");
        let agent = format!("crawler/{version} (+mailto:ops@example.com)");
        assert_eq!(check.user_agent, agent);
        assert!(!check.filter.allows("https://a.example/x.pdf"));
    }

    #[test]
    fn the_default_user_agent_names_the_crawler_and_nobody_else() {
        let check = config(&[]).unwrap().check;
        let version = env!("CARGO_PKG_VERSION");
        assert_eq!(check.user_agent, format!("crawler/{version}"));
        assert_eq!(check.accept.to_string(), "200..=299");
        assert!(check.headers.is_empty() && check.basic_auth.is_empty());
    }
}
