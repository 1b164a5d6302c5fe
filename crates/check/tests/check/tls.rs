//! TLS: a server that does not speak it, and a certificate nobody vouches for.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use crawler_check::{CheckConfig, Checker, ErrorKind, Verdict};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Version};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::{crypto::ring, ServerConfig};
use tokio_rustls::TlsAcceptor;

use crate::helpers::*;

/// Self-signed for 127.0.0.1 and localhost (made with `openssl req -x509`).
const CERT: &[u8] = include_bytes!("fixtures/cert.pem");
const KEY: &[u8] = include_bytes!("fixtures/key.pem");

/// Signed by `fixtures/ca.pem` ("crawler test CA") for 127.0.0.1 and localhost.
const LEAF: &[u8] = include_bytes!("fixtures/leaf.pem");
const LEAF_KEY: &[u8] = include_bytes!("fixtures/leaf-key.pem");

/// A TLS acceptor with the self-signed certificate, offering these ALPN protocols.
fn acceptor(alpn: &[&[u8]]) -> TlsAcceptor {
    acceptor_with(CERT, KEY, alpn)
}

/// A TLS acceptor presenting `cert` (PEM, the chain) with `key`.
fn acceptor_with(cert: &[u8], key: &[u8], alpn: &[&[u8]]) -> TlsAcceptor {
    let certs = CertificateDer::pem_slice_iter(cert)
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_slice(key).unwrap();
    let mut config = ServerConfig::builder_with_provider(Arc::new(ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    TlsAcceptor::from(Arc::new(config))
}

/// An HTTPS server with the self-signed certificate, answering 200 to anything.
async fn spawn_self_signed() -> String {
    spawn_https(acceptor(&[])).await
}

/// An HTTPS server with the certificate [`LEAF`], which only `fixtures/ca.pem` vouches for.
pub async fn spawn_ca_signed() -> String {
    spawn_https(acceptor_with(LEAF, LEAF_KEY, &[])).await
}

/// An HTTPS server answering 200 to anything, behind `acceptor`.
async fn spawn_https(acceptor: TlsAcceptor) -> String {
    let addr = spawn_raw(move |stream: TcpStream| {
        let acceptor = acceptor.clone();
        async move {
            let Ok(mut tls) = acceptor.accept(stream).await else {
                return;
            };
            let _ = tls
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
                .await;
            let _ = tls.shutdown().await;
        }
    })
    .await;
    format!("https://127.0.0.1:{}/", addr.port())
}

#[tokio::test]
async fn a_plain_http_answer_to_a_client_hello_is_a_tls_failure() {
    let addr = spawn_raw(|mut stream: TcpStream| async move {
        let mut hello = [0u8; 4096];
        let _ = stream.read(&mut hello).await;
        let _ = stream
            .write_all(b"HTTP/1.1 400 Bad Request\r\n\r\nplain text")
            .await;
        tokio::time::sleep(std::time::Duration::from_secs(5)).await;
    })
    .await;
    let finding = Checker::new(config())
        .unwrap()
        .check(&format!("https://{addr}/"))
        .await;
    assert_eq!(finding.verdict, Verdict::Unreachable, "{finding:?}");
    assert_eq!(finding.error_kind, Some(ErrorKind::Tls));
    assert_eq!((finding.attempts, finding.next.is_transient()), (1, false));
}

#[tokio::test]
async fn a_self_signed_certificate_is_a_tls_failure() {
    let url = spawn_self_signed().await;
    let finding = Checker::new(config()).unwrap().check(&url).await;
    assert_eq!(finding.verdict, Verdict::Unreachable, "{finding:?}");
    assert_eq!(finding.error_kind, Some(ErrorKind::Tls));
}

/// Checks `url` with `--insecure` and expects it alive.
async fn assert_alive_when_insecure(url: &str) {
    let config = CheckConfig {
        insecure: true,
        ..config()
    };
    let finding = Checker::new(config).unwrap().check(url).await;
    assert_eq!(
        (finding.verdict, finding.status),
        (Verdict::Alive, Some(200)),
        "{finding:?}"
    );
}

#[tokio::test]
async fn insecure_accepts_a_self_signed_certificate() {
    let url = spawn_self_signed().await;
    assert_alive_when_insecure(&url).await;
}

/// An HTTPS site that offers HTTP/2 by ALPN, and logs the version of each request.
async fn spawn_h2_site() -> (String, Arc<Mutex<Vec<Version>>>) {
    let acceptor = acceptor(&[b"h2", b"http/1.1"]);
    let versions = Arc::new(Mutex::new(Vec::new()));
    let log = versions.clone();
    let addr = spawn_raw(move |stream: TcpStream| {
        let (acceptor, log) = (acceptor.clone(), log.clone());
        async move {
            let Ok(tls) = acceptor.accept(stream).await else {
                return;
            };
            let service = service_fn(move |req: Request<Incoming>| {
                log.lock().unwrap().push(req.version());
                async { Ok::<_, Infallible>(respond(200, &[])) }
            });
            let conn = hyper::server::conn::http2::Builder::new(TokioExecutor::new());
            let _ = conn.serve_connection(TokioIo::new(tls), service).await;
        }
    })
    .await;
    (format!("https://127.0.0.1:{}/", addr.port()), versions)
}

#[tokio::test]
async fn http2_is_negotiated_by_alpn() {
    let (url, versions) = spawn_h2_site().await;
    assert_alive_when_insecure(&url).await;
    assert_eq!(*versions.lock().unwrap(), [Version::HTTP_2]);
}
