//! `crawler-dashboard`'s own options (the binary adds the database's and the log's), and the
//! [`Settings`] they make.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use clap::builder::TypedValueParser as _;
use crawler_cli::bounds::DurationRange;
use crawler_cli::duration_default;

use super::auth::{Access, AccessError};
use super::client::Proxies;
use super::origin::{AllowedHosts, HostName};
use super::settings::{
    Limits, Settings, HEADER_TIMEOUT, IDLE_TIMEOUT, MAX_CONNECTIONS, MAX_CONNECTIONS_PER_CLIENT,
    MAX_SEARCHES, SESSION_LIFETIME,
};

const DAY: u64 = 86_400;

/// `--session-lifetime`: a second (for tests) to 30 days.
const SESSION_RANGE: DurationRange =
    DurationRange::new(Duration::from_secs(1), Duration::from_secs(30 * DAY));

/// `--header-timeout` and `--idle-timeout`.
const TIMEOUT_RANGE: DurationRange =
    DurationRange::new(Duration::from_millis(100), Duration::from_secs(600));

#[derive(Debug, clap::Args)]
pub struct Options {
    /// The address to serve on (port 0: any free port, logged).
    #[arg(
        long,
        env = "CRAWLER_DASHBOARD_LISTEN",
        value_name = "ADDR:PORT",
        default_value = "127.0.0.1:8080"
    )]
    pub listen: SocketAddr,

    /// Show Pause and Resume buttons that pause and resume the whole fleet (as
    /// crawler-reap --pause and --resume do). Without it, the dashboard changes nothing.
    #[arg(long, env = "CRAWLER_DASHBOARD_ALLOW_CONTROL")]
    pub allow_control: bool,

    /// The token every page, API call and control must show. Prefer the variable or
    /// --token-file: a command line is visible to every user of the machine. At least 16
    /// characters (openssl rand -hex 24). Default: none.
    #[arg(
        long,
        env = "CRAWLER_DASHBOARD_TOKEN",
        hide_env_values = true,
        value_name = "TOKEN",
        conflicts_with = "token_file"
    )]
    token: Option<Secret>,

    /// A file whose first line is the token (a Docker or systemd secret, say).
    #[arg(long, env = "CRAWLER_DASHBOARD_TOKEN_FILE", value_name = "FILE")]
    token_file: Option<PathBuf>,

    /// Serve without a token on an address beyond loopback: anyone who reaches it sees the
    /// crawl (and, with --allow-control, pauses it). Put an authenticating proxy in front.
    #[arg(long, env = "CRAWLER_DASHBOARD_NO_AUTH", conflicts_with_all = ["token", "token_file"])]
    no_auth: bool,

    /// A name the dashboard answers to besides the address it is reached on (and localhost
    /// on loopback): the name in the browser's address bar, or the one a proxy forwards. Any
    /// port, unless NAME:PORT. Repeatable; comma-separated in the variable. Other names get
    /// 421 (a page of another site whose name was made to point here, DNS rebinding).
    #[arg(
        long,
        env = "CRAWLER_DASHBOARD_ALLOWED_HOST",
        value_name = "NAME[:PORT]",
        value_delimiter = ','
    )]
    allowed_host: Vec<HostName>,

    /// The address of a reverse proxy in front: for its connections, the client (whose wrong
    /// tokens and searches are counted, and who is logged) is the last address it adds to
    /// X-Forwarded-For. Repeatable; comma-separated in the variable. Default: none, the header
    /// is ignored.
    #[arg(
        long,
        env = "CRAWLER_DASHBOARD_TRUSTED_PROXY",
        value_name = "ADDR",
        value_delimiter = ','
    )]
    trusted_proxy: Vec<IpAddr>,

    /// How long a login lasts: its cookie says so (Max-Age) and the dashboard checks it, on
    /// the database's clock. Between 1s and 30d.
    #[arg(long, env = "CRAWLER_DASHBOARD_SESSION_LIFETIME", value_name = "DURATION", value_parser = SESSION_RANGE.parser(), default_value = duration_default!(SESSION_LIFETIME))]
    session_lifetime: Duration,

    /// A connection whose request's head has not all arrived this long after its first byte is
    /// closed. Between 100ms and 10m.
    #[arg(long, env = "CRAWLER_DASHBOARD_HEADER_TIMEOUT", value_name = "DURATION", value_parser = TIMEOUT_RANGE.parser(), default_value = duration_default!(HEADER_TIMEOUT))]
    header_timeout: Duration,

    /// A connection with no request being answered that moves no byte for this long is closed:
    /// kept alive between requests, never used, or not reading its answer. Between 100ms and 10m.
    #[arg(long, env = "CRAWLER_DASHBOARD_IDLE_TIMEOUT", value_name = "DURATION", value_parser = TIMEOUT_RANGE.parser(), default_value = duration_default!(IDLE_TIMEOUT))]
    idle_timeout: Duration,

    /// Connections open at once; more are answered 503 and closed.
    #[arg(long, env = "CRAWLER_DASHBOARD_MAX_CONNECTIONS", value_name = "N", default_value_t = MAX_CONNECTIONS, value_parser = clap::value_parser!(u16).range(1..).map(usize::from))]
    max_connections: usize,

    /// Connections open at once from one client (an address, or an IPv6 /64; a trusted proxy
    /// counts against --max-connections only); more are answered 503 and closed.
    #[arg(long, env = "CRAWLER_DASHBOARD_MAX_CONNECTIONS_PER_CLIENT", value_name = "N", default_value_t = MAX_CONNECTIONS_PER_CLIENT, value_parser = clap::value_parser!(u16).range(1..).map(usize::from))]
    max_connections_per_client: usize,

    /// Searches of the dead links (/api/dead?q=) running at once, one per client: each may read
    /// every done site. More are answered 503 (429 for a client's second), and the page asks
    /// again.
    #[arg(long, env = "CRAWLER_DASHBOARD_MAX_SEARCHES", value_name = "N", default_value_t = MAX_SEARCHES, value_parser = clap::value_parser!(u8).range(1..=64).map(usize::from))]
    max_searches: usize,
}

/// A value clap must never print: parsing cannot fail, so no error quotes it.
#[derive(Clone)]
struct Secret(String);

impl std::str::FromStr for Secret {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(Secret(s.to_owned()))
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
}

impl Options {
    /// What the options set; an error if they ask for a door that cannot be (a token too
    /// short, unreadable, or none beyond loopback).
    pub fn settings(&self) -> Result<Settings, AccessError> {
        let token = self.token.as_ref().map(|Secret(text)| text.as_str());
        let access =
            Access::from_options(token, self.token_file.as_deref(), self.listen, self.no_auth)?;
        Ok(Settings {
            allow_control: self.allow_control,
            access,
            hosts: AllowedHosts::new(self.allowed_host.clone()),
            proxies: Proxies::new(self.trusted_proxy.iter().copied()),
            session_lifetime: self.session_lifetime,
            limits: Limits {
                header_timeout: self.header_timeout,
                idle_timeout: self.idle_timeout,
                max_connections: self.max_connections,
                max_connections_per_client: self.max_connections_per_client,
                max_searches: self.max_searches,
            },
        })
    }
}
