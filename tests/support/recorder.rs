//! Servers that record what they see, for the host-decision tests: [`spawn_recorder`] answers
//! each path as its handler says and records every request (path and time); [`spawn_hung`]
//! accepts connections, counts them, and never answers. Loopback only.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

/// What the recorder answers to a path.
#[derive(Clone, Copy, Debug)]
pub struct Answer {
    pub status: u16,
    pub retry_after: Option<&'static str>,
}

impl Answer {
    pub const OK: Answer = Answer {
        status: 200,
        retry_after: None,
    };

    pub fn status(status: u16) -> Answer {
        Answer {
            status,
            retry_after: None,
        }
    }
}

/// One request as the recorder saw it.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: hyper::Method,
    pub path: String,
    pub at: Instant,
}

/// What a [`spawn_recorder_by`] handler is told of a request.
#[derive(Clone, Copy, Debug)]
pub struct Asked<'a> {
    pub method: &'a hyper::Method,
    pub path: &'a str,
    /// Requests for this path before this one, any method.
    pub before: usize,
}

/// A running recorder.
pub struct Recorder {
    pub addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Recorder {
    /// Every request so far, in order.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Requests so far.
    pub fn count(&self) -> usize {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

/// Starts a recorder on a free port of `ip` (a loopback address), answering each path with
/// `answer(path)`.
pub async fn spawn_recorder(ip: &str, answer: fn(&str) -> Answer) -> Recorder {
    spawn_recorder_by(ip, move |asked| answer(asked.path)).await
}

/// [`spawn_recorder`], answering by method and by how often the path was asked too.
pub async fn spawn_recorder_by(
    ip: &str,
    answer: impl Fn(Asked<'_>) -> Answer + Send + Sync + 'static,
) -> Recorder {
    let answer = Arc::new(answer);
    let listener = TcpListener::bind((ip, 0)).await.expect("bind a local port");
    let addr = listener.local_addr().unwrap();
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let log = seen.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let log = log.clone();
            let answer = answer.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                    let path = request.uri().path().to_owned();
                    let method = request.method().clone();
                    let before = {
                        let mut log = log.lock().unwrap_or_else(PoisonError::into_inner);
                        let before = log.iter().filter(|s| s.path == path).count();
                        log.push(Seen {
                            method: method.clone(),
                            path: path.clone(),
                            at: Instant::now(),
                        });
                        before
                    };
                    let a = answer(Asked {
                        method: &method,
                        path: &path,
                        before,
                    });
                    let mut response = Response::builder().status(a.status);
                    if let Some(value) = a.retry_after {
                        response = response.header("retry-after", value);
                    }
                    let response = response.body(Full::new(Bytes::new())).unwrap();
                    async move { Ok::<_, Infallible>(response) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Recorder { addr, seen }
}

/// A server that accepts connections and never answers; counts the connections.
pub struct Hung {
    pub addr: SocketAddr,
    connections: Arc<AtomicUsize>,
}

impl Hung {
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

/// Starts a hung server on a free port of `ip`.
pub async fn spawn_hung(ip: &str) -> Hung {
    let listener = TcpListener::bind((ip, 0)).await.expect("bind a local port");
    let addr = listener.local_addr().unwrap();
    let connections = Arc::new(AtomicUsize::new(0));
    let count = connections.clone();
    tokio::spawn(async move {
        let mut held = Vec::new();
        loop {
            if let Ok((stream, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                held.push(stream);
            }
        }
    });
    Hung { addr, connections }
}
