//! The scale model, measured (docs/scale.md): the database's CPU time per site for the queue's
//! life cycle, the table's size per million sites, and the claim's latency on a large table.
//! Prints figures; asserts nothing about speed.
//!
//! `cargo bench -p crawler-tests --bench scale` runs both parts on the three backends at the
//! default size; `-- mariadb` / `-- postgres` / `-- sqlite` picks a backend, `-- cpu` /
//! `-- size` a part.
//!
//! - **cpu**: `SCALE_WORKERS` (default `4,16`) concurrent workers drain `SCALE_CPU_SITES`
//!   (default 50,000) due sites exactly as `crawler-worker` does, with an instant checker: each
//!   holds its share of the host partitions, claims batches of 500 in them
//!   (`claim_in_parts`, with the list its keeper read), extends
//!   the batch's lease once, and writes results back `SCALE_WRITES` at a time (default
//!   `500,50`: a worker writes back once 500 results wait or the oldest has waited a second,
//!   so a worker doing 50 sites/s writes 50 at a time). `SCALE_ROUND=first` makes it a list's first round (every site
//!   unchecked, every verdict new); by default it is a recheck round of the filled mix (the
//!   15 % not alive turn alive). The database's CPU time is the private `mariadbd`'s utime + stime
//!   (`/proc/<pid>/stat`); PostgreSQL's is that of its postmaster and every descendant (one
//!   backend per connection, background workers), with backends that exited counted through
//!   the postmaster's cutime + cstime (`scale::tree_cpu`); SQLite runs inside this process, so
//!   there it is this process's whole CPU time (getrusage), which also holds the benchmark's
//!   own client work.
//! - **size**: fills a migrated table with `SCALE_ROWS` (default 1,000,000) realistic rows in
//!   SQL (`support/scale.rs`), `SCALE_DUE` per mille of them due (default 10), reads the table
//!   and index sizes, then times `SCALE_CLAIMS` (default 300) claims of 100 and their
//!   write-backs by `SCALE_CLAIMERS` (default 4) concurrent claimers.
//!
//! - **changes**: fills `SCALE_ROWS` rows as `size` does, with a month of daily passes of
//!   history (1 % of the verdicts began in each of the last three days, and a
//!   `verdict_changes` row for each), prints the size of `sites_verdict` (the index that
//!   serves `--changed-since`) and of `verdict_changes`, then times what reads the changes:
//!   `crawler-report --changed-since 1d` (`--dead`, `--all`, `--summary`, `--fail-on`), as a
//!   user runs it, and the notifier's read of one digest (`Notifier::changes_after`, 1,000
//!   changes). `-- changes` runs it alone; it is not in the default run.
//!
//! With `SCALE_STATEMENTS=1` the cpu part also prints each run's costliest statements (calls,
//! wall time inside the server, rows examined — on PostgreSQL, shared buffers touched — and
//! rows), from MariaDB's performance schema or PostgreSQL's `pg_stat_statements`, which the
//! servers then keep (`scale::statement_costs_on`); they cost CPU themselves, so compare the
//! per-site CPU of runs without them.
//!
//! The private MariaDB server gets [`SERVER_FLAGS`] unless `CRAWLER_TEST_MARIADB_FLAGS` is set
//! (the 100M run sets an 8 GB buffer pool that way); the private PostgreSQL server gets
//! [`POSTGRES_SETTINGS`] unless `CRAWLER_TEST_POSTGRES_SETTINGS` is set. A backend is one arm of [`db_cpu`] here and
//! one `Dialect` in `support/scale.rs`.

/// A buffer pool and redo log for filling millions of rows, and the largest sort buffer for
/// building their indexes; the rest as the test servers (`tests/support/mariadb/command.rs`).
const SERVER_FLAGS: &str =
    "--innodb-log-file-size=1G --innodb-buffer-pool-size=2G --innodb-sort-buffer-size=64M";

/// The same for the private PostgreSQL server (`-c` settings): shared buffers as MariaDB's
/// buffer pool, and WAL enough that a fill is not one checkpoint after another.
const POSTGRES_SETTINGS: &str = "shared_buffers=2GB max_wal_size=8GB checkpoint_timeout=30min";

