//! A local static website for recursive checks (`--follow`): a table of paths (with their
//! query, if any) and what each answers, on a loopback address. It counts every request by
//! method and path, so a test sees a page read twice, or a link it should never have asked.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

/// What one path answers.
#[derive(Clone, Debug)]
pub struct Answer {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
    /// A redirect's `Location`.
    pub location: Option<String>,
}

impl Answer {
    pub fn html(body: impl Into<String>) -> Answer {
        Answer {
            status: 200,
            content_type: "text/html; charset=utf-8",
            body: body.into().into_bytes(),
            location: None,
        }
    }

    pub fn with(status: u16, content_type: &'static str, body: impl Into<Vec<u8>>) -> Answer {
        Answer {
            status,
            content_type,
            body: body.into(),
            location: None,
        }
    }

    pub fn redirect(status: u16, location: &str) -> Answer {
        Answer {
            status,
            content_type: "text/html",
            body: Vec::new(),
            location: Some(location.to_owned()),
        }
    }
}

/// Requests answered, by `METHOD /path?query`.
type Requests = Arc<Mutex<HashMap<String, usize>>>;

/// The pages a site serves, which a test may change between passes.
type Pages = Arc<Mutex<HashMap<String, Answer>>>;

/// A running static site; it stops with the test's runtime.
pub struct StaticSite {
    pub addr: SocketAddr,
    requests: Requests,
    pages: Pages,
}

impl StaticSite {
    /// `http://ADDR` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// From now on, `path` answers `answer` (a page that dies, recovers or moves).
    pub fn set(&self, path: &str, answer: Answer) {
        self.pages
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(path.to_owned(), answer);
    }

    /// Requests answered so far, by `METHOD /path?query` (`GET /docs/a.html`).
    pub fn requests(&self) -> HashMap<String, usize> {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Serves `pages` (path and query → answer; anything else is a 404) on a free port of `ip`.
pub async fn spawn_static_site(ip: &str, pages: HashMap<String, Answer>) -> StaticSite {
    let listener = TcpListener::bind((ip, 0)).await.expect("bind a local port");
    serve_static(listener, pages)
}

/// Serves `pages` on `listener` (bound first when the pages name their own address).
pub fn serve_static(listener: TcpListener, pages: HashMap<String, Answer>) -> StaticSite {
    let addr = listener.local_addr().unwrap();
    let requests = Requests::default();
    let pages: Pages = Arc::new(Mutex::new(pages));
    let served = pages.clone();
    let counted = requests.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let (pages, counted) = (served.clone(), counted.clone());
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                    let target = request
                        .uri()
                        .path_and_query()
                        .map_or("/".to_owned(), |p| p.as_str().to_owned());
                    *counted
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .entry(format!("{} {target}", request.method()))
                        .or_default() += 1;
                    let answer = pages
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .get(&target)
                        .cloned();
                    async move { Ok::<_, Infallible>(respond(answer)) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    StaticSite {
        addr,
        requests,
        pages,
    }
}

fn respond(answer: Option<Answer>) -> Response<Full<Bytes>> {
    let answer = answer.unwrap_or_else(|| Answer::with(404, "text/html", "not found"));
    let mut response = Response::builder()
        .status(answer.status)
        .header("content-type", answer.content_type);
    if let Some(location) = &answer.location {
        response = response.header("location", location);
    }
    response.body(Full::new(Bytes::from(answer.body))).unwrap()
}
