//! Local servers for the checker to talk to: `spawn_site` (hyper, well-behaved) and
//! `spawn_raw` (a bare TCP listener, for servers that misbehave on purpose).

use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use crawler_check::CheckConfig;
use http_body_util::Full;
use hyper::{Method, Request, Response};
use hyper_util::rt::TokioIo;
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};

pub const LOCALHOST: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

/// Short timeouts, no retries, no politeness limits: each test turns on what it tests.
pub fn config() -> CheckConfig {
    CheckConfig {
        timeout: Duration::from_secs(2),
        connect_timeout: Duration::from_secs(1),
        retries: 0,
        host_rate: f64::INFINITY,
        host_concurrency: 64,
        ..CheckConfig::default()
    }
}

/// One request as a site saw it.
#[derive(Debug, Clone)]
pub struct Hit {
    pub method: Method,
    pub path: String,
    /// Requests this site had seen before this one.
    pub n: usize,
    pub at: Instant,
    pub accept_encoding: Option<String>,
    pub user_agent: Option<String>,
    pub authorization: Option<String>,
    /// Every header, for the ones a test sets itself (`--header`, cookies).
    pub headers: hyper::HeaderMap,
}

/// A running hyper site and the log of what it was asked.
pub struct Site {
    pub addr: SocketAddr,
    log: Arc<Mutex<Vec<Hit>>>,
}

impl Site {
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn hits(&self) -> Vec<Hit> {
        self.log.lock().unwrap().clone()
    }

    pub fn methods(&self) -> Vec<Method> {
        self.hits().into_iter().map(|h| h.method).collect()
    }
}

/// A response with this status and headers, and an empty body.
pub fn respond(status: u16, headers: &[(&str, &str)]) -> Response<Full<Bytes>> {
    let mut builder = Response::builder().status(status);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    builder.body(Full::new(Bytes::new())).unwrap()
}

/// A site on 127.0.0.1 answering with `handler`.
pub async fn spawn_site<F>(handler: F) -> Site
where
    F: Fn(&Hit) -> Response<Full<Bytes>> + Send + Sync + 'static,
{
    let handler = Arc::new(handler);
    spawn_site_async(LOCALHOST, move |hit| {
        let handler = handler.clone();
        async move { handler(&hit) }
    })
    .await
}

/// A site on `ip` whose handler may take its time.
pub async fn spawn_site_async<F, Fut>(ip: IpAddr, handler: F) -> Site
where
    F: Fn(Hit) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Response<Full<Bytes>>> + Send + 'static,
{
    let listener = TcpListener::bind((ip, 0)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let (handler, site_log) = (Arc::new(handler), log.clone());
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (handler, log) = (handler.clone(), site_log.clone());
            let service = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                let hit = record(&log, &req);
                let reply = handler(hit);
                async move { Ok::<_, Infallible>(reply.await) }
            });
            tokio::spawn(async move {
                let conn = hyper::server::conn::http1::Builder::new();
                let _ = conn.serve_connection(TokioIo::new(stream), service).await;
            });
        }
    });
    Site { addr, log }
}

fn record(log: &Mutex<Vec<Hit>>, req: &Request<hyper::body::Incoming>) -> Hit {
    let mut log = log.lock().unwrap();
    let header = |name| {
        let value = req.headers().get(name)?;
        Some(value.to_str().unwrap_or("?").to_owned())
    };
    let hit = Hit {
        method: req.method().clone(),
        path: req.uri().path().to_owned(),
        n: log.len(),
        at: Instant::now(),
        accept_encoding: header("accept-encoding"),
        user_agent: header("user-agent"),
        authorization: header("authorization"),
        headers: req.headers().clone(),
    };
    log.push(hit.clone());
    hit
}

/// A bare TCP server on 127.0.0.1 running `serve` on each connection; returns its address.
pub async fn spawn_raw<F, Fut>(serve: F) -> SocketAddr
where
    F: Fn(TcpStream) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind((LOCALHOST, 0)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(serve(stream));
        }
    });
    addr
}

/// Reads a request head (up to the blank line) and returns its method.
pub async fn read_head(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 64 * 1024 {
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 {
            return None;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&head);
    text.split(' ').next().map(str::to_owned)
}

/// A port on 127.0.0.1 that nothing listens on.
pub async fn closed_port() -> u16 {
    let listener = TcpListener::bind((LOCALHOST, 0)).await.unwrap();
    listener.local_addr().unwrap().port()
}
