//! The table's size: MariaDB with 1M and then 10M rows (10% marked dead by a direct
//! UPDATE, the rest due). Claim latency of 100 sites (each batch given back at once, so the
//! table keeps its size) and the time of `crawler-report --dead`.

use std::time::{Duration, Instant};

use crawler_queue::{DatabaseUrl, Db, Queue, QueueConfig, State, Verdict};
use crawler_tests::mariadb::MariaDb;
use sqlx::{Connection, MySqlConnection};

use super::bench::Bench;
use super::fixtures;
use super::proc::Running;

const SAMPLES: usize = 300;
/// Rows per UPDATE when marking sites dead: one statement over 10M rows would build a huge
/// undo log.
const MARK_CHUNK: i64 = 500_000;

pub fn run(bench: &Bench, mariadb: &MariaDb) {
    println!("\n== scale: MariaDB, 10% of the rows dead (direct UPDATE), the rest due ==");
    let url = bench.runtime.block_on(mariadb.create_database());
    let mut seeded = 0;
    for rows in [1_000_000, 10_000_000] {
        let path = bench.path("urls-scale.txt");
        fixtures::write_list(&path, seeded..rows, bench.port);
        let mut seed = bench.bin("crawler-seed");
        seed.env("DATABASE_URL", &url).arg(&path);
        let limit = Duration::from_secs(3600);
        let seed = Running::start(seed, bench.tmp.path(), "seed-scale").finish(limit);
        let _ = std::fs::remove_file(&path);
        let started = Instant::now();
        bench.runtime.block_on(mark_dead(&url));
        let marking = started.elapsed();
        let mut report = bench.bin("crawler-report");
        report.env("DATABASE_URL", &url).arg("--dead");
        let report = Running::start(report, bench.tmp.path(), "report").finish(limit);
        let lines = report.stdout.lines().count();
        let (p50, p99) = bench.runtime.block_on(claim_latency(&url));
        println!(
            "{rows:>8} rows: seeded {} more in {:.1} s ({:.0} URLs/s, peak {:.1} MB); marked dead in {:.1} s",
            rows - seeded,
            seed.wall.as_secs_f64(),
            (rows - seeded) as f64 / seed.wall.as_secs_f64(),
            seed.peak_mb(),
            marking.as_secs_f64()
        );
        println!(
            "{rows:>8} rows: crawler-report --dead: {lines} sites in {:.2} s ({:.0} sites/s, peak {:.1} MB, CPU {:.1} s)",
            report.wall.as_secs_f64(),
            lines as f64 / report.wall.as_secs_f64(),
            report.peak_mb(),
            report.cpu
        );
        println!("{rows:>8} rows: claim of 100 ({SAMPLES} claims): p50 {p50:.2?}  p99 {p99:.2?}");
        seeded = rows;
    }
    bench
        .runtime
        .block_on(crawler_tests::mariadb::drop_database(&url));
}

/// Marks every tenth site dead, as if checked, in chunks of ids.
async fn mark_dead(url: &str) {
    let mut connection = MySqlConnection::connect(url).await.expect("connect");
    let (max,): (i64,) = sqlx::query_as("SELECT COALESCE(MAX(id), 0) FROM sites")
        .fetch_one(&mut connection)
        .await
        .expect("read the largest id");
    for from in (0..max).step_by(MARK_CHUNK as usize) {
        sqlx::query(
            "UPDATE sites SET state = ?, verdict = ?, http_status = 404, checked_at = 0 \
             WHERE id % 10 = 0 AND id > ? AND id <= ?",
        )
        .bind(State::Done.as_sql())
        .bind(Verdict::Dead.as_str())
        .bind(from)
        .bind(from + MARK_CHUNK)
        .execute(&mut connection)
        .await
        .expect("mark sites dead");
    }
    let _ = connection.close().await;
}

/// p50 and p99 of [`SAMPLES`] claims of 100 sites, each batch given back at once.
async fn claim_latency(url: &str) -> (Duration, Duration) {
    let db = Db::connect(&DatabaseUrl::new(url), 4)
        .await
        .expect("connect");
    let queue = Queue::new(db, QueueConfig::default());
    let latency = crawler_tests::bench::claim_latency(&queue, 1, SAMPLES).await;
    queue.db().close().await;
    latency
}
