//! Redirect chains, loops and limits, and `public_only` applied to every hop.

use std::net::{IpAddr, Ipv4Addr};

use crawler_check::{CheckConfig, Checker, ErrorKind, Verdict};

use crate::helpers::*;

/// `/to/<location>` redirects there (302), `/n/<k>` redirects to `/n/<k+1>`, the rest is 200.
async fn spawn_redirecting_site() -> Site {
    spawn_site(|hit| {
        if let Some(location) = hit.path.strip_prefix("/to") {
            return respond(302, &[("location", &location.replacen("/", "", 1))]);
        }
        if let Some(k) = hit.path.strip_prefix("/n/") {
            let next = format!("/n/{}", k.parse::<u32>().unwrap() + 1);
            return respond(301, &[("location", &next)]);
        }
        match hit.path.as_str() {
            "/a" => respond(301, &[("location", "/b")]),
            "/loop1" => respond(302, &[("location", "loop2")]),
            "/loop2" => respond(302, &[("location", "/loop1#again")]),
            "/gone" => respond(404, &[]),
            _ => respond(200, &[]),
        }
    })
    .await
}

#[tokio::test]
async fn relative_and_absolute_redirects_are_followed_to_the_end() {
    let site = spawn_redirecting_site().await;
    let end = site.url("/c");
    // A relative Location ("/to/http://…/c"), then an absolute one ("http://…/c").
    let start = site.url(&format!("/to//to/{end}"));
    let finding = Checker::new(config()).unwrap().check(&start).await;
    assert_eq!(
        (finding.verdict, finding.status),
        (Verdict::Alive, Some(200)),
        "{finding:?}"
    );
    assert_eq!((finding.redirects, finding.attempts), (2, 1));
    assert_eq!(finding.final_url.as_deref(), Some(end.as_str()));
    let relative = Checker::new(config()).unwrap().check(&site.url("/a")).await;
    assert_eq!(relative.final_url.as_deref(), Some(site.url("/b").as_str()));
}

#[tokio::test]
async fn a_redirect_to_a_dead_page_is_dead() {
    let site = spawn_redirecting_site().await;
    let finding = Checker::new(config())
        .unwrap()
        .check(&site.url("/to//gone"))
        .await;
    assert_eq!(
        (finding.verdict, finding.status),
        (Verdict::Dead, Some(404)),
        "{finding:?}"
    );
    assert_eq!(finding.redirects, 1);
    assert_eq!(
        finding.final_url.as_deref(),
        Some(site.url("/gone").as_str())
    );
}

#[tokio::test]
async fn a_redirect_loop_stops_as_soon_as_a_url_comes_back() {
    let site = spawn_redirecting_site().await;
    let config = CheckConfig {
        max_redirects: 50,
        ..config()
    };
    let finding = Checker::new(config)
        .unwrap()
        .check(&site.url("/loop1"))
        .await;
    assert_eq!(finding.verdict, Verdict::Error, "{finding:?}");
    assert_eq!(finding.error_kind, Some(ErrorKind::Redirects));
    assert_eq!((finding.status, finding.redirects), (Some(302), 1));
    assert_eq!(site.hits().len(), 2, "each URL of the loop asked once");
}

#[tokio::test]
async fn more_hops_than_the_limit_is_a_redirect_error() {
    let site = spawn_redirecting_site().await;
    let config = CheckConfig {
        max_redirects: 3,
        ..config()
    };
    let finding = Checker::new(config).unwrap().check(&site.url("/n/0")).await;
    assert_eq!(
        finding.error_kind,
        Some(ErrorKind::Redirects),
        "{finding:?}"
    );
    assert_eq!((finding.status, finding.redirects), (Some(301), 3));
    assert_eq!(site.hits().len(), 4);
}

const SITE_IP: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));

/// Stands in for "public": only the test site's own address.
fn only_the_site(ip: IpAddr) -> bool {
    ip == SITE_IP
}

#[tokio::test]
async fn a_redirect_to_loopback_is_denied_under_public_only() {
    let target = spawn_site(|_| respond(200, &[])).await;
    let site = spawn_site_async(SITE_IP, |hit| async move {
        let location = hit.path.trim_start_matches("/to/").to_owned();
        respond(302, &[("location", &location)])
    })
    .await;
    let config = CheckConfig {
        public_only: true,
        ..config()
    };
    let checker = Checker::with_address_policy(config, only_the_site).unwrap();
    let by_name = format!("http://localhost:{}/", target.addr.port());
    for location in [target.url("/"), by_name] {
        let finding = checker.check(&site.url(&format!("/to/{location}"))).await;
        assert_eq!(finding.verdict, Verdict::Error, "{location}: {finding:?}");
        assert_eq!(
            finding.error_kind,
            Some(ErrorKind::AddressDenied),
            "{location}"
        );
        assert_eq!(finding.redirects, 1);
    }
    assert_eq!(site.hits().len(), 2);
    assert!(
        target.hits().is_empty(),
        "the denied target was never asked"
    );
}

#[tokio::test]
async fn loopback_private_and_link_local_targets_are_denied_under_public_only() {
    let site = spawn_site(|_| respond(200, &[])).await;
    let port = site.addr.port();
    let checker = Checker::new(CheckConfig {
        public_only: true,
        ..config()
    })
    .unwrap();
    let urls = [
        site.url("/"),
        format!("http://localhost:{port}/"),
        format!("http://[::1]:{port}/"),
        format!("http://[::ffff:127.0.0.1]:{port}/"),
        format!("http://2130706433:{port}/"), // 127.0.0.1 as one number
        "http://10.0.0.1/".to_owned(),
        "http://169.254.169.254/latest/meta-data/".to_owned(),
    ];
    for url in urls {
        let finding = checker.check(&url).await;
        assert_eq!(finding.verdict, Verdict::Error, "{url}: {finding:?}");
        assert_eq!(finding.error_kind, Some(ErrorKind::AddressDenied), "{url}");
    }
    assert!(site.hits().is_empty());
    let open = Checker::new(config()).unwrap().check(&site.url("/")).await;
    assert_eq!(
        open.verdict,
        Verdict::Alive,
        "without public_only the same site is fine"
    );
}
