//! One connection: HTTP/1.1 by hyper, its socket watched (`watch`), closed when it passes
//! `--header-timeout` or `--idle-timeout`, or, at shutdown, once its request in progress is
//! answered.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;

use super::routes::route;
use super::shared::Dashboard;
use super::watch::{expired, Progress, Timeouts, Watched};

/// Serves one connection until it closes, passes a bound, or, at `stop`, until its request in
/// progress is answered.
pub async fn serve(
    dashboard: Arc<Dashboard>,
    stream: TcpStream,
    peer: SocketAddr,
    timeouts: Timeouts,
    stop: CancellationToken,
) {
    let progress = Progress::new();
    let io = TokioIo::new(Watched::new(stream, progress.clone()));
    let watching = progress.clone();
    let service = hyper::service::service_fn(move |req| {
        let dashboard = dashboard.clone();
        let answering = watching.answering();
        async move {
            let reply = route(&dashboard, peer, req).await;
            drop(answering);
            Ok::<_, Infallible>(reply)
        }
    });
    // `watch` bounds the head's arrival, from its first byte rather than from when hyper
    // starts waiting for it, so hyper's own timer is off.
    let conn = http1::Builder::new()
        .header_read_timeout(None)
        .serve_connection(io, service);
    tokio::pin!(conn);
    let bound = expired(&progress, timeouts);
    tokio::pin!(bound);
    tokio::select! {
        _ = conn.as_mut() => return,
        why = &mut bound => {
            tracing::debug!(%peer, "connection closed: {why}");
            return;
        }
        _ = stop.cancelled() => conn.as_mut().graceful_shutdown(),
    }
    tokio::select! {
        _ = conn => {}
        _ = bound => {}
    }
}
