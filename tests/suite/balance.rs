//! Work-aware balance of the host partitions and the fleet's shared host health, on every
//! backend: an idle worker is handed a busy partition by a holder short of room once nothing
//! of it is in flight, a holder with room keeps the hosts it is working, and a host's recent
//! error rate is kept for whoever holds it next.

use std::collections::HashMap;
use std::time::Duration;

use crawler_queue::{part_of, HostChecks, NewSite, Queue};
use crawler_tests::findings::{alive, outcomes_of};
use crawler_tests::site::Page;
use crawler_tests::{on_every_backend, TestDb};

use crate::e2e::{assert_report_matches, seed, spawn_worker, unfinished, url_file_at, wait};
use crate::faults::QUICK;

const LEASE: Duration = Duration::from_secs(600);

/// `n` host names, each in its own partition below `below`.
fn hosts_below(below: i16, n: usize, name: impl Fn(usize) -> String) -> Vec<String> {
    let mut parts = Vec::new();
    let mut hosts = Vec::new();
    for host in (0..).map(name) {
        let part = part_of(&host);
        if part < below && !parts.contains(&part) {
            parts.push(part);
            hosts.push(host);
            if hosts.len() == n {
                return hosts;
            }
        }
    }
    unreachable!()
}

/// The owner of partition `part`.
async fn owner_of(queue: &Queue, part: i16) -> Option<String> {
    let sql = &queue.db().statement("SELECT owner FROM parts WHERE id = ?");
    match queue.db() {
        crawler_queue::Db::MySql(pool) => sqlx::query_scalar(sql)
            .bind(part)
            .fetch_one(pool)
            .await
            .unwrap(),
        crawler_queue::Db::Postgres(pool) => sqlx::query_scalar(sql)
            .bind(part)
            .fetch_one(pool)
            .await
            .unwrap(),
        crawler_queue::Db::Sqlite(pool) => sqlx::query_scalar(sql)
            .bind(part)
            .fetch_one(pool)
            .await
            .unwrap(),
    }
}

/// The owner of partition `part`, and the worker that asked for it, if any.
async fn owner_and_heir(queue: &Queue, part: i16) -> (Option<String>, Option<String>) {
    let sql = &queue
        .db()
        .statement("SELECT owner, heir_owner FROM parts WHERE id = ?");
    match queue.db() {
        crawler_queue::Db::MySql(pool) => sqlx::query_as(sql).bind(part).fetch_one(pool).await,
        crawler_queue::Db::Postgres(pool) => sqlx::query_as(sql).bind(part).fetch_one(pool).await,
        crawler_queue::Db::Sqlite(pool) => sqlx::query_as(sql).bind(part).fetch_one(pool).await,
    }
    .unwrap()
}

/// Whether partition `part` is being handed over.
async fn is_draining(queue: &Queue, part: i16) -> bool {
    let sql = &queue
        .db()
        .statement("SELECT COUNT(*) FROM parts WHERE id = ? AND draining <> 0");
    let n: i64 = match queue.db() {
        crawler_queue::Db::MySql(pool) => sqlx::query_scalar(sql).bind(part).fetch_one(pool).await,
        crawler_queue::Db::Postgres(pool) => {
            sqlx::query_scalar(sql).bind(part).fetch_one(pool).await
        }
        crawler_queue::Db::Sqlite(pool) => sqlx::query_scalar(sql).bind(part).fetch_one(pool).await,
    }
    .unwrap();
    n > 0
}

