//! The request options: headers, per-host basic auth, the cookie jar, accepted statuses, an
//! extra certificate authority and the system's, and `--include`/`--exclude`.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr};
use std::process::Command;
use std::time::SystemTime;

use crawler_check::{BasicAuth, CheckConfig, Checker, CookieJar, Finding, StatusSet, Verdict};
use crawler_verdict::filter::{Regex, UrlFilter};
use reqwest::header::{HeaderMap, HeaderValue};

use crate::helpers::*;
use crate::tls::spawn_ca_signed;

/// A loopback address that is another host than 127.0.0.1 for the checker.
const OTHER_HOST: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));

/// "crawler test CA", which signed `fixtures/leaf.pem`.
const CA: &[u8] = include_bytes!("fixtures/ca.pem");
const CA_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/check/fixtures/ca.pem");
/// Set in the process that [`the_systems_roots_are_trusted`] starts.
const SYSTEM_STORE_CHILD: &str = "CRAWLER_TEST_SYSTEM_STORE_CHILD";

async fn check(config: CheckConfig, url: &str) -> Finding {
    Checker::new(config).unwrap().check(url).await
}

/// A site on `ip` answering `status` to everything.
async fn spawn_answering(ip: IpAddr, status: u16) -> Site {
    spawn_site_async(ip, move |_| async move { respond(status, &[]) }).await
}

fn header<'a>(hit: &'a Hit, name: &str) -> Option<&'a str> {
    hit.headers.get(name).map(|v| v.to_str().unwrap())
}

#[tokio::test]
async fn headers_are_sent_with_every_request() {
    // 404: HEAD, then GET; both carry the headers.
    let site = spawn_answering(LOCALHOST, 404).await;
    let mut headers = HeaderMap::new();
    headers.insert("x-token", HeaderValue::from_static("abc"));
    headers.insert("user-agent", HeaderValue::from_static("mine/1"));
    let config = CheckConfig {
        headers,
        ..config()
    };
    check(config, &site.url("/")).await;
    let hits = site.hits();
    assert_eq!(hits.len(), 2);
    for hit in &hits {
        assert_eq!(header(hit, "x-token"), Some("abc"), "{hit:?}");
        assert_eq!(hit.user_agent.as_deref(), Some("mine/1"));
    }
}

#[tokio::test]
async fn basic_auth_goes_to_its_host_and_not_to_another_after_a_redirect() {
    let away = spawn_answering(OTHER_HOST, 200).await;
    let to_away = away.url("/landing");
    let own = spawn_site(move |hit| match hit.path.as_str() {
        "/" => respond(302, &[("location", &to_away)]),
        _ => respond(200, &[]),
    })
    .await;
    let config = CheckConfig {
        basic_auth: HashMap::from([("127.0.0.1".into(), BasicAuth::new("op", "pw"))]),
        ..config()
    };
    let finding = check(config, &own.url("/")).await;
    assert_eq!((finding.verdict, finding.redirects), (Verdict::Alive, 1));
    // "op:pw" in Basic.
    let sent = own.hits()[0].authorization.clone();
    assert_eq!(sent.as_deref(), Some("Basic b3A6cHc="));
    assert_eq!(away.hits()[0].authorization, None, "sent to another host");
}

#[tokio::test]
async fn a_host_header_goes_to_its_host_and_not_to_another_after_a_redirect() {
    let away = spawn_answering(OTHER_HOST, 200).await;
    let to_away = away.url("/landing");
    let own = spawn_site(move |hit| match hit.path.as_str() {
        "/" => respond(302, &[("location", &to_away)]),
        _ => respond(200, &[]),
    })
    .await;
    let mut token = HeaderMap::new();
    token.insert("authorization", HeaderValue::from_static("Bearer s3cret"));
    token.insert("x-api", HeaderValue::from_static("own"));
    let mut everywhere = HeaderMap::new();
    everywhere.insert("x-api", HeaderValue::from_static("everyone"));
    let config = CheckConfig {
        headers: everywhere,
        host_headers: HashMap::from([("127.0.0.1".into(), token)]),
        ..config()
    };
    let finding = check(config, &own.url("/")).await;
    assert_eq!((finding.verdict, finding.redirects), (Verdict::Alive, 1));
    let own_hit = &own.hits()[0];
    assert_eq!(own_hit.authorization.as_deref(), Some("Bearer s3cret"));
    assert_eq!(
        header(own_hit, "x-api"),
        Some("own"),
        "replaces --header there"
    );
    let away_hit = &away.hits()[0];
    assert_eq!(
        away_hit.authorization, None,
        "the token went to another host"
    );
    assert_eq!(header(away_hit, "x-api"), Some("everyone"));
}

#[tokio::test]
async fn a_url_with_its_own_user_keeps_it_over_basic_auth() {
    let site = spawn_answering(LOCALHOST, 200).await;
    let config = CheckConfig {
        basic_auth: HashMap::from([("127.0.0.1".into(), BasicAuth::new("op", "pw"))]),
        ..config()
    };
    check(config, &site.url("/").replace("//", "//list:pw@")).await;
    // "list:pw" in Basic, and only that one.
    let hit = &site.hits()[0];
    assert_eq!(hit.headers.get_all("authorization").iter().count(), 1);
    assert_eq!(hit.authorization.as_deref(), Some("Basic bGlzdDpwdw=="));
}

