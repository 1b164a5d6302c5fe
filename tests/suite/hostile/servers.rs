//! Hostile servers: an absurd `Retry-After`, a result the database refuses to store, and a
//! database that stops answering while a worker shuts down. None may stop the rest of the work.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crawler_queue::{
    DatabaseUrl, Db, Finding, NewSite, Next, Outcome, Queue, QueueConfig, Site, Verdict, MAX_DELAY,
};
use crawler_tests::findings::alive;
use crawler_tests::mariadb::MariaDb;
use crawler_tests::site::{spawn_site, spawn_site_at, Page};
use crawler_tests::{on_every_backend, Backend, TestDb};

use crate::e2e::{assert_report_matches, seed, spawn_worker, unfinished, url_file, wait};

const LONG: Duration = Duration::from_secs(600);

/// A 429 whose server asked to wait `retry_after`.
fn throttled(retry_after: Duration) -> Finding {
    Finding {
        verdict: Verdict::Blocked,
        status: Some(429),
        next: Next::Transient {
            not_before: Some(retry_after),
        },
        ..alive()
    }
}

/// A queue with `n` sites, all claimed in one batch.
async fn claimed(backend: Backend, n: usize) -> (TestDb, Queue, Vec<Site>) {
    let db = backend.fresh().await;
    let queue = db.queue().await;
    let sites: Vec<NewSite> = (0..n)
        .map(|i| NewSite {
            url: format!("https://h{}.example/{i}", i % 7),
            host: format!("h{}.example", i % 7),
        })
        .collect();
    queue.seed(&sites, false).await.unwrap();
    let batch = queue.claim("w", n as u32, LONG).await.unwrap();
    assert_eq!(batch.sites.len(), n);
    (db, queue, batch.sites)
}

/// A site as stored: id, verdict, error_kind, state, next_check_at (relative to now, once read).
type Row = (i64, Option<String>, Option<String>, i64, i64);

/// Every site's stored (verdict, error_kind, state, next_check_at - now).
async fn rows(queue: &Queue) -> Vec<Row> {
    let now = queue.now().await.unwrap();
    let sql = "SELECT id, verdict, error_kind, state, next_check_at FROM sites ORDER BY id";
    let rows: Vec<Row> = match queue.db() {
        Db::MySql(pool) => sqlx::query_as(sql).fetch_all(pool).await.unwrap(),
        // The state is a SMALLINT there, which sqlx decodes only as an i16.
        Db::Postgres(pool) => sqlx::query_as(sql)
            .fetch_all(pool)
            .await
            .unwrap()
            .into_iter()
            .map(|(id, v, k, state, next): (i64, _, _, i16, i64)| (id, v, k, state.into(), next))
            .collect(),
        Db::Sqlite(pool) => sqlx::query_as(sql).fetch_all(pool).await.unwrap(),
    };
    rows.into_iter()
        .map(|(id, v, k, state, next)| (id, v, k, state, next - now))
        .collect()
}

on_every_backend!(
    async fn an_absurd_retry_after_is_capped_and_the_rest_is_written(backend: Backend) {
        let (_db, queue, sites) = claimed(backend, 300).await;
        let hostile = sites[150].id;
        let outcomes: Vec<Outcome> = sites
            .into_iter()
            .map(|site| Outcome {
                finding: if site.id == hostile {
                    throttled(Duration::MAX)
                } else {
                    alive()
                },
                site,
            })
            .collect();
        let completed = queue.complete(&outcomes).await.expect("write-back");
        assert_eq!(completed.done, 300, "{completed:?}");
        let max = MAX_DELAY.as_millis() as i64;
        for (id, verdict, _, state, next) in rows(&queue).await {
            assert_eq!(state, 2, "site {id} has its verdict");
            if id == hostile {
                // Deferred past the horizon: a verdict now, due again when the (capped) server allows.
                assert_eq!(verdict.as_deref(), Some("blocked"));
                assert!(
                    next > max - 60_000 && next <= max + 1000,
                    "next check in {next} ms"
                );
            } else {
                assert_eq!(verdict.as_deref(), Some("alive"));
                assert!(next <= 1000, "due again at once: {next} ms");
            }
        }
    }
);

