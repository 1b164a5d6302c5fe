//! One crawl as a user runs it: `crawler-seed FILE`, then `crawler-worker --drain`, on a
//! fresh database; then the verdicts are checked against the list.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crawler_queue::{DatabaseUrl, Db, Queue, QueueConfig, Verdict};
use crawler_tests::mariadb::{self, MariaDb};
use sqlx::{Connection, MySqlConnection};

use super::bare::limit;
use super::bench::{Bench, CONCURRENCY, SMALL};
use super::figures::Crawl;
use super::fixtures::Expected;
use super::proc::{cpu_of, open_files, rss_kb, Running};
use crawler_tests::bench::machine_cpu;

/// Seeds `list` into a fresh database (on `mariadb`, or SQLite when `None`), drains it
/// with one worker, checks the verdicts, prints a row and drops the database.
pub fn run(bench: &Bench, mariadb: Option<&MariaDb>, list: &Path, expected: &Expected) -> Crawl {
    let n = expected.total();
    let backend = if mariadb.is_some() {
        "MariaDB"
    } else {
        "SQLite"
    };
    let dir = bench.path(&format!("sqlite-{n}"));
    let url = match mariadb {
        Some(server) => bench.runtime.block_on(server.create_database()),
        None => {
            std::fs::create_dir_all(&dir).expect("a SQLite dir");
            format!("sqlite://{}", dir.join("crawler.db").display())
        }
    };
    let db_pid = mariadb.map_or(0, |_| bench.runtime.block_on(mariadbd_pid(&url)));

    let mut seed = bench.bin("crawler-seed");
    seed.env("DATABASE_URL", &url).arg(list);
    let seed = Running::start(seed, bench.tmp.path(), "seed").finish(limit(n));

    let before = (cpu_of(bench.server_pid), cpu_of(db_pid), machine_cpu());
    let worker = Running::start(worker_command(bench, &url), bench.tmp.path(), "worker");
    let perf = match &bench.perf {
        Some(dir) if backend == "MariaDB" && n == SMALL => vec![
            perf_record(dir, "worker", worker.pid()),
            perf_record(dir, "mariadbd", db_pid),
        ],
        _ => Vec::new(),
    };
    let pid = worker.pid();
    let every = Duration::from_secs((n as u64 / 25_000).max(2));
    let probe = bench
        .runtime
        .block_on(Db::connect(&DatabaseUrl::new(&url), 1));
    let probe = probe.expect("connect the probe");
    let mut timeline = Vec::new();
    let worker = worker.finish_sampling(limit(n), every, |t| {
        let claimed = bench.runtime.block_on(claimed_rows(&probe));
        timeline.push((t, rss_kb(pid), open_files(pid), claimed));
    });
    bench.runtime.block_on(probe.close());
    let after = (cpu_of(bench.server_pid), cpu_of(db_pid), machine_cpu());
    for mut perf in perf {
        // SAFETY: our child, not yet reaped. SIGINT makes perf write its file and exit.
        unsafe { libc::kill(perf.id() as libc::pid_t, libc::SIGINT) };
        let _ = perf.wait();
    }

    let crawl = Crawl {
        backend,
        n,
        seed,
        worker,
        cpu: (
            after.0 - before.0,
            after.1 - before.1,
            after.2 .0 - before.2 .0,
            after.2 .1 - before.2 .1,
        ),
    };
    crawl.print_row();
    super::report::print_timeline(&timeline);
    bench.runtime.block_on(check_verdicts(&url, expected));
    match mariadb {
        Some(_) => bench.runtime.block_on(mariadb::drop_database(&url)),
        None => {
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
    crawl
}

/// Politeness off in effect (a local server), the bare loop's concurrency, and no retries
/// or second attempts, so a failure would show as a wrong verdict rather than a stall.
fn worker_command(bench: &Bench, url: &str) -> Command {
    let mut worker = bench.bin("crawler-worker");
    worker
        .env("DATABASE_URL", url)
        .args(["--drain", "--concurrency", &CONCURRENCY.to_string()])
        .args(["--host-concurrency", "64", "--host-rate", "100000"])
        .args(["--timeout", "5s", "--retries", "0", "--attempts", "1"]);
    worker
}

/// `perf record` of process `pid` into `DIR/NAME.perf.data`, until it ends or is stopped.
fn perf_record(dir: &Path, name: &str, pid: u32) -> std::process::Child {
    std::fs::create_dir_all(dir).expect("the perf dir");
    Command::new("perf")
        .args([
            "record",
            "-F",
            "999",
            "-g",
            "-q",
            "-p",
            &pid.to_string(),
            "-o",
        ])
        .arg(dir.join(format!("{name}.perf.data")))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("run perf")
}

/// Sites claimed and not yet written back: the worker's backlog (checks queued or in flight,
/// and results waiting for the writer).
async fn claimed_rows(db: &Db) -> i64 {
    let sql = &db.statement("SELECT COUNT(*) FROM sites WHERE state = {claimed}");
    let count = match db {
        Db::MySql(pool) => sqlx::query_scalar(sql).fetch_one(pool).await,
        Db::Postgres(pool) => sqlx::query_scalar(sql).fetch_one(pool).await,
        Db::Sqlite(pool) => sqlx::query_scalar(sql).fetch_one(pool).await,
    };
    count.unwrap_or(-1)
}

/// Every URL has its verdict: alive or dead, as the list says.
async fn check_verdicts(url: &str, expected: &Expected) {
    let db = Db::connect(&DatabaseUrl::new(url), 1)
        .await
        .expect("connect");
    let queue = Queue::new(db, QueueConfig::default());
    let counts = queue
        .reports()
        .verdict_counts()
        .await
        .expect("count verdicts");
    let count = |v| counts.get(v) as i64;
    let got = Expected {
        alive: count(Verdict::Alive),
        dead: count(Verdict::Dead),
    };
    let others = counts.total() as i64 - got.alive - got.dead;
    if got != *expected || others > 0 {
        println!(
            "  WARNING: verdicts {counts:?}; expected alive {}, dead {}",
            expected.alive, expected.dead
        );
    }
    queue.db().close().await;
}

/// The private server's pid, from its pid file.
async fn mariadbd_pid(url: &str) -> u32 {
    let mut connection = MySqlConnection::connect(url).await.expect("connect");
    let (path,): (String,) = sqlx::query_as("SELECT @@pid_file")
        .fetch_one(&mut connection)
        .await
        .expect("read @@pid_file");
    let _ = connection.close().await;
    let pid = std::fs::read_to_string(&path).unwrap_or_default();
    pid.trim().parse().unwrap_or(0)
}