use std::time::{Duration, Instant};

use crawler_queue::{Queue, PARTS};
use crawler_tests::bench::machine_cpu;
use crawler_tests::bins::command;
use crawler_tests::findings::{alive, outcomes_of};
use crawler_tests::scale::{
    fill, fill_history, forget_verdicts, own_cpu, reset_statement_costs, sizes, statement_costs,
    statement_costs_on, table_bytes, DbCpu,
};
use crawler_tests::{mariadb, postgres, Backend};

const LEASE: Duration = Duration::from_secs(120);
/// The worker's default `--batch-size`.
const BATCH: u32 = 500;
/// The rate of one worker the fleet arithmetic is given for, in sites/s.
const WORKER_RATE: f64 = 50.0;

/// Where the backend's CPU time is read.
fn db_cpu(backend: Backend) -> DbCpu {
    match backend {
        Backend::MariaDb => {
            DbCpu::Server(mariadb::shared().pid().expect(
                "the database CPU time needs the private server, not CRAWLER_TEST_MYSQL_URL",
            ))
        }
        Backend::Sqlite => DbCpu::InProcess,
        Backend::Postgres => DbCpu::Tree(
            postgres::shared()
                .pid()
                .expect("the database CPU time needs the private server, running"),
        ),
    }
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .map(|v| {
            v.replace('_', "")
                .parse()
                .unwrap_or_else(|_| panic!("{name}: not a number: {v}"))
        })
        .unwrap_or(default)
}

/// CPU seconds of the database, of this process, and of the whole machine (busy), and when.
#[derive(Clone, Copy)]
struct Clocks {
    db: f64,
    own: f64,
    machine: f64,
    at: Instant,
}

impl Clocks {
    fn read(db: DbCpu) -> Clocks {
        Clocks {
            db: db.seconds(),
            own: own_cpu(),
            machine: machine_cpu().0,
            at: Instant::now(),
        }
    }

    /// (database, this process, the rest of the machine) CPU seconds, and wall seconds, since.
    fn since(self, db: DbCpu) -> (f64, f64, f64, f64) {
        let now = Clocks::read(db);
        let (d, o) = (now.db - self.db, now.own - self.own);
        let own_outside_db = match db {
            DbCpu::InProcess => 0.0,
            DbCpu::Server(_) | DbCpu::Tree(_) => o,
        };
        let rest = (now.machine - self.machine - d - own_outside_db).max(0.0);
        (d, o, rest, self.at.elapsed().as_secs_f64())
    }
}

/// One worker of the fleet: claims in its share of the partitions until nothing is due there,
/// writing results back `write` at a time. Returns the sites it completed.
async fn work(queue: Queue, worker: usize, workers: usize, write: usize) -> u64 {
    let (owner, token) = (format!("scale{worker}"), worker as i64 + 1);
    let share = u32::from(PARTS).div_ceil(workers as u32);
    queue
        .parts()
        .take(&owner, token, share, LEASE)
        .await
        .unwrap();
    // The worker's keeper reads what it holds each round; its claims name those partitions.
    let held = queue.parts().keep(token, LEASE).await.unwrap();
    let parts: Vec<i16> = held.iter().map(|p| p.id).collect();
    let mut done = 0;
    loop {
        let batch = queue
            .claim_in_parts(token, &parts, &owner, BATCH, LEASE)
            .await
            .unwrap();
        if batch.sites.is_empty() {
            return done;
        }
        let ids: Vec<i64> = batch.sites.iter().map(|s| s.id).collect();
        queue.extend(batch.token, &ids, LEASE).await.unwrap();
        let outcomes = outcomes_of(batch.sites, &alive());
        for chunk in outcomes.chunks(write) {
            done += queue.complete(chunk).await.unwrap().done;
        }
    }
}

