//! Faults: kills, a stopped process, a database restart, connections killed by the server. A
//! fault may delay work, never lose it: every seeded site ends with exactly one verdict.
//!
//! Each test runs on MariaDB and on PostgreSQL (`on_every_backend!(only [mariadb, postgres] …)`), on a private server of its own
//! (so it may stop it), with a local site of slow pages (300 ms each), so that the fault lands
//! mid-crawl.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crawler_queue::{Db, Queue, QueueConfig};
use crawler_tests::site::{spawn_site, Page};
use crawler_tests::{on_every_backend, PrivateServer, TestDb};

use crate::e2e::{
    assert_report_matches, reported, seed, spawn_worker, spread_url_file, unfinished, url_file,
    wait,
};

/// Short leases and intervals, so that recovery happens within seconds.
pub const QUICK: &[&str] = &[
    "--lease",
    "3s",
    "--heartbeat",
    "300ms",
    "--dead-after",
    "1500ms",
    "--reap-every",
    "300ms",
    "--concurrency",
    "20",
];

async fn private_db(server: &PrivateServer) -> (TestDb, Queue) {
    let db = server.fresh().await;
    let queue = Queue::new(
        Db::connect(&db.url, 2).await.unwrap(),
        QueueConfig::default(),
    );
    (db, queue)
}