on_every_backend!(
    async fn a_retry_after_within_the_horizon_sends_the_site_back_and_one_past_it_is_a_verdict(
        backend: Backend,
    ) {
        let (_db, queue, sites) = claimed(backend, 2).await;
        let soon = Duration::from_secs(30); // under the default 1 min horizon
        let late = Duration::from_secs(7200);
        let outcomes = vec![
            Outcome {
                site: sites[0].clone(),
                finding: throttled(soon),
            },
            Outcome {
                site: sites[1].clone(),
                finding: throttled(late),
            },
        ];
        let completed = queue.complete(&outcomes).await.unwrap();
        assert_eq!((completed.retrying, completed.done), (1, 1));
        let rows = rows(&queue).await;
        let (_, verdict, _, state, next) = &rows[0];
        assert_eq!((verdict.as_deref(), *state), (None, 0), "pending again");
        assert!((29_000..=40_000).contains(next), "due in {next} ms");
        let (_, verdict, _, state, next) = &rows[1];
        assert_eq!((verdict.as_deref(), *state), (Some("blocked"), 2));
        assert!(
            (7_195_000..=7_300_000).contains(next),
            "next check in {next} ms"
        );
    }
);

on_every_backend!(
    async fn a_result_the_database_refuses_does_not_hold_up_the_others(backend: Backend) {
        let (_db, queue, sites) = claimed(backend, 300).await;
        let hostile = sites[77].id;
        // Longer than MySQL's TEXT (65,535 bytes): a strict server refuses the row.
        let long_url = format!("https://h.example/{}", "a".repeat(70_000));
        let outcomes: Vec<Outcome> = sites
            .into_iter()
            .map(|site| Outcome {
                finding: Finding {
                    final_url: (site.id == hostile).then(|| long_url.clone()),
                    ..alive()
                },
                site,
            })
            .collect();
        let completed = queue.complete(&outcomes).await.expect("write-back");
        assert_eq!(completed.done, 300, "{completed:?}");
        for (id, verdict, kind, state, _) in rows(&queue).await {
            assert_eq!(state, 2, "site {id} has its verdict");
            let expected = match (id == hostile, backend) {
                (true, Backend::MariaDb) => (Some("error"), Some("unstorable")),
                // SQLite has no length limit: the row is stored as it is.
                _ => (Some("alive"), None),
            };
            assert_eq!((verdict.as_deref(), kind.as_deref()), expected, "site {id}");
        }
    }
);

on_every_backend!(
    async fn one_url_with_an_absurd_retry_after_never_stops_a_drain(backend: Backend) {
        let db = backend.fresh().await;
        // Each hostile URL on a host of its own: this is about the write-back, not politeness.
        let lists = [
            url_file(&spawn_site().await, 300, &[Page::Alive]),
            url_file(&spawn_site_at("127.0.0.2").await, 1, &[Page::Throttled]),
            url_file(&spawn_site_at("127.0.0.3").await, 1, &[Page::Throttled9999]),
        ];
        let mut expected = HashMap::new();
        for (file, pages) in &lists {
            seed(&db, file.path());
            expected.extend(pages.clone());
        }
        // Three attempts, so that the 429s are sent back to the queue (where the overflow was).
        let mut worker = spawn_worker(
            &db,
            "w",
            &["--drain", "--attempts", "3", "--retry-delay", "1s"],
        );
        let status =
            tokio::task::spawn_blocking(move || wait(&mut worker, Duration::from_secs(60)))
                .await
                .unwrap();
        assert!(status.success());
        assert_report_matches(&db, &expected);
        assert_eq!(unfinished(&db), (0, 0));
    }
);