/// The life cycle's database CPU per site, for each count of workers and write-back size.
async fn cpu(backend: Backend) {
    let sites: u64 = env_or("SCALE_CPU_SITES", 50_000);
    let first_round = match std::env::var("SCALE_ROUND").as_deref() {
        Ok("first") => true,
        Ok("recheck") | Err(_) => false,
        Ok(other) => panic!("SCALE_ROUND is first or recheck, not {other:?}"),
    };
    println!(
        "life cycle of a {} round",
        if first_round {
            "first (every verdict new)"
        } else {
            "recheck (15 % of verdicts change)"
        }
    );
    let clock = db_cpu(backend);
    for write in crawler_tests::bench::counts("SCALE_WRITES", "500,50") {
        for workers in crawler_tests::bench::counts("SCALE_WORKERS", "4,16") {
            let db = backend.fresh().await;
            let queue = db.queue().await;
            fill(&queue, sites, 1000, |_| {}).await;
            if first_round {
                forget_verdicts(&queue).await;
            }
            if costs_wanted() {
                reset_statement_costs(&queue).await;
            }
            let before = Clocks::read(clock);
            let tasks: Vec<_> = (0..workers)
                .map(|w| tokio::spawn(work(queue.clone(), w, workers, write)))
                .collect();
            let mut done = 0;
            for task in tasks {
                done += task.await.unwrap();
            }
            let (db_s, own_s, rest, wall) = before.since(clock);
            assert_eq!(done, sites, "every site written back once");
            let per_core = done as f64 / db_s;
            println!(
                "life cycle, {workers:>2} workers, write-backs of {write:>3}: {:>6.0} sites/s; \
                 database CPU {:>5.0} us/site = {per_core:>6.0} sites/s per database core \
                 = {:>4.0} workers of {WORKER_RATE} sites/s; this process {:.0} us/site; \
                 rest of the machine busy {:.2} cores",
                done as f64 / wall,
                db_s * 1e6 / done as f64,
                per_core / WORKER_RATE,
                own_s * 1e6 / done as f64,
                rest / wall,
            );
            if costs_wanted() {
                print_statement_costs(&queue, done).await;
            }
        }
    }
}

/// Whether `SCALE_STATEMENTS` asks for the costliest statements of each run.
fn costs_wanted() -> bool {
    std::env::var_os("SCALE_STATEMENTS").is_some_and(|v| v != "0")
}

/// The costliest statements of the run that completed `sites`, per site.
async fn print_statement_costs(queue: &Queue, sites: u64) {
    println!(
        "  {:>9} {:>9} {:>9} {:>9}  statement",
        "calls", "us/site", "examined", "rows"
    );
    for (text, figures) in statement_costs(queue).await {
        let n: Vec<f64> = figures.split(' ').filter_map(|f| f.parse().ok()).collect();
        let [calls, micros, examined, rows] = n[..] else {
            println!("  {figures}  {text}");
            continue;
        };
        let per_site = |x: f64| x / sites as f64;
        println!(
            "  {calls:>9} {:>9.1} {:>9.2} {:>9.2}  {}",
            per_site(micros),
            per_site(examined),
            per_site(rows),
            text.split_whitespace().collect::<Vec<_>>().join(" ")
        );
    }
}

/// p50 and p99 of `times`, sorted in place.
fn percentiles(times: &mut [Duration]) -> (Duration, Duration) {
    times.sort();
    (times[times.len() / 2], times[times.len() * 99 / 100])
}

/// Claims of 100 and their write-backs by `claimers` at once, `rounds` each; returns the claim
/// and write-back times.
async fn claims(queue: &Queue, claimers: usize, rounds: usize) -> (Vec<Duration>, Vec<Duration>) {
    let share = u32::from(PARTS).div_ceil(claimers as u32);
    let tasks = (0..claimers).map(|c| async move {
        let (owner, token) = (format!("latency{c}"), c as i64 + 1);
        queue
            .parts()
            .take(&owner, token, share, LEASE)
            .await
            .unwrap();
        let (mut claim, mut write) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            let t = Instant::now();
            let batch = queue.claim_held(token, &owner, 100, LEASE).await.unwrap();
            claim.push(t.elapsed());
            assert!(!batch.sites.is_empty(), "the table ran out of due sites");
            let t = Instant::now();
            queue
                .complete(&outcomes_of(batch.sites, &alive()))
                .await
                .unwrap();
            write.push(t.elapsed());
        }
        queue.parts().release(token).await.unwrap();
        (claim, write)
    });
    let (mut claim, mut write) = (Vec::new(), Vec::new());
    for (c, w) in futures::future::join_all(tasks).await {
        claim.extend(c);
        write.extend(w);
    }
    (claim, write)
}

