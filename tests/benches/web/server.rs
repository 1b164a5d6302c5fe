//! The hosts' HTTP servers: one listener per host address on port 80, in this process, each
//! counting what its host sees (requests in flight, requests started within any one second) and
//! answering as its kind and the path say ([`crate::world`]).
//!
//! The tally is the meter's (`crawler_tests::meter`), which keeps it private to its one-answer
//! server; these hosts answer by path, so they count for themselves, the same way: a request
//! arrives when the kernel received it (`crawler_tests::stamped`), not when this busy process
//! got round to it.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use crawler_tests::meter::{first_within, gaps_ms, most_within};
use crawler_tests::stamped::{stamp_listener, Stamped};
use http_body_util::Full;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use crate::world::{slow_delay, HostKind, PathKind, World};

pub type Answer = Response<Full<Bytes>>;

/// What one host has seen, and what each of its paths has been asked (the transient failures
/// fail a path's first requests).
#[derive(Default)]
pub struct Tally {
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    /// Arrival times (the kernel's receive times); a mutex, one short push per request.
    starts: Mutex<Vec<Duration>>,
    /// When this process's handler got each request: the arrival plus the server's own
    /// scheduling delays, kept to show what a meter that reads its clock there would count.
    handled: Mutex<Vec<Duration>>,
    asked: Mutex<HashMap<String, usize>>,
    /// Each request's method, path and connection, in arrival order with `starts`.
    requests: Mutex<Vec<String>>,
}

/// The figures of one host.
#[derive(Clone, Copy, Default)]
pub struct Seen {
    pub requests: usize,
    pub max_in_flight: usize,
    pub max_per_second: usize,
    /// The same by the handler's clock ([`Tally::handled`]).
    pub max_per_second_handled: usize,
}

impl Tally {
    /// Counts a request that `arrived` in until the guard drops; returns how often its path
    /// was asked.
    pub fn arrive(&self, path: &str, what: String, arrived: Duration) -> (InFlight<'_>, usize) {
        self.starts.lock().unwrap().push(arrived);
        self.requests.lock().unwrap().push(what);
        self.handled
            .lock()
            .unwrap()
            .push(crawler_tests::stamped::now());
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_in_flight.fetch_max(now, Ordering::SeqCst);
        let mut asked = self.asked.lock().unwrap();
        let n = asked.entry(path.to_owned()).or_default();
        *n += 1;
        (InFlight(self), *n)
    }

    pub fn seen(&self) -> Seen {
        let mut starts = self.starts.lock().unwrap().clone();
        let mut handled = self.handled.lock().unwrap().clone();
        Seen {
            requests: starts.len(),
            max_in_flight: self.max_in_flight.load(Ordering::SeqCst),
            max_per_second: most_within(&mut starts, Duration::from_secs(1)),
            max_per_second_handled: most_within(&mut handled, Duration::from_secs(1)),
        }
    }

    /// The arrivals of the busiest second (the first `max_per_second` within one), as gaps in
    /// milliseconds from the one before: how a host went over its rate.
    pub fn busiest_second(&self) -> String {
        let starts = self.starts.lock().unwrap().clone();
        let requests = self.requests.lock().unwrap().clone();
        let mut order: Vec<usize> = (0..starts.len()).collect();
        order.sort_by_key(|&i| starts[i]);
        let mut sorted: Vec<Duration> = order.iter().map(|&i| starts[i]).collect();
        let most = most_within(&mut sorted, Duration::from_secs(1));
        let Some(first) = first_within(&sorted, most, Duration::from_secs(1)) else {
            return String::new();
        };
        let gaps = gaps_ms(&sorted[first..first + most]);
        let at = (sorted[first] - sorted[0]).as_millis();
        let opening: Vec<&str> = order[first.saturating_sub(2)..(first + 4).min(order.len())]
            .iter()
            .map(|&i| requests[i].as_str())
            .collect();
        format!(
            "{gaps:?}, {at} ms after its first arrival (#{first}); around its start: {opening:?}"
        )
    }

    /// Every arrival so far, in order (the kernel's receive times, since the Unix epoch).
    pub fn arrivals(&self) -> Vec<Duration> {
        let mut starts = self.starts.lock().unwrap().clone();
        starts.sort();
        starts
    }

    /// Forgets everything, for the next tool (call it when idle).
    pub fn reset(&self) {
        self.starts.lock().unwrap().clear();
        self.handled.lock().unwrap().clear();
        self.asked.lock().unwrap().clear();
        self.requests.lock().unwrap().clear();
        let now = self.in_flight.load(Ordering::SeqCst);
        self.max_in_flight.store(now, Ordering::SeqCst);
    }
}

