//! The queue alone, with the HTTP check stubbed out: claim+complete throughput, claim latency as
//! the table grows, and the seeding rate. Prints figures; asserts nothing about speed.
//!
//! `cargo bench -p crawler-tests --bench queue` (every backend), or with `-- sqlite` /
//! `-- mariadb` / `-- postgres`.
//! Claimers claim as workers do: each holds its fair share of the host partitions.
//! `QUEUE_BENCH_CLAIMERS` lists the claimer counts (default `1,4,16`); `QUEUE_BENCH_ROWS` sets
//! the large table (default 1,000,000; `0` skips the latency and seeding part). The throughput
//! lines give the whole machine's CPU time per site (database, this process, all else); on a
//! quiet machine that is where the database's cost shows. The private MariaDB server is
//! sized for writes ([`SERVER_FLAGS`]); `CRAWLER_TEST_MYSQL_URL` names another server instead.
//! The private PostgreSQL server has the tests' settings (`tests/support/postgres.rs`: no
//! fsync, 64 MB of shared buffers).

/// A redo log and buffer pool for a write-heavy run, as a production server would have; the
/// rest as the test servers (`tests/support/mariadb/command.rs`): READ COMMITTED per session,
/// `innodb_flush_log_at_trx_commit=2`, no binlog.
const SERVER_FLAGS: &str = "--innodb-log-file-size=512M --innodb-buffer-pool-size=2G";

use std::time::{Duration, Instant};

use crawler_queue::{ClaimMethod, Queue, QueueConfig, PARTS};
use crawler_tests::bench::{claim_latency, counts, drain, seed, BATCH, LEASE};
use crawler_tests::findings::{alive, outcomes_of};
use crawler_tests::Backend;

/// What fencing the write-back once per host partition, instead of claiming each site, would
/// save (issue: "host leases let a batch's write-back be fenced once per host rather than per
/// site"): with its partitions leased, a worker could read its due sites without stamping them
/// (a plain SELECT) and fence the write-back by partition alone. Times, over `rounds` batches
/// of [`BATCH`] in a quarter of the partitions: the claim (UPDATE + SELECT by token), the bare
/// SELECT of the same due rows, and the write-back. Returns (claim, select, complete) means.
async fn row_work(queue: &Queue, rounds: u32) -> (Duration, Duration, Duration) {
    let quarter = u32::from(PARTS) / 4;
    queue.parts().take("rows", 1, quarter, LEASE).await.unwrap();
    let parts: Vec<i16> = queue
        .parts()
        .keep(1, LEASE)
        .await
        .unwrap()
        .iter()
        .map(|p| p.id)
        .collect();
    let list = parts
        .iter()
        .map(|p| p.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    // The claim's own filter and order, read only (the list is of numbers this bench made).
    let select = queue.db().statement(&format!(
        "SELECT id FROM sites WHERE state = {{pending}} AND next_check_at <= ? AND part IN ({list}) \
         ORDER BY next_check_at, part, id LIMIT {BATCH}"
    ));
    let (mut claim, mut read, mut complete) = (Duration::ZERO, Duration::ZERO, Duration::ZERO);
    for _ in 0..rounds {
        let t = Instant::now();
        let ids: Vec<i64> = match queue.db() {
            crawler_queue::Db::MySql(pool) => sqlx::query_scalar(&select)
                .bind(i64::MAX)
                .fetch_all(pool)
                .await
                .unwrap(),
            crawler_queue::Db::Postgres(pool) => sqlx::query_scalar(&select)
                .bind(i64::MAX)
                .fetch_all(pool)
                .await
                .unwrap(),
            crawler_queue::Db::Sqlite(pool) => sqlx::query_scalar(&select)
                .bind(i64::MAX)
                .fetch_all(pool)
                .await
                .unwrap(),
        };
        read += t.elapsed();
        let t = Instant::now();
        let batch = queue.claim_held(1, "rows", BATCH, LEASE).await.unwrap();
        claim += t.elapsed();
        assert_eq!(batch.sites.len(), ids.len());
        let t = Instant::now();
        queue
            .complete(&outcomes_of(batch.sites, &alive()))
            .await
            .unwrap();
        complete += t.elapsed();
    }
    queue.parts().release(1).await.unwrap();
    (claim / rounds, read / rounds, complete / rounds)
}

async fn bench(backend: Backend, big: usize, claimer_counts: &[usize]) {
    println!("\n== {backend:?} ==");
    let methods: &[ClaimMethod] = match backend {
        Backend::MariaDb => &[ClaimMethod::UpdateThenSelect, ClaimMethod::SkipLocked],
        // PostgreSQL's claim is one UPDATE … FOR UPDATE SKIP LOCKED … RETURNING either way.
        Backend::Postgres | Backend::Sqlite => &[ClaimMethod::UpdateThenSelect],
    };
    for &method in methods {
        for &claimers in claimer_counts {
            let db = backend.fresh().await;
            let queue = db
                .queue_with(QueueConfig {
                    claim: method,
                    ..Default::default()
                })
                .await;
            seed(&queue, 100_000, 2).await;
            let (rate, cpu, claim, complete) = drain(std::slice::from_ref(&queue), claimers).await;
            println!(
                "{method:?}: claim+complete, {claimers:>2} claimers, batches of {BATCH}: {rate:>7.0} sites/s  \
                 (machine CPU {cpu:.0} us/site; per batch: claim {claim:.1?}, complete {complete:.1?})"
            );
        }
    }
    let db = backend.fresh().await;
    let queue = db.queue().await;
    seed(&queue, 100_000, 2).await;
    let (claim, select, complete) = row_work(&queue, 40).await;
    let saved = (claim.as_secs_f64() - select.as_secs_f64()) / (claim + complete).as_secs_f64();
    println!(
        "row work per batch of {BATCH} (one claimer, a quarter of the partitions): claim {claim:.1?}, \
         the same rows read without a claim {select:.1?}, complete {complete:.1?}: fencing by \
         partition alone would save {:.0} % of the batch's database time",
        saved * 100.0
    );
    if big == 0 {
        return;
    }
    for rows in [10_000, big] {
        let db = backend.fresh().await;
        let queue = db.queue().await;
        let rate = seed(&queue, rows, 2).await;
        if rows == big {
            println!("seeding {rows} URLs (dedupe, 2 writers):       {rate:>9.0} URLs/s");
        }
        let (p50, p99) = claim_latency(&queue, 1, 300).await;
        println!("claim of 100 with {rows:>8} rows: p50 {p50:>8.2?}  p99 {p99:>8.2?}");
        // The workers of a fleet of four, each in its quarter of the partitions, at once.
        let (p50, p99) = claim_latency(&queue, 4, 100).await;
        println!("  4 claimers, each in its quarter: p50 {p50:>8.2?}  p99 {p99:>8.2?}");
    }
}

#[tokio::main]
async fn main() {
    if std::env::var_os("CRAWLER_TEST_MARIADB_FLAGS").is_none() {
        std::env::set_var("CRAWLER_TEST_MARIADB_FLAGS", SERVER_FLAGS);
    }
    let only = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let big = std::env::var("QUEUE_BENCH_ROWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let claimers = counts("QUEUE_BENCH_CLAIMERS", "1,4,16");
    println!(
        "queue benchmark: {} cores; HTTP check stubbed out",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    for backend in [Backend::MariaDb, Backend::Postgres, Backend::Sqlite] {
        if only
            .as_deref()
            .is_none_or(|o| format!("{backend:?}").eq_ignore_ascii_case(o))
        {
            bench(backend, big, &claimers).await;
        }
    }
}
