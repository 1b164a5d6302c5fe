//! One test per row of the verdict table (TLS and redirects have their own files).

use std::time::{Duration, Instant};

use crawler_check::{CheckConfig, Checker, ErrorKind, Finding, Verdict};
use hyper::Method;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpSocket, TcpStream};

use crate::helpers::*;

async fn check(config: CheckConfig, url: &str) -> Finding {
    Checker::new(config).unwrap().check(url).await
}

/// A site answering `/status/NNN` with that status.
async fn spawn_status_site() -> Site {
    spawn_site(|hit| {
        let code = hit
            .path
            .trim_start_matches("/status/")
            .parse()
            .unwrap_or(500);
        match hit.path.as_str() {
            "/cf" => respond(403, &[("cf-mitigated", "challenge")]),
            _ => respond(code, &[]),
        }
    })
    .await
}

fn assert_answer(finding: &Finding, verdict: Verdict, status: u16) {
    assert_eq!(finding.verdict, verdict, "{finding:?}");
    assert_eq!(finding.status, Some(status), "{finding:?}");
    assert_eq!(finding.error_kind, None, "{finding:?}");
}

fn assert_failure(finding: &Finding, verdict: Verdict, kind: ErrorKind) {
    assert_eq!(finding.verdict, verdict, "{finding:?}");
    assert_eq!(finding.error_kind, Some(kind), "{finding:?}");
    assert_eq!(finding.status, None, "{finding:?}");
}

#[tokio::test]
async fn a_2xx_answer_is_alive_after_a_single_head() {
    let site = spawn_status_site().await;
    let url = site.url("/status/200");
    let finding = check(config(), &url).await;
    assert_answer(&finding, Verdict::Alive, 200);
    assert_eq!(finding.final_url.as_deref(), Some(url.as_str()));
    assert_eq!(
        (
            finding.redirects,
            finding.attempts,
            finding.next.is_transient()
        ),
        (0, 1, false)
    );
    assert_eq!(site.methods(), [Method::HEAD]);
    let agent = site.hits()[0].user_agent.clone().unwrap_or_default();
    assert!(
        agent.starts_with("crawler/"),
        "an honest user agent: {agent}"
    );
}

#[tokio::test]
async fn not_found_gone_and_other_4xx_are_dead() {
    let site = spawn_status_site().await;
    for code in [404, 410, 400, 418] {
        let finding = check(config(), &site.url(&format!("/status/{code}"))).await;
        assert_answer(&finding, Verdict::Dead, code);
        assert!(!finding.next.is_transient());
    }
}

#[tokio::test]
async fn refusals_and_bot_walls_are_blocked() {
    let site = spawn_status_site().await;
    for code in [401, 403, 407, 451, 999] {
        let finding = check(config(), &site.url(&format!("/status/{code}"))).await;
        assert_answer(&finding, Verdict::Blocked, code);
    }
    let finding = check(config(), &site.url("/cf")).await;
    assert_answer(&finding, Verdict::Blocked, 403);
}

#[tokio::test]
async fn too_many_requests_after_retries_is_blocked_and_transient() {
    let site = spawn_status_site().await;
    let config = CheckConfig {
        retries: 1,
        ..config()
    };
    let finding = check(config, &site.url("/status/429")).await;
    assert_answer(&finding, Verdict::Blocked, 429);
    assert_eq!((finding.attempts, finding.next.is_transient()), (2, true));
    assert_eq!(
        site.methods(),
        [Method::HEAD, Method::GET],
        "no GET right after a 429; the retry asks with GET"
    );
}

#[tokio::test]
async fn server_errors_after_retries_are_transient_errors() {
    let site = spawn_status_site().await;
    let config = CheckConfig {
        retries: 1,
        ..config()
    };
    let finding = check(config, &site.url("/status/500")).await;
    assert_answer(&finding, Verdict::Error, 500);
    assert_eq!((finding.attempts, finding.next.is_transient()), (2, true));
    let asked = [Method::HEAD, Method::GET, Method::GET];
    assert_eq!(
        site.methods(),
        asked,
        "a 5xx HEAD is asked again with GET, and the retry asks with GET alone"
    );
    let finding = check(self::config(), &site.url("/status/408")).await;
    assert_answer(&finding, Verdict::Error, 408);
    assert!(finding.next.is_transient());
}

#[tokio::test]
async fn an_unknown_name_is_unreachable_dns_and_not_retried() {
    let config = CheckConfig {
        retries: 2,
        ..config()
    };
    let finding = check(config, "http://no-such-host.invalid/page").await;
    assert_failure(&finding, Verdict::Unreachable, ErrorKind::Dns);
    assert_eq!((finding.attempts, finding.next.is_transient()), (1, false));
    assert_eq!(finding.final_url, None);
}

