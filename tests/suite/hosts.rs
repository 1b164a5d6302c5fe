//! Host-level decisions, on every backend (issue 21): a failure that belongs to the host is
//! decided once for the host; an answer about one URL slows its host, never stops it; a server
//! deferring a whole host past the horizon cannot keep `--drain` from ending.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use crawler_queue::{Db, Queue};
use crawler_tests::dns::{DnsServer, Record};
use crawler_tests::recorder::{spawn_hung, spawn_recorder, Answer};
use crawler_tests::site::{spawn_site, spawn_site_at, Page};
use crawler_tests::{on_every_backend, TestDb};

use crate::e2e::{reported, seed, spawn_worker, wait};

/// A list file of `urls`.
fn list(urls: &[String]) -> tempfile::NamedTempFile {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), urls.join("\n") + "\n").unwrap();
    file
}

/// Seeds `urls` and drains them with one worker and `flags`; returns the drain's time.
fn drain(db: &TestDb, urls: &[String], flags: &[&str], limit: Duration) -> Duration {
    let file = list(urls);
    seed(db, file.path());
    let started = Instant::now();
    let mut worker = spawn_worker(db, "w", &[&["--drain"], flags].concat());
    assert!(wait(&mut worker, limit).success());
    started.elapsed()
}

/// Each site's verdict, error kind and detail, by URL.
async fn verdicts(queue: &Queue) -> HashMap<String, (String, Option<String>, Option<String>)> {
    let sql = "SELECT url, verdict, error_kind, detail FROM sites";
    let rows: Vec<(String, String, Option<String>, Option<String>)> = match queue.db() {
        Db::Sqlite(pool) => sqlx::query_as(sql).fetch_all(pool).await.unwrap(),
        Db::Postgres(pool) => sqlx::query_as(sql).fetch_all(pool).await.unwrap(),
        Db::MySql(pool) => sqlx::query_as(sql).fetch_all(pool).await.unwrap(),
    };
    rows.into_iter()
        .map(|(url, verdict, kind, detail)| (url, (verdict, kind, detail)))
        .collect()
}

/// The `hosts` row's unreachable kind of `host`.
async fn unreachable_kind(queue: &Queue, host: &str) -> Option<String> {
    let sql = &queue
        .db()
        .statement("SELECT unreachable_kind FROM hosts WHERE host = ?");
    let kind: Option<Option<String>> = match queue.db() {
        Db::Sqlite(pool) => {
            sqlx::query_scalar(sql)
                .bind(host)
                .fetch_optional(pool)
                .await
        }
        Db::Postgres(pool) => {
            sqlx::query_scalar(sql)
                .bind(host)
                .fetch_optional(pool)
                .await
        }
        Db::MySql(pool) => {
            sqlx::query_scalar(sql)
                .bind(host)
                .fetch_optional(pool)
                .await
        }
    }
    .unwrap();
    kind.flatten()
}

fn decided(detail: &Option<String>) -> bool {
    detail
        .as_deref()
        .is_some_and(|d| d.starts_with("decided for the host"))
}