pub async fn wait_for_progress(db: &TestDb, at_least: usize) {
    let started = Instant::now();
    while reported(db).len() < at_least {
        assert!(started.elapsed() < Duration::from_secs(60), "no progress");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

pub async fn wait_all(workers: Vec<std::process::Child>) {
    tokio::task::spawn_blocking(move || {
        for mut w in workers {
            let status = wait(&mut w, Duration::from_secs(300));
            assert!(status.success(), "a worker failed: {status}");
        }
    })
    .await
    .unwrap();
}

/// `$body` on the queue's pool: the fault tests run on database servers only.
macro_rules! on_server {
    ($queue:expr, $pool:ident => $body:expr) => {
        match $queue.db() {
            Db::MySql($pool) => $body,
            Db::Postgres($pool) => $body,
            Db::Sqlite(_) => unreachable!("fault tests run on servers"),
        }
        .unwrap()
    };
}

/// The sites `owner` holds, each with its lease's end, read in one statement.
async fn claims_of(queue: &Queue, owner: &str) -> Vec<(i64, i64)> {
    let sql = "SELECT id, expires_at FROM sites WHERE owner = ? AND state = {claimed}";
    let sql = &queue.db().statement(sql);
    on_server!(queue, pool => sqlx::query_as(sql).bind(owner).fetch_all(pool).await)
}

/// One look at the fleet as a reaper sees it, in one statement: for each registered worker,
/// its last heartbeat, the database's clock, and how many sites it holds.
async fn look(queue: &Queue) -> HashMap<String, Look> {
    let sql = "SELECT w.id, w.heartbeat_at, {now}, \
               (SELECT COUNT(*) FROM sites s WHERE s.owner = w.id AND s.state = {claimed}) \
               FROM workers w";
    let sql = &queue.db().statement(sql);
    let rows: Vec<(String, i64, i64, i64)> =
        on_server!(queue, pool => sqlx::query_as(sql).fetch_all(pool).await);
    rows.into_iter()
        .map(|(id, beat, at, held)| (id, Look { at, beat, held }))
        .collect()
}

/// What one [`look`] saw of one worker: when (the database's clock, ms), its last heartbeat
/// (`beat`), and how many sites it held.
#[derive(Clone, Copy, Debug)]
struct Look {
    at: i64,
    beat: i64,
    held: i64,
}

/// Whether no reaper can have begun taking a worker's sites back by its heartbeat in the 1.5 to
/// 2 seconds before its last look: looks at most 500 ms apart over that span, each finding a
/// heartbeat younger than 900 ms, so that at no moment was it 1.5 s old (`--dead-after`).
/// A reaper decides on the heartbeat its statement reads, which on PostgreSQL is the one
/// committed when the statement began (MariaDB's reads the latest, under a lock): a heartbeat
/// that landed late, just before the worker was frozen, may already have been judged missing
/// by a reaper still at work.
fn steady(looks: &[Look]) -> bool {
    let Some(last) = looks.last() else {
        return false;
    };
    let span: Vec<&Look> = looks.iter().filter(|l| l.at >= last.at - 2000).collect();
    span[0].at <= last.at - 1500
        && span.windows(2).all(|pair| pair[1].at - pair[0].at <= 500)
        && span.iter().all(|l| l.at - l.beat < 900)
}

/// `sql`'s one integer.
async fn int(queue: &Queue, sql: &str) -> i64 {
    let sql = &queue.db().statement(sql);
    on_server!(queue, pool => sqlx::query_scalar(sql).fetch_one(pool).await)
}

on_every_backend!(
    only [mariadb, postgres]
    async fn a_killed_worker_delays_its_sites_until_its_heartbeat_stops_and_loses_none(
        backend: Backend,
    ) {
        let server = PrivateServer::start(backend);
        let (db, queue) = private_db(&server).await;
        // Many hosts, so that each worker holds host partitions and sites of its own.
        let (file, expected) = spread_url_file(30, 40, &[Page::Slow, Page::Alive, Page::Dead]).await;
        seed(&db, file.path());
        let mut workers: Vec<_> = (0..3)
            .map(|i| spawn_worker(&db, &format!("w{i}"), &[&["--drain"], QUICK].concat()))
            .collect();
        // Kill whichever worker holds the most sites at a moment when its heartbeat is steady (see
        // `steady`: a reaper at work on an earlier, late heartbeat would take its sites back before
        // the bound below, and rightly), watched from the workers' start: a steady heartbeat takes
        // a second and a half of looks to show. It is frozen first: a write-back or heartbeat it
        // sent just before may still reach the database, and land, after that (seen on PostgreSQL,
        // whose backend for the dead connection runs it a few ms later). Half a second settles it,
        // well before anyone may take the orphans by the heartbeat (--dead-after, 1.5 s) or the
        // lease (3 s); if the frozen worker then holds nothing (it had just written all it held, as
        // a loaded machine makes likely), or its heartbeat was not steady, it is let go and another
        // moment is chosen.
        let started = Instant::now();
        let names: Vec<String> = (0..workers.len()).map(|i| format!("w{i}")).collect();
        let mut seen: HashMap<String, Vec<Look>> = HashMap::new();
        let (victim, orphaned) = loop {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "no worker held sites it had not written while its heartbeat was steady"
            );
            for (name, l) in look(&queue).await {
                seen.entry(name).or_default().push(l);
            }
            let most = (0..names.len())
                .filter_map(|i| Some((seen.get(&names[i])?.last()?.held, i)))
                .max();
            let chosen = most.filter(|&(held, i)| held >= 5 && steady(&seen[&names[i]]));
            let Some((_, i)) = chosen else {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            };
            let pid = workers[i].id() as i32;
            unsafe { libc::kill(pid, libc::SIGSTOP) };
            let name = names[i].clone();
            // The heartbeat the database holds once it is frozen: every reaper that looks from
            // now on reads it or a later one, and none looked earlier while it was late.
            let frozen = look(&queue).await.get(&name).copied();
            let looks = seen.get_mut(&name).unwrap();
            looks.extend(frozen);
            let frozen = frozen.filter(|_| steady(looks));
            tokio::time::sleep(Duration::from_millis(500)).await;
            let orphaned = claims_of(&queue, &name).await;
            let Some(frozen) = frozen.filter(|_| !orphaned.is_empty()) else {
                unsafe { libc::kill(pid, libc::SIGCONT) };
                continue;
            };
            unsafe { libc::kill(pid, libc::SIGKILL) };
            break (i, (name, frozen.beat, orphaned));
        };
        let _ = workers.remove(victim).wait();
        // Watched until every orphan has left the dead worker. Each left no later than the
        // database's clock read just after the first look that found it gone.
        let (name, heartbeat, orphans) = orphaned;
        let mut gone_by = HashMap::new();
        let started = Instant::now();
        while gone_by.len() < orphans.len() {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the dead worker's sites were never taken back"
            );
            let held: Vec<i64> = claims_of(&queue, &name).await.iter().map(|c| c.0).collect();
            let now = queue.now().await.unwrap();
            for (id, _) in &orphans {
                if !held.contains(id) {
                    gone_by.entry(*id).or_insert(now);
                }
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        wait_all(workers).await;
        assert_report_matches(&db, &expected);
        assert_eq!(unfinished(&db), (0, 0));
        // Taken back only once the heartbeat (every 300 ms) had been silent for --dead-after
        // (1.5 s), or the lease had run out, whichever came first: not one millisecond sooner
        // (one is rounding). Bounded by the database's record rather than by the kill, because a
        // loaded machine may delay a heartbeat by more than its period: the heartbeat the
        // database held once the worker was frozen, since no reaper had begun on an older one.
        let silent_from = heartbeat + 1500;
        for (id, expires_at) in orphans {
            let free_at = expires_at.min(silent_from);
            assert!(
                gone_by[&id] >= free_at - 1,
                "site {id} taken back at the latest {} ms before its claim could be \
                 (heartbeat at {heartbeat} when frozen, lease to {expires_at})",
                free_at - gone_by[&id]
            );
        }
    }
);

on_every_backend!(
    only [mariadb, postgres]
    async fn workers_survive_a_database_restart_mid_crawl(backend: Backend) {
        let mut server = PrivateServer::start(backend);
        let (db, _queue) = private_db(&server).await;
        let site = spawn_site().await;
        let (file, expected) = url_file(&site, 900, &[Page::Slow, Page::Alive, Page::Gone]);
        seed(&db, file.path());
        let quick = [&["--drain", "--lease", "1m"][..], &QUICK[2..]].concat();
        let workers: Vec<_> = (0..3)
            .map(|i| spawn_worker(&db, &format!("w{i}"), &quick))
            .collect();
        wait_for_progress(&db, 100).await;
        server.stop();
        // The outage itself: five seconds without a database, what the workers must survive.
        tokio::time::sleep(Duration::from_secs(5)).await;
        server.restart();
        wait_all(workers).await;
        assert_report_matches(&db, &expected);
        assert_eq!(unfinished(&db), (0, 0));
    }
);

on_every_backend!(
    only [mariadb, postgres]
    async fn workers_survive_their_connections_being_killed(backend: Backend) {
        let server = PrivateServer::start(backend);
        let (db, _queue) = private_db(&server).await;
        let site = spawn_site().await;
        let (file, expected) = url_file(&site, 900, &[Page::Slow, Page::Alive, Page::Blocked]);
        seed(&db, file.path());
        let workers: Vec<_> = (0..3)
            .map(|i| spawn_worker(&db, &format!("w{i}"), &[&["--drain"], QUICK].concat()))
            .collect();
        for _ in 0..3 {
            wait_for_progress(&db, 100).await;
            server.kill_connections().await;
            tokio::time::sleep(Duration::from_millis(700)).await;
        }
        wait_all(workers).await;
        assert_report_matches(&db, &expected);
        assert_eq!(unfinished(&db), (0, 0));
    }
);

on_every_backend!(
    only [mariadb, postgres]
    async fn a_worker_stopped_past_its_lease_has_its_late_results_rejected(backend: Backend) {
        let server = PrivateServer::start(backend);
        let (db, queue) = private_db(&server).await;
        let site = spawn_site().await;
        let (file, expected) = url_file(&site, 600, &[Page::Slow]);
        seed(&db, file.path());
        let mut paused = crawler_tests::bins::command("crawler-worker", db.url.expose())
            .args(["--id", "paused"])
            .args(crate::e2e::FAST)
            .args(QUICK)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let (lines_tx, lines) = std::sync::mpsc::channel();
        let stderr = paused.stderr.take().unwrap();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = lines_tx.send(line);
            }
        });
        wait_for_progress(&db, 40).await;
        unsafe { libc::kill(paused.id() as i32, libc::SIGSTOP) };
        let held = claims_of(&queue, "paused").await;
        assert!(!held.is_empty());
        let mut other = spawn_worker(&db, "other", &[&["--drain"], QUICK].concat());
        assert!(
            tokio::task::spawn_blocking(move || wait(&mut other, Duration::from_secs(120)))
                .await
                .unwrap()
                .success()
        );
        let before_resume = queue.now().await.unwrap();
        unsafe { libc::kill(paused.id() as i32, libc::SIGCONT) };
        // Resumed, it writes back what it held, and is told it lost it: the late results are
        // not counted.
        tokio::task::spawn_blocking(move || {
            crate::pause::wait_for_line(
                &lines,
                "dropped results whose lease was lost",
                Duration::from_secs(60),
            )
        })
        .await
        .unwrap();
        unsafe { libc::kill(paused.id() as i32, libc::SIGTERM) };
        let status = tokio::task::spawn_blocking(move || paused.wait())
            .await
            .unwrap()
            .unwrap();
        assert!(status.success());
        assert_report_matches(&db, &expected);
        let last = int(&queue, "SELECT MAX(checked_at) FROM sites").await;
        assert!(
            last < before_resume,
            "nothing was written after the stopped worker resumed"
        );
    }
);

