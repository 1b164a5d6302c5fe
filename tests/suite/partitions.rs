//! Host partitions (fleet-wide politeness), on every backend: the lease operations, claims
//! only in held partitions, the fence on write-back, and the fleet's balance, recovery and
//! hand-over with real workers.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use crawler_queue::{
    part_of, Db, ErrorKind, HostPace, NewSite, Queue, Throttled, Unreachable, PARTS,
};
use crawler_tests::findings::{alive, outcomes_of};
use crawler_tests::site::Page;
use crawler_tests::wait::until_some;
use crawler_tests::{on_every_backend, TestDb};

use crate::e2e::{assert_report_matches, seed, spawn_worker, spread_url_file, unfinished, wait};
use crate::faults::QUICK;

const LEASE: Duration = Duration::from_secs(600);

/// `n` sites over `hosts` hosts.
fn sites(n: usize, hosts: usize) -> Vec<NewSite> {
    (0..n)
        .map(|i| NewSite {
            url: format!("https://h{}.example/{i}", i % hosts),
            host: format!("h{}.example", i % hosts),
        })
        .collect()
}

/// Runs `sql` (one integer column) on either backend.
async fn ints(queue: &Queue, sql: &str) -> Vec<i64> {
    let sql = &queue.db().statement(sql);
    match queue.db() {
        Db::MySql(pool) => sqlx::query_scalar(sql).fetch_all(pool).await.unwrap(),
        Db::Postgres(pool) => sqlx::query_scalar(sql).fetch_all(pool).await.unwrap(),
        Db::Sqlite(pool) => sqlx::query_scalar(sql).fetch_all(pool).await.unwrap(),
    }
}

on_every_backend!(
    async fn partitions_are_leased_by_one_token_at_a_time(backend: Backend) {
        let db = backend.fresh().await;
        let queue = db.queue().await;
        let (a, b) = (11, 22);
        assert_eq!(queue.parts().take("a", a, 600, LEASE).await.unwrap(), 600);
        assert_eq!(queue.parts().take("b", b, 600, LEASE).await.unwrap(), 424);
        let held_a: HashSet<i16> = queue
            .parts()
            .keep(a, LEASE)
            .await
            .unwrap()
            .iter()
            .map(|p| p.id)
            .collect();
        let held_b: HashSet<i16> = queue
            .parts()
            .keep(b, LEASE)
            .await
            .unwrap()
            .iter()
            .map(|p| p.id)
            .collect();
        assert_eq!(held_a.len() + held_b.len(), usize::from(PARTS));
        assert!(held_a.is_disjoint(&held_b));
        // Handing over: drained partitions go free only when nothing of them is in flight.
        assert!(!queue.parts().draining_elsewhere(b).await.unwrap());
        assert_eq!(queue.parts().drain(a, 100).await.unwrap(), 100);
        // b, short of its share, knows that some are on their way (its keeper looks again soon).
        assert!(queue.parts().draining_elsewhere(b).await.unwrap());
        assert!(!queue.parts().draining_elsewhere(a).await.unwrap());
        assert_eq!(
            queue.parts().release_drained(a, "a", LEASE).await.unwrap(),
            100
        );
        assert!(!queue.parts().draining_elsewhere(b).await.unwrap());
        assert_eq!(queue.parts().keep(a, LEASE).await.unwrap().len(), 500);
        assert_eq!(queue.parts().take("b", b, 1000, LEASE).await.unwrap(), 100);
        assert_eq!(queue.parts().release(a).await.unwrap(), 500);
        assert!(queue.parts().keep(a, LEASE).await.unwrap().is_empty());
    }
);

on_every_backend!(
    async fn an_expired_partition_lease_is_free_to_take(backend: Backend) {
        let db = backend.fresh().await;
        let queue = db.queue().await;
        queue
            .parts()
            .take("a", 1, 1024, Duration::from_millis(200))
            .await
            .unwrap();
        assert_eq!(queue.parts().take("b", 2, 1024, LEASE).await.unwrap(), 0);
        // Free once a's lease lapses, 200 ms on by the database's clock: all at once.
        let taken = until_some("a's lease lapses", Duration::from_secs(3), || async {
            let taken = queue.parts().take("b", 2, 1024, LEASE).await.unwrap();
            (taken > 0).then_some(taken)
        })
        .await;
        assert_eq!(taken, 1024);
        assert!(
            queue.parts().keep(1, LEASE).await.unwrap().is_empty(),
            "a lost them all"
        );
    }
);

