//! Reports people use, on every backend: JUnit and Markdown of a crawl by the binaries, an
//! archived copy for each dead link (`--archive-lookup` against a local stand-in of the
//! availability API), and dead confirmed over time (`--confirm N:SPAN`).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crawler_queue::{Confirm, Finding, Queue, QueueConfig, Verdict};
use crawler_tests::archive::{spawn_archive, Archive, SNAPSHOT};
use crawler_tests::bins::{command, run, stderr, stdout};
use crawler_tests::findings::{alive, outcomes_of};
use crawler_tests::site::{spawn_site, Page};
use crawler_tests::wait::until_database_time;
use crawler_tests::{on_every_backend, TestDb};

use crate::e2e::{seed, spawn_worker, wait};
use crate::pipelines::report_exits;

const LEASE: Duration = Duration::from_secs(600);

/// The NDJSON report of `args`, by URL.
fn ndjson(db: &TestDb, args: &[&str]) -> HashMap<String, serde_json::Value> {
    let args = [args, &["--format", "ndjson"]].concat();
    report_exits(db, &args, 0)
        .lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            (v["url"].as_str().unwrap().to_owned(), v)
        })
        .collect()
}

on_every_backend!(
    async fn dead_links_get_their_archived_copy_in_every_report_format(backend: Backend) {
        let db = backend.fresh().await;
        let site = spawn_site().await;
        let archive = spawn_archive().await;
        let dead = [
            site.url(Page::Dead, 0),
            site.url(Page::Gone, 1),
            format!("http://{}/dead/nocopy", site.addr),
        ];
        let alive = [site.url(Page::Alive, 2), site.url(Page::Alive, 3)];
        let blocked = site.url(Page::Blocked, 4);
        let mut list = tempfile::NamedTempFile::new().unwrap();
        for url in dead.iter().chain(&alive).chain([&blocked]) {
            std::io::Write::write_all(&mut list, format!("{url}\n").as_bytes()).unwrap();
        }
        seed(&db, list.path());
        let api = archive.api();
        let lookup = [
            "--drain",
            "--archive-lookup",
            "--archive-api",
            &api,
            "--archive-rate",
            "50",
        ];
        let mut worker = spawn_worker(&db, "w1", &lookup);
        assert!(wait(&mut worker, Duration::from_secs(60)).success());

        // Each dead URL asked once, the first request's again after the archive's 503; never an
        // alive or blocked one. The retry need not come next: a pass that a stopping worker cuts
        // off after the 503 leaves it to the drain's last pass, which may ask another URL first.
        let asked = archive.asked();
        let mut urls: Vec<&str> = asked.iter().map(|q| q["url"].as_str()).collect();
        assert_eq!(urls.len(), dead.len() + 1, "{asked:?}");
        let again = urls.iter().filter(|url| **url == urls[0]).count();
        assert_eq!(again, 2, "the 503 is retried: {urls:?}");
        urls.sort();
        urls.dedup();
        let mut want: Vec<&str> = dead.iter().map(String::as_str).collect();
        want.sort();
        assert_eq!(urls, want);
        for query in &asked {
            let timestamp = &query["timestamp"];
            assert!(
                timestamp.len() == 14 && timestamp.starts_with("20"),
                "a Wayback timestamp: {timestamp}"
            );
        }

        let report = ndjson(&db, &["--all"]);
        assert_eq!(report.len(), 6);
        for url in &dead[..2] {
            assert_eq!(report[url]["verdict"], "dead");
            assert_eq!(report[url]["archived_url"], Archive::copy_of(url));
            assert_eq!(report[url]["archived_at"], "2013-09-19T04:46:12Z");
            assert!(report[url]["dead_since"].is_string(), "{}", report[url]);
        }
        assert!(
            report[&dead[2]]["archived_url"].is_null(),
            "no copy of {}",
            dead[2]
        );
        for url in alive.iter().chain([&blocked]) {
            assert!(report[url]["archived_url"].is_null());
            assert!(report[url]["dead_since"].is_null(), "{}", report[url]);
        }

        // JUnit: a test case per site, failing unless alive, the counts up front.
        let junit = report_exits(&db, &["--all", "--format", "junit"], 0);
        assert!(junit.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"));
        assert!(
            junit.contains("<testsuite name=\"crawler-report\" tests=\"6\" failures=\"4\">"),
            "{junit}"
        );
        assert_eq!(junit.matches("<testcase ").count(), 6, "{junit}");
        assert_eq!(
            junit.matches("<failure type=\"dead\"").count(),
            3,
            "{junit}"
        );
        assert_eq!(
            junit
                .matches("<failure type=\"blocked\" message=\"403 blocked: HTTP 403\"")
                .count(),
            1,
            "{junit}"
        );
        let host = site.addr.ip().to_string();
        assert_eq!(junit.matches(&format!("classname=\"{host}\"")).count(), 6);
        assert!(junit.contains(&format!("archived copy: {}", Archive::copy_of(&dead[0]))));
        assert!(junit.trim_end().ends_with("</testsuite>\n</testsuites>"));

        // Markdown: a table of the dead, the archived copy a link named by its date.
        let markdown = report_exits(&db, &["--dead", "--format", "markdown"], 0);
        let lines: Vec<&str> = markdown.lines().collect();
        assert_eq!(
            lines[0],
            "| URL | Verdict | Status | Reason | Found on | Archived copy | Fragment | Since |"
        );
        assert_eq!(
            lines[1],
            "| --- | --- | --- | --- | --- | --- | --- | --- |"
        );
        assert_eq!(lines.len(), 2 + dead.len(), "{markdown}");
        let row = format!(
            "| {} | dead | 404 | HTTP 404 |  | [2013-09-19]({}) |  | ",
            dead[0],
            Archive::copy_of(&dead[0])
        );
        let row = lines.iter().find(|l| l.starts_with(&row)).expect(&row);
        assert!(row.ends_with(" (new) |"), "a first verdict: {row}");
        let summary = report_exits(&db, &["--summary", "--format", "markdown"], 0);
        assert!(
            summary.starts_with("**6 sites checked**\n\n- alive: 2\n- dead: 3\n"),
            "{summary}"
        );

        // A URL is asked once: another worker, on a recheck of everything, asks nothing.
        let out = run(command("crawler-seed", db.url.expose())
            .args(["--recheck"])
            .arg(list.path()));
        assert!(out.status.success(), "{}", stderr(&out));
        let mut again = spawn_worker(&db, "w2", &lookup);
        assert!(wait(&mut again, Duration::from_secs(60)).success());
        assert_eq!(archive.asked().len(), asked.len(), "nothing asked again");
        assert_eq!(
            ndjson(&db, &["--dead"])[&dead[0]]["archived_url"],
            Archive::copy_of(&dead[0])
        );
        assert!(SNAPSHOT.starts_with("2013"));
    }
);

on_every_backend!(
    async fn junit_refuses_what_is_not_a_list_of_sites(backend: Backend) {
        let db = backend.fresh().await;
        // Made, with its schema: the report refuses a SQLite database that is not there.
        drop(db.queue().await);
        for args in [
            &["--hosts", "--format", "junit"][..],
            &["--summary", "--format", "junit"],
            &["--dead", "--by-page", "--format", "junit"],
            &["--dead", "--summary", "--format", "json"],
        ] {
            let out = run(command("crawler-report", db.url.expose()).args(args));
            assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
            assert!(
                stderr(&out).contains("--"),
                "{args:?} says why: {}",
                stderr(&out)
            );
        }
        let both = report_exits(&db, &["--dead", "--summary", "--format", "markdown"], 0);
        assert!(
            both.starts_with("| URL |") && both.contains("**0 sites checked**"),
            "{both}"
        );
    }
);

/// A dead (404) finding.
fn dead() -> Finding {
    Finding {
        verdict: Verdict::Dead,
        status: Some(404),
        ..alive()
    }
}

/// Claims every due site and writes `finding` for each; returns how many.
async fn check_due(queue: &Queue, finding: &Finding) -> usize {
    let batch = queue.claim("checker", 100, LEASE).await.unwrap();
    let n = batch.sites.len();
    queue
        .complete(&outcomes_of(batch.sites, finding))
        .await
        .unwrap();
    n
}

/// Reaps until a dead site is due for its confirming check (the policy's interval), within 20 s.
async fn until_confirming_check(queue: &Queue) -> u64 {
    let started = Instant::now();
    loop {
        let reaped = queue.reaping().reap(LEASE).await.unwrap();
        if reaped.confirming > 0 {
            return reaped.confirming;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "no confirming check came due"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

on_every_backend!(
    async fn dead_is_confirmed_after_n_dead_results_spanning_the_span(backend: Backend) {
        let db = backend.fresh().await;
        let policy: Confirm = "2:2s".parse().unwrap();
        let queue = db
            .queue_with(QueueConfig {
                confirm: Some(policy),
                ..Default::default()
            })
            .await;
        let url = "http://confirm.test/gone";
        let site = crawler_queue::NewSite {
            url: url.into(),
            host: "confirm.test".into(),
        };
        queue.seed(&[site], false).await.unwrap();
        let confirmed = ["--dead", "--confirmed"];

        // The first dead result: dead since now, due again in SPAN/N, not before; the second
        // at once then: two results, but one interval apart, short of the span.
        assert_eq!(check_due(&queue, &dead()).await, 1);
        assert_eq!(
            queue.reaping().reap(LEASE).await.unwrap().confirming,
            0,
            "not due before SPAN/N"
        );
        assert_eq!(until_confirming_check(&queue).await, 1);
        assert_eq!(check_due(&queue, &dead()).await, 1);
        let second = ndjson(&db, &["--dead"]);
        let since = second[url]["dead_since"].as_str().unwrap().to_owned();
        assert!(second[url]["confirmed_at"].is_null(), "{}", second[url]);
        assert!(
            ndjson(&db, &confirmed).is_empty(),
            "two results a second apart span no 2 s"
        );
        report_exits(&db, &["--fail-on", "confirmed-dead"], 0);

        // The third spans the span: confirmed, its streak's start unchanged, no check scheduled.
        assert_eq!(until_confirming_check(&queue).await, 1);
        assert_eq!(check_due(&queue, &dead()).await, 1);
        let report = ndjson(&db, &confirmed);
        assert_eq!(report.len(), 1, "confirmed after N results over SPAN");
        assert_eq!(report[url]["dead_since"], since.as_str());
        assert!(report[url]["confirmed_at"].as_str().unwrap() > since.as_str());
        report_exits(&db, &["--fail-on", "confirmed-dead"], 4);
        let text = report_exits(&db, &["--dead", "--confirmed"], 0);
        assert!(text.trim_end().ends_with(" confirmed"), "{text}");
        // When its next confirming check would have been due, had it not been confirmed.
        let interval = i64::try_from(policy.interval().as_millis()).unwrap();
        until_database_time(&queue, queue.now().await.unwrap() + interval).await;
        assert_eq!(
            queue.reaping().reap(LEASE).await.unwrap().confirming,
            0,
            "a confirmed site is done"
        );

        // An alive result starts over: no streak, nothing confirmed.
        let mut list = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut list, format!("{url}\n").as_bytes()).unwrap();
        let out = run(command("crawler-seed", db.url.expose())
            .arg("--recheck")
            .arg(list.path()));
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(check_due(&queue, &alive()).await, 1);
        let after = ndjson(&db, &["--all"]);
        assert!(
            after[url]["dead_since"].is_null() && after[url]["confirmed_at"].is_null(),
            "{}",
            after[url]
        );
        report_exits(&db, &["--fail-on", "confirmed-dead"], 0);
    }
);

on_every_backend!(
    async fn without_a_policy_dead_is_kept_with_its_streak_but_never_rechecked(backend: Backend) {
        let db = backend.fresh().await;
        let site = spawn_site().await;
        let url = site.url(Page::Dead, 0);
        let mut list = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut list, format!("{url}\n").as_bytes()).unwrap();
        seed(&db, list.path());
        // The worker's flag reaches the queue: with --confirm, the reaper makes it due again.
        let mut worker = spawn_worker(&db, "w1", &["--drain", "--confirm", "2:1s"]);
        assert!(wait(&mut worker, Duration::from_secs(60)).success());
        assert!(ndjson(&db, &["--dead"])[&url]["dead_since"].is_string());
        let started = Instant::now();
        loop {
            let out = run(&mut command("crawler-reap", db.url.expose()));
            assert!(out.status.success(), "{}", stderr(&out));
            if stdout(&out).contains("1 dead sites due for a confirming check") {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "{}",
                stdout(&out)
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        // Without it, a dead site is due only when a recheck says so.
        let db = backend.fresh().await;
        seed(&db, list.path());
        let mut worker = spawn_worker(&db, "w1", &["--drain"]);
        assert!(wait(&mut worker, Duration::from_secs(60)).success());
        let queue = db.queue().await;
        // Twice the interval the policy above would have waited (2:1s, half a second).
        until_database_time(&queue, queue.now().await.unwrap() + 1_000).await;
        assert_eq!(queue.reaping().reap(LEASE).await.unwrap().confirming, 0);
        assert!(ndjson(&db, &["--dead"])[&url]["dead_since"].is_string());
    }
);
