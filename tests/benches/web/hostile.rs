//! The hostile scenario: 34 URLs on one host, shaped like httpbin (`/status/…`, `/redirect/…`,
//! `/delay/…`) plus a hostile server's paths (always 429, 503 with Retry-After, a Retry-After
//! of 10^23 s and one in year 9999, an answer after 30 s, no answer, a redirect to itself).

use std::net::Ipv4Addr;
use std::time::Duration;

use hyper::{Request, StatusCode};
use tokio::net::TcpListener;

use crate::server::{redirect, serve, status, with_header, Answer};
use crate::world::SUFFIX;

pub fn host() -> String {
    format!("hostile.{SUFFIX}")
}

pub const ADDRESS: Ipv4Addr = Ipv4Addr::new(127, 19, 0, 1);

/// The paths of the list, in its order.
pub const PATHS: [&str; 34] = [
    "/status/200",
    "/status/201",
    "/status/204",
    "/status/301",
    "/status/302",
    "/status/400",
    "/status/401",
    "/status/403",
    "/status/404",
    "/status/410",
    "/status/418",
    "/status/429",
    "/status/500",
    "/status/502",
    "/status/503",
    "/status/504",
    "/redirect/1",
    "/redirect/3",
    "/redirect/20",
    "/absolute-redirect/2",
    "/relative-redirect/2",
    "/delay/1",
    "/delay/2",
    "/delay/10",
    "/get",
    "/html",
    "/hostile/always-429",
    "/hostile/503-retry-after",
    "/hostile/retry-after-huge",
    "/hostile/retry-after-9999",
    "/hostile/slow-30s",
    "/hostile/slow-8s",
    "/hostile/hang",
    "/hostile/loop",
];

pub fn urls() -> Vec<String> {
    PATHS
        .iter()
        .map(|p| format!("http://{}{p}", host()))
        .collect()
}

/// Serves the host on its address, port 80.
pub async fn spawn_hostile() {
    let listener = TcpListener::bind((ADDRESS, 80))
        .await
        .expect("bind the hostile host");
    tokio::spawn(serve(
        listener,
        |request: Request<hyper::body::Incoming>| async move { answer(request.uri().path()).await },
    ));
}

async fn answer(path: &str) -> Answer {
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let n = |i: usize| {
        segments
            .get(i)
            .and_then(|s| s.parse::<u64>().ok())
            .unwrap_or(0)
    };
    match segments.as_slice() {
        ["status", code] => match code
            .parse::<u16>()
            .ok()
            .and_then(|c| StatusCode::from_u16(c).ok())
        {
            Some(code) if code.is_redirection() => with_header(status(code), "location", "/get"),
            Some(code) => status(code),
            None => status(StatusCode::BAD_REQUEST),
        },
        ["redirect" | "relative-redirect", _] if n(1) > 1 => {
            redirect(&format!("/relative-redirect/{}", n(1) - 1))
        }
        ["absolute-redirect", _] if n(1) > 1 => {
            redirect(&format!("http://{}/absolute-redirect/{}", host(), n(1) - 1))
        }
        ["redirect" | "relative-redirect" | "absolute-redirect", _] => redirect("/get"),
        ["delay", _] => {
            tokio::time::sleep(Duration::from_secs(n(1).min(30))).await;
            status(StatusCode::OK)
        }
        ["get"] | ["html"] => status(StatusCode::OK),
        ["hostile", "always-429"] => status(StatusCode::TOO_MANY_REQUESTS),
        ["hostile", "503-retry-after"] => {
            with_header(status(StatusCode::SERVICE_UNAVAILABLE), "retry-after", "5")
        }
        ["hostile", "retry-after-huge"] => with_header(
            status(StatusCode::TOO_MANY_REQUESTS),
            "retry-after",
            "100000000000000000000000",
        ),
        ["hostile", "retry-after-9999"] => with_header(
            status(StatusCode::SERVICE_UNAVAILABLE),
            "retry-after",
            "Fri, 31 Dec 9999 23:59:59 GMT",
        ),
        ["hostile", "slow-30s"] => {
            tokio::time::sleep(Duration::from_secs(30)).await;
            status(StatusCode::OK)
        }
        ["hostile", "slow-8s"] => {
            tokio::time::sleep(Duration::from_secs(8)).await;
            status(StatusCode::OK)
        }
        ["hostile", "hang"] => futures::future::pending().await,
        ["hostile", "loop"] => redirect("/hostile/loop"),
        _ => status(StatusCode::NOT_FOUND),
    }
}