on_every_backend!(
    async fn a_worker_claims_only_sites_of_the_partitions_it_holds(backend: Backend) {
        let db = backend.fresh().await;
        let queue = db.queue().await;
        queue.seed(&sites(2000, 200), false).await.unwrap();
        queue.parts().take("a", 7, 300, LEASE).await.unwrap();
        let held: HashSet<i16> = queue
            .parts()
            .keep(7, LEASE)
            .await
            .unwrap()
            .iter()
            .map(|p| p.id)
            .collect();
        let mut claimed = 0;
        loop {
            let batch = queue.claim_held(7, "a", 100, LEASE).await.unwrap();
            if batch.sites.is_empty() {
                break;
            }
            for site in &batch.sites {
                assert!(
                    held.contains(&site.part),
                    "{} is not in a held partition",
                    site.host
                );
                assert_eq!(site.part, part_of(&site.host));
                assert_eq!(site.parts_token, Some(7));
            }
            claimed += batch.sites.len();
        }
        let expected = sites(2000, 200)
            .iter()
            .filter(|s| held.contains(&part_of(&s.host)))
            .count();
        assert_eq!(claimed, expected);
        assert!(claimed > 0 && claimed < 2000);
        // A draining partition gives no more sites.
        queue.seed(&sites(4000, 200)[2000..], false).await.unwrap();
        queue.parts().drain(7, 1024).await.unwrap();
        assert!(queue
            .claim_held(7, "a", 100, LEASE)
            .await
            .unwrap()
            .sites
            .is_empty());
    }
);

on_every_backend!(
    async fn a_worker_that_lost_the_partition_writes_nothing_for_its_hosts(backend: Backend) {
        let db = backend.fresh().await;
        let queue = db.queue().await;
        queue.seed(&sites(50, 5), false).await.unwrap();
        queue.parts().take("a", 1, 1024, LEASE).await.unwrap();
        let batch = queue.claim_held(1, "a", 50, LEASE).await.unwrap();
        assert_eq!(batch.sites.len(), 50);
        // "a" stalls; its partitions are freed (say, by the reaper) and taken by "b".
        queue.parts().release(1).await.unwrap();
        queue.parts().take("b", 2, 1024, LEASE).await.unwrap();
        let outcomes = outcomes_of(batch.sites, &alive());
        let completed = queue.complete(&outcomes).await.unwrap();
        assert_eq!(
            (completed.done, completed.stale),
            (0, 50),
            "fenced by the partition"
        );
        let done = ints(&queue, "SELECT COUNT(*) FROM sites WHERE state = {done}").await;
        assert_eq!(done, [0]);
    }
);

on_every_backend!(
    async fn a_hosts_state_is_remembered_for_whoever_holds_it_next(backend: Backend) {
        let db = backend.fresh().await;
        let queue = db.queue().await;
        let hour = Duration::from_secs(3600);
        // A 429 about one URL says nothing of the host's state; a host-wide deferral, a
        // throttled rate and an unreachable decision do.
        queue
            .hosts()
            .record_throttled(&[Throttled {
                host: "one-path.example".into(),
                status: 429,
                retry_after: Some(hour),
            }])
            .await
            .unwrap();
        let pace = HostPace {
            host: "slow.example".into(),
            rate: Some(2.5),
            deferred: hour,
        };
        queue.hosts().record_paces(&[pace]).await.unwrap();
        let why = Unreachable {
            kind: ErrorKind::Tls,
            detail: "decided for the host: the TLS handshake fails".into(),
        };
        queue
            .hosts()
            .record_unreachable("gone.example", Some(&why))
            .await
            .unwrap();
        queue.parts().take("next", 9, 1024, LEASE).await.unwrap();
        let mut states = queue.hosts().states(9).await.unwrap();
        states.sort_by(|a, b| a.host.cmp(&b.host));
        let hosts: Vec<&str> = states.iter().map(|s| s.host.as_str()).collect();
        assert_eq!(hosts, ["gone.example", "slow.example"]);
        assert_eq!(states[0].unreachable, Some(ErrorKind::Tls));
        let (rate, left) = (states[1].rate, states[1].backoff);
        assert_eq!(rate, Some(2.5));
        assert!(
            left > hour - Duration::from_secs(60) && left <= hour,
            "{left:?}"
        );
        // Reachable again: the fleet forgets the decision.
        queue
            .hosts()
            .record_unreachable("gone.example", None)
            .await
            .unwrap();
        let states = queue.hosts().states(9).await.unwrap();
        assert!(states.iter().all(|s| s.unreachable.is_none()), "{states:?}");
    }
);

