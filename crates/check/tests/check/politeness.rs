//! Per-host rate, concurrency and 429 penalty; the global in-flight limit.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crawler_check::{CheckConfig, Checker, Verdict};
use futures::future::join_all;

use crate::helpers::*;

async fn check_all(checker: &Checker, urls: &[String]) -> Vec<Verdict> {
    join_all(urls.iter().map(|u| checker.check(u)))
        .await
        .into_iter()
        .map(|f| f.verdict)
        .collect()
}

#[tokio::test]
async fn requests_to_one_host_are_spaced_by_the_rate() {
    let site = spawn_site(|_| respond(200, &[])).await;
    let checker = Checker::new(CheckConfig {
        host_rate: 10.0,
        ..config()
    })
    .unwrap();
    let urls: Vec<String> = (0..6).map(|i| site.url(&format!("/{i}"))).collect();
    let started = Instant::now();
    let verdicts = check_all(&checker, &urls).await;
    assert!(verdicts.iter().all(|v| *v == Verdict::Alive));
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(480),
        "6 requests at 10/s take 0.5 s: {took:?}"
    );
    let hits = site.hits();
    for pair in hits.windows(2) {
        let gap = pair[1].at - pair[0].at;
        assert!(gap >= Duration::from_millis(80), "requests {gap:?} apart");
    }
}

/// A site whose requests take 150 ms, counting how many run at once (in `peak`).
async fn spawn_slow_site(ip: IpAddr, now: Arc<AtomicUsize>, peak: Arc<AtomicUsize>) -> Site {
    spawn_site_async(ip, move |_| {
        let (now, peak) = (now.clone(), peak.clone());
        async move {
            let running = now.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(running, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(150)).await;
            now.fetch_sub(1, Ordering::SeqCst);
            respond(200, &[])
        }
    })
    .await
}

#[tokio::test]
async fn a_host_never_sees_more_requests_than_its_concurrency() {
    let (now, peak) = (Arc::default(), Arc::new(AtomicUsize::new(0)));
    let site = spawn_slow_site(LOCALHOST, now, peak.clone()).await;
    let checker = Checker::new(CheckConfig {
        host_concurrency: 2,
        ..config()
    })
    .unwrap();
    let urls: Vec<String> = (0..8).map(|i| site.url(&format!("/{i}"))).collect();
    check_all(&checker, &urls).await;
    assert_eq!(peak.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn the_global_limit_caps_requests_in_flight_over_all_hosts() {
    let (now, peak) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let other = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 3));
    let a = spawn_slow_site(LOCALHOST, now.clone(), peak.clone()).await;
    let b = spawn_slow_site(other, now, peak.clone()).await;
    let checker = Checker::new(CheckConfig {
        concurrency: 3,
        ..config()
    })
    .unwrap();
    let urls: Vec<String> = (0..6)
        .flat_map(|i| [a.url(&format!("/{i}")), b.url("/")])
        .collect();
    check_all(&checker, &urls).await;
    assert_eq!(peak.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_429_slows_the_host_and_an_answer_raises_its_rate_again() {
    let site = spawn_site(|hit| respond(if hit.n == 0 { 429 } else { 200 }, &[])).await;
    let checker = Checker::new(config()).unwrap();
    for path in ["/1", "/2", "/3", "/4", "/5", "/6"] {
        checker.check(&site.url(path)).await;
    }
    let at: Vec<Instant> = site.hits().iter().map(|h| h.at).collect();
    assert!(
        // A host without a rate limit throttles from 10 requests a second; a lone 429 leaves
        // seven eighths of it: 114 ms apart.
        at[1] - at[0] >= Duration::from_millis(110),
        "slowed: {:?}",
        at[1] - at[0]
    );
    // Each answer adds a sixteenth back: after two the host is at its full rate again, which
    // for a host without a rate limit is no spacing at all.
    assert!(
        at[5] - at[4] < Duration::from_millis(60),
        "back at the full rate after the answers: {:?}",
        at[5] - at[4]
    );
}

/// Whether the request asked the server to close its connection after the answer.
fn asked_to_close(hit: &Hit) -> bool {
    hit.headers
        .get(hyper::header::CONNECTION)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"close"))
}

#[tokio::test]
async fn a_hosts_connection_is_kept_while_it_is_asked_again_soon_and_closed_after() {
    let site = spawn_site(|_| respond(200, &[])).await;
    // 1.5 a second: the requests are further apart than the pool keeps an idle connection.
    let checker = Checker::new(CheckConfig {
        host_rate: 1.5,
        ..config()
    })
    .unwrap();
    let urls: Vec<String> = (0..3).map(|i| site.url(&format!("/{i}"))).collect();
    // As the worker does: each check counted as held from its claim to its end.
    let expected: Vec<_> = urls
        .iter()
        .map(|_| checker.book().expect("127.0.0.1"))
        .collect();
    let checker = &checker;
    let checks = urls.iter().zip(expected).map(|(url, held)| async move {
        let finding = checker.check(url).await;
        drop(held);
        finding.verdict
    });
    let verdicts = join_all(checks).await;
    assert!(verdicts.iter().all(|v| *v == Verdict::Alive));
    let closing: Vec<bool> = site.hits().iter().map(asked_to_close).collect();
    assert_eq!(
        closing,
        [false, false, true],
        "kept while the host's next checks are held, closed by the last"
    );
    // A host asked once keeps nothing open; asked again at once, it keeps its connection.
    let lone = spawn_site(|_| respond(200, &[])).await;
    let unlimited = Checker::new(config()).unwrap();
    for path in ["/a", "/b"] {
        assert_eq!(
            unlimited.check(&lone.url(path)).await.verdict,
            Verdict::Alive
        );
    }
    let closing: Vec<bool> = lone.hits().iter().map(asked_to_close).collect();
    assert_eq!(
        closing,
        [true, false],
        "closed when alone, kept when asked again soon"
    );
}
