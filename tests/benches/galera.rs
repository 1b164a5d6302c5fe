//! A fleet on one private MariaDB server against the same fleet on a three-node Galera cluster
//! (`tests/support/galera.rs`), its claimers spread over the nodes: claim+complete throughput
//! through the queue API with the HTTP check stubbed out (the loops of `benches/queue.rs`),
//! and what the cluster's conflicts cost: certification failures and brute-force aborts (the
//! nodes' `SHOW GLOBAL STATUS`) and the queue's own retries of them, per 1,000 sites. Prints
//! figures; asserts nothing about speed.
//!
//! `cargo bench -p crawler-tests --bench galera`. `GALERA_BENCH_SITES` sets the sites per run
//! (default 20,000), `GALERA_BENCH_CLAIMERS` the claimer counts (default `3,6`). Every server
//! gets [`SERVER_FLAGS`], the single one and the nodes alike.

use std::time::Duration;

use crawler_queue::{DatabaseUrl, Db, Queue, QueueConfig};
use crawler_tests::bench::{counts, drain, machine_cpu, seed, source_state, BATCH};
use crawler_tests::galera::{Conflicts, Galera, NODES};
use crawler_tests::mariadb::MariaDb;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};

/// Sized for a write-heavy run, as `benches/queue.rs` does, but for four servers at once.
const SERVER_FLAGS: &str = "--innodb-log-file-size=256M --innodb-buffer-pool-size=1G";

async fn queue(url: String) -> Queue {
    let db = Db::connect(&DatabaseUrl::new(url), 32)
        .await
        .expect("connect to the benchmark's database");
    Queue::new(db, QueueConfig::default())
}

/// What one drain measured.
struct Run {
    rate: f64,
    cpu: f64,
    claim: Duration,
    complete: Duration,
    /// Conflicts the nodes counted, and the queue's retries of transient errors, meanwhile.
    conflicts: Conflicts,
    retries: u64,
}

/// Seeds `sites` through `queues[0]`, lets `settle` run (the cluster's nodes catch up), then
/// drains with `claimers` spread over `queues`.
async fn run(queues: &[Queue], sites: usize, claimers: usize, cluster: Option<&Galera>) -> Run {
    seed(&queues[0], sites, 2).await;
    let conflicts = match cluster {
        Some(cluster) => {
            cluster.settle().await;
            cluster.conflicts().await
        }
        None => Conflicts::default(),
    };
    let retries = retries();
    let (rate, cpu, claim, complete) = drain(queues, claimers).await;
    let after = match cluster {
        Some(cluster) => cluster.conflicts().await,
        None => Conflicts::default(),
    };
    Run {
        rate,
        cpu,
        claim,
        complete,
        conflicts: Conflicts {
            cert_failures: after.cert_failures - conflicts.cert_failures,
            bf_aborts: after.bf_aborts - conflicts.bf_aborts,
        },
        retries: retries_since(retries),
    }
}

fn print(what: &str, claimers: usize, sites: usize, run: &Run) {
    let per_1000 = |n: u64| n as f64 * 1000.0 / sites as f64;
    println!(
        "{what:<28} {claimers:>2} claimers, batches of {BATCH}: {:>7.0} sites/s  (machine CPU \
         {:.0} us/site; per batch: claim {:.1?}, complete {:.1?}); per 1,000 sites: \
         {:.2} certification failures, {:.2} brute-force aborts, {:.2} queue retries",
        run.rate,
        run.cpu,
        run.claim,
        run.complete,
        per_1000(run.conflicts.cert_failures),
        per_1000(run.conflicts.bf_aborts),
        per_1000(run.retries),
    );
}

/// The queue's retries of transient database errors so far (its metric, counted by the
/// recorder `main` installs), over every operation.
fn retries() -> u64 {
    recorder()
        .render()
        .lines()
        .filter(|line| {
            line.starts_with(crawler_queue::metrics::DATABASE_ERRORS)
                && line.contains(r#"outcome="retried""#)
        })
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as u64
}

fn retries_since(before: u64) -> u64 {
    retries() - before
}

fn recorder() -> &'static PrometheusHandle {
    static HANDLE: std::sync::OnceLock<PrometheusHandle> = std::sync::OnceLock::new();
    HANDLE.get_or_init(|| {
        PrometheusBuilder::new()
            .install_recorder()
            .expect("install the metrics recorder")
    })
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[tokio::main]
async fn main() {
    if std::env::var_os("CRAWLER_TEST_MARIADB_FLAGS").is_none() {
        std::env::set_var("CRAWLER_TEST_MARIADB_FLAGS", SERVER_FLAGS);
    }
    let sites: usize = env_or("GALERA_BENCH_SITES", 20_000);
    let claimers = counts("GALERA_BENCH_CLAIMERS", "3,6");
    recorder();
    println!(
        "galera benchmark: {} cores, {sites} sites a run, HTTP check stubbed out; {}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        source_state()
    );
    let busy = machine_cpu().0;

    let single = MariaDb::start();
    for &n in &claimers {
        let queues = [queue(single.create_database().await).await];
        print("one server:", n, sites, &run(&queues, sites, n, None).await);
    }
    drop(single);

    let cluster = Galera::start();
    for &n in &claimers {
        let name = cluster.create_database().await;
        // The first connection migrates; the others find the schema once their node has it.
        let mut queues = vec![queue(cluster.url(0, &name)).await];
        cluster.settle().await;
        for i in 1..NODES {
            queues.push(queue(cluster.url(i, &name)).await);
        }
        let label = format!("Galera, {NODES} nodes:");
        print(
            &label,
            n,
            sites,
            &run(&queues, sites, n, Some(&cluster)).await,
        );
    }
    println!(
        "(machine CPU over the whole benchmark: {:.0} s)",
        machine_cpu().0 - busy
    );
}
