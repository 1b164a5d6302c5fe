//! How a dashboard serves: whom it lets in, what it allows, and the limits that keep a client
//! from tying it up. Made from the command line (`options`), or by hand.

use std::time::Duration;

use super::auth::Access;
use super::client::Proxies;
use super::origin::AllowedHosts;

/// A session's life by default (`--session-lifetime`): a working day.
pub const SESSION_LIFETIME: Duration = Duration::from_secs(12 * 3600);

/// How long a request's head may take to arrive, from its first byte (`--header-timeout`).
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a connection may stay open with no request in progress and no byte moving
/// (`--idle-timeout`): a keep-alive connection between requests, or a client that stopped
/// reading its answer. The page asks every second, so its connection is never idle that long.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(5);

/// Connections open at once (`--max-connections`): each holds a file descriptor.
pub const MAX_CONNECTIONS: usize = 256;

/// Connections open at once from one client (`--max-connections-per-client`); a browser opens
/// six at most to one site.
pub const MAX_CONNECTIONS_PER_CLIENT: usize = 32;

/// Searches of the dead links running at once (`--max-searches`).
pub const MAX_SEARCHES: usize = 2;

#[derive(Clone, Debug)]
pub struct Settings {
    /// Whether `POST /api/pause` and `/api/resume` may act (`--allow-control`).
    pub allow_control: bool,
    /// Who may see it.
    pub access: Access,
    /// The names, beyond its own address, that a request's `Host` may give (`--allowed-host`).
    pub hosts: AllowedHosts,
    /// The proxies whose `X-Forwarded-For` names the client (`--trusted-proxy`).
    pub proxies: Proxies,
    /// How long a login's session lasts.
    pub session_lifetime: Duration,
    pub limits: Limits,
}

/// The bounds on what a client may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub header_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_connections: usize,
    pub max_connections_per_client: usize,
    pub max_searches: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            header_timeout: HEADER_TIMEOUT,
            idle_timeout: IDLE_TIMEOUT,
            max_connections: MAX_CONNECTIONS,
            max_connections_per_client: MAX_CONNECTIONS_PER_CLIENT,
            max_searches: MAX_SEARCHES,
        }
    }
}
