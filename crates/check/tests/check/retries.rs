//! Retries: which outcomes are asked again, how long the checker waits, `Retry-After`.

use std::time::{Duration, Instant};

use crawler_check::{CheckConfig, Checker, ErrorKind, Next, Verdict};
use hyper::Method;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use crate::helpers::*;

#[tokio::test]
async fn too_many_requests_with_retry_after_1_then_ok_is_alive() {
    let site = spawn_site(|hit| match hit.n {
        0 => respond(429, &[("retry-after", "1")]),
        _ => respond(200, &[]),
    })
    .await;
    let config = CheckConfig {
        retries: 2,
        ..config()
    };
    let started = Instant::now();
    let finding = Checker::new(config).unwrap().check(&site.url("/")).await;
    assert_eq!(
        (finding.verdict, finding.status),
        (Verdict::Alive, Some(200)),
        "{finding:?}"
    );
    assert_eq!((finding.attempts, finding.next.is_transient()), (2, false));
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(950),
        "Retry-After honoured: {waited:?}"
    );
    assert!(waited < Duration::from_secs(2), "{waited:?}");
    // No GET right after a 429; the retry asks with GET, which decides whatever the answer.
    assert_eq!(site.methods(), [Method::HEAD, Method::GET]);
}

#[tokio::test]
async fn service_unavailable_then_ok_is_alive_on_the_second_attempt() {
    // 503 to the first request, then 200: two requests in all, the retry a GET.
    let site = spawn_site(|hit| respond(if hit.n < 1 { 503 } else { 200 }, &[])).await;
    let config = CheckConfig {
        retries: 2,
        ..config()
    };
    let finding = Checker::new(config).unwrap().check(&site.url("/")).await;
    assert_eq!(
        (finding.verdict, finding.status),
        (Verdict::Alive, Some(200)),
        "{finding:?}"
    );
    assert_eq!(finding.attempts, 2);
    assert_eq!(site.methods(), [Method::HEAD, Method::GET]);
}

#[tokio::test]
async fn a_retry_after_beyond_the_cap_is_handed_to_the_queue() {
    let site = spawn_site(|_| respond(429, &[("retry-after", "120")])).await;
    let config = CheckConfig {
        retries: 2,
        retry_after_cap: Duration::from_secs(60),
        ..config()
    };
    let started = Instant::now();
    let finding = Checker::new(config).unwrap().check(&site.url("/")).await;
    assert_eq!(
        (finding.verdict, finding.status),
        (Verdict::Blocked, Some(429))
    );
    assert_eq!(finding.attempts, 1, "no in-process wait for two minutes");
    assert_eq!(
        finding.next,
        Next::Transient {
            not_before: Some(Duration::from_secs(120))
        }
    );
    assert!(started.elapsed() < Duration::from_millis(500));
}

#[tokio::test]
async fn timeouts_are_retried_after_a_backoff() {
    let addr = spawn_raw(|mut stream: TcpStream| async move {
        read_head(&mut stream).await;
        let _ = stream.write_all(b"HTTP/1.1 2").await;
        tokio::time::sleep(Duration::from_secs(30)).await;
    })
    .await;
    let config = CheckConfig {
        retries: 1,
        timeout: Duration::from_millis(400),
        ..config()
    };
    let started = Instant::now();
    let finding = Checker::new(config)
        .unwrap()
        .check(&format!("http://{addr}/"))
        .await;
    assert_eq!(finding.error_kind, Some(ErrorKind::Timeout), "{finding:?}");
    assert_eq!((finding.attempts, finding.next.is_transient()), (2, true));
    // Two timeouts plus a backoff of 0.5–1 s.
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(1300) && took < Duration::from_secs(3),
        "{took:?}"
    );
    assert!(
        finding.latency >= Duration::from_millis(1300),
        "latency counts the retries"
    );
}
