//! Pausing and resuming the fleet (`crawler-reap --pause`/`--resume`, `Control::pause`/`resume`),
//! on every backend: a paused worker starts no request, keeps what it holds and its leases,
//! and claims nothing; resumed, it finishes the crawl, one verdict per site.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crawler_queue::{Db, Queue};
use crawler_tests::bins::{command, run, stderr, stdout};
use crawler_tests::site::{spawn_site, Page};
use crawler_tests::wait::{until, until_some};
use crawler_tests::{on_every_backend, TestDb};

use crate::e2e::{assert_report_matches, seed, url_file, wait, FAST};

/// Slow pages checked two at a time, batches of ten: the worker holds about thirty sites for seconds after a pause, time for a lease extension (every `--lease` / 3) to show.
pub const PAUSABLE: &[&str] = &[
    "--concurrency",
    "2",
    "--host-concurrency",
    "2",
    "--batch-size",
    "10",
    "--lease",
    "3s",
    "--heartbeat",
    "200ms",
    "--drain",
];

/// A child process killed when the test ends, passed or not: a paused worker left behind would
/// wait for ever.
pub struct Killed(pub Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A worker whose log lines arrive on the returned channel.
pub fn spawn_logged_worker(
    db: &TestDb,
    id: &str,
    extra: &[&str],
) -> (Killed, mpsc::Receiver<String>) {
    let mut cmd = command("crawler-worker", db.url.expose());
    cmd.args(["--id", id]).args(FAST).args(extra);
    spawn_logged(&mut cmd, "crawler_worker=info")
}

/// Starts `cmd` logging at `level`; its log lines arrive on the returned channel.
pub fn spawn_logged(cmd: &mut Command, level: &str) -> (Killed, mpsc::Receiver<String>) {
    let mut child = cmd
        .env("RUST_LOG", level)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    (Killed(child), rx)
}

/// Waits for a log line containing `text`, up to `limit`, and returns it.
pub fn wait_for_line(lines: &mpsc::Receiver<String>, text: &str, limit: Duration) -> String {
    let deadline = Instant::now() + limit;
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match lines.recv_timeout(left) {
            Ok(line) if line.contains(text) => return line,
            Ok(_) => {}
            Err(_) => break,
        }
    }
    panic!("no log line saying {text:?} within {limit:?}");
}

/// Waits for `n` more heartbeats of worker `id` (each on the database's clock), up to ten
/// seconds each.
pub async fn heartbeats(queue: &Queue, id: &str, n: usize) {
    let heartbeat = || async {
        let workers = queue.reports().workers().await.unwrap();
        workers
            .iter()
            .find(|w| w.id == id)
            .map_or(0, |w| w.heartbeat_at)
    };
    let mut last = heartbeat().await;
    for _ in 0..n {
        last = until_some(
            "the worker's next heartbeat",
            Duration::from_secs(10),
            || async {
                let now = heartbeat().await;
                (now > last).then_some(now)
            },
        )
        .await;
    }
}

/// Claimed sites and their lease expiry.
pub async fn claimed(queue: &Queue) -> Vec<(i64, i64)> {
    let sql = &queue
        .db()
        .statement("SELECT id, expires_at FROM sites WHERE state = {claimed} ORDER BY id");
    match queue.db() {
        Db::Sqlite(pool) => sqlx::query_as(sql).fetch_all(pool).await.unwrap(),
        Db::Postgres(pool) => sqlx::query_as(sql).fetch_all(pool).await.unwrap(),
        Db::MySql(pool) => sqlx::query_as(sql).fetch_all(pool).await.unwrap(),
    }
}

/// The latest expiry of the host partitions `owner` holds.
async fn parts_expiry(queue: &Queue, owner: &str) -> i64 {
    let sql = &queue
        .db()
        .statement("SELECT COALESCE(MAX(expires_at), 0) FROM parts WHERE owner = ?");
    match queue.db() {
        Db::Postgres(pool) => sqlx::query_scalar(sql)
            .bind(owner)
            .fetch_one(pool)
            .await
            .unwrap(),
        Db::Sqlite(pool) => sqlx::query_scalar(sql)
            .bind(owner)
            .fetch_one(pool)
            .await
            .unwrap(),
        Db::MySql(pool) => sqlx::query_scalar(sql)
            .bind(owner)
            .fetch_one(pool)
            .await
            .unwrap(),
    }
}