/// Fills `SCALE_ROWS` rows, prints the sizes, then the claim latency on that table.
async fn size(backend: Backend) {
    let rows: u64 = env_or("SCALE_ROWS", 1_000_000);
    let due: i64 = env_or("SCALE_DUE", 10);
    let claimers: usize = env_or("SCALE_CLAIMERS", 4);
    let db = backend.fresh().await;
    let queue = db.queue().await;
    let started = Instant::now();
    let filled = fill(&queue, rows, due, |n| {
        if n % 10_000_000 == 0 || n == rows {
            let s = started.elapsed().as_secs_f64();
            eprintln!("  filled {n} rows in {s:.0} s ({:.0} rows/s)", n as f64 / s);
        }
    })
    .await;
    println!(
        "fill of {rows} rows: insert {:.0} s ({:.0} rows/s), then the secondary indexes {:.0} s",
        filled.insert,
        rows as f64 / filled.insert,
        filled.index
    );
    let millions = rows as f64 / 1e6;
    let mut total = 0;
    for (what, bytes) in sizes(&queue).await {
        total += bytes;
        println!(
            "  {what:<24} {:>9.1} MiB = {:>7.1} MiB per million sites",
            bytes as f64 / 1048576.0,
            bytes as f64 / 1048576.0 / millions
        );
    }
    println!(
        "  {:<24} {:>9.1} MiB = {:>7.1} MiB per million sites ({:.0} bytes per site)",
        "all",
        total as f64 / 1048576.0,
        total as f64 / 1048576.0 / millions,
        total as f64 / rows as f64
    );
    // Half of the due sites at most, so that the last claims still find due sites.
    let wanted: usize = env_or("SCALE_CLAIMS", 300);
    let available = (rows as usize * due as usize / 1000 / 100 / 2).max(claimers);
    let rounds = (wanted.min(available) / claimers).max(1);
    let clock = db_cpu(backend);
    let before = Clocks::read(clock);
    let (mut claim, mut write) = claims(&queue, claimers, rounds).await;
    let (db_s, _, rest, _) = before.since(clock);
    let ((c50, c99), (w50, w99)) = (percentiles(&mut claim), percentiles(&mut write));
    let sites = (claim.len() * 100) as f64;
    println!(
        "{rows} rows, {} due: {} claims of 100 by {claimers} claimers: claim p50 {c50:.2?} \
         p99 {c99:.2?}; write-back p50 {w50:.2?} p99 {w99:.2?}; database CPU {:.0} us/site; \
         rest of the machine busy {:.1} core-seconds",
        rows * due as u64 / 1000,
        claim.len(),
        db_s * 1e6 / sites,
        rest
    );
}