on_every_backend!(
    async fn a_partition_asked_for_is_declined_or_goes_to_its_heir_once_nothing_of_it_is_in_flight(
        backend: Backend,
    ) {
        let db = backend.fresh().await;
        let queue = db.queue().await;
        let parts = queue.parts();
        let (a, b) = (1, 2);
        // Partitions are taken in id order: a holds 0..512, b the rest; all the work is a's.
        assert_eq!(parts.take("a", a, 512, LEASE).await.unwrap(), 512);
        assert_eq!(parts.take("b", b, 512, LEASE).await.unwrap(), 512);
        let hosts = hosts_below(512, 4, |i| format!("h{i}.example"));
        let sites: Vec<NewSite> = (0..40)
            .map(|i| NewSite {
                url: format!("https://{}/{i}", hosts[i % 4]),
                host: hosts[i % 4].clone(),
            })
            .collect();
        queue.seed(&sites, false).await.unwrap();
        let due = parts.due().await.unwrap();
        assert_eq!(due.len(), 4, "{due:?}");
        assert!(due.iter().all(|p| p.holder == Some(a) && p.sites == 10));

        let claimed = queue.claim_held(a, "a", 100, LEASE).await.unwrap();
        assert_eq!(claimed.sites.len(), 40);
        let wanted = due[0].id;
        assert!(parts.ask_for_part(wanted, a, b, "b").await.unwrap());
        assert!(
            !parts.ask_for_part(wanted, a, 3, "c").await.unwrap(),
            "one heir at a time"
        );
        let asked: Vec<(i16, bool)> = parts
            .keep(a, LEASE)
            .await
            .unwrap()
            .iter()
            .filter(|p| p.asked)
            .map(|p| (p.id, p.draining))
            .collect();
        assert_eq!(asked, [(wanted, false)], "asked, not yet handed over");
        assert_eq!(
            parts.release_drained(a, "a", LEASE).await.unwrap(),
            0,
            "the holder has not answered"
        );
        // Declined: the request is forgotten, and another may ask.
        let declined = due[1].id;
        assert!(parts.ask_for_part(declined, a, 3, "c").await.unwrap());
        assert!(parts.decline_ask(a, declined).await.unwrap());
        assert!(!parts.decline_ask(a, declined).await.unwrap(), "once");
        assert!(parts.ask_for_part(declined, a, 3, "c").await.unwrap());
        assert!(parts.decline_ask(a, declined).await.unwrap());
        // Accepted: handed over once nothing of it is in flight.
        assert!(parts.drain_part(a, wanted).await.unwrap());
        assert!(
            !parts.decline_ask(a, wanted).await.unwrap(),
            "a hand-over under way is not declined"
        );
        assert_eq!(
            parts.release_drained(a, "a", LEASE).await.unwrap(),
            0,
            "its sites are still in flight"
        );
        assert_eq!(owner_of(&queue, wanted).await.as_deref(), Some("a"));

        let (in_wanted, others): (Vec<_>, Vec<_>) =
            claimed.sites.into_iter().partition(|s| s.part == wanted);
        let written = queue
            .complete(&outcomes_of(in_wanted, &alive()))
            .await
            .unwrap();
        assert_eq!(
            written.done, 10,
            "the holder writes back while it hands over"
        );
        assert_eq!(parts.release_drained(a, "a", LEASE).await.unwrap(), 1);
        assert_eq!(owner_of(&queue, wanted).await.as_deref(), Some("b"));
        let held_by_b: Vec<i16> = parts
            .keep(b, LEASE)
            .await
            .unwrap()
            .iter()
            .filter(|p| !p.draining)
            .map(|p| p.id)
            .collect();
        assert!(held_by_b.contains(&wanted));
        assert_eq!(held_by_b.len(), 513);
        queue
            .complete(&outcomes_of(others, &alive()))
            .await
            .unwrap();
    }
);

on_every_backend!(
    async fn a_hosts_recent_error_rate_is_kept_for_its_next_holder(backend: Backend) {
        let db = backend.fresh().await;
        let queue = db.queue().await;
        let checks = |host: &str, checks, errors| HostChecks {
            host: host.into(),
            checks,
            errors,
        };
        queue
            .hosts()
            .record_checks(&[checks("down.example", 20, 15), checks("fine.example", 3, 1)])
            .await
            .unwrap();
        queue.parts().take("next", 9, 1024, LEASE).await.unwrap();
        let states = queue.hosts().states(9).await.unwrap();
        let down = states.iter().find(|h| h.host == "down.example").unwrap();
        assert_eq!((down.recent_checks, down.recent_errors), (20, 15));
        assert!(down.failing());
        let fine = states.iter().find(|h| h.host == "fine.example").unwrap();
        assert!(!fine.failing(), "too few checks to judge");
        // It recovers: past 100 checks the counts are halved, so old failures weigh less.
        queue
            .hosts()
            .record_checks(&[checks("down.example", 100, 0)])
            .await
            .unwrap();
        let states = queue.hosts().states(9).await.unwrap();
        let down = states.iter().find(|h| h.host == "down.example").unwrap();
        assert_eq!((down.recent_checks, down.recent_errors), (60, 7));
        assert!(!down.failing());
    }
);

