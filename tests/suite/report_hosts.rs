//! `crawler-report --hosts`, on every backend: per host, its sites by verdict and state, the
//! worker holding its partition and its throttling, in every format, checked against a queue
//! set up through its API.

use std::time::Duration;

use crawler_queue::{
    part_of, ErrorKind, Finding, HostChecks, HostPace, NewSite, Outcome, Queue, Throttled,
    Unreachable, Verdict,
};
use crawler_tests::bins::{command, run, stderr, stdout};
use crawler_tests::findings::alive;
use crawler_tests::{on_every_backend, TestDb};
use serde_json::{json, Map, Value};

const LEASE: Duration = Duration::from_secs(600);

/// What becomes of a seeded site.
#[derive(Clone, Copy)]
enum Fate {
    Checked(Verdict),
    /// Claimed, then given back: pending.
    GivenBack,
    /// Claimed, and still held.
    Held,
    /// Dead, then seeded again with `recheck`: pending, keeping its verdict.
    Rechecked,
}

/// The hosts and their sites' fates. a, b and d fall in partitions 0..=231, c in 572.
const HOSTS: [(&str, &[Fate]); 4] = [
    (
        "a.example",
        &[
            Fate::Checked(Verdict::Alive),
            Fate::Checked(Verdict::Alive),
            Fate::Checked(Verdict::Dead),
            Fate::Checked(Verdict::Unreachable),
            Fate::GivenBack,
        ],
    ),
    (
        "b.example",
        &[
            Fate::Checked(Verdict::Blocked),
            Fate::Checked(Verdict::Error),
            Fate::Checked(Verdict::Excluded),
            Fate::Held,
        ],
    ),
    ("c.example", &[Fate::GivenBack, Fate::GivenBack]),
    (
        "d.example",
        &[Fate::Checked(Verdict::Dead), Fate::Rechecked],
    ),
];

/// Partitions 0..OWNED are held by `worker-7`: those of a, b and d, not c's.
const OWNED: u32 = 232;

/// The report's columns, in order.
const COLUMNS: [&str; 21] = [
    "host",
    "state",
    "rate",
    "cause",
    "unreachable_since",
    "sites",
    "alive",
    "dead",
    "blocked",
    "unreachable",
    "error",
    "excluded",
    "pending",
    "owner",
    "backoff_until",
    "last_throttled_at",
    "last_status",
    "recent_checks",
    "recent_errors",
    "address",
    "detail",
];

/// What the report must say of each host, but for its times.
fn expected() -> Vec<Value> {
    let host = |host,
                [sites, alive, dead, blocked, unreachable, error, excluded, pending]: [i64; 8],
                owner: Option<&str>,
                status: Option<i32>,
                [checks, errors]: [i64; 2]| {
        let (state, rate, cause, detail) = match host {
            "b.example" => ("deferred", json!(2.5), None, None),
            "d.example" => (
                "unreachable",
                Value::Null,
                Some("dns"),
                Some("decided for the host: the name does not resolve"),
            ),
            _ => ("ok", Value::Null, None, None),
        };
        json!({
            "host": host, "state": state, "rate": rate, "cause": cause,
            "sites": sites, "alive": alive, "dead": dead, "blocked": blocked,
            "unreachable": unreachable, "error": error, "excluded": excluded, "pending": pending,
            "owner": owner, "last_status": status,
            "recent_checks": checks, "recent_errors": errors, "address": null, "detail": detail,
        })
    };
    vec![
        host(
            "a.example",
            [5, 2, 1, 0, 1, 0, 0, 1],
            Some("worker-7"),
            None,
            [0, 0],
        ),
        host(
            "b.example",
            [4, 0, 0, 1, 0, 1, 1, 1],
            Some("worker-7"),
            Some(429),
            [0, 0],
        ),
        host(
            "c.example",
            [2, 0, 0, 0, 0, 0, 0, 2],
            None,
            Some(503),
            [0, 0],
        ),
        host(
            "d.example",
            [2, 0, 2, 0, 0, 0, 0, 1],
            Some("worker-7"),
            None,
            [12, 5],
        ),
    ]
}

/// A final result with `verdict`.
fn finding(verdict: Verdict) -> Finding {
    Finding { verdict, ..alive() }
}

fn new_site(host: &str, i: usize) -> NewSite {
    NewSite {
        url: format!("https://{host}/{i}"),
        host: host.into(),
    }
}