/// Partitions held per owner, from the database.
async fn holders(queue: &Queue) -> Vec<(String, i64)> {
    let sql =
        "SELECT owner, COUNT(*) FROM parts WHERE owner IS NOT NULL GROUP BY owner ORDER BY owner";
    match queue.db() {
        Db::MySql(pool) => sqlx::query_as(sql).fetch_all(pool).await.unwrap(),
        Db::Postgres(pool) => sqlx::query_as(sql).fetch_all(pool).await.unwrap(),
        Db::Sqlite(pool) => sqlx::query_as(sql).fetch_all(pool).await.unwrap(),
    }
}

/// Waits until `check` holds for the partition holders, or panics after `limit`.
pub(crate) async fn until_holders(
    queue: &Queue,
    limit: Duration,
    what: &str,
    check: impl Fn(&[(String, i64)]) -> bool,
) {
    let started = Instant::now();
    loop {
        let now = holders(queue).await;
        if check(&now) {
            return;
        }
        assert!(started.elapsed() < limit, "{what}: holders {now:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

on_every_backend!(
    async fn a_worker_joining_late_gets_its_share_and_sigterm_gives_it_back_at_once(
        backend: Backend,
    ) {
        let db: TestDb = backend.fresh().await;
        let queue = db.queue().await;
        let (file, _) = spread_url_file(50, 20, &[Page::Slow]).await;
        seed(&db, file.path());
        let slow = ["--concurrency", "8", "--host-concurrency", "1"];
        let mut first = spawn_worker(&db, "first", &[&slow[..], QUICK].concat());
        until_holders(
            &queue,
            Duration::from_secs(10),
            "the first worker takes every partition",
            |h| h == [("first".to_owned(), 1024)],
        )
        .await;
        let mut late = spawn_worker(&db, "late", &[&slow[..], QUICK].concat());
        until_holders(
            &queue,
            Duration::from_secs(15),
            "the late worker gets its share",
            |h| h.iter().any(|(o, n)| o == "late" && *n >= 400),
        )
        .await;
        unsafe { libc::kill(late.id() as i32, libc::SIGTERM) };
        let stopped = tokio::task::spawn_blocking(move || wait(&mut late, Duration::from_secs(30)));
        assert!(stopped.await.unwrap().success());
        let left = holders(&queue).await;
        assert!(
            left.iter().all(|(o, _)| o != "late"),
            "given back at exit: {left:?}"
        );
        let _ = first.kill();
        let _ = first.wait();
    }
);

on_every_backend!(
    async fn a_killed_workers_partitions_and_sites_are_taken_over_and_nothing_is_lost(
        backend: Backend,
    ) {
        let db = backend.fresh().await;
        let queue = db.queue().await;
        let (file, expected) = spread_url_file(50, 12, &[Page::Slow]).await;
        seed(&db, file.path());
        let args = [&["--drain", "--concurrency", "16"][..], QUICK].concat();
        let mut doomed = spawn_worker(&db, "doomed", &args);
        let other = spawn_worker(&db, "other", &args);
        until_holders(
            &queue,
            Duration::from_secs(15),
            "both workers hold partitions",
            |h| h.len() == 2 && h.iter().all(|(_, n)| *n >= 300),
        )
        .await;
        unsafe { libc::kill(doomed.id() as i32, libc::SIGKILL) };
        let _ = doomed.wait();
        until_holders(
            &queue,
            Duration::from_secs(15),
            "the survivor takes the dead worker's partitions",
            |h| h == [("other".to_owned(), 1024)],
        )
        .await;
        let mut other = other;
        let done = tokio::task::spawn_blocking(move || wait(&mut other, Duration::from_secs(120)));
        assert!(done.await.unwrap().success());
        assert_report_matches(&db, &expected);
        assert_eq!(unfinished(&db), (0, 0));
    }
);