on_every_backend!(
    async fn a_dns_dead_hosts_urls_are_decided_at_once_for_the_host(backend: Backend) {
        let live = spawn_recorder("127.0.0.1", |_| Answer::OK).await;
        let records = HashMap::from([
            ("dead.hosts-test".to_owned(), Record::NxDomain),
            ("live.hosts-test".to_owned(), Record::A(Ipv4Addr::LOCALHOST)),
        ]);
        let dns = DnsServer::start(SocketAddr::from(([127, 0, 0, 1], 0)), records).unwrap();
        let dead: Vec<String> = (0..50)
            .map(|n| format!("http://dead.hosts-test:9/page/{n}"))
            .collect();
        let alive: Vec<String> = (0..10)
            .map(|n| format!("http://live.hosts-test:{}/page/{n}", live.addr.port()))
            .collect();
        let db = backend.fresh().await;
        let server = dns.addr().to_string();
        drain(
            &db,
            &[dead.clone(), alive.clone()].concat(),
            // Small claims: most of the host's URLs are still pending when it is decided.
            &[
                "--dns-server",
                &server,
                "--batch-size",
                "10",
                "--host-concurrency",
                "4",
            ],
            Duration::from_secs(60),
        );

        let queue = db.queue().await;
        let verdicts = verdicts(&queue).await;
        for url in &dead {
            let (verdict, kind, _) = &verdicts[url];
            assert_eq!(
                (verdict.as_str(), kind.as_deref()),
                ("unreachable", Some("dns")),
                "{url}"
            );
        }
        let by_host = dead.iter().filter(|u| decided(&verdicts[*u].2)).count();
        assert!(
            by_host >= 40,
            "only {by_host} of 50 decided for the host: {:?}",
            &verdicts[&dead[49]]
        );
        for url in &alive {
            assert_eq!(verdicts[url].0, "alive", "{url}");
        }
        // One look-up (A and AAAA) decides the host; a probe would be one more.
        let queries = dns.queries("dead.hosts-test");
        assert!(queries <= 4, "{queries} DNS queries for a dead name");
        assert_eq!(
            unreachable_kind(&queue, "dead.hosts-test").await.as_deref(),
            Some("dns")
        );
        assert_eq!(unreachable_kind(&queue, "live.hosts-test").await, None);
    }
);

on_every_backend!(
    async fn a_hung_hosts_urls_finish_within_the_bound(backend: Backend) {
        let hung = spawn_hung("127.0.0.1").await;
        let live = spawn_site().await;
        let mut urls: Vec<String> = (0..20)
            .map(|n| format!("http://{}/page/{n}", hung.addr))
            .collect();
        urls.extend((0..10).map(|n| live.url(Page::Alive, n)));
        let db = backend.fresh().await;
        let flags = [
            "--timeout",
            "2s",
            "--host-concurrency",
            "4",
            "--batch-size",
            "10",
        ];
        let took = drain(&db, &urls, &flags, Duration::from_secs(60));

        let verdicts = verdicts(&db.queue().await).await;
        for url in &urls[..20] {
            let (verdict, kind, _) = &verdicts[url];
            assert_eq!(
                (verdict.as_str(), kind.as_deref()),
                ("unreachable", Some("timeout")),
                "{url}"
            );
        }
        // Four requests at once (the host's concurrency) time out together and decide the
        // host; the other sixteen URLs ask nothing.
        let decided = urls[..20]
            .iter()
            .filter(|u| decided(&verdicts[*u].2))
            .count();
        assert!(decided >= 14, "only {decided} of 20 decided for the host");
        assert!(
            hung.connections() <= 6,
            "{} connections to a hung host",
            hung.connections()
        );
        assert!(took < Duration::from_secs(30), "drained in {took:?}");
    }
);

on_every_backend!(
    async fn one_path_always_throttling_slows_its_host_but_never_stops_it(backend: Backend) {
        let site = spawn_recorder("127.0.0.1", |path| match path {
            "/limited" => Answer::status(429),
            _ => Answer::OK,
        })
        .await;
        let mut urls = vec![format!("http://{}/limited", site.addr)];
        urls.extend((0..100).map(|n| format!("http://{}/page/{n}", site.addr)));
        let db = backend.fresh().await;
        drain(
            &db,
            &urls,
            &["--retries", "2", "--host-rate", "20"],
            Duration::from_secs(120),
        );

        let verdicts = verdicts(&db.queue().await).await;
        assert_eq!(verdicts[&urls[0]].0, "blocked");
        for url in &urls[1..] {
            assert_eq!(verdicts[url].0, "alive", "{url}");
        }
        let pages: Vec<Instant> = site
            .seen()
            .iter()
            .filter(|s| s.path.starts_with("/page/"))
            .map(|s| s.at)
            .collect();
        let span = (*pages.last().unwrap() - pages[0]).as_secs_f64();
        // The adaptive floor is an eighth of the host's 20/s: 100 pages in 40 s at worst.
        let rate = (pages.len() - 1) as f64 / span;
        assert!(rate >= 2.5, "the other paths went at {rate:.2}/s");
    }
);

