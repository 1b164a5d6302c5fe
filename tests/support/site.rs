//! A local website whose pages answer as their path says, so a test knows each URL's verdict:
//! `/alive/N` 200, `/dead/N` 404, `/gone/N` 410, `/redirect/N` 301 to `/alive/N`, `/slow/N`
//! 200 after 300 ms, `/blocked/N` 403, `/error/N` 500, and two hostile ones: `/throttled/N`
//! 429 with an absurd `Retry-After` in seconds, `/throttled-9999/N` 429 with a `Retry-After`
//! date in year 9999, `/busy/N` 429 with `Retry-After: 3600`. Served on loopback only.
//! The site counts the requests of each path ([`Site::requests`]), and the checks they began
//! ([`Site::checks`]): a count of checks above one is a site checked twice.

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
    counts: Counts,
}

/// Per path: the requests answered, and the checks they began. A mutex: one short insert per
/// request, far below its cost.
type Counts = Arc<Mutex<HashMap<String, Count>>>;

#[derive(Default)]
struct Count {
    requests: usize,
    checks: usize,
}

impl Site {
    pub fn url(&self, page: Page, n: usize) -> String {
        format!("http://{}/{}/{n}", self.addr, page.name())
    }

    /// The requests the site answered so far, of any method, by path (`/alive/7`).
    pub fn requests(&self) -> HashMap<String, usize> {
        self.counted(|count| count.requests)
    }

    /// The checks begun so far, by path. A check asks with HEAD or with GET (the worker's
    /// `check/head.rs`); a HEAD whose answer cannot decide (4xx but a throttle, 5xx) is followed
    /// by the same check's GET. So every GET counts, and a HEAD only where its answer decided.
    pub fn checks(&self) -> HashMap<String, usize> {
        self.counted(|count| count.checks)
    }

    fn counted(&self, which: fn(&Count) -> usize) -> HashMap<String, usize> {
        let counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        counts
            .iter()
            .map(|(path, count)| (path.clone(), which(count)))
            .filter(|&(_, n)| n > 0)
            .collect()
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
    let counts = Counts::default();
    tokio::spawn(serve_counting(listener, counts.clone()));
    Site { addr, counts }
}

/// Serves the site on `listener` until the runtime stops.
pub async fn serve(listener: TcpListener) {
    serve_counting(listener, Counts::default()).await
}

/// Serves the site on `listener`, counting requests and checks into `counts`, until the
/// runtime stops. Counted before the answer leaves, so a worker never writes a verdict the
/// count has yet to see.
async fn serve_counting(listener: TcpListener, counts: Counts) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let counts = counts.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                let counts = counts.clone();
                async move {
                    let (head, path) = (request.method() == Method::HEAD, request.uri().path());
                    let path = path.to_owned();
                    let response = respond(request).await?;
                    let status = response.status().as_u16();
                    let decided = status < 400 || matches!(status, 429 | 503);
                    let mut counts = counts.lock().unwrap_or_else(PoisonError::into_inner);
                    let count = counts.entry(path).or_default();
                    count.requests += 1;
                    count.checks += usize::from(!head || decided);
                    Ok::<_, Infallible>(response)
                }
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