/// `--changed-since` at scale: see the module's doc.
async fn changes(backend: Backend) {
    let rows: u64 = env_or("SCALE_ROWS", 1_000_000);
    let db = backend.fresh().await;
    let queue = db.queue().await;
    let started = Instant::now();
    fill(&queue, rows, 0, |n| {
        if n % 10_000_000 == 0 || n == rows {
            eprintln!(
                "  filled {n} rows in {:.0} s",
                started.elapsed().as_secs_f64()
            );
        }
    })
    .await;
    fill_history(&queue).await;
    let now = queue.now().await.unwrap();
    let day = now - 86_400_000;
    let scope = |verdicts: &[crawler_queue::Verdict]| {
        let queue = &queue;
        let verdicts = verdicts.to_vec();
        async move {
            let since = crawler_queue::Scope {
                changed_since: Some(day),
                ..Default::default()
            };
            queue
                .reports()
                .checked_count(&verdicts, since)
                .await
                .unwrap()
        }
    };
    let changed = scope(&crawler_queue::Verdict::ALL).await;
    let dead = scope(&[crawler_queue::Verdict::Dead]).await;
    let recorded = table_bytes(&queue, "verdict_changes").await;
    let history =
        crawler_tests::raw::scalar(queue.db(), "SELECT COUNT(*) FROM verdict_changes").await;
    let millions = rows as f64 / 1e6;
    println!(
        "{rows} sites, {changed} changed in the last day ({dead} newly dead), {history} changes \
         recorded in all"
    );
    for (what, bytes) in sizes(&queue).await {
        if what.ends_with("sites_verdict") {
            println!(
                "  {what}: {:.1} MiB = {:.1} MiB per million sites",
                bytes as f64 / 1048576.0,
                bytes as f64 / 1048576.0 / millions
            );
        }
    }
    println!(
        "  verdict_changes with its indexes: {:.1} MiB = {:.1} MiB per million changes",
        recorded as f64 / 1048576.0,
        recorded as f64 / 1048576.0 / (history as f64 / 1e6)
    );
    let out = tempfile::NamedTempFile::new().unwrap();
    let output = out.path().to_str().unwrap();
    for args in [
        &[
            "--dead",
            "--changed-since",
            "1d",
            "--format",
            "csv",
            "-o",
            output,
        ][..],
        &[
            "--dead",
            "--changed-since",
            "1d",
            "--fail-on",
            "dead",
            "-o",
            output,
        ],
        &[
            "--all",
            "--changed-since",
            "1d",
            "--format",
            "csv",
            "-o",
            output,
        ],
        &[
            "--all",
            "--changed-since",
            "1d",
            "--format",
            "json",
            "-o",
            output,
        ],
        &["--summary", "--changed-since", "1d"],
    ] {
        let mut best = Duration::MAX;
        for _ in 0..3 {
            let t = Instant::now();
            let run = command("crawler-report", db.url.expose())
                .args(args)
                .output()
                .unwrap();
            best = best.min(t.elapsed());
            assert!(matches!(run.status.code(), Some(0 | 4)), "{run:?}");
        }
        println!(
            "  crawler-report {}: {best:.2?} (best of 3)",
            args.join(" ")
        );
    }
    let notifier = queue.notifier();
    let mut cursor = crawler_queue::Cursor { since: day, id: 0 };
    let mut times = Vec::new();
    for _ in 0..10 {
        let t = Instant::now();
        let page = notifier
            .changes_after(cursor, now, &crawler_queue::Verdict::ALL, 1000)
            .await
            .unwrap();
        times.push(t.elapsed());
        let Some(last) = page.last() else { break };
        cursor = last.cursor();
    }
    let (p50, _) = percentiles(&mut times);
    println!(
        "  the notifier's read of a digest of 1,000 changes: median {p50:.2?} of {}",
        times.len()
    );
}

#[tokio::main]
async fn main() {
    let (mariadb_costs, postgres_costs) = match costs_wanted() {
        true => statement_costs_on(),
        false => ("", ""),
    };
    if std::env::var_os(mariadb::EXTRA_FLAGS_VAR).is_none() {
        std::env::set_var(
            mariadb::EXTRA_FLAGS_VAR,
            format!("{SERVER_FLAGS} {mariadb_costs}"),
        );
    }
    if std::env::var_os(postgres::EXTRA_SETTINGS_VAR).is_none() {
        std::env::set_var(
            postgres::EXTRA_SETTINGS_VAR,
            format!("{POSTGRES_SETTINGS} {postgres_costs}"),
        );
    }
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let wants = |name: &str, all: &[&str]| {
        !args.iter().any(|a| all.contains(&a.as_str())) || args.iter().any(|a| a == name)
    };
    println!(
        "scale benchmark: {} cores, {}; HTTP check stubbed out",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        crawler_tests::bench::source_state()
    );
    for backend in [Backend::MariaDb, Backend::Postgres, Backend::Sqlite] {
        if !wants(
            &format!("{backend:?}").to_lowercase(),
            &["mariadb", "postgres", "sqlite"],
        ) {
            continue;
        }
        println!("\n== {backend:?} ==");
        if wants("cpu", &["cpu", "size", "changes"]) {
            cpu(backend).await;
        }
        if wants("size", &["cpu", "size", "changes"]) {
            size(backend).await;
        }
        if args.iter().any(|a| a == "changes") {
            changes(backend).await;
        }
    }
}
