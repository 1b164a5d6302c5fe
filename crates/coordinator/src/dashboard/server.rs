//! The accept loop: each connection gets a slot (`slots`: a cap in all and per client) and a
//! task (`conn`), or, past a cap, a 503 and the door. An accept that fails (out of file
//! descriptors, most likely, which every connection retried at once would not give back) is
//! tried again after a pause that doubles while it keeps failing.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crawler_queue::backoff::Backoff;
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::conn;
use super::settings::Limits;
use super::shared::Dashboard;
use super::slots::{Full, Slots};
use super::watch::Timeouts;

/// The pause after a failed accept: 50 ms, doubling to a second while accepts keep failing.
const ACCEPT_PAUSE: Backoff = Backoff::new(Duration::from_millis(50), Duration::from_secs(1));

/// What a connection past a cap is told before it is closed.
const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nretry-after: 1\r\n\
content-type: text/plain; charset=utf-8\r\ncontent-length: 44\r\nconnection: close\r\n\r\n\
the dashboard has too many connections open\n";

/// A refusal of connections is logged once a minute at most: a client that keeps the caps
/// reached would fill the log.
const FULL_LOGGED_EVERY: Duration = Duration::from_secs(60);

/// Accepts connections on `listener` until `shutdown`; the connections open then finish
/// their request in progress.
pub async fn run(
    dashboard: Arc<Dashboard>,
    listener: TcpListener,
    limits: Limits,
    shutdown: impl Future<Output = ()>,
) {
    let slots = Slots::new(limits.max_connections, limits.max_connections_per_client);
    let timeouts = Timeouts {
        header: limits.header_timeout,
        idle: limits.idle_timeout,
    };
    let stop = CancellationToken::new();
    let tasks = TaskTracker::new();
    let mut failures = 0;
    let mut full_logged: Option<Instant> = None;
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => accepted,
        };
        let (stream, remote) = match accepted {
            Ok(accepted) => {
                failures = 0;
                accepted
            }
            Err(error) => {
                failures += 1;
                let pause = ACCEPT_PAUSE.delay(failures);
                tracing::warn!(%error, "cannot accept a connection; trying again in {pause:?}");
                tokio::select! {
                    _ = &mut shutdown => break,
                    _ = tokio::time::sleep(pause) => continue,
                }
            }
        };
        let trusted = dashboard.proxies.trusts(remote.ip());
        match slots.take(remote.ip(), trusted) {
            Ok(slot) => {
                let serve = conn::serve(dashboard.clone(), stream, remote, timeouts, stop.clone());
                tasks.spawn(async move {
                    serve.await;
                    drop(slot);
                });
            }
            Err(full) => {
                refuse(stream);
                if full_logged.is_none_or(|at| at.elapsed() >= FULL_LOGGED_EVERY) {
                    full_logged = Some(Instant::now());
                    log_full(full, remote, limits);
                }
            }
        }
    }
    stop.cancel();
    tasks.close();
    tasks.wait().await;
}

/// Tells a connection past a cap so, as far as its socket takes it at once, and closes it.
fn refuse(stream: TcpStream) {
    let _ = stream.try_write(BUSY);
}

fn log_full(full: Full, remote: std::net::SocketAddr, limits: Limits) {
    match full {
        Full::Total => tracing::warn!(
            "refusing connections: {} are open, as many as --max-connections allows \
             (logged once a minute at most)",
            limits.max_connections
        ),
        Full::Client => tracing::warn!(
            client = %remote.ip(),
            "refusing connections: the client has {} open, as many as \
             --max-connections-per-client allows (logged once a minute at most)",
            limits.max_connections_per_client
        ),
    }
}