/// Six slow hosts (300 ms a page, one request at a time), `pages` pages each, all in
/// partitions a first worker keeps when a second joins (it hands over its highest 512): by
/// count alone, the second would have nothing to do. Seeds them, starts the first worker with
/// `flags` and waits until it holds every partition, then starts the second, "late".
async fn six_slow_hosts_and_a_late_worker(
    db: &TestDb,
    pages: usize,
    flags: &[&str],
) -> (Vec<i16>, Vec<std::process::Child>, HashMap<String, Page>) {
    let queue = db.queue().await;
    let ips = hosts_below(512, 6, |i| format!("127.0.10.{}", i + 1));
    let parts: Vec<i16> = ips.iter().map(|ip| part_of(ip)).collect();
    let (file, expected) = url_file_at(&ips, pages, &[Page::Slow]).await;
    seed(db, file.path());
    let args = [
        // Small batches: the first worker claims a few seconds of each host ahead, so the
        // rest stays due, for the idle worker to see.
        &["--drain", "--host-concurrency", "1", "--batch-size", "10"][..],
        QUICK,
        flags,
    ]
    .concat();
    let first = spawn_worker(db, "first", &args);
    crate::partitions::until_holders(
        &queue,
        Duration::from_secs(10),
        "the first worker takes every partition",
        |h| h == [("first".to_owned(), 1024)],
    )
    .await;
    let late = spawn_worker(db, "late", &args);
    (parts, vec![first, late], expected)
}

/// Waits for `workers` to drain the queue, then checks every verdict.
async fn finish(db: &TestDb, workers: Vec<std::process::Child>, expected: &HashMap<String, Page>) {
    for mut worker in workers {
        let done = tokio::task::spawn_blocking(move || wait(&mut worker, Duration::from_secs(120)));
        assert!(done.await.unwrap().success());
    }
    assert_report_matches(db, expected);
    assert_eq!(unfinished(db), (0, 0));
}

on_every_backend!(
    async fn an_idle_worker_gets_busy_partitions_from_one_short_of_room_and_nothing_is_lost(
        backend: Backend,
    ) {
        let db: TestDb = backend.fresh().await;
        let queue = db.queue().await;
        // Two requests at a time for six hosts: the first worker is short of room, so the
        // hosts wait for it, not for their pace, and it hands some to the idle one.
        let (parts, workers, expected) =
            six_slow_hosts_and_a_late_worker(&db, 30, &["--concurrency", "2"]).await;
        let started = std::time::Instant::now();
        loop {
            let mut owners = Vec::new();
            for &part in &parts {
                owners.push(owner_of(&queue, part).await);
            }
            if owners.iter().any(|o| o.as_deref() == Some("late")) {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "the late worker never got a busy partition: {owners:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        finish(&db, workers, &expected).await;
    }
);

on_every_backend!(
    async fn a_worker_with_room_keeps_the_hosts_it_is_working_when_an_idle_one_asks(
        backend: Backend,
    ) {
        let db: TestDb = backend.fresh().await;
        let queue = db.queue().await;
        // Room for 512 requests and six hosts at one at a time: each host goes at its own
        // pace, and would only stop while it moved.
        let (parts, workers, expected) = six_slow_hosts_and_a_late_worker(&db, 40, &[]).await;
        // The idle worker asks every keeper round (a second here), and the holder answers at
        // its next round: watched until an ask is seen declined (asked, then no heir, the
        // partitions still the first worker's), or has stood for two rounds unanswered by a
        // hand-over, whichever comes first; never a partition draining or moved meanwhile.
        let started = std::time::Instant::now();
        let mut asked_at = None;
        loop {
            let mut asking = false;
            for &part in &parts {
                let (owner, heir) = owner_and_heir(&queue, part).await;
                assert_eq!(
                    owner.as_deref(),
                    Some("first"),
                    "a host being worked at its pace moved to the idle worker"
                );
                assert!(
                    !is_draining(&queue, part).await,
                    "a host being worked at its pace is being handed over"
                );
                asking |= heir.as_deref() == Some("late");
            }
            match asked_at {
                None if asking => asked_at = Some(std::time::Instant::now()),
                Some(_) if !asking => break,
                Some(at) if at.elapsed() > Duration::from_secs(2) => break,
                _ => {}
            }
            assert!(
                asked_at.is_some() || started.elapsed() < Duration::from_secs(20),
                "the idle worker never asked for a busy partition"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        finish(&db, workers, &expected).await;
    }
);
