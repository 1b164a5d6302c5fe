//! The lease queue, against every backend: claims, leases, write-backs, reaping, singletons.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crawler_queue::{
    part_of, ClaimMethod, Db, ErrorKind, Finding, NewSite, Next, Outcome, Queue, QueueConfig, Site,
    Verdict, VerdictCounts,
};
use crawler_tests::raw::scalar;
use crawler_tests::wait::{until_database_time, until_some};
use crawler_tests::{on_every_backend, Backend};

const LONG: Duration = Duration::from_secs(600);
/// How long a test waits at most for what is due within about a second (a lease, a delay, a
/// backoff): room for a busy machine, still short enough to fail one that comes far too late.
const SOON: Duration = Duration::from_secs(3);

fn sites(n: usize) -> Vec<NewSite> {
    (0..n)
        .map(|i| NewSite {
            url: format!("https://h{}.example/{i}", i % 97),
            host: format!("h{}.example", i % 97),
        })
        .collect()
}

fn finding(verdict: Verdict, transient: bool) -> Finding {
    Finding {
        verdict,
        status: Some(if verdict == Verdict::Alive { 200 } else { 503 }),
        error_kind: None,
        final_url: Some("https://final.example/".into()),
        redirects: 0,
        latency: Duration::from_millis(12),
        attempts: 1,
        next: if transient {
            Next::Transient { not_before: None }
        } else {
            Next::Final
        },
        detail: None,
        fragment: None,
        moved_to: None,
    }
}

fn outcomes(sites: &[Site], verdict: Verdict, transient: bool) -> Vec<Outcome> {
    sites
        .iter()
        .map(|s| Outcome {
            site: s.clone(),
            finding: finding(verdict, transient),
        })
        .collect()
}

async fn seeded(backend: Backend, n: usize, config: QueueConfig) -> (crawler_tests::TestDb, Queue) {
    let db = backend.fresh().await;
    let queue = db.queue_with(config).await;
    let seeded = queue.seed(&sites(n), false).await.unwrap();
    assert_eq!(seeded.added, n as u64);
    (db, queue)
}

/// Claims everything due for `owner`, one batch at a time, completing each as alive.
async fn claim_all(queue: Queue, owner: String, n: u32) -> Vec<i64> {
    let mut ids = Vec::new();
    loop {
        let batch = queue.claim(&owner, n, LONG).await.expect("claim");
        if batch.sites.is_empty() {
            return ids;
        }
        ids.extend(batch.sites.iter().map(|s| s.id));
        let done = queue
            .complete(&outcomes(&batch.sites, Verdict::Alive, false))
            .await
            .unwrap();
        assert_eq!(done.done, batch.sites.len() as u64);
    }
}

/// 20,000 sites seeded, and a queue that claims them with `claim`.
async fn seeded_with_claim(backend: Backend, claim: ClaimMethod) -> (crawler_tests::TestDb, Queue) {
    let config = QueueConfig {
        claim,
        ..Default::default()
    };
    seeded(backend, 20_000, config).await
}

/// 16 concurrent claimers over 20,000 sites: every site claimed exactly once, no error.
async fn sixteen_claimers(backend: Backend, claim: ClaimMethod) {
    let (_db, queue) = seeded_with_claim(backend, claim).await;
    let claimers: Vec<_> = (0..16)
        .map(|i| tokio::spawn(claim_all(queue.clone(), format!("w{i}"), 100)))
        .collect();
    let mut claimed = Vec::new();
    for claimer in claimers {
        claimed.push(claimer.await.unwrap());
    }
    assert_each_claimed_once(&queue, claimed, 20_000).await;
}

/// Asserts that the claimers, each with the ids it claimed, got every one of `sites` sites
/// exactly once, and that all of them are done.
async fn assert_each_claimed_once(queue: &Queue, claimed: Vec<Vec<i64>>, sites: usize) {
    let mut seen = HashSet::new();
    for id in claimed.into_iter().flatten() {
        assert!(seen.insert(id), "site {id} was claimed twice");
    }
    assert_eq!(seen.len(), sites);
    let counts = queue.reports().state_counts().await.unwrap();
    assert_eq!(
        (counts.pending, counts.claimed, counts.done),
        (0, 0, sites as i64)
    );
}

on_every_backend!(
    async fn sixteen_claimers_get_every_site_exactly_once(backend: Backend) {
        sixteen_claimers(backend, ClaimMethod::UpdateThenSelect).await
    }
);

on_every_backend!(
    async fn sixteen_skip_locked_claimers_get_every_site_exactly_once(backend: Backend) {
        sixteen_claimers(backend, ClaimMethod::SkipLocked).await
    }
);

/// A worker of the overlapping-claimers test: its name and its parts token.
#[derive(Clone)]
struct Holder {
    owner: String,
    token: i64,
}