on_every_backend!(
    async fn an_absurd_retry_after_cannot_keep_a_drain_from_ending(backend: Backend) {
        // One host with absurd Retry-Afters on some paths and answers on others; another
        // whose every path asks for 10^23 s or year 9999: deferred as a host, past the
        // horizon, so all of its URLs get their verdict now.
        //
        // The mixed host throttles one path in three. A worker need not check a host's URLs
        // in the order they were seeded (PostgreSQL returns a batch in no useful order), and
        // throttled answers from several paths, over 2 s with no other answer between, are
        // the host's by design (a server that starts refusing a client after a while looks
        // like that); with two paths in three throttling, such runs came often enough that
        // this test failed on PostgreSQL two runs in five (its alive URLs got the host's
        // deferral). With one in three, such a run over 2 s is rare.
        let mixed = spawn_site().await;
        let throttling = spawn_site_at("127.0.0.2").await;
        let kinds = [
            Page::Alive,
            Page::Throttled,
            Page::Alive,
            Page::Alive,
            Page::Throttled9999,
            Page::Alive,
        ];
        let mut urls: Vec<String> = (0..30).map(|n| mixed.url(kinds[n % 6], n)).collect();
        urls.extend((0..30).map(|n| {
            let page = [Page::Throttled, Page::Throttled9999][n % 2];
            throttling.url(page, n)
        }));
        let db = backend.fresh().await;
        // Two at a time, so the host's answers come over time, as from a real server.
        let flags = ["--host-concurrency", "2", "--host-rate", "20"];
        let took = drain(&db, &urls, &flags, Duration::from_secs(120));
        assert!(took <= Duration::from_secs(60), "drained in {took:?}");

        let reported = reported(&db);
        assert_eq!(reported.len(), urls.len());
        let verdicts = verdicts(&db.queue().await).await;
        for (n, url) in urls.iter().enumerate() {
            let expected = if n < 30 && kinds[n % 6] == Page::Alive {
                "alive"
            } else {
                "blocked"
            };
            assert_eq!(reported[url].0, expected, "{url}: {:?}", verdicts[url]);
        }
        let deferred = urls[30..]
            .iter()
            .filter(|u| {
                verdicts[*u]
                    .2
                    .as_deref()
                    .is_some_and(|d| d.starts_with("deferred by the server until"))
            })
            .count();
        assert!(
            deferred > 0,
            "no URL of the throttling host deferred as a host"
        );
    }
);

on_every_backend!(
    async fn a_host_the_fleet_decided_unreachable_that_answers_again_is_cleared_for_the_fleet(
        backend: Backend,
    ) {
        let live = spawn_recorder("127.0.0.1", |_| Answer::OK).await;
        let urls: Vec<String> = (0..5)
            .map(|n| format!("http://127.0.0.1:{}/page/{n}", live.addr.port()))
            .collect();
        let db = backend.fresh().await;
        let queue = db.queue().await;
        // What an earlier worker wrote of the host, by its name (the row's key).
        let why = crawler_queue::Unreachable {
            kind: crawler_queue::ErrorKind::Connect,
            detail: "decided for the host: refused".into(),
        };
        queue
            .hosts()
            .record_unreachable("127.0.0.1", Some(&why))
            .await
            .unwrap();
        drain(&db, &urls, &[], Duration::from_secs(60));

        let verdicts = verdicts(&queue).await;
        for url in &urls {
            assert_eq!(verdicts[url].0, "alive", "{url}");
        }
        // The worker took the fleet's word for the host (its first request a probe), and its
        // answer told the fleet the host is back.
        assert_eq!(unreachable_kind(&queue, "127.0.0.1").await, None);
    }
);