/// Seeds [`HOSTS`] and gives each site its fate.
async fn seed_fates(queue: &Queue) {
    let all: Vec<(NewSite, Fate)> = HOSTS
        .iter()
        .flat_map(|(host, fates)| {
            fates
                .iter()
                .enumerate()
                .map(|(i, f)| (new_site(host, i), *f))
        })
        .collect();
    let sites: Vec<NewSite> = all.iter().map(|(s, _)| s.clone()).collect();
    queue.seed(&sites, false).await.unwrap();
    let batch = queue.claim("w", 100, LEASE).await.unwrap();
    assert_eq!(batch.sites.len(), all.len());
    let fate = |url: &str| all.iter().find(|(s, _)| s.url == url).unwrap().1;
    let mut outcomes = Vec::new();
    let mut given_back = Vec::new();
    for site in batch.sites {
        match fate(&site.url) {
            Fate::Checked(verdict) => outcomes.push(Outcome {
                site,
                finding: finding(verdict),
            }),
            Fate::Rechecked => outcomes.push(Outcome {
                site,
                finding: finding(Verdict::Dead),
            }),
            Fate::GivenBack => given_back.push(site.id),
            Fate::Held => {}
        }
    }
    queue.complete(&outcomes).await.unwrap();
    queue
        .release(batch.token, &given_back, Duration::ZERO)
        .await
        .unwrap();
    let rechecked: Vec<NewSite> = all
        .iter()
        .filter(|(_, f)| matches!(f, Fate::Rechecked))
        .map(|(s, _)| s.clone())
        .collect();
    assert_eq!(queue.seed(&rechecked, true).await.unwrap().rechecked, 1);
}

/// Gives every partition to `old` with a lease that ends at once, then the first [`OWNED`] to
/// `worker-7`: c's partition is left with an owner whose lease expired.
async fn take_partitions(queue: &Queue) {
    let held = |host| u32::try_from(part_of(host)).unwrap() < OWNED;
    assert!(held("a.example") && held("b.example") && held("d.example") && !held("c.example"));
    queue
        .parts()
        .take("old", 1, 1024, Duration::from_millis(1))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let taken = queue
        .parts()
        .take("worker-7", 2, OWNED, LEASE)
        .await
        .unwrap();
    assert_eq!(taken, u64::from(OWNED));
}

/// The database's clock just before and just after b and c throttled.
async fn throttle(queue: &Queue) -> (i64, i64) {
    let before = queue.now().await.unwrap();
    let hosts = [
        Throttled {
            host: "b.example".into(),
            status: 429,
            retry_after: Some(Duration::from_secs(3600)),
        },
        Throttled {
            host: "c.example".into(),
            status: 503,
            retry_after: None,
        },
    ];
    queue.hosts().record_throttled(&hosts).await.unwrap();
    let failing = HostChecks {
        host: "d.example".into(),
        checks: 12,
        errors: 5,
    };
    queue.hosts().record_checks(&[failing]).await.unwrap();
    // b throttles as a host (its rate halved thrice, then a host-wide Retry-After of an
    // hour); d is decided unreachable.
    let pace = HostPace {
        host: "b.example".into(),
        rate: Some(2.5),
        deferred: Duration::from_secs(3600),
    };
    queue.hosts().record_paces(&[pace]).await.unwrap();
    let why = Unreachable {
        kind: ErrorKind::Dns,
        detail: "decided for the host: the name does not resolve".into(),
    };
    queue
        .hosts()
        .record_unreachable("d.example", Some(&why))
        .await
        .unwrap();
    (before, queue.now().await.unwrap())
}

/// Runs `crawler-report` with `args`; returns its stdout.
fn report(db: &TestDb, args: &[&str]) -> String {
    let out = run(command("crawler-report", db.url.expose()).args(args));
    assert!(
        out.status.success(),
        "crawler-report {args:?}: {}",
        stderr(&out)
    );
    stdout(&out)
}

/// Unix milliseconds of an RFC 3339 time.
fn millis(value: &Value) -> i64 {
    let text = value.as_str().unwrap_or_else(|| panic!("a time: {value}"));
    let time = time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|e| panic!("{text}: {e}"));
    (time.unix_timestamp_nanos() / 1_000_000) as i64
}

/// Asserts the JSON hosts are [`expected`], with b's backoff an hour after its 429 and both
/// throttles between `before` and `after`.
fn assert_hosts(hosts: &[Value], (before, after): (i64, i64)) {
    let mut rest = Vec::new();
    for host in hosts {
        let mut host = host.as_object().unwrap().clone();
        let backoff = host.remove("backoff_until").unwrap();
        let throttled = host.remove("last_throttled_at").unwrap();
        let since = host.remove("unreachable_since").unwrap();
        match host["host"].as_str().unwrap() {
            "b.example" => {
                let at = millis(&throttled);
                assert!((before..=after).contains(&at), "{at} in {before}..={after}");
                let until = millis(&backoff) - 3_600_000;
                assert!(
                    (before..=after).contains(&until),
                    "{until} in {before}..={after}"
                );
            }
            "d.example" => {
                assert!((before..=after).contains(&millis(&since)));
                assert!(backoff.is_null() && throttled.is_null(), "{host:?}");
            }
            "c.example" => {
                assert!((before..=after).contains(&millis(&throttled)));
                assert!(backoff.is_null(), "a backoff already past: {backoff}");
            }
            _ => assert!(backoff.is_null() && throttled.is_null(), "{host:?}"),
        }
        rest.push(Value::Object(host));
    }
    assert_eq!(rest, expected());
}