#[tokio::test]
async fn a_refused_connection_is_unreachable_connect_and_not_retried() {
    let port = closed_port().await;
    let config = CheckConfig {
        retries: 2,
        ..config()
    };
    let finding = check(config, &format!("http://127.0.0.1:{port}/")).await;
    assert_failure(&finding, Verdict::Unreachable, ErrorKind::Connect);
    assert_eq!((finding.attempts, finding.next.is_transient()), (1, false));
}

#[tokio::test]
async fn a_host_that_resets_every_connection_is_decided_unreachable_for_the_host() {
    let addr = spawn_raw(|mut stream: TcpStream| async move {
        read_head(&mut stream).await;
        stream.set_zero_linger().unwrap(); // close with RST
    })
    .await;
    let config = CheckConfig {
        retries: 1,
        ..config()
    };
    let finding = check(config, &format!("http://{addr}/")).await;
    assert_failure(&finding, Verdict::Unreachable, ErrorKind::Connect);
    // HEAD and GET were both reset: two failures in a row decide the host, so the retry asks
    // nothing and the verdict is final.
    assert_eq!((finding.attempts, finding.next.is_transient()), (2, false));
    let detail = finding.detail.unwrap_or_default();
    assert!(detail.starts_with("decided for the host"), "{detail}");
}

#[tokio::test]
async fn headers_sent_one_byte_a_second_time_out_without_a_get() {
    let (tx, mut connections) = tokio::sync::mpsc::unbounded_channel();
    let addr = spawn_raw(move |mut stream: TcpStream| {
        let tx = tx.clone();
        async move {
            tx.send(()).unwrap();
            read_head(&mut stream).await;
            for byte in b"HTTP/1.1 200 OK\r\n".iter().cycle() {
                if stream.write_all(&[*byte]).await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    })
    .await;
    let started = Instant::now();
    let finding = check(config(), &format!("http://{addr}/")).await;
    assert_failure(&finding, Verdict::Unreachable, ErrorKind::Timeout);
    assert!(
        started.elapsed() < Duration::from_millis(2500),
        "{:?}",
        started.elapsed()
    );
    assert_eq!((finding.attempts, finding.next.is_transient()), (1, true));
    connections.recv().await.unwrap();
    assert!(
        connections.try_recv().is_err(),
        "a timed-out HEAD is not followed by a GET"
    );
}

#[tokio::test]
async fn a_connection_never_accepted_hits_the_connect_timeout() {
    // A backlog of 0 holds one unaccepted connection; the kernel drops later SYNs.
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind((LOCALHOST, 0).into()).unwrap();
    let listener = socket.listen(0).unwrap();
    let addr = listener.local_addr().unwrap();
    let _filler = TcpStream::connect(addr).await.unwrap();
    let config = CheckConfig {
        connect_timeout: Duration::from_millis(300),
        ..config()
    };
    let started = Instant::now();
    let finding = check(config, &format!("http://{addr}/")).await;
    assert_failure(&finding, Verdict::Unreachable, ErrorKind::Timeout);
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn bytes_that_are_not_http_are_a_protocol_error() {
    let addr = spawn_raw(|mut stream: TcpStream| async move {
        let _ = stream
            .write_all(b"SSH-2.0-OpenSSH_9.6\r\nnot http at all\r\n\r\n")
            .await;
    })
    .await;
    let finding = check(config(), &format!("http://{addr}/")).await;
    assert_failure(&finding, Verdict::Error, ErrorKind::Protocol);
    assert!(!finding.next.is_transient());
}

#[tokio::test]
async fn a_scheme_other_than_http_is_a_protocol_error() {
    let finding = check(config(), "ftp://127.0.0.1/file").await;
    assert_failure(&finding, Verdict::Error, ErrorKind::Protocol);
    assert_eq!(finding.attempts, 0);
}

#[tokio::test]
async fn http_1_0_with_a_close_delimited_body_is_alive() {
    let addr = spawn_raw(|mut stream: TcpStream| async move {
        let reply: &[u8] = match read_head(&mut stream).await.as_deref() {
            Some("HEAD") => b"HTTP/1.0 405 Method Not Allowed\r\n\r\n",
            _ => b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n<html>hello</html>",
        };
        let _ = stream.write_all(reply).await;
    })
    .await;
    let finding = check(config(), &format!("http://{addr}/")).await;
    assert_answer(&finding, Verdict::Alive, 200);
}
