//! A webhook receiver for the notifier's tests (`crawler-reap --notify`): records every POST
//! (its `Idempotency-Key`, `X-Crawler-Signature` and JSON body) and answers as the test says,
//! by the POST's number: a status, or no answer at all (a receiver that hangs). Loopback only.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpListener;

/// How the receiver answers a POST.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    Status(u16),
    /// Never answers (the connection stays open until the client goes).
    Hang,
}

/// One POST as the receiver got it.
#[derive(Clone, Debug)]
pub struct Post {
    pub idempotency_key: Option<String>,
    pub signature: Option<String>,
    pub body: String,
    /// What it was answered (a hung POST: `Hang`).
    pub reply: Reply,
}

impl Post {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).expect("a JSON body")
    }
}

/// A running receiver.
pub struct Webhook {
    pub addr: SocketAddr,
    posts: Arc<Mutex<Vec<Post>>>,
}

impl Webhook {
    /// `http://ADDR/hook/SECRET-PATH`: a URL whose path is a secret, as a Slack webhook's is.
    pub fn url(&self) -> String {
        format!("http://{}/hook/T000-secret-path-B000", self.addr)
    }

    /// Every POST so far, in order.
    pub fn posts(&self) -> Vec<Post> {
        self.posts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The acknowledged digests (answered 2xx), each once by its id: id → its changes' JSON.
    pub fn delivered(&self) -> BTreeMap<String, Vec<Value>> {
        self.posts()
            .into_iter()
            .filter(|p| matches!(p.reply, Reply::Status(200..=299)))
            .map(|p| {
                let json = p.json();
                let id = json["id"].as_str().expect("an id").to_owned();
                let changes = json["changes"].as_array().expect("changes").clone();
                (id, changes)
            })
            .collect()
    }
}

/// Starts a receiver on a free port of 127.0.0.1, answering the n-th POST (from 0) `reply(n)`.
pub async fn spawn_webhook(reply: impl Fn(usize) -> Reply + Send + Sync + 'static) -> Webhook {
    let reply = Arc::new(reply);
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind a local port");
    let addr = listener.local_addr().unwrap();
    let posts: Arc<Mutex<Vec<Post>>> = Arc::default();
    let log = posts.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let (log, reply) = (log.clone(), reply.clone());
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                    let (log, reply) = (log.clone(), reply.clone());
                    async move { Ok::<_, Infallible>(receive(request, &log, &*reply).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Webhook { addr, posts }
}

async fn receive(
    request: Request<Incoming>,
    log: &Mutex<Vec<Post>>,
    reply: &(dyn Fn(usize) -> Reply + Send + Sync),
) -> Response<Full<Bytes>> {
    let header = |name: &str| {
        request
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let (idempotency_key, signature) = (header("idempotency-key"), header("x-crawler-signature"));
    let body = request.into_body().collect().await.map(|b| b.to_bytes());
    let body = String::from_utf8_lossy(&body.unwrap_or_default()).into_owned();
    let answer = {
        let mut log = log.lock().unwrap_or_else(PoisonError::into_inner);
        let answer = reply(log.len());
        log.push(Post {
            idempotency_key,
            signature,
            body,
            reply: answer,
        });
        answer
    };
    match answer {
        Reply::Status(status) => Response::builder()
            .status(status)
            .body(Full::new(Bytes::from_static(b"ok")))
            .unwrap(),
        Reply::Hang => std::future::pending().await,
    }
}