on_every_backend!(
    async fn a_paused_worker_stops_claiming_keeps_its_leases_and_finishes_once_resumed(
        backend: Backend,
    ) {
        let site = spawn_site().await;
        let db = backend.fresh().await;
        let (file, expected) = url_file(&site, 80, &[Page::Slow]);
        seed(&db, file.path());
        let queue = db.queue().await;
        let (mut worker, lines) = spawn_logged_worker(&db, "w", PAUSABLE);
        until("ten verdicts", Duration::from_secs(60), || async {
            queue.reports().state_counts().await.unwrap().done >= 10
        })
        .await;

        let out = run(command("crawler-reap", db.url.expose()).arg("--pause"));
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stdout(&out).contains("fleet paused"), "{}", stdout(&out));
        assert!(queue.control().is_paused().await.unwrap());
        wait_for_line(&lines, "fleet paused", Duration::from_secs(10));

        // From now on nothing is claimed: pending never goes down (a site given back may
        // raise it); no request starts after two heartbeats (those on the wire finish), and
        // what was held stays held, its leases kept.
        let pending = queue.reports().state_counts().await.unwrap().pending;
        let held = claimed(&queue).await;
        assert!(!held.is_empty(), "the worker held nothing when it paused");
        // Two heartbeat periods at least (three heartbeats): a request let through the gate
        // before it closed has started by then.
        heartbeats(&queue, "w", 3).await;
        let requests = |site: &crawler_tests::site::Site| site.requests().values().sum::<usize>();
        let before = requests(&site);
        // Watched over the waits below for the leases to be extended (a second at least).
        let watched = std::time::Instant::now();
        until(
            "a held site's lease extended",
            Duration::from_secs(20),
            || async {
                let now = claimed(&queue).await;
                now.iter()
                    .any(|(id, exp)| held.iter().any(|(i, e)| i == id && exp > e))
            },
        )
        .await;
        assert!(
            queue.reports().state_counts().await.unwrap().claimed > 0,
            "the sites held were given back or checked while paused"
        );
        let parts = parts_expiry(&queue, "w").await;
        until(
            "the partitions' lease extended",
            Duration::from_secs(20),
            || async { parts_expiry(&queue, "w").await > parts },
        )
        .await;
        let left = Duration::from_secs(1).saturating_sub(watched.elapsed());
        tokio::time::sleep(left).await;
        assert_eq!(requests(&site), before, "requests started while paused");
        let counts = queue.reports().state_counts().await.unwrap();
        assert!(
            counts.pending >= pending,
            "claimed while paused: {pending} then {counts:?}"
        );
        assert!(counts.pending > 0, "{counts:?}");
        assert!(
            worker.0.try_wait().unwrap().is_none(),
            "a paused worker exited as drained"
        );

        let out = run(command("crawler-reap", db.url.expose()).arg("--resume"));
        assert!(stdout(&out).contains("fleet resumed"), "{}", stdout(&out));
        wait_for_line(&lines, "fleet resumed", Duration::from_secs(10));
        assert!(wait(&mut worker.0, Duration::from_secs(120)).success());
        assert_report_matches(&db, &expected);
        assert!(!queue.control().is_paused().await.unwrap());
    }
);

on_every_backend!(
    async fn pause_and_resume_say_whether_they_changed_anything(backend: Backend) {
        let db = backend.fresh().await;
        let queue = db.queue().await;
        assert_eq!(queue.control().fleet_state().await.unwrap().changed_at, 0);
        assert!(queue.control().pause().await.unwrap());
        let paused_at = queue.control().fleet_state().await.unwrap().changed_at;
        assert!(paused_at > 0);
        assert!(!queue.control().pause().await.unwrap());
        assert_eq!(
            queue.control().fleet_state().await.unwrap().changed_at,
            paused_at
        );
        let out = run(command("crawler-reap", db.url.expose()).arg("--pause"));
        assert_eq!(stdout(&out).trim(), "fleet already paused");
        assert!(queue.control().resume().await.unwrap());
        assert!(!queue.control().resume().await.unwrap());
        let out = run(command("crawler-reap", db.url.expose()).args(["--resume", "--every", "1s"]));
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    }
);

on_every_backend!(
    async fn a_draining_worker_does_not_exit_while_the_fleet_is_paused(backend: Backend) {
        let db = backend.fresh().await;
        let queue = db.queue().await;
        assert!(queue.control().pause().await.unwrap());
        // Nothing to do at all: a draining worker would exit at once, were it not paused.
        let (mut worker, lines) =
            spawn_logged_worker(&db, "w", &["--heartbeat", "200ms", "--drain"]);
        wait_for_line(&lines, "fleet paused", Duration::from_secs(30));
        // Four heartbeats later (three periods of 200 ms at least), longer than the claimer's
        // pause when nothing is due (half a second): a worker that did not heed the pause
        // would have found the queue drained and exited by then.
        heartbeats(&queue, "w", 4).await;
        assert!(
            worker.0.try_wait().unwrap().is_none(),
            "exited as drained while paused"
        );
        assert!(queue.control().resume().await.unwrap());
        wait_for_line(&lines, "fleet resumed", Duration::from_secs(10));
        assert!(wait(&mut worker.0, Duration::from_secs(30)).success());
    }
);
