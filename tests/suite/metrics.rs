//! `crawler-worker --metrics`: a real worker crawls a local site while serving `/metrics`,
//! and what it tells Prometheus is what the database holds. A bad address is a usage error,
//! an address in use a startup error, both naming `--metrics`.

use std::collections::HashMap;
use std::process::Child;
use std::time::{Duration, Instant};

use crawler_queue::Verdict;
use crawler_tests::bins::{command, run, stderr};
use crawler_tests::site::{spawn_site, Page};
use crawler_tests::{on_every_backend, TestDb};

use crate::e2e::{seed, spawn_worker, unfinished, url_file, wait};

/// One scrape: `name{labels}` (as printed) → value, the comments left out.
type Scrape = HashMap<String, f64>;

/// Parses the Prometheus text format: `name{label="value",…} number` lines.
fn parse(text: &str) -> Scrape {
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| {
            let (series, value) = line.rsplit_once(' ').expect("a series and its value");
            let value = value.parse().unwrap_or_else(|_| panic!("a number: {line}"));
            (series.to_owned(), value)
        })
        .collect()
}

async fn scrape(addr: &str) -> Scrape {
    let response = reqwest::get(format!("http://{addr}/metrics"))
        .await
        .expect("the worker serves /metrics");
    assert!(response.status().is_success(), "{response:?}");
    let content_type = response.headers()["content-type"].to_str().unwrap();
    assert!(
        content_type.starts_with("text/plain; version=0.0.4"),
        "{content_type}"
    );
    parse(&response.text().await.unwrap())
}

fn get(scrape: &Scrape, series: &str) -> f64 {
    *scrape
        .get(series)
        .unwrap_or_else(|| panic!("{series} not in {scrape:#?}"))
}

/// An address of 127.0.0.1 with a port nobody listens on (free when it was asked).
fn free_addr() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().to_string()
}

/// The sites of each verdict, as `crawler-report --summary` counts them in the database.
fn verdicts_in_database(db: &TestDb) -> HashMap<String, f64> {
    let out =
        run(command("crawler-report", db.url.expose()).args(["--summary", "--format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    Verdict::ALL
        .map(Verdict::as_str)
        .into_iter()
        .map(|v| (v.to_owned(), json[0][v].as_f64().unwrap()))
        .collect()
}

/// A worker, killed if the test fails before stopping it (a live child would hold the test's
/// output open).
struct Running(Option<Child>);

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(child) = &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

const KINDS: &[Page] = &[
    Page::Alive,
    Page::Dead,
    Page::Redirect,
    Page::Gone,
    Page::Blocked,
    Page::Error,
];

on_every_backend!(
    async fn a_workers_metrics_match_the_verdicts_in_the_database(backend: Backend) {
        let site = spawn_site().await;
        let db = backend.fresh().await;
        let (file, expected) = url_file(&site, 300, KINDS);
        seed(&db, file.path());
        let addr = free_addr();
        let mut running = Running(Some(spawn_worker(&db, "metered", &["--metrics", &addr])));
        let started = Instant::now();
        while unfinished(&db) != (0, 0) {
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "the crawl did not end"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        // The counters follow each write-back's commit, and the gauges are sampled every
        // second: scrape until the last of them are in.
        let metrics = loop {
            let metrics = scrape(&addr).await;
            let verdicts: f64 = Verdict::ALL
                .iter()
                .map(|v| {
                    get(
                        &metrics,
                        &format!("crawler_verdicts_total{{verdict=\"{v}\"}}"),
                    )
                })
                .sum();
            if verdicts == 300.0 && get(&metrics, "crawler_sites_held") == 0.0 {
                break metrics;
            }
            assert!(started.elapsed() < Duration::from_secs(150), "{metrics:#?}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        for (verdict, n) in verdicts_in_database(&db) {
            let series = format!("crawler_verdicts_total{{verdict=\"{verdict}\"}}");
            assert_eq!(get(&metrics, &series), n, "{series}");
        }
        assert_requests_counted(&metrics, &expected);
        for histogram in ["crawler_claim_seconds", "crawler_write_back_seconds"] {
            assert!(
                get(&metrics, &format!("{histogram}_count")) > 0.0,
                "{histogram}"
            );
            let count = get(&metrics, &format!("{histogram}_count"));
            assert_eq!(
                get(&metrics, &format!("{histogram}_bucket{{le=\"+Inf\"}}")),
                count
            );
        }
        assert_eq!(get(&metrics, "crawler_requests_in_flight"), 0.0);
        assert_eq!(
            get(&metrics, "crawler_partitions_held"),
            1024.0,
            "one worker holds them all"
        );
        assert_eq!(get(&metrics, "crawler_dropped_writes_total"), 0.0);
        // Bound where told, and nowhere else: not on another loopback address.
        let port = addr.rsplit_once(':').unwrap().1;
        assert!(std::net::TcpStream::connect(format!("127.0.0.2:{port}")).is_err());

        let mut worker = running.0.take().unwrap();
        unsafe { libc::kill(worker.id() as i32, libc::SIGTERM) };
        let status =
            tokio::task::spawn_blocking(move || wait(&mut worker, Duration::from_secs(60)))
                .await
                .unwrap();
        assert!(status.success(), "{status:?}");
    }
);

/// Every site got at least one answer of its final status's class (a redirect one 3xx more;
/// a 4xx or 5xx to HEAD is asked again with GET, so those are lower bounds), and the local
/// site always answered.
fn assert_requests_counted(metrics: &Scrape, expected: &HashMap<String, Page>) {
    let mut at_least: HashMap<&str, f64> = HashMap::new();
    for page in expected.values() {
        let class = match page.expected().1 / 100 {
            2 => "2xx",
            4 => "4xx",
            _ => "5xx",
        };
        *at_least.entry(class).or_default() += 1.0;
        if *page == Page::Redirect {
            *at_least.entry("3xx").or_default() += 1.0;
        }
    }
    for (class, n) in at_least {
        let counted = get(
            metrics,
            &format!("crawler_requests_total{{class=\"{class}\"}}"),
        );
        assert!(counted >= n, "{class}: {counted} requests for {n} sites");
    }
    let no_answer = metrics.get("crawler_requests_total{class=\"error\"}");
    assert_eq!(no_answer.copied().unwrap_or(0.0), 0.0);
}

#[test]
fn a_metrics_address_that_is_not_an_ip_and_port_is_a_usage_error_naming_the_option() {
    for bad in ["localhost:9100", "9100", "127.0.0.1"] {
        let out = run(
            command("crawler-worker", "sqlite:///nonexistent/dir/crawler.db")
                .args(["--metrics", bad]),
        );
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", stderr(&out));
        let error = stderr(&out);
        let named = format!("error: invalid value '{bad}' for '--metrics <ADDR>'");
        assert!(error.starts_with(&named), "{bad}: {error}");
    }
}

#[test]
fn a_metrics_address_in_use_stops_the_worker_before_it_touches_the_database() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("crawler.db");
    let out = run(
        command("crawler-worker", &format!("sqlite://{}", db.display())).args(["--metrics", &addr]),
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let error = stderr(&out);
    assert!(
        error.contains(&format!("error: cannot serve --metrics on {addr}: ")),
        "{error}"
    );
    assert!(!db.exists(), "the database was created");
}