pub struct InFlight<'a>(&'a Tally);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Starts the servers of every live, hung and slow host; one tally per host of `world`.
pub async fn spawn_hosts(world: &World) -> Vec<Arc<Tally>> {
    let tallies: Vec<Arc<Tally>> = world.hosts.iter().map(|_| Arc::default()).collect();
    for (i, host) in world.hosts.iter().enumerate() {
        if !matches!(host.kind, HostKind::Live | HostKind::Hung | HostKind::Slow) {
            continue;
        }
        let listener = TcpListener::bind((host.ip, 80))
            .await
            .unwrap_or_else(|e| panic!("bind {}:80: {e}", host.ip));
        let (kind, tally) = (host.kind, tallies[i].clone());
        match kind {
            HostKind::Hung => tokio::spawn(hang(listener)),
            _ => tokio::spawn(serve(listener, move |request| {
                let tally = tally.clone();
                async move { answer(&tally, kind, slow_delay(i), request).await }
            })),
        };
    }
    tallies
}

/// Accepts every connection and holds it, unanswered, until the client gives up.
async fn hang(listener: TcpListener) {
    loop {
        if let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut stream = stream;
                let mut sink = tokio::io::sink();
                let _ = tokio::io::copy(&mut stream, &mut sink).await;
            });
        }
    }
}

/// When a request arrived: the kernel's receive time, in the request's extensions.
#[derive(Clone, Copy)]
pub struct Arrived(pub Duration);

/// The connection a request came on, numbered in accept order.
#[derive(Clone, Copy)]
pub struct Connection(pub usize);

static CONNECTIONS: AtomicUsize = AtomicUsize::new(0);

/// Serves HTTP/1.1 on `listener` with `handle`, forever; each request carries [`Arrived`].
pub async fn serve<F, Fut>(listener: TcpListener, handle: F)
where
    F: Fn(Request<hyper::body::Incoming>) -> Fut + Clone + Send + Sync + 'static,
    Fut: std::future::Future<Output = Answer> + Send + 'static,
{
    stamp_listener(&listener).expect("ask for receive times");
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let Ok((stream, arrival)) = Stamped::new(stream) else {
            continue;
        };
        let handle = handle.clone();
        let conn = CONNECTIONS.fetch_add(1, Ordering::Relaxed);
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |mut request: Request<_>| {
                request
                    .extensions_mut()
                    .insert(Arrived(arrival.last_or_now()));
                request.extensions_mut().insert(Connection(conn));
                let answer = handle(request);
                async move { Ok::<_, Infallible>(answer.await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

async fn answer(
    tally: &Tally,
    kind: HostKind,
    slow: Duration,
    request: Request<hyper::body::Incoming>,
) -> Answer {
    let path = request.uri().path().to_owned();
    let arrived = request.extensions().get::<Arrived>().map(|a| a.0);
    let arrived = arrived.unwrap_or_else(crawler_tests::stamped::now);
    let conn = request.extensions().get::<Connection>().map_or(0, |c| c.0);
    let what = format!("{} {path} c{conn}", request.method());
    let (_in_flight, asked) = tally.arrive(&path, what, arrived);
    if kind == HostKind::Slow {
        tokio::time::sleep(slow).await;
        return status(StatusCode::OK);
    }
    let mut parts = path.trim_start_matches('/').splitn(2, '/');
    let (name, n) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let head = request.method() == Method::HEAD;
    match PathKind::parse(name) {
        Some(PathKind::Ok) => status(StatusCode::OK),
        Some(PathKind::NotFound) | None => status(StatusCode::NOT_FOUND),
        Some(PathKind::Redirect) => redirect(&format!("/ok/{n}")),
        Some(PathKind::Flaky500) if asked <= 1 => status(StatusCode::INTERNAL_SERVER_ERROR),
        Some(PathKind::Busy503) if asked <= 2 => status(StatusCode::SERVICE_UNAVAILABLE),
        Some(PathKind::Limit429After) if asked <= 1 => {
            with_header(status(StatusCode::TOO_MANY_REQUESTS), "retry-after", "1")
        }
        Some(PathKind::Limit429) if asked <= 1 => status(StatusCode::TOO_MANY_REQUESTS),
        Some(PathKind::NoHead) if head => status(StatusCode::METHOD_NOT_ALLOWED),
        Some(_) => status(StatusCode::OK),
    }
}

pub fn status(code: StatusCode) -> Answer {
    let mut response = Response::new(Full::new(Bytes::from(format!("{code}\n"))));
    *response.status_mut() = code;
    response
}

pub fn redirect(to: &str) -> Answer {
    with_header(status(StatusCode::MOVED_PERMANENTLY), "location", to)
}

pub fn with_header(mut response: Answer, name: &'static str, value: &str) -> Answer {
    response
        .headers_mut()
        .insert(name, value.parse().expect("a header value"));
    response
}
