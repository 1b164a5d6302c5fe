//! `crawler-dashboard`: a live web page of the crawl, served from the database alone.
//!
//! It reads what the workers write (no worker is asked anything), so it shows a fleet on any
//! number of machines, and any number of dashboards may run. With a token, it answers only
//! whoever shows it (`auth`); without one, whoever reaches it.
//!
//! # Layout
//! - `auth`: the token, the session cookie, and which requests they admit.
//! - `counts`: the counts per state and verdict, sampled by one task, for the totals.
//! - `history`: the plots' data, read from the database by time (`checked_at`).
//! - `snapshot`: what the page polls, as JSON.
//! - `routes`: the HTTP routes; `assets/`: the page, its script and style, embedded.

mod auth;
mod counts;
mod history;
mod routes;
mod snapshot;

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;

use crawler_queue::Queue;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub use auth::{Access, AccessError, Token, TokenError, COOKIE_NAME, MIN_TOKEN_LEN};
pub use routes::CONTROL_HEADER;

/// What the requests share.
pub struct Dashboard {
    queue: Queue,
    counts: counts::Counts,
    history: history::Cache,
    /// Whether `POST /api/pause` and `/api/resume` may act (`--allow-control`).
    allow_control: bool,
    /// Who may see it.
    access: Access,
}

/// How the dashboard serves.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Whether `POST /api/pause` and `/api/resume` may act (`--allow-control`).
    pub allow_control: bool,
    pub access: Access,
}

/// Serves the dashboard on `listener` until `shutdown`; requests in progress then finish.
pub async fn serve(
    queue: Queue,
    listener: TcpListener,
    settings: Settings,
    shutdown: impl Future<Output = ()>,
) {
    let stop = CancellationToken::new();
    let counts = counts::Counts::default();
    let tasks = TaskTracker::new();
    tasks.spawn(counts::sample(queue.clone(), counts.clone(), stop.clone()));
    let dashboard = Arc::new(Dashboard {
        queue,
        counts,
        history: history::Cache::default(),
        allow_control: settings.allow_control,
        access: settings.access,
    });
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    // Out of file descriptors, a connection reset before it was taken: the
                    // next one may do.
                    tracing::warn!(%error, "cannot accept a connection");
                    continue;
                }
            },
        };
        tasks.spawn(connection(dashboard.clone(), stream, stop.clone()));
    }
    stop.cancel();
    tasks.close();
    tasks.wait().await;
}

/// Serves one connection until it closes, or, at shutdown, until its request in progress is
/// answered.
async fn connection(
    dashboard: Arc<Dashboard>,
    stream: tokio::net::TcpStream,
    stop: CancellationToken,
) {
    let service = hyper::service::service_fn(move |req| {
        let dashboard = dashboard.clone();
        async move { Ok::<_, Infallible>(routes::route(&dashboard, req).await) }
    });
    let conn =
        hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service);
    tokio::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => {}
        _ = stop.cancelled() => {
            conn.as_mut().graceful_shutdown();
            let _ = conn.await;
        }
    }
}