/// Claims through `claim_held`, as a worker does, completing each batch as alive, until
/// `moved` says the partitions stopped moving and nothing is left to claim or in flight
/// anywhere (a site another claimer gave back may still come to this one).
async fn claim_held_all(queue: Queue, holder: Holder, moved: Arc<AtomicBool>) -> Vec<i64> {
    let mut ids = Vec::new();
    loop {
        let batch = queue
            .claim_held(holder.token, &holder.owner, 100, LONG)
            .await
            .expect("claim");
        if batch.sites.is_empty() {
            let counts = queue.reports().state_counts().await.unwrap();
            if moved.load(Ordering::SeqCst) && counts.pending + counts.claimed == 0 {
                return ids;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
            continue;
        }
        ids.extend(batch.sites.iter().map(|s| s.id));
        let done = queue
            .complete(&outcomes(&batch.sites, Verdict::Alive, false))
            .await
            .unwrap();
        assert_eq!(done.done, batch.sites.len() as u64);
    }
}

/// Hands partition `part` from `from` to `to` as the balance does (asked for, accepted,
/// given once nothing of it is in flight), while `from`'s claimers keep claiming.
async fn hand_over(queue: &Queue, part: i16, from: &Holder, to: &Holder) {
    assert!(queue
        .parts()
        .ask_for_part(part, from.token, to.token, &to.owner)
        .await
        .unwrap());
    assert!(queue.parts().drain_part(from.token, part).await.unwrap());
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        queue
            .parts()
            .release_drained(from.token, &from.owner, LONG)
            .await
            .unwrap();
        let held = queue.parts().keep(to.token, LONG).await.unwrap();
        if held.iter().any(|p| p.id == part && !p.draining) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "partition {part} never handed over"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// Sixteen claimers in four workers, four to a parts token, so that each claims from the
/// same partitions as three others, through `claim_held` as the worker claims; meanwhile
/// `hand_overs` partitions are handed from worker to worker, so claims that read their
/// partitions before a hand-over run after it. Every site claimed exactly once, none left.
async fn overlapping_held_claimers(backend: Backend, claim: ClaimMethod, hand_overs: usize) {
    let (_db, queue) = seeded_with_claim(backend, claim).await;
    let holders: Vec<Holder> = (0..4)
        .map(|w| Holder {
            owner: format!("w{w}"),
            token: 100 + w,
        })
        .collect();
    let mut holder_of = HashMap::new();
    for (i, holder) in holders.iter().enumerate() {
        let taken = queue
            .parts()
            .take(&holder.owner, holder.token, 256, LONG)
            .await
            .unwrap();
        assert_eq!(taken, 256);
        for part in queue.parts().keep(holder.token, LONG).await.unwrap() {
            holder_of.insert(part.id, i);
        }
    }
    let moved = Arc::new(AtomicBool::new(false));
    let claimers: Vec<_> = holders
        .iter()
        .flat_map(|holder| std::iter::repeat_n(holder, 4))
        .map(|holder| tokio::spawn(claim_held_all(queue.clone(), holder.clone(), moved.clone())))
        .collect();
    // Hand-overs of partitions that have sites, each to the next worker round.
    for host in sites(hand_overs).iter().map(|s| &s.host) {
        let part = part_of(host);
        let from = holder_of[&part];
        let to = (from + 1) % holders.len();
        hand_over(&queue, part, &holders[from], &holders[to]).await;
        holder_of.insert(part, to);
    }
    moved.store(true, Ordering::SeqCst);
    let all = futures::future::join_all(claimers);
    let claimed = tokio::time::timeout(Duration::from_secs(120), all)
        .await
        .expect("the claimers never finished: sites left claimed or in no held partition");
    let claimed = claimed.into_iter().map(|ids| ids.unwrap()).collect();
    assert_each_claimed_once(&queue, claimed, 20_000).await;
}

on_every_backend!(
    async fn claimers_of_overlapping_held_partitions_get_every_site_exactly_once(backend: Backend) {
        overlapping_held_claimers(backend, ClaimMethod::UpdateThenSelect, 0).await
    }
);

on_every_backend!(
    async fn skip_locked_claimers_of_overlapping_held_partitions_get_every_site_exactly_once(
        backend: Backend,
    ) {
        overlapping_held_claimers(backend, ClaimMethod::SkipLocked, 0).await
    }
);

// The same while forty partitions change hands under the claims: a claim that read its
// partitions before a hand-over runs after it. One read of the batch decides which sites are
// kept and which are given back (`Queue::read_batch`): were the keeping and the give-back to
// read the partitions apart, or a claim to judge "still held" in its own snapshot, a site
// would go to two claimers, and a write-back would find fewer sites than its batch.
on_every_backend!(
    async fn claimers_of_partitions_changing_hands_get_every_site_exactly_once(backend: Backend) {
        overlapping_held_claimers(backend, ClaimMethod::UpdateThenSelect, 40).await
    }
);

// The same with MySQL's alternative claim (`ClaimMethod::SkipLocked`).
on_every_backend!(
    only [mariadb]
    async fn claimers_of_partitions_changing_hands_skipping_locked_rows_get_every_site_once(
        backend: Backend,
    ) {
        overlapping_held_claimers(backend, ClaimMethod::SkipLocked, 40).await
    }
);

on_every_backend!(
    async fn expired_lease_is_reaped_and_the_late_result_is_rejected(backend: Backend) {
        let (_db, queue) = seeded(backend, 10, QueueConfig::default()).await;
        let first = queue
            .claim("slow", 10, Duration::from_millis(200))
            .await
            .unwrap();
        assert_eq!(first.sites.len(), 10);
        assert!(queue
            .claim("fast", 10, LONG)
            .await
            .unwrap()
            .sites
            .is_empty());
        // Every site of the claim lapses at once, 200 ms after it by the database's clock.
        let expired = until_some("the slow claim's lease lapses", SOON, || async {
            let expired = queue.reaping().reap(LONG).await.unwrap().expired;
            (expired > 0).then_some(expired)
        })
        .await;
        assert_eq!(expired, 10);
        let second = queue.claim("fast", 10, LONG).await.unwrap();
        assert_eq!(second.sites.len(), 10);
        let late = queue
            .complete(&outcomes(&first.sites, Verdict::Dead, false))
            .await
            .unwrap();
        assert_eq!((late.done, late.stale), (0, 10));
        let lost = queue
            .extend(first.token, &ids(&first.sites), LONG)
            .await
            .unwrap();
        assert_eq!(lost.len(), 10, "the slow worker learns it lost every site");
        let good = queue
            .complete(&outcomes(&second.sites, Verdict::Alive, false))
            .await
            .unwrap();
        assert_eq!(good.done, 10);
        let counts = queue.reports().verdict_counts().await.unwrap();
        assert_eq!(
            counts,
            VerdictCounts::from_iter([Verdict::Alive; 10]),
            "the late result overwrote nothing"
        );
    }
);

fn ids(sites: &[Site]) -> Vec<i64> {
    sites.iter().map(|s| s.id).collect()
}

on_every_backend!(
    async fn each_site_gets_its_own_result_from_a_bulk_write(backend: Backend) {
        // Five results in one statement (padded to eight rows): alive and dead, each latency
        // its own, so a result landing on the wrong row would show.
        let (db, queue) = seeded(backend, 5, QueueConfig::default()).await;
        let batch = queue.claim("w", 5, LONG).await.unwrap();
        let results: Vec<Outcome> = batch
            .sites
            .iter()
            .enumerate()
            .map(|(i, site)| {
                let verdict = if i % 2 == 0 {
                    Verdict::Alive
                } else {
                    Verdict::Dead
                };
                let mut finding = finding(verdict, false);
                finding.latency = Duration::from_millis(100 + i as u64);
                Outcome {
                    site: site.clone(),
                    finding,
                }
            })
            .collect();
        let written = queue.complete(&results).await.unwrap();
        assert_eq!((written.done, written.stale), (5, 0));

        let sql = "SELECT id, verdict, latency_ms, \
                   CASE WHEN last_alive_at IS NULL THEN 0 ELSE 1 END, consecutive_failures \
                   FROM sites WHERE state = {done} ORDER BY id";
        let raw = Db::connect(&db.url, 1).await.unwrap();
        let sql = &raw.statement(sql);
        let mut rows: Vec<(i64, String, i64, i64, i64)> = match &raw {
            Db::MySql(pool) => sqlx::query_as(sql).fetch_all(pool).await,
            // INTEGER columns there, which sqlx decodes only as i32.
            Db::Postgres(pool) => sqlx::query_as(sql).fetch_all(pool).await.map(|rows| {
                rows.into_iter()
                    .map(
                        |(id, v, latency, alive, failures): (i64, String, i32, i32, i32)| {
                            (id, v, latency.into(), alive.into(), failures.into())
                        },
                    )
                    .collect()
            }),
            Db::Sqlite(pool) => sqlx::query_as(sql).fetch_all(pool).await,
        }
        .unwrap();
        let mut expected: Vec<(i64, String, i64, i64, i64)> = results
            .iter()
            .map(|o| {
                let alive = o.finding.verdict == Verdict::Alive;
                (
                    o.site.id,
                    o.finding.verdict.as_str().to_owned(),
                    o.finding.latency.as_millis() as i64,
                    i64::from(alive),
                    i64::from(!alive),
                )
            })
            .collect();
        rows.sort();
        expected.sort();
        assert_eq!(rows, expected);
    }
);

on_every_backend!(
    async fn extending_a_lease_keeps_the_batch(backend: Backend) {
        let (_db, queue) = seeded(backend, 5, QueueConfig::default()).await;
        let batch = queue
            .claim("w", 5, Duration::from_millis(300))
            .await
            .unwrap();
        // The first lease ends by then, by the database's clock.
        let first_lease_over = queue.now().await.unwrap() + 300;
        let lost = queue
            .extend(batch.token, &ids(&batch.sites), LONG)
            .await
            .unwrap();
        assert!(lost.is_empty());
        until_database_time(&queue, first_lease_over).await;
        assert_eq!(queue.reaping().reap(LONG).await.unwrap().expired, 0);
        let done = queue
            .complete(&outcomes(&batch.sites, Verdict::Alive, false))
            .await
            .unwrap();
        assert_eq!(done.done, 5);
    }
);

on_every_backend!(
    async fn an_extension_names_exactly_the_sites_its_claim_lost(backend: Backend) {
        // More sites than one extending statement takes (1,024), so both chunks lose some.
        let (_db, queue) = seeded(backend, 1100, QueueConfig::default()).await;
        let batch = queue.claim("w", 1100, LONG).await.unwrap();
        let all = ids(&batch.sites);
        assert_eq!(all.len(), 1100);
        let mut given_back = vec![all[0], all[500], all[1023], all[1024], all[1099]];
        assert_eq!(
            queue.release(batch.token, &given_back, LONG).await.unwrap(),
            5
        );
        let mut lost = queue.extend(batch.token, &all, LONG).await.unwrap();
        lost.sort_unstable();
        given_back.sort_unstable();
        assert_eq!(lost, given_back);
    }
);

on_every_backend!(
    async fn released_sites_come_back_after_the_delay(backend: Backend) {
        let (_db, queue) = seeded(backend, 6, QueueConfig::default()).await;
        let batch = queue.claim("w", 6, LONG).await.unwrap();
        let (now, later) = batch.sites.split_at(3);
        assert_eq!(
            queue
                .release(batch.token, &ids(later), Duration::from_millis(800))
                .await
                .unwrap(),
            3
        );
        assert_eq!(
            queue
                .release(batch.token, &ids(now), Duration::ZERO)
                .await
                .unwrap(),
            3
        );
        let again = queue.claim("w", 6, LONG).await.unwrap();
        assert_eq!(
            ids(&again.sites).into_iter().collect::<HashSet<_>>(),
            ids(now).into_iter().collect()
        );
        let later = until_some("the delayed sites due again", SOON, || async {
            let n = queue.claim("w", 6, LONG).await.unwrap().sites.len();
            (n > 0).then_some(n)
        })
        .await;
        assert_eq!(later, 3);
    }
);

on_every_backend!(
    async fn a_dead_workers_claims_are_released_before_its_lease_expires(backend: Backend) {
        let (_db, queue) = seeded(backend, 8, QueueConfig::default()).await;
        queue.register("dead", "host", 1).await.unwrap();
        // The dead worker's last heartbeat is 300 ms old by then.
        let silent = queue.now().await.unwrap() + 300;
        queue.register("alive", "host", 2).await.unwrap();
        let held = queue.claim("dead", 4, LONG).await.unwrap();
        let kept = queue.claim("alive", 4, LONG).await.unwrap();
        until_database_time(&queue, silent + 1).await;
        assert!(queue.heartbeat("alive", 4).await.unwrap());
        let reaped = queue
            .reaping()
            .reap(Duration::from_millis(300))
            .await
            .unwrap();
        assert_eq!((reaped.expired, reaped.abandoned), (0, 4));
        assert!(
            !queue.heartbeat("dead", 0).await.unwrap(),
            "the dead worker was forgotten"
        );
        let workers = queue.reports().workers().await.unwrap();
        assert_eq!(
            workers.iter().map(|w| w.id.as_str()).collect::<Vec<_>>(),
            ["alive"]
        );
        let stale = queue
            .complete(&outcomes(&held.sites, Verdict::Alive, false))
            .await
            .unwrap();
        assert_eq!(stale.stale, 4);
        assert_eq!(
            queue
                .complete(&outcomes(&kept.sites, Verdict::Alive, false))
                .await
                .unwrap()
                .done,
            4
        );
        assert_eq!(queue.claim("alive", 8, LONG).await.unwrap().sites.len(), 4);
    }
);

on_every_backend!(
    async fn a_transient_result_comes_back_later_until_the_attempt_limit(backend: Backend) {
        let config = QueueConfig {
            max_attempts: 3,
            retry_delay: Duration::from_millis(300),
            ..Default::default()
        };
        let (_db, queue) = seeded(backend, 1, config).await;
        for attempt in 1..=3 {
            // Due at once the first time, then after its backoff (300 ms, then 600, with
            // jitter of a fifth at most).
            let backoff = match attempt {
                1 => Duration::ZERO,
                _ => Duration::from_millis(300 * 2u64.pow(attempt as u32 - 2) * 6 / 5),
            };
            let batch = until_some("the site due again", backoff + SOON, || async {
                let batch = queue.claim("w", 1, LONG).await.unwrap();
                (!batch.sites.is_empty()).then_some(batch)
            })
            .await;
            assert_eq!(batch.sites.len(), 1, "attempt {attempt} finds the site due");
            assert_eq!(batch.sites[0].tries, attempt - 1);
            let result = queue
                .complete(&outcomes(&batch.sites, Verdict::Error, true))
                .await
                .unwrap();
            if attempt < 3 {
                assert_eq!(result.retrying, 1);
                assert!(
                    queue.claim("w", 1, LONG).await.unwrap().sites.is_empty(),
                    "not due yet"
                );
            } else {
                assert_eq!(result.done, 1, "the third transient failure is final");
            }
        }
        let page = queue
            .reports()
            .checked_page(
                Verdict::Error,
                Default::default(),
                crawler_queue::After::START,
                10,
            )
            .await
            .unwrap();
        assert_eq!(
            (page.len(), page[0].attempts, page[0].status),
            (1, 3, Some(503))
        );
    }
);

on_every_backend!(
    async fn retry_after_beyond_the_cap_makes_the_site_due_after_it(backend: Backend) {
        let config = QueueConfig {
            max_attempts: 3,
            retry_delay: Duration::from_millis(10),
            ..Default::default()
        };
        let (_db, queue) = seeded(backend, 1, config).await;
        let batch = queue.claim("w", 1, LONG).await.unwrap();
        let mut outcome = outcomes(&batch.sites, Verdict::Blocked, true);
        outcome[0].finding.next = Next::Transient {
            not_before: Some(Duration::from_millis(1200)),
        };
        let before = queue.now().await.unwrap();
        assert_eq!(queue.complete(&outcome).await.unwrap().retrying, 1);
        assert!(queue.claim("w", 1, LONG).await.unwrap().sites.is_empty());
        let due_at = until_some("the site due after Retry-After", SOON, || async {
            let n = queue.claim("w", 1, LONG).await.unwrap().sites.len();
            // Read after the claim: no earlier than the claim's own time, so a site due too
            // soon shows (read before it, a slow claim could be late enough while `now` is not).
            let now = queue.now().await.unwrap();
            (n > 0).then_some((n, now))
        })
        .await;
        assert_eq!(due_at.0, 1);
        assert!(
            due_at.1 - before >= 1200,
            "due {} ms after the result, before its Retry-After of 1200",
            due_at.1 - before
        );
    }
);

on_every_backend!(
    async fn a_claim_reads_only_its_own_batch(backend: Backend) {
        let (_db, queue) = seeded(backend, 10, QueueConfig::default()).await;
        let first = queue.claim("w", 4, LONG).await.unwrap();
        let second = queue.claim("w", 4, LONG).await.unwrap();
        assert_eq!((first.sites.len(), second.sites.len()), (4, 4));
        let overlap: HashSet<_> = ids(&first.sites).into_iter().collect();
        assert!(second.sites.iter().all(|s| !overlap.contains(&s.id)));
        assert_ne!(first.token, second.token);
    }
);

on_every_backend!(
    async fn a_seeded_chunk_is_stored_in_the_order_it_will_be_claimed(backend: Backend) {
        // A claim's rows are then neighbours in the table (docs/scale.md): the earliest due
        // site of a chunk has its lowest id, so each claim's ids follow the last claim's.
        let (_db, queue) = seeded(backend, 200, QueueConfig::default()).await;
        let mut last = 0;
        for _ in 0..20 {
            let mut claimed = ids(&queue.claim("w", 10, LONG).await.unwrap().sites);
            claimed.sort_unstable();
            assert!(claimed[0] > last, "{claimed:?} after {last}");
            last = claimed[9];
        }
    }
);

on_every_backend!(
    async fn reseeding_counts_known_urls_and_keeps_their_results(backend: Backend) {
        let (_db, queue) = seeded(backend, 50, QueueConfig::default()).await;
        let batch = queue.claim("w", 50, LONG).await.unwrap();
        queue
            .complete(&outcomes(&batch.sites, Verdict::Dead, false))
            .await
            .unwrap();
        let mut again = sites(60);
        again.push(again[0].clone());
        let seeded = queue.seed(&again, false).await.unwrap();
        assert_eq!((seeded.added, seeded.known, seeded.rechecked), (10, 51, 0));
        assert_eq!(
            queue.reports().verdict_counts().await.unwrap(),
            VerdictCounts::from_iter([Verdict::Dead; 50])
        );
        let rechecked = queue.seed(&sites(60), true).await.unwrap();
        assert_eq!(
            (rechecked.added, rechecked.known, rechecked.rechecked),
            (0, 60, 50)
        );
        assert_eq!(queue.claim("w", 100, LONG).await.unwrap().sites.len(), 60);
    }
);

on_every_backend!(
    async fn old_verdicts_become_due_again_on_recheck(backend: Backend) {
        let (_db, queue) = seeded(backend, 5, QueueConfig::default()).await;
        let reaping = queue.reaping();
        let batch = queue.claim("w", 5, LONG).await.unwrap();
        queue
            .complete(&outcomes(&batch.sites, Verdict::Alive, false))
            .await
            .unwrap();
        // The verdicts are 200 ms old by then.
        let old = queue.now().await.unwrap() + 200;
        assert_eq!(reaping.recheck(Duration::from_secs(60)).await.unwrap(), 0);
        until_database_time(&queue, old + 1).await;
        assert_eq!(
            reaping.recheck(Duration::from_millis(200)).await.unwrap(),
            5
        );
        let again = queue.claim("w", 5, LONG).await.unwrap();
        assert_eq!(again.sites.len(), 5);
        assert!(again.sites.iter().all(|s| s.tries == 0));
        let page = queue
            .reports()
            .checked_page(
                Verdict::Alive,
                Default::default(),
                crawler_queue::After::START,
                10,
            )
            .await
            .unwrap();
        assert!(
            page.iter().all(|s| s.attempts == 1),
            "the old verdict keeps its attempt count until rechecked"
        );
    }
);

on_every_backend!(
    async fn one_of_five_contenders_holds_the_singleton_until_it_stops(backend: Backend) {
        let db = backend.fresh().await;
        let queue = db.queue().await;
        let ttl = Duration::from_millis(600);
        let try_all = |queue: Queue, skip: Option<usize>| async move {
            let mut winners = Vec::new();
            for i in (0..5).filter(|i| Some(*i) != skip) {
                if queue
                    .leases()
                    .try_lead("reap", &format!("p{i}"), ttl)
                    .await
                    .unwrap()
                {
                    winners.push(i);
                }
            }
            winners
        };
        let first = try_all(queue.clone(), None).await;
        assert_eq!(first.len(), 1, "exactly one contender wins: {first:?}");
        let holder = first[0];
        for _ in 0..3 {
            tokio::time::sleep(Duration::from_millis(200)).await;
            assert_eq!(
                try_all(queue.clone(), None).await,
                vec![holder],
                "the holder renews, nobody else wins"
            );
        }
        // The holder stops renewing: nobody wins until its lease lapses, then exactly one does.
        assert!(try_all(queue.clone(), Some(holder)).await.is_empty());
        let next = until_some("a new holder once the lease lapses", SOON, || async {
            let winners = try_all(queue.clone(), Some(holder)).await;
            (!winners.is_empty()).then_some(winners)
        })
        .await;
        assert_eq!(next.len(), 1, "one new holder: {next:?}");
        assert_ne!(next[0], holder);
        assert_eq!(queue.leases().runs("reap").await.unwrap(), 5);
    }
);

on_every_backend!(
    async fn migrations_apply_twice_and_from_four_connections_at_once(backend: Backend) {
        let db = backend.fresh().await;
        let connects: Vec<_> = (0..4)
            .map(|_| {
                let url = db.url.clone();
                tokio::spawn(async move { crawler_queue::Db::connect(&url, 2).await })
            })
            .collect();
        for connect in connects {
            connect.await.unwrap().expect("concurrent migration");
        }
        let queue = db.queue().await;
        queue
            .db()
            .migrate()
            .await
            .expect("migrating again is a no-op");
        assert_eq!(queue.seed(&sites(3), false).await.unwrap().added, 3);
    }
);

on_every_backend!(
    async fn a_write_back_counts_the_verdicts_it_stored_once_each_and_no_retry(backend: Backend) {
        let config = QueueConfig {
            max_attempts: 2,
            ..Default::default()
        };
        let (_db, queue) = seeded(backend, 6, config).await;
        let batch = queue.claim("w", 6, LONG).await.unwrap();
        let (dead, rest) = batch.sites.split_at(2);
        let (transient, busy) = rest.split_at(2);
        let mut results = outcomes(dead, Verdict::Dead, false);
        results.extend(outcomes(transient, Verdict::Error, true));
        results.extend(busy.iter().map(|site| Outcome {
            site: site.clone(),
            finding: Finding::deferred(LONG),
        }));
        let written = queue.complete(&results).await.unwrap();
        assert_eq!(
            (written.done, written.retrying, written.deferred),
            (2, 2, 2)
        );
        assert_eq!(written.verdicts.get(Verdict::Dead), 2);
        assert_eq!(written.verdicts.total(), 2, "a retry stores no verdict");
    }
);

on_every_backend!(
    async fn a_write_back_that_lost_part_of_its_claim_counts_the_verdicts_it_stored(
        backend: Backend,
    ) {
        let (_db, queue) = seeded(backend, 10, QueueConfig::default()).await;
        let batch = queue.claim("w", 10, LONG).await.unwrap();
        let (lost, kept) = batch.sites.split_at(5);
        assert_eq!(
            queue.release(batch.token, &ids(lost), LONG).await.unwrap(),
            5
        );
        // One statement, half of whose rows the claim no longer owns: the dead results are
        // the lost ones, and only the alive ones are stored.
        let mut results = outcomes(lost, Verdict::Dead, false);
        results.extend(outcomes(kept, Verdict::Alive, false));
        let written = queue.complete(&results).await.unwrap();
        assert_eq!((written.done, written.stale), (5, 5));
        assert_eq!(
            (
                written.verdicts.get(Verdict::Alive),
                written.verdicts.get(Verdict::Dead)
            ),
            (5, 0)
        );
    }
);

on_every_backend!(
    async fn one_statement_of_two_claims_results_writes_only_the_rows_each_claim_still_owns(
        backend: Backend,
    ) {
        // Rows of two claims go back in one statement, each fenced by its own token: five of
        // the first claim's sites were given back and taken by a third claim meanwhile, and
        // the first claim's late results must not overwrite them.
        let (_db, queue) = seeded(backend, 20, QueueConfig::default()).await;
        let first = queue.claim("w", 10, LONG).await.unwrap();
        let second = queue.claim("w", 10, LONG).await.unwrap();
        let lost = &first.sites[..5];
        assert_eq!(
            queue
                .release(first.token, &ids(lost), Duration::ZERO)
                .await
                .unwrap(),
            5
        );
        let third = queue.claim("other", 10, LONG).await.unwrap();
        assert_eq!(
            ids(&third.sites).into_iter().collect::<HashSet<_>>(),
            ids(lost).into_iter().collect(),
            "the third claim took the lost sites"
        );
        let mut results = outcomes(&first.sites, Verdict::Dead, false);
        results.extend(outcomes(&second.sites, Verdict::Dead, false));
        let written = queue.complete(&results).await.unwrap();
        assert_eq!((written.done, written.stale), (15, 5));
        assert_eq!(written.verdicts.get(Verdict::Dead), 15);
        // The third claim still owns its sites, and its own results are stored.
        let written = queue
            .complete(&outcomes(&third.sites, Verdict::Alive, false))
            .await
            .unwrap();
        assert_eq!((written.done, written.stale), (5, 0));
        assert_eq!(written.verdicts.get(Verdict::Alive), 5);
    }
);

on_every_backend!(
    async fn a_write_back_of_many_chunks_stores_and_counts_each_once(backend: Backend) {
        // 1,000 results of two claims, in three kinds and some lost: some ten statements of at
        // most 128 rows, which a server writes a few at a time. Each stored row must carry its
        // own latency, and the counts add up over every statement.
        let (db, queue) = seeded(backend, 1_000, QueueConfig::default()).await;
        let first = queue.claim("w", 600, LONG).await.unwrap();
        let second = queue.claim("w", 400, LONG).await.unwrap();
        assert_eq!((first.sites.len(), second.sites.len()), (600, 400));
        let lost = ids(&first.sites[..50]);
        assert_eq!(queue.release(first.token, &lost, LONG).await.unwrap(), 50);
        let results: Vec<Outcome> = first
            .sites
            .iter()
            .chain(&second.sites)
            .enumerate()
            .map(|(i, site)| {
                let (verdict, transient) = match i % 3 {
                    0 => (Verdict::Alive, false),
                    1 => (Verdict::Dead, false),
                    _ => (Verdict::Error, true),
                };
                let mut finding = finding(verdict, transient);
                finding.latency = Duration::from_millis(site.id as u64 % 10_000);
                Outcome {
                    site: site.clone(),
                    finding,
                }
            })
            .collect();
        let kept = |kind: usize| (0..1_000).filter(|i| i % 3 == kind && *i >= 50).count() as u64;
        let written = queue.complete(&results).await.unwrap();
        assert_eq!(
            (written.done, written.retrying, written.stale),
            (kept(0) + kept(1), kept(2), 50)
        );
        assert_eq!(
            (
                written.verdicts.get(Verdict::Alive),
                written.verdicts.get(Verdict::Dead),
                written.verdicts.total()
            ),
            (kept(0), kept(1), kept(0) + kept(1))
        );

        let raw = Db::connect(&db.url, 1).await.unwrap();
        let done = |filter: &str| {
            let sql = format!("SELECT COUNT(*) FROM sites WHERE state = {{done}}{filter}");
            let raw = &raw;
            async move { scalar(raw, &raw.statement(&sql)).await as u64 }
        };
        assert_eq!(done("").await, kept(0) + kept(1));
        let lost_ids = lost
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        assert_eq!(
            done(&format!(" AND id IN ({lost_ids})")).await,
            0,
            "sites lost, yet written"
        );
        assert_eq!(
            done(" AND latency_ms <> id % 10000").await,
            0,
            "sites with another's result"
        );
    }
);

/// PostgreSQL plans an `IN` subquery as a join and may run it once per row of the `UPDATE`,
/// each run skipping the rows the statement already claimed: a claim of 100 took 113 rows, and
/// the worker, with room for 100, dropped 13 that stayed claimed until it stopped. The planner
/// does so with poor statistics (it did after a `--recheck` of the whole queue); here the plans
/// that run the subquery once are turned off, and a claim still takes what it asked for.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_postgres_claim_takes_no_more_than_asked_whatever_the_plan() {
    use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
    use std::str::FromStr;

    let db = Backend::Postgres.fresh().await;
    let seeded = db.queue().await.seed(&sites(113), false).await.unwrap();
    assert_eq!(seeded.added, 113);
    let off = |plan| (plan, "off");
    let options = PgConnectOptions::from_str(db.url.expose())
        .unwrap()
        .options([
            off("enable_hashagg"),
            off("enable_sort"),
            off("enable_hashjoin"),
            off("enable_mergejoin"),
            off("enable_material"),
        ]);
    let pool = PgPoolOptions::new()
        .max_connections(2)
        .connect_with(options)
        .await
        .unwrap();
    let queue = Queue::new(Db::Postgres(pool), QueueConfig::default());

    assert_eq!(queue.parts().take("w", 7, 1024, LONG).await.unwrap(), 1024);
    let held = queue.claim_held(7, "w", 100, LONG).await.unwrap();
    assert_eq!(
        held.sites.len(),
        100,
        "sites returned by a held claim of 100"
    );
    assert_eq!(queue.reports().state_counts().await.unwrap().claimed, 100);
    let batch = queue.claim("v", 10, LONG).await.unwrap();
    assert_eq!(batch.sites.len(), 10, "sites returned by a claim of 10");
    assert_eq!(queue.reports().state_counts().await.unwrap().claimed, 110);
}

on_every_backend!(
    async fn a_stopping_worker_withdraws_its_requests_for_partitions(backend: Backend) {
        let (_db, queue) = seeded(backend, 100, QueueConfig::default()).await;
        let (holder, asker) = (100, 101);
        assert_eq!(
            queue.parts().take("w0", holder, 1024, LONG).await.unwrap(),
            1024
        );
        assert!(queue
            .parts()
            .ask_for_part(5, holder, asker, "w1")
            .await
            .unwrap());
        // The asker stops before the holder hands the partition over.
        queue.parts().release(asker).await.unwrap();
        queue
            .parts()
            .release_drained(holder, "w0", LONG)
            .await
            .unwrap();
        let kept = queue.parts().keep(asker, LONG).await.unwrap();
        assert!(kept.is_empty(), "handed to a stopped worker: {kept:?}");
    }
);

/// What one site of [`a_write_back_of_mixed_results_stores_each_sites_own`] is found to be in
/// a round: its verdict, status, error kind, redirects and detail.
type Found = (
    Verdict,
    Option<u16>,
    Option<ErrorKind>,
    u32,
    Option<&'static str>,
);

/// Writes back one result per site of `batch`, `found[i]` for the site of the `i`-th URL
/// seeded, each with a final URL and a latency of its own, in one write-back.
async fn complete_as(queue: &Queue, batch: &[Site], found: &[Found], round: u64) {
    let outcomes: Vec<Outcome> = batch
        .iter()
        .map(|site| {
            let i: usize = site.url.rsplit('/').next().unwrap().parse().unwrap();
            let (verdict, status, error_kind, redirects, detail) = found[i];
            let finding = Finding {
                verdict,
                status,
                error_kind,
                final_url: Some(format!("https://final.example/{round}/{i}")),
                redirects,
                latency: Duration::from_millis(100 * round + i as u64),
                attempts: 1,
                next: Next::Final,
                detail: detail.map(str::to_owned),
                fragment: None,
                moved_to: None,
            };
            Outcome {
                site: site.clone(),
                finding,
            }
        })
        .collect();
    let done = queue.complete(&outcomes).await.unwrap();
    assert_eq!(done.done, found.len() as u64);
}

/// Every checked site, by the index of its URL.
async fn checked_by_index(queue: &Queue) -> HashMap<usize, crawler_queue::Checked> {
    let mut all = HashMap::new();
    for verdict in Verdict::ALL {
        for site in queue
            .reports()
            .checked_page(
                verdict,
                Default::default(),
                crawler_queue::After::START,
                100,
            )
            .await
            .unwrap()
        {
            let i: usize = site.url.rsplit('/').next().unwrap().parse().unwrap();
            all.insert(i, site);
        }
    }
    all
}

on_every_backend!(
    async fn a_write_back_of_mixed_results_stores_each_sites_own(backend: Backend) {
        // Results that share a verdict are written together, what they share bound once: each
        // row must still get its own values, and its streak of failures from its own row.
        // Pairs alike but for one value (sites 0/1 the redirects, 0/6 the status, 3/7 the
        // detail, 4/8 the error kind; in the second round 6/7 the detail).
        let (_db, queue) = seeded(backend, 9, QueueConfig::default()).await;
        let rounds: [[Found; 9]; 2] = [
            [
                (Verdict::Alive, Some(200), None, 0, None),
                (Verdict::Alive, Some(200), None, 2, None),
                (Verdict::Dead, Some(404), None, 0, None),
                (Verdict::Dead, Some(200), None, 0, Some("soft 404: like /x")),
                (Verdict::Unreachable, None, Some(ErrorKind::Dns), 0, None),
                (Verdict::Blocked, Some(429), None, 1, None),
                (Verdict::Alive, Some(204), None, 0, None),
                (Verdict::Dead, Some(200), None, 0, None),
                (
                    Verdict::Unreachable,
                    None,
                    Some(ErrorKind::Timeout),
                    0,
                    None,
                ),
            ],
            [
                (Verdict::Dead, Some(404), None, 0, None),
                (Verdict::Alive, Some(200), None, 2, None),
                (Verdict::Dead, Some(404), None, 0, None),
                (Verdict::Excluded, None, None, 0, None),
                (Verdict::Unreachable, None, Some(ErrorKind::Dns), 0, None),
                (Verdict::Alive, Some(204), None, 0, None),
                (Verdict::Error, Some(500), None, 3, Some("why")),
                (Verdict::Error, Some(500), None, 3, None),
                (Verdict::Unreachable, None, Some(ErrorKind::Dns), 0, None),
            ],
        ];
        // Failures in a row after each round: an answer resets them, a failure adds one, a
        // site left out keeps them.
        let streaks = [[0, 0, 1, 1, 1, 1, 0, 1, 1], [1, 0, 2, 1, 2, 0, 1, 2, 2]];
        for (round, found) in rounds.iter().enumerate() {
            if round > 0 {
                tokio::time::sleep(Duration::from_millis(5)).await;
                assert_eq!(queue.reaping().recheck(Duration::ZERO).await.unwrap(), 9);
            }
            let batch = queue.claim("w", 9, LONG).await.unwrap();
            assert_eq!(batch.sites.len(), 9);
            complete_as(&queue, &batch.sites, found, round as u64).await;
            let stored = checked_by_index(&queue).await;
            for (i, &(verdict, status, error_kind, redirects, detail)) in found.iter().enumerate() {
                let site = &stored[&i];
                let got = (
                    site.verdict,
                    site.status,
                    site.error_kind,
                    site.redirects,
                    site.detail.as_deref(),
                );
                let want = (verdict, status, error_kind, Some(redirects as i32), detail);
                assert_eq!(got, want, "round {round}, site {i}");
                let final_url = format!("https://final.example/{round}/{i}");
                assert_eq!(site.final_url.as_deref(), Some(final_url.as_str()));
                assert_eq!(site.latency_ms, Some(100 * round as i32 + i as i32));
                assert_eq!(site.attempts, 1, "round {round}, site {i}");
                assert_eq!(
                    site.consecutive_failures, streaks[round][i],
                    "round {round}, site {i}"
                );
            }
        }
    }
);
