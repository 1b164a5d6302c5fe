//! `crawler-dashboard`: a live web page of the crawl, served from the database alone.
//!
//! It reads what the workers write (no worker is asked anything), so it shows a fleet on any
//! number of machines, and any number of dashboards may run. With a token, it answers only
//! whoever shows it or a live session of its login form (`gate`); without one, whoever reaches
//! it. Either way it answers only requests for itself (`origin`), and bounds what one client
//! can hold: connections, their time, wrong tokens, searches.
//!
//! # Layout
//! - `options`: the command line; `settings`: what it sets, and the limits' defaults.
//! - `server`: the accept loop; `slots`: the caps on connections; `conn`: one connection;
//!   `watch`: the header and idle timeouts.
//! - `routes`: the HTTP routes; `reply`: the answers and the headers on every one;
//!   `assets/`: the page, its script and style, embedded.
//! - `origin`: which `Host` is this dashboard's, and which changes come from its own pages.
//! - `client`: who a request comes from (the peer, or what a trusted proxy says).
//! - `auth`: the token and the door; `session`: the session cookie; `gate`: who a request is;
//!   `login`: the login form's routes; `logins`: wrong tokens counted per client.
//! - `searches`: the searches of the dead links in flight.
//! - `shared`: what the requests share.
//! - `counts`: the counts per state and verdict, sampled by one task, for the totals.
//! - `history`: the plots' data, read from the database by time (`checked_at`).
//! - `rot`: the link rot panel's: links that broke and recovered over time, the latest changes.
//! - `snapshot`: what the page polls, as JSON.

mod auth;
mod client;
mod conn;
mod counts;
mod gate;
mod history;
mod login;
mod logins;
mod options;
mod origin;
mod reply;
mod rot;
mod routes;
mod searches;
mod server;
mod session;
mod settings;
mod shared;
mod slots;
mod snapshot;
mod watch;

use std::future::Future;
use std::sync::Arc;

use crawler_queue::Queue;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

pub use auth::{Access, AccessError, Token, TokenError, MIN_TOKEN_LEN};
pub use client::Proxies;
pub use options::Options;
pub use origin::{AllowedHosts, HostName};
pub use routes::CONTROL_HEADER;
pub use session::COOKIE_NAME;
pub use settings::{Limits, Settings};

/// Serves the dashboard on `listener` until `shutdown`; requests in progress then finish.
pub async fn serve(
    queue: Queue,
    listener: TcpListener,
    settings: Settings,
    shutdown: impl Future<Output = ()>,
) {
    let stop = CancellationToken::new();
    let counts = counts::Counts::default();
    let sampler = tokio::spawn(counts::sample(queue.clone(), counts.clone(), stop.clone()));
    let limits = settings.limits;
    let dashboard = Arc::new(shared::Dashboard::new(queue, counts, settings));
    server::run(dashboard, listener, limits, shutdown).await;
    stop.cancel();
    let _ = sampler.await;
}