/// (Secure cookies go to loopback over http too, as in browsers: the unit tests cover them.)
#[tokio::test]
async fn cookies_from_a_jar_are_sent_where_they_match() {
    let jar = "# Netscape HTTP Cookie File\n\
        127.0.0.1\tFALSE\t/\tFALSE\t0\tsession\tabc\n\
        127.0.0.1\tFALSE\t/private\tFALSE\t0\tinner\t1\n\
        127.0.0.2\tFALSE\t/\tFALSE\t0\tother_host\t3\n";
    let config = CheckConfig {
        cookies: Some(CookieJar::parse(jar, SystemTime::now()).unwrap()),
        ..config()
    };
    let checker = Checker::new(config).unwrap();
    let site = spawn_answering(LOCALHOST, 200).await;
    checker.check(&site.url("/page")).await;
    checker.check(&site.url("/private/page")).await;
    let hits = site.hits();
    assert_eq!(header(&hits[0], "cookie"), Some("session=abc"));
    let inner = header(&hits[1], "cookie").unwrap();
    assert!(
        inner.contains("session=abc") && inner.contains("inner=1"),
        "{inner}"
    );
    let away = spawn_answering(OTHER_HOST, 200).await;
    checker.check(&away.url("/")).await;
    assert_eq!(header(&away.hits()[0], "cookie"), Some("other_host=3"));
}

fn accepting(global: &str, hosts: &[(&str, &str)]) -> CheckConfig {
    let hosts = hosts
        .iter()
        .map(|(h, s)| (h.to_string(), s.parse().unwrap()));
    CheckConfig {
        accept: global.parse().unwrap(),
        accept_hosts: hosts.collect(),
        ..config()
    }
}

#[tokio::test]
async fn accept_turns_a_403_into_alive_from_any_host() {
    let site = spawn_answering(LOCALHOST, 403).await;
    let finding = check(accepting("200..=299,403", &[]), &site.url("/")).await;
    assert_eq!(
        (finding.verdict, finding.status),
        (Verdict::Alive, Some(403))
    );
    let default = check(config(), &site.url("/")).await;
    assert_eq!(default.verdict, Verdict::Blocked);
    let gone = spawn_answering(LOCALHOST, 404).await;
    let finding = check(accepting("200..=299,403", &[]), &gone.url("/")).await;
    assert_eq!(finding.verdict, Verdict::Dead);
}

#[tokio::test]
async fn accept_host_turns_a_403_into_alive_for_that_host_only() {
    let config = || accepting("200..=299", &[("127.0.0.1", "403,429")]);
    let own = spawn_answering(LOCALHOST, 403).await;
    assert_eq!(check(config(), &own.url("/")).await.verdict, Verdict::Alive);
    let other = spawn_answering(OTHER_HOST, 403).await;
    let finding = check(config(), &other.url("/")).await;
    assert_eq!(finding.verdict, Verdict::Blocked);
}

#[tokio::test]
async fn an_accepted_429_is_alive_and_not_asked_again() {
    let site = spawn_answering(LOCALHOST, 429).await;
    let config = CheckConfig {
        retries: 2,
        ..accepting("200..=299,429", &[])
    };
    let finding = check(config, &site.url("/")).await;
    assert_eq!((finding.verdict, finding.attempts), (Verdict::Alive, 1));
    assert!(!finding.next.is_transient());
}

#[tokio::test]
async fn a_2xx_left_out_of_accept_is_an_error() {
    let site = spawn_answering(LOCALHOST, 204).await;
    let finding = check(accepting("200", &[]), &site.url("/")).await;
    assert_eq!(
        (finding.verdict, finding.status),
        (Verdict::Error, Some(204))
    );
    assert_eq!(StatusSet::default().to_string(), "200..=299");
}

#[tokio::test]
async fn a_ca_cert_makes_its_servers_trusted_without_insecure() {
    let url = spawn_ca_signed().await;
    let untrusted = check(config(), &url).await;
    assert_eq!(untrusted.verdict, Verdict::Unreachable, "{untrusted:?}");
    let config = CheckConfig {
        ca_certs: reqwest::Certificate::from_pem_bundle(CA).unwrap(),
        ..config()
    };
    let finding = check(config, &url).await;
    assert_eq!(
        (finding.verdict, finding.status),
        (Verdict::Alive, Some(200)),
        "{finding:?}"
    );
}

/// The system's store is where a machine's administrator puts a corporate CA. This test runs
/// itself again in a process of its own whose system store is `fixtures/ca.pem` alone
/// (`SSL_CERT_FILE`, as OpenSSL reads it), so no other test sees that store.
#[tokio::test]
async fn the_systems_roots_are_trusted() {
    if std::env::var_os(SYSTEM_STORE_CHILD).is_none() {
        let this = "options::the_systems_roots_are_trusted";
        let out = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", this, "--nocapture"])
            .env(SYSTEM_STORE_CHILD, "1")
            .env("SSL_CERT_FILE", CA_PATH)
            .env_remove("SSL_CERT_DIR")
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success() && said.contains("1 passed"), "{said}");
        return;
    }
    let url = spawn_ca_signed().await;
    let finding = check(config(), &url).await;
    assert_eq!(finding.verdict, Verdict::Alive, "{finding:?}");
}

#[tokio::test]
async fn a_site_the_filter_leaves_out_gets_no_request() {
    let site = spawn_answering(LOCALHOST, 200).await;
    let filter = UrlFilter {
        include: Vec::new(),
        exclude: vec![Regex::new("/private/").unwrap()],
    };
    let checker = Checker::new(CheckConfig { filter, ..config() }).unwrap();
    let finding = checker.check(&site.url("/private/x")).await;
    assert_eq!(
        (finding.verdict, finding.error_kind, finding.attempts),
        (Verdict::Excluded, None, 0)
    );
    assert!(!finding.next.is_transient());
    let public = checker.check(&site.url("/public")).await;
    assert_eq!(public.verdict, Verdict::Alive);
    let paths: Vec<String> = site.hits().into_iter().map(|hit| hit.path).collect();
    assert_eq!(paths, ["/public"]);
}
