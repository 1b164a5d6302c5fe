//! Servers that misbehave on purpose: each check must end within the timeout, read a bounded
//! amount, and not panic.

use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crawler_check::{Checker, ErrorKind, Finding, Verdict};
use flate2::{write::GzEncoder, Compression};
use hyper::Method;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use crate::helpers::*;

async fn check(url: &str) -> (Finding, Duration) {
    let started = Instant::now();
    let finding = Checker::new(config()).unwrap().check(url).await;
    (finding, started.elapsed())
}

/// A raw server answering HEAD with 405 (so the checker GETs), and GET with `head` then
/// `chunk` repeated until the client goes away; counts the bytes it managed to send.
async fn spawn_endless(head: &'static [u8], chunk: Vec<u8>) -> (String, Arc<AtomicUsize>) {
    let sent = Arc::new(AtomicUsize::new(0));
    let (chunk, counter) = (Arc::new(chunk), sent.clone());
    let addr = spawn_raw(move |mut stream: TcpStream| {
        let (chunk, sent) = (chunk.clone(), counter.clone());
        async move {
            if read_head(&mut stream).await.as_deref() == Some("HEAD") {
                let _ = stream
                    .write_all(b"HTTP/1.1 405 No\r\ncontent-length: 0\r\n\r\n")
                    .await;
                read_head(&mut stream).await;
            }
            let _ = stream.write_all(head).await;
            while stream.write_all(&chunk).await.is_ok() {
                sent.fetch_add(chunk.len(), Ordering::Relaxed);
            }
        }
    })
    .await;
    (format!("http://{addr}/"), sent)
}

#[tokio::test]
async fn an_endless_body_is_cut_after_a_prefix() {
    let head = b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\n\r\n";
    let (url, sent) = spawn_endless(head, vec![b'x'; 64 * 1024]).await;
    let (finding, took) = check(&url).await;
    assert_eq!(finding.verdict, Verdict::Alive, "{finding:?}");
    assert_eq!(finding.status, Some(200));
    assert!(took < Duration::from_secs(1), "{took:?}");
    tokio::time::sleep(Duration::from_millis(100)).await;
    let sent = sent.load(Ordering::Relaxed);
    assert!(
        sent < 64 << 20,
        "the server got {sent} bytes out: the body was not dropped"
    );
}

#[tokio::test]
async fn a_gzip_bomb_is_never_inflated() {
    // Gzip members may be concatenated: each inflates to 1 MiB of zeros from about 1 KiB.
    let mut member = GzEncoder::new(Vec::new(), Compression::best());
    member.write_all(&vec![0u8; 1 << 20]).unwrap();
    let head = b"HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\ncontent-type: text/html\r\n\r\n";
    let (url, _) = spawn_endless(head, member.finish().unwrap()).await;
    let (finding, took) = check(&url).await;
    assert_eq!(finding.verdict, Verdict::Alive, "{finding:?}");
    assert!(took < Duration::from_secs(1), "{took:?}");
}

#[tokio::test]
async fn no_request_asks_for_compression() {
    let site =
        spawn_site(|hit| respond(if hit.method == Method::HEAD { 405 } else { 200 }, &[])).await;
    let (finding, _) = check(&site.url("/")).await;
    assert_eq!(finding.verdict, Verdict::Alive);
    let hits = site.hits();
    assert_eq!(hits.len(), 2);
    assert!(hits.iter().all(|h| h.accept_encoding.is_none()), "{hits:?}");
}

#[tokio::test]
async fn head_refused_with_405_is_asked_again_with_get() {
    let site =
        spawn_site(|hit| respond(if hit.method == Method::HEAD { 405 } else { 200 }, &[])).await;
    let (finding, _) = check(&site.url("/page")).await;
    assert_eq!(
        (finding.verdict, finding.status),
        (Verdict::Alive, Some(200))
    );
    assert_eq!(finding.attempts, 1);
    assert_eq!(site.methods(), [Method::HEAD, Method::GET]);
}

#[tokio::test]
async fn a_host_that_refused_head_is_asked_with_get_at_once() {
    let site =
        spawn_site(|hit| respond(if hit.method == Method::HEAD { 405 } else { 200 }, &[])).await;
    let checker = Checker::new(config()).unwrap();
    for page in ["/a", "/b", "/c"] {
        let finding = checker.check(&site.url(page)).await;
        assert_eq!(finding.verdict, Verdict::Alive, "{page}: {finding:?}");
    }
    assert_eq!(
        site.methods(),
        [Method::HEAD, Method::GET, Method::GET, Method::GET]
    );
}

#[tokio::test]
async fn a_host_refusing_both_head_and_get_keeps_being_asked_with_head() {
    let site = spawn_site(|_| respond(405, &[])).await;
    let checker = Checker::new(config()).unwrap();
    for page in ["/a", "/b"] {
        checker.check(&site.url(page)).await;
    }
    assert_eq!(
        site.methods(),
        [Method::HEAD, Method::GET, Method::HEAD, Method::GET]
    );
}

/// A raw server that answers every request with `reply`.
async fn spawn_replying(reply: Vec<u8>) -> String {
    let reply = Arc::new(reply);
    let addr = spawn_raw(move |mut stream: TcpStream| {
        let reply = reply.clone();
        async move {
            read_head(&mut stream).await;
            let _ = stream.write_all(&reply).await;
        }
    })
    .await;
    format!("http://{addr}/")
}

