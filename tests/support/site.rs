//! A local website whose pages answer as their path says, so a test knows each URL's verdict:
//! `/alive/N` 200, `/dead/N` 404, `/gone/N` 410, `/redirect/N` 301 to `/alive/N`, `/slow/N`
//! 200 after 300 ms, `/blocked/N` 403, `/error/N` 500, and two hostile ones: `/throttled/N`
//! 429 with an absurd `Retry-After` in seconds, `/throttled-9999/N` 429 with a `Retry-After`
//! date in year 9999, `/busy/N` 429 with `Retry-After: 3600`. Served on loopback only.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
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
}

impl Site {
    pub fn url(&self, page: Page, n: usize) -> String {
        format!("http://{}/{}/{n}", self.addr, page.name())
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
    tokio::spawn(serve(listener));
    Site { addr }
}

/// Serves the site on `listener` until the runtime stops.
pub async fn serve(listener: TcpListener) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        tokio::spawn(async move {
            let service = hyper::service::service_fn(respond);
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