/// CSV or text rows as JSON objects: `missing` is null, counts and statuses are numbers.
fn as_json(header: &[String], rows: &[Vec<&str>], missing: &str) -> Vec<Value> {
    rows.iter()
        .map(|cells| {
            assert_eq!(cells.len(), header.len(), "{cells:?}");
            let object: Map<String, Value> = header
                .iter()
                .zip(cells)
                .map(|(key, &cell)| {
                    let value = match cell.parse::<i64>() {
                        _ if cell == missing => Value::Null,
                        _ if key == "rate" => cell.parse::<f64>().unwrap().into(),
                        Ok(n) if key != "host" && key != "owner" => n.into(),
                        _ => cell.into(),
                    };
                    (key.clone(), value)
                })
                .collect();
            Value::Object(object)
        })
        .collect()
}

on_every_backend!(
    async fn the_hosts_report_counts_each_hosts_sites_and_shows_its_owner_and_throttling(
        backend: Backend,
    ) {
        let db = backend.fresh().await;
        let queue = db.queue().await;
        seed_fates(&queue).await;
        take_partitions(&queue).await;
        let window = throttle(&queue).await;

        let json: Vec<Value> =
            serde_json::from_str(&report(&db, &["--hosts", "--format", "json"])).unwrap();
        assert_hosts(&json, window);

        let ndjson = report(&db, &["--hosts", "--format", "ndjson"]);
        let lines: Vec<Value> = ndjson
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines, json, "NDJSON holds the same objects");

        let csv = report(&db, &["--hosts", "--format", "csv"]);
        let mut csv = csv.lines();
        let header: Vec<String> = csv.next().unwrap().split(',').map(String::from).collect();
        assert_eq!(header, COLUMNS);
        let rows: Vec<Vec<&str>> = csv.map(|l| l.split(',').collect()).collect();
        assert_eq!(as_json(&header, &rows, ""), json, "CSV says what JSON says");

        let text = report(&db, &["--hosts"]);
        let mut text = text.lines();
        let header: Vec<String> = text
            .next()
            .unwrap()
            .split_whitespace()
            .map(str::to_lowercase)
            .collect();
        assert_eq!(header, COLUMNS, "text columns are named as in CSV");
        // The last column, the detail, is free text.
        let rows: Vec<Vec<String>> = text
            .map(|l| {
                let words: Vec<&str> = l.split_whitespace().collect();
                let (cells, detail) = words.split_at(COLUMNS.len() - 1);
                let mut cells: Vec<String> = cells.iter().map(|c| c.to_string()).collect();
                cells.push(detail.join(" "));
                cells
            })
            .collect();
        let rows: Vec<Vec<&str>> = rows
            .iter()
            .map(|r| r.iter().map(String::as_str).collect())
            .collect();
        assert_eq!(
            as_json(&header, &rows, "-"),
            json,
            "text says what JSON says"
        );

        let one: Vec<Value> = serde_json::from_str(&report(
            &db,
            &["--hosts", "--host", "b.example", "--format", "json"],
        ))
        .unwrap();
        assert_eq!(one, json[1..2], "--host keeps that host only");
    }
);

on_every_backend!(
    async fn every_host_is_reported_once_in_order_across_pages(backend: Backend) {
        let db = backend.fresh().await;
        let queue = db.queue().await;
        // Two and a half pages of hosts, a site each, and a second site on the last one.
        let mut hosts: Vec<String> = (0..2500).map(|i| format!("h{i:05}.example")).collect();
        let mut sites: Vec<NewSite> = hosts.iter().map(|h| new_site(h, 0)).collect();
        sites.push(new_site(&hosts[2499], 1));
        queue.seed(&sites, false).await.unwrap();

        let ndjson = report(&db, &["--hosts", "--format", "ndjson"]);
        let reported: Vec<Value> = ndjson
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let names: Vec<&str> = reported
            .iter()
            .map(|h| h["host"].as_str().unwrap())
            .collect();
        hosts.sort();
        assert_eq!(names, hosts);
        let counts: Vec<i64> = reported
            .iter()
            .map(|h| h["sites"].as_i64().unwrap())
            .collect();
        assert_eq!(counts[..2499], [1; 2499]);
        assert_eq!(counts[2499], 2);
    }
);

#[test]
fn hosts_with_a_verdict_filter_is_a_usage_error() {
    let out = run(
        command("crawler-report", "sqlite:///nonexistent/dir/crawler.db")
            .args(["--hosts", "--dead"]),
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--hosts"), "{}", stderr(&out));
}
