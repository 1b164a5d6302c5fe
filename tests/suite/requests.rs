//! What a verdict costs (issue 38), as a metered server counts it, on every backend: each host
//! is asked the way that decides in one request where it can (`check/head.rs`), and never so
//! that an alive page is called dead.

use std::collections::HashMap;
use std::time::Duration;

use crawler_tests::recorder::{spawn_recorder_by, Answer, Recorder};
use crawler_tests::{on_every_backend, TestDb};
use hyper::Method;

use crate::e2e::{reported, seed, spawn_worker, wait};

/// Seeds `urls` and drains them with one worker at 8 in flight and `rate` per second for the
/// host (the default concurrency), `--retries` 2 (the default).
fn drain(db: &TestDb, urls: &[String], rate: &str) {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), urls.join("\n") + "\n").unwrap();
    seed(db, file.path());
    let flags = [
        "--drain",
        "--host-concurrency",
        "8",
        "--host-rate",
        rate,
        "--retries",
        "2",
    ];
    let mut worker = spawn_worker(db, "w", &flags);
    assert!(wait(&mut worker, Duration::from_secs(120)).success());
}

/// The requests the recorder saw, by path and method.
fn asked(site: &Recorder) -> HashMap<(String, Method), usize> {
    let mut asked = HashMap::new();
    for seen in site.seen() {
        *asked.entry((seen.path, seen.method)).or_default() += 1;
    }
    asked
}

on_every_backend!(
    async fn a_host_whose_head_lies_on_some_paths_gets_no_alive_url_called_dead(backend: Backend) {
        // HEAD answers 404 on one page in ten, GET 200 on every page; /gone/ is dead for both.
        let site = spawn_recorder_by("127.0.0.1", |asked| {
            let lies = asked.path.ends_with('3') && asked.path.starts_with("/page/");
            match () {
                _ if asked.path.starts_with("/gone/") => Answer::status(404),
                _ if lies && asked.method == Method::HEAD => Answer::status(404),
                _ => Answer::OK,
            }
        })
        .await;
        let mut urls: Vec<String> = (0..20)
            .map(|n| format!("http://{}/gone/{n}", site.addr))
            .collect();
        urls.extend((0..80).map(|n| format!("http://{}/page/{n}", site.addr)));
        let db = backend.fresh().await;
        drain(&db, &urls, "100");

        let sites = reported(&db);
        assert_eq!(sites.len(), urls.len(), "every site reported once");
        for url in &urls {
            let expected = if url.contains("/gone/") {
                ("dead".to_owned(), Some(404))
            } else {
                ("alive".to_owned(), Some(200))
            };
            assert_eq!(sites[url], expected, "{url}");
        }
    }
);

on_every_backend!(
    async fn a_host_of_dead_urls_whose_head_tells_the_truth_is_asked_about_once_each(
        backend: Backend,
    ) {
        let site = spawn_recorder_by("127.0.0.1", |_| Answer::status(404)).await;
        let urls: Vec<String> = (0..200)
            .map(|n| format!("http://{}/gone/{n}", site.addr))
            .collect();
        let db = backend.fresh().await;
        drain(&db, &urls, "50");

        let sites = reported(&db);
        for url in &urls {
            assert_eq!(sites[url], ("dead".to_owned(), Some(404)), "{url}");
        }
        let asked = asked(&site);
        let requests: usize = asked.values().sum();
        println!("200 dead URLs cost {requests} requests"); // shown with --nocapture
                                                            // Once the host's checks queue behind its rate, each is one GET; only the first few,
                                                            // asked before the queue formed, are a HEAD and then a GET.
        assert!(
            requests <= 210,
            "{requests} requests for 200 dead URLs: {asked:?}"
        );
    }
);

on_every_backend!(
    async fn a_transient_503_then_200_costs_two_requests(backend: Backend) {
        // Each path answers 503 the first time it is asked, then 200.
        let site = spawn_recorder_by("127.0.0.1", |asked| match asked.before {
            0 => Answer::status(503),
            _ => Answer::OK,
        })
        .await;
        let urls: Vec<String> = (0..5)
            .map(|n| format!("http://{}/flaky/{n}", site.addr))
            .collect();
        let db = backend.fresh().await;
        drain(&db, &urls, "100");

        let sites = reported(&db);
        for url in &urls {
            assert_eq!(sites[url], ("alive".to_owned(), Some(200)), "{url}");
        }
        let asked = asked(&site);
        for n in 0..5 {
            let path = format!("/flaky/{n}");
            let of = |method| asked.get(&(path.clone(), method)).copied();
            // The throttle is not asked again at once; the retry, after its backoff, is a GET.
            assert_eq!(
                (of(Method::HEAD), of(Method::GET)),
                (Some(1), Some(1)),
                "{path}: {asked:?}"
            );
        }
    }
);
