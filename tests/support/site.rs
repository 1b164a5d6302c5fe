//! A local website whose pages answer as their path says, so a test knows each URL's verdict:
//! `/alive/N` 200, `/dead/N` 404, `/gone/N` 410, `/redirect/N` 301 to `/alive/N`, `/slow/N`
//! 200 after 300 ms, `/blocked/N` 403, `/error/N` 500, and two hostile ones: `/throttled/N`
//! 429 with an absurd `Retry-After` in seconds, `/throttled-9999/N` 429 with a `Retry-After`
//! date in year 9999, `/busy/N` 429 with `Retry-After: 3600`. Served on loopback only.
//! The site counts the HEAD requests of each path: every check starts with one, so a count
//! above one is a site checked twice ([`Site::heads`]).

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

/// A kind of page, and the verdict the crawler must reach for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Page {
    Alive,
    Dead,
    Gone,
    Redirect,
    Slow,
    Blocked,
    Error,
    /// 429, `Retry-After: 100000000000000000000000` (seconds).
    Throttled,
    /// 429, `Retry-After: Fri, 31 Dec 9999 23:59:59 GMT`.
    Throttled9999,
    /// 429, `Retry-After: 3600`.
    Busy,
}

impl Page {
    pub const ALL: [Page; 10] = [
        Page::Alive,
        Page::Dead,
        Page::Gone,
        Page::Redirect,
        Page::Slow,
        Page::Blocked,
        Page::Error,
        Page::Throttled,
        Page::Throttled9999,
        Page::Busy,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Page::Alive => "alive",
            Page::Dead => "dead",
            Page::Gone => "gone",
            Page::Redirect => "redirect",
            Page::Slow => "slow",
            Page::Blocked => "blocked",
            Page::Error => "error",
            Page::Throttled => "throttled",
            Page::Throttled9999 => "throttled-9999",
            Page::Busy => "busy",
        }
    }

    /// `(verdict, final status)` the crawler must report.
    pub fn expected(self) -> (&'static str, u16) {
        match self {
            Page::Alive | Page::Redirect | Page::Slow => ("alive", 200),
            Page::Dead => ("dead", 404),
            Page::Gone => ("dead", 410),
            Page::Blocked => ("blocked", 403),
            Page::Error => ("error", 500),
            Page::Throttled | Page::Throttled9999 | Page::Busy => ("blocked", 429),
        }
    }

    fn parse(name: &str) -> Option<Page> {
        Page::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// A running site; it stops when the test's runtime does.
pub struct Site {
    pub addr: SocketAddr,
    heads: Heads,
}

/// HEAD requests per path. A mutex: one short insert per request, far below its cost.
type Heads = Arc<Mutex<HashMap<String, usize>>>;

impl Site {
    pub fn url(&self, page: Page, n: usize) -> String {
        format!("http://{}/{}/{n}", self.addr, page.name())
    }

    /// The HEAD requests the site answered so far, by path (`/alive/7`).
    pub fn heads(&self) -> HashMap<String, usize> {
        self.heads
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Starts a site on a free port of 127.0.0.1.
pub async fn spawn_site() -> Site {
    spawn_site_at("127.0.0.1").await
}

/// Starts a site on a free port of `ip`, a loopback address: sites on different addresses
/// are different hosts to the crawler's politeness (which ignores the port).
pub async fn spawn_site_at(ip: &str) -> Site {
    let listener = TcpListener::bind((ip, 0)).await.expect("bind a local port");
    let addr = listener.local_addr().unwrap();
    let heads = Heads::default();
    tokio::spawn(serve_counting(listener, heads.clone()));
    Site { addr, heads }
}

/// Serves the site on `listener` until the runtime stops.
pub async fn serve(listener: TcpListener) {
    serve_counting(listener, Heads::default()).await
}

/// Serves the site on `listener`, counting HEAD requests into `heads`, until the runtime stops.
async fn serve_counting(listener: TcpListener, heads: Heads) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let heads = heads.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                if request.method() == Method::HEAD {
                    let mut heads = heads.lock().unwrap_or_else(PoisonError::into_inner);
                    *heads.entry(request.uri().path().to_owned()).or_default() += 1;
                }
                respond(request)
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

async fn respond(request: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let mut parts = request.uri().path().split('/').skip(1);
    let page = parts.next().and_then(Page::parse);
    let n = parts.next().unwrap_or("0");
    let status = match page {
        Some(Page::Alive) => StatusCode::OK,
        Some(Page::Dead) | None => StatusCode::NOT_FOUND,
        Some(Page::Gone) => StatusCode::GONE,
        Some(Page::Redirect) => StatusCode::MOVED_PERMANENTLY,
        Some(Page::Slow) => {
            tokio::time::sleep(Duration::from_millis(300)).await;
            StatusCode::OK
        }
        Some(Page::Blocked) => StatusCode::FORBIDDEN,
        Some(Page::Error) => StatusCode::INTERNAL_SERVER_ERROR,
        Some(Page::Throttled | Page::Throttled9999 | Page::Busy) => StatusCode::TOO_MANY_REQUESTS,
    };
    let mut response = Response::builder().status(status);
    match page {
        Some(Page::Redirect) => response = response.header("location", format!("/alive/{n}")),
        Some(Page::Throttled) => {
            response = response.header("retry-after", "100000000000000000000000")
        }
        Some(Page::Throttled9999) => {
            response = response.header("retry-after", "Fri, 31 Dec 9999 23:59:59 GMT")
        }
        Some(Page::Busy) => response = response.header("retry-after", "3600"),
        _ => {}
    }
    Ok(response
        .body(Full::new(Bytes::from_static(b"crawler test site\n")))
        .unwrap())
}
