//! `--metrics ADDR`: installs the Prometheus recorder and serves `GET /metrics` on ADDR, and
//! on nothing else. A small hyper handler rather than the exporter's own listener, so that
//! binding is ours: an address in use is a startup error naming it, before the worker
//! connects to the database.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::Duration;

use bytes::Bytes;
use http::{header, Method, Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use crate::error::Error;

/// Buckets of the latency histograms, in seconds: a claim or write-back takes milliseconds on
/// a healthy database and seconds on a struggling one (the queue retries for up to 10 s).
const LATENCY_BUCKETS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// A client that sends no request within this long is dropped: a scraper is quick.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// The wait before accepting again after a failed accept (out of file descriptors, most
/// likely): long enough to leave the checks the descriptors they free, short enough that a
/// scrape soon gets through again.
const ACCEPT_RETRY: Duration = Duration::from_millis(100);

/// The text format's content type, as Prometheus asks for it.
const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Serves the metrics until dropped.
pub struct Exporter {
    handle: PrometheusHandle,
    task: JoinHandle<()>,
}

impl Exporter {
    /// Drains the histograms' recent samples into their totals, so memory stays bounded
    /// between scrapes.
    pub fn upkeep(&self) {
        self.handle.run_upkeep();
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Listens on `addr` and serves `/metrics` there; an address that cannot be bound (in use,
/// not this machine's) is an error naming it.
pub async fn serve(addr: SocketAddr) -> Result<Exporter, Error> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| Error::Metrics { addr, source })?;
    let handle = recorder().clone();
    let local = listener.local_addr().unwrap_or(addr);
    tracing::info!("serving metrics at http://{local}/metrics");
    let task = tokio::spawn(accept(listener, handle.clone()));
    Ok(Exporter { handle, task })
}

/// The process's one recorder, installed on first use: a process may run several workers
/// (the tests do), and a global recorder can be set once.
fn recorder() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        let handle = PrometheusBuilder::new()
            .set_buckets(LATENCY_BUCKETS)
            .expect("latency buckets are not empty")
            .install_recorder()
            .expect("no other metrics recorder is installed");
        super::names::describe();
        handle
    })
}

async fn accept(listener: TcpListener, handle: PrometheusHandle) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                tokio::spawn(connection(stream, handle.clone()));
            }
            // Out of file descriptors, most likely: the checks come first; try again later.
            Err(error) => {
                tracing::debug!(%error, "cannot accept a metrics connection");
                tokio::time::sleep(ACCEPT_RETRY).await;
            }
        }
    }
}

async fn connection(stream: TcpStream, handle: PrometheusHandle) {
    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
        let response = respond(request.method(), request.uri().path(), &handle);
        async move { Ok::<_, Infallible>(response) }
    });
    let _ = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .serve_connection(TokioIo::new(stream), service)
        .await;
}

fn respond(method: &Method, path: &str, handle: &PrometheusHandle) -> Response<Full<Bytes>> {
    let (status, body) = match (method, path) {
        (&Method::GET, "/metrics") => (StatusCode::OK, handle.render()),
        (_, "/metrics") => (StatusCode::METHOD_NOT_ALLOWED, "GET only\n".into()),
        _ => (StatusCode::NOT_FOUND, "see /metrics\n".into()),
    };
    let mut response = Response::builder().status(status);
    if status == StatusCode::OK {
        response = response.header(header::CONTENT_TYPE, CONTENT_TYPE);
    }
    response
        .body(Full::new(Bytes::from(body)))
        .expect("a valid response")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_get_of_the_metrics_path_is_served() {
        let handle = PrometheusBuilder::new().build_recorder().handle();
        let status = |method, path| respond(&method, path, &handle).status();
        assert_eq!(status(Method::GET, "/metrics"), StatusCode::OK);
        assert_eq!(
            status(Method::POST, "/metrics"),
            StatusCode::METHOD_NOT_ALLOWED
        );
        assert_eq!(status(Method::GET, "/"), StatusCode::NOT_FOUND);
        assert_eq!(status(Method::GET, "/metrics/x"), StatusCode::NOT_FOUND);
    }

    #[tokio::test]
    async fn an_address_in_use_is_an_error_naming_it() {
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = taken.local_addr().unwrap();
        let error = serve(addr).await.err().expect("the port is taken");
        let text = crawler_queue::error_chain(&error);
        assert!(
            text.starts_with(&format!("cannot serve --metrics on {addr}: ")),
            "{text}"
        );
    }
}