on_every_backend!(
    only [mariadb, postgres]
    async fn two_reapers_and_three_workers_reap_once_per_interval(backend: Backend) {
        let server = PrivateServer::start(backend);
        let (db, queue) = private_db(&server).await;
        let site = spawn_site().await;
        let (file, _) = url_file(&site, 3000, &[Page::Slow]);
        seed(&db, file.path());
        let every = ["--reap-every", "1s", "--concurrency", "10"];
        let mut workers: Vec<_> = (0..3)
            .map(|i| spawn_worker(&db, &format!("w{i}"), &every))
            .collect();
        let mut reapers: Vec<_> = (0..2)
            .map(|i| {
                crawler_tests::bins::command("crawler-reap", db.url.expose())
                    .args(["--every", "1s", "--id", &format!("r{i}")])
                    .spawn()
                    .unwrap()
            })
            .collect();
        // From the first reap on, watch until four more have run (bounded), then check they came
        // no faster than one per interval: five contenders, exactly one acting each time.
        let lead_runs = || async { queue.leases().runs("reap").await.unwrap() };
        let until = |deadline: Instant| Instant::now() < deadline;
        let deadline = Instant::now() + Duration::from_secs(60);
        while lead_runs().await == 0 && until(deadline) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let before = lead_runs().await;
        let started = Instant::now();
        let mut runs = 0;
        while runs < 4 && until(deadline) {
            tokio::time::sleep(Duration::from_millis(50)).await;
            runs = lead_runs().await - before;
        }
        let seconds = started.elapsed().as_secs_f64();
        for child in workers.iter_mut().chain(reapers.iter_mut()) {
            let _ = child.kill();
            let _ = child.wait();
        }
        assert!(runs >= 4, "{runs} reaps in {seconds:.1}s: nobody reaps");
        assert!(
            runs as f64 <= seconds + 1.5,
            "{runs} reaps in {seconds:.1}s by 5 contenders at 1/s: more than one acts"
        );
    }
);
