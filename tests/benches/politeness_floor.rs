//! The floor of the claim's design on MariaDB: what the server spends per site when a client
//! does nothing but the two row updates update-then-select needs — one `UPDATE` that stamps a
//! claim on due rows and one that writes a verdict back where that claim still owns them —
//! with the read of the batch between them, in the crawler's batch sizes (500 claimed, 128
//! written back per statement), on one connection, over the same list freshly seeded.
//!
//! No worker, no hosts, no fences by partition, no extensions: set beside the crawler's own
//! figures of the same run, it says how much of the database's cost per URL is the design's
//! and how much is the crawler's. It runs alone on the machine, where the crawler's server
//! shares the cores with the worker and the meter, so its CPU per site is a little
//! flattering; the server's counters (rows written, page changes) do not depend on that.

use std::path::Path;
use std::time::{Duration, Instant};

use sqlx::Connection;

use crawler_queue::State;
use crawler_tests::bins::{command, run, stderr};
use crawler_tests::mariadb::drop_database;

use super::measure::{Bench, Cpu, ServerWork};

/// Sites one claim stamps (the worker's default batch).
const CLAIM: usize = 500;
/// Rows one write-back statement writes (the worker's chunk on MySQL).
const WRITE_BACK: usize = 128;

/// Seeds `list` into a fresh database, then claims and writes back every site as the floor
/// does; prints the time, the server's CPU per site and its counters.
pub(super) fn print(bench: &Bench, list: &Path, urls: usize) {
    let db = bench.runtime.block_on(bench.backend.fresh());
    let url = db.url.expose();
    let seeded = run(command("crawler-seed", url).arg(list));
    assert!(seeded.status.success(), "crawler-seed: {}", stderr(&seeded));
    settle(); // what the server still owes the crawl before (its purge) is not the floor's
    let before = ServerWork::now(bench, url);
    let ((time, done), cpu) = Cpu::of(bench, || {
        bench.runtime.block_on(async {
            let started = Instant::now();
            let done = claim_and_write_back(url).await;
            (started.elapsed(), done)
        })
    });
    let work = ServerWork::now(bench, url).since(before);
    assert_eq!(done, urls, "the floor wrote back every site once");
    println!(
        "  the design's floor (two bare updates per site, alone on the machine): {:.1} s; \
         CPU per URL: database {:.0} µs; {}",
        time.as_secs_f64(),
        cpu.database * 1e6 / urls as f64,
        work.per_url(urls)
    );
    bench.runtime.block_on(drop_database(url));
    settle(); // nor is what it owes the floor lychee's, which runs next
}

/// Waits for the server's background work (purge) of what ran before to end.
fn settle() {
    std::thread::sleep(Duration::from_secs(3));
}

/// Claims every due site in the claim's order, `CLAIM` at a time, reads each batch, and writes
/// each back `WRITE_BACK` rows a statement: the rows written back.
async fn claim_and_write_back(url: &str) -> usize {
    let mut conn = sqlx::MySqlConnection::connect(url)
        .await
        .expect("connect to the bench's MariaDB");
    let ids: Vec<i64> = sqlx::query_scalar("SELECT id FROM sites ORDER BY next_check_at, part, id")
        .fetch_all(&mut conn)
        .await
        .expect("read the seeded ids");
    let mut done = 0;
    for (token, batch) in (1_i64..).zip(ids.chunks(CLAIM)) {
        let claim = format!(
            "UPDATE sites SET state = ?, owner = ?, claim_token = ?, expires_at = ? \
             WHERE id IN ({}) AND state = ?",
            placeholders(batch.len())
        );
        let q = sqlx::query(&claim)
            .bind(State::Claimed.as_sql())
            .bind("floor-probe-worker")
            .bind(token)
            .bind(i64::MAX);
        let q = batch.iter().fold(q, |q, id| q.bind(id));
        q.bind(State::Pending.as_sql())
            .execute(&mut conn)
            .await
            .expect("claim");
        let read = format!(
            "SELECT id, url, host, part, tries, verdict FROM sites \
             WHERE id IN ({}) AND claim_token = ? AND state = ?",
            placeholders(batch.len())
        );
        let q = batch.iter().fold(sqlx::query(&read), |q, id| q.bind(id));
        let rows = q
            .bind(token)
            .bind(State::Claimed.as_sql())
            .fetch_all(&mut conn)
            .await
            .expect("read");
        assert_eq!(rows.len(), batch.len(), "the claim stamped its whole batch");
        for chunk in batch.chunks(WRITE_BACK) {
            let write = format!(
                "UPDATE sites SET checked_by = owner, state = ?, owner = NULL, \
                 expires_at = NULL, checked_at = ?, next_check_at = ?, verdict = ?, \
                 http_status = ?, latency_ms = ?, attempts = tries + 1, tries = 0, \
                 last_alive_at = ?, verdict_since = ? \
                 WHERE id IN ({}) AND claim_token = ? AND state = ?",
                placeholders(chunk.len())
            );
            let now = 1_i64;
            let q = sqlx::query(&write)
                .bind(State::Done.as_sql())
                .bind(now)
                .bind(now)
                .bind("alive")
                .bind(200)
                .bind(1)
                .bind(now)
                .bind(now);
            let written = chunk
                .iter()
                .fold(q, |q, id| q.bind(id))
                .bind(token)
                .bind(State::Claimed.as_sql())
                .execute(&mut conn)
                .await
                .expect("write back");
            done += written.rows_affected() as usize;
        }
    }
    conn.close().await.expect("close");
    done
}

/// `?, ?, …`: `n` placeholders (the queue's own helper is private to it).
fn placeholders(n: usize) -> String {
    vec!["?"; n].join(", ")
}