on_every_backend!(
    async fn a_host_answering_429_for_an_hour_gets_its_verdicts_now_and_stalls_no_other(
        backend: Backend,
    ) {
        let db = backend.fresh().await;
        let mut healthy = HashMap::new();
        let mut lists = Vec::new();
        for i in 1..=5 {
            let (file, pages) = url_file(
                &spawn_site_at(&format!("127.0.0.{i}")).await,
                100,
                &[Page::Alive],
            );
            healthy.extend(pages);
            lists.push(file);
        }
        lists.push(url_file(&spawn_site_at("127.0.0.6").await, 100, &[Page::Busy]).0);
        for file in &lists {
            seed(&db, file.path());
        }
        let started = Instant::now();
        let mut worker = spawn_worker(&db, "w", &["--attempts", "3", "--concurrency", "32"]);
        let limit = Duration::from_secs(30);
        let done = loop {
            let reported = crate::e2e::reported(&db);
            let done = healthy
                .keys()
                .filter(|url| reported.contains_key(*url))
                .count();
            if done == healthy.len() || started.elapsed() > limit {
                break done;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        let took = started.elapsed();
        // Past the defer horizon, the throttling host's sites have their verdict now, and
        // their next check is the hour it asked for.
        let queue = db.queue().await;
        let busy: Vec<_> = rows(&queue)
            .await
            .into_iter()
            .filter(|r| r.1.as_deref() == Some("blocked"))
            .collect();
        unsafe { libc::kill(worker.id() as i32, libc::SIGTERM) };
        let status =
            tokio::task::spawn_blocking(move || wait(&mut worker, Duration::from_secs(30)));
        assert!(status.await.unwrap().success());
        assert_eq!(done, healthy.len(), "healthy sites done after {took:?}");
        assert_eq!(
            busy.len(),
            100,
            "every site of the busy host has its verdict"
        );
        for (id, _, _, state, next) in busy {
            assert_eq!(state, 2, "site {id} is done, not held nor pending");
            assert!(next > 3_000_000, "site {id} due in {next} ms");
        }
    }
);

/// SIGTERM ends a worker within `--grace` plus its bounded last write, even while the database
/// hangs (frozen with SIGSTOP); what it held comes back through the reaper and gets a verdict.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_ends_a_worker_whose_database_hangs_and_loses_nothing() {
    let server = MariaDb::start();
    let db = TestDb::external(
        DatabaseUrl::new(server.create_database().await),
        Backend::MariaDb,
    );
    let queue = Queue::new(
        Db::connect(&db.url, 2).await.unwrap(),
        QueueConfig::default(),
    );
    let site = spawn_site().await;
    let (file, expected) = url_file(&site, 600, &[Page::Slow, Page::Alive]);
    seed(&db, file.path());
    let quick = [crate::faults::QUICK, &["--grace", "2s"]].concat();
    let mut stuck = spawn_worker(&db, "stuck", &quick);
    while queue.reports().has_unfinished().await.unwrap() && crate::e2e::reported(&db).len() < 50 {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    server.signal(libc::SIGSTOP);
    tokio::time::sleep(Duration::from_millis(500)).await;
    unsafe { libc::kill(stuck.id() as i32, libc::SIGTERM) };
    let signalled = Instant::now();
    let bound = Duration::from_secs(2 + 10) + Duration::from_secs(5);
    let waited = tokio::task::spawn_blocking(move || {
        let limit = Instant::now() + Duration::from_secs(90);
        while stuck.try_wait().unwrap().is_none() && Instant::now() < limit {
            std::thread::sleep(Duration::from_millis(50));
        }
        let exited = stuck.try_wait().unwrap().is_some();
        let _ = stuck.kill();
        let _ = stuck.wait();
        exited
    });
    let exited = waited.await.unwrap();
    let took = signalled.elapsed();
    server.signal(libc::SIGCONT);
    assert!(exited, "the worker never exited after SIGTERM");
    assert!(
        took <= bound,
        "the worker took {took:?} to exit (bound {bound:?})"
    );
    // Another worker finishes the crawl, the stuck worker's claims included.
    let mut other = spawn_worker(&db, "other", &[&["--drain"], &quick[..]].concat());
    let status = tokio::task::spawn_blocking(move || wait(&mut other, Duration::from_secs(120)))
        .await
        .unwrap();
    assert!(status.success());
    assert_report_matches(&db, &expected);
    assert_eq!(unfinished(&db), (0, 0));
}