#[tokio::test]
async fn tens_of_thousands_of_headers_are_a_protocol_error() {
    let mut reply = b"HTTP/1.1 200 OK\r\n".to_vec();
    for i in 0..50_000 {
        reply.extend_from_slice(format!("x-header-{i}: value\r\n").as_bytes());
    }
    reply.extend_from_slice(b"content-length: 0\r\n\r\n");
    let (finding, took) = check(&spawn_replying(reply).await).await;
    assert_eq!(finding.verdict, Verdict::Error, "{finding:?}");
    assert_eq!(finding.error_kind, Some(ErrorKind::Protocol));
    assert!(took < Duration::from_secs(2), "{took:?}");
}

#[tokio::test]
async fn an_endless_header_is_a_protocol_error() {
    let (url, _) = spawn_endless(b"HTTP/1.1 200 OK\r\nx-long: ", vec![b'a'; 64 * 1024]).await;
    let (finding, took) = check(&url).await;
    assert_eq!(finding.verdict, Verdict::Error, "{finding:?}");
    assert_eq!(finding.error_kind, Some(ErrorKind::Protocol));
    assert!(took < Duration::from_secs(2), "{took:?}");
}

#[tokio::test]
async fn a_location_that_is_not_a_url_is_a_protocol_error() {
    let site = spawn_site(|_| respond(301, &[("location", "http://[oops")])).await;
    let (finding, _) = check(&site.url("/")).await;
    assert_eq!(finding.verdict, Verdict::Error, "{finding:?}");
    assert_eq!(finding.error_kind, Some(ErrorKind::Protocol));
    assert_eq!((finding.status, finding.redirects), (Some(301), 0));
}

#[tokio::test]
async fn a_redirect_without_location_is_a_protocol_error() {
    let site = spawn_site(|_| respond(302, &[])).await;
    let (finding, _) = check(&site.url("/")).await;
    assert_eq!(finding.error_kind, Some(ErrorKind::Protocol), "{finding:?}");
    assert_eq!(finding.status, Some(302));
}

#[tokio::test]
async fn a_challenge_header_blocks_only_a_403_or_a_503() {
    let challenge = [("cf-mitigated", "challenge")];
    let site = spawn_site(move |hit| match hit.path.as_str() {
        "/gone" => respond(404, &challenge),
        "/teapot" => respond(418, &challenge),
        "/busy" => respond(503, &challenge),
        _ => respond(403, &challenge),
    })
    .await;
    for (path, verdict) in [
        ("/gone", Verdict::Dead),
        ("/teapot", Verdict::Dead),
        ("/busy", Verdict::Blocked),
        ("/wall", Verdict::Blocked),
    ] {
        let (finding, _) = check(&site.url(path)).await;
        assert_eq!(finding.verdict, verdict, "{path}: {finding:?}");
        // A challenge page answers the same however often it is asked.
        assert!(!finding.next.is_transient(), "{path}: {finding:?}");
    }
}

/// A site whose `/` redirects to `location(own address)`, and whose other pages answer 200.
async fn spawn_redirecting_to(location: fn(&str) -> String) -> Site {
    let own = Arc::new(std::sync::OnceLock::<String>::new());
    let addr = own.clone();
    let site = spawn_site(move |hit| match hit.path.as_str() {
        "/" => respond(302, &[("location", &location(addr.get().unwrap()))]),
        _ => respond(200, &[]),
    })
    .await;
    own.set(site.addr.to_string()).unwrap();
    site
}

#[tokio::test]
async fn credentials_a_server_plants_in_a_redirect_are_neither_sent_nor_stored() {
    let site = spawn_redirecting_to(|own| format!("http://user:s3cret@{own}/landing")).await;
    let (finding, _) = check(&site.url("/")).await;
    assert_eq!(finding.verdict, Verdict::Alive, "{finding:?}");
    assert_eq!(
        finding.final_url.as_deref(),
        Some(site.url("/landing").as_str())
    );
    let landing = &site.hits()[1];
    assert_eq!(landing.path, "/landing");
    assert_eq!(landing.authorization, None, "the planted password was sent");
}

#[tokio::test]
async fn credentials_of_the_list_go_to_their_own_host_only_and_are_never_stored() {
    let landing = spawn_site(|_| respond(200, &[])).await;
    let (finding, _) = check(&landing.url("/").replace("//", "//op:pw@")).await;
    assert_eq!(
        finding.final_url.as_deref(),
        Some(landing.url("/").as_str())
    );
    // "op:pw" in Basic: the operator put it in the list for this host.
    let sent = landing.hits()[0].authorization.clone();
    assert_eq!(sent.as_deref(), Some("Basic b3A6cHc="));

    let away = landing.url("/elsewhere");
    let site = spawn_site(move |_| respond(302, &[("location", &away)])).await;
    let (finding, _) = check(&site.url("/").replace("//", "//op:pw@")).await;
    assert_eq!(finding.verdict, Verdict::Alive, "{finding:?}");
    let hit = landing.hits().pop().unwrap();
    assert_eq!((hit.path.as_str(), hit.authorization), ("/elsewhere", None));
    assert!(!finding.final_url.unwrap().contains("pw"));
}
