//! A local stand-in for the Wayback Machine's availability API
//! (`GET /wayback/available?url=URL&timestamp=YYYYMMDDhhmmss`), for `--archive-lookup`: it has a
//! copy of every URL but those holding `nocopy`, answers its first request 503 (with
//! `Retry-After: 0`) so that a lookup must retry, and records every request. Loopback only.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

/// The snapshot time the stand-in gives every copy.
pub const SNAPSHOT: &str = "20130919044612";

/// A running stand-in.
pub struct Archive {
    pub addr: SocketAddr,
    asked: Arc<Mutex<Vec<HashMap<String, String>>>>,
}

impl Archive {
    /// The API's URL, for `--archive-api`.
    pub fn api(&self) -> String {
        format!("http://{}/wayback/available", self.addr)
    }

    /// The query of every request so far, in order (the 503 included).
    pub fn asked(&self) -> Vec<HashMap<String, String>> {
        self.asked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The copy the stand-in has of `url`.
    pub fn copy_of(url: &str) -> String {
        format!("http://archive.test/web/{SNAPSHOT}/{url}")
    }
}

/// Starts the stand-in on a free port of 127.0.0.1.
pub async fn spawn_archive() -> Archive {
    let listener = TcpListener::bind(("127.0.0.1", 0))
        .await
        .expect("bind a local port");
    let addr = listener.local_addr().unwrap();
    let asked: Arc<Mutex<Vec<HashMap<String, String>>>> = Arc::default();
    let failed_once = Arc::new(AtomicBool::new(false));
    let log = asked.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let (log, failed_once) = (log.clone(), failed_once.clone());
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                    let query: HashMap<String, String> =
                        url::form_urlencoded::parse(request.uri().query().unwrap_or("").as_bytes())
                            .into_owned()
                            .collect();
                    log.lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(query.clone());
                    let response = if !failed_once.swap(true, Ordering::SeqCst) {
                        Response::builder()
                            .status(503)
                            .header("retry-after", "0")
                            .body(Full::new(Bytes::new()))
                    } else {
                        Response::builder()
                            .header("content-type", "application/json")
                            .body(Full::new(Bytes::from(answer(&query))))
                    };
                    async move { Ok::<_, Infallible>(response.unwrap()) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Archive { addr, asked }
}

/// The availability API's answer for a query.
fn answer(query: &HashMap<String, String>) -> String {
    let url = query.get("url").cloned().unwrap_or_default();
    if url.contains("nocopy") || url.is_empty() {
        return serde_json::json!({ "url": url, "archived_snapshots": {} }).to_string();
    }
    serde_json::json!({
        "url": url,
        "archived_snapshots": {
            "closest": {
                "status": "200",
                "available": true,
                "url": Archive::copy_of(&url),
                "timestamp": SNAPSHOT,
            }
        }
    })
    .to_string()
}
