//! The whole system, as a user runs it: `crawler-seed` then `crawler-worker --drain` over
//! 100,000 URLs on 1,000 local hosts (10% dead, 5% redirecting, 1% slow), on MariaDB and on
//! SQLite, beside a bare reqwest HEAD loop over the same list in the same run (this machine's
//! ceiling). Prints figures; asserts nothing about speed.
//!
//! Run: `cargo bench -p crawler-tests --bench system`
//!
//! - `SYSTEM_BENCH_BIG` sets the 1,000,000-URL runs (worker memory against the list's length):
//!   `mariadb` (the default, ~6 min), `1` (MariaDB and SQLite, ~20 min on 2 cores) or `0`.
//! - `SYSTEM_BENCH_SCALE=1` adds the scale runs (off by default, several minutes): MariaDB with
//!   1M and then 10M rows, the claim latency and the time of `crawler-report --dead`.
//! - `SYSTEM_BENCH_CONCURRENCY` sets the checks in flight of the worker and the bare loop (128).
//! - `SYSTEM_BENCH_PERF=DIR` records the worker and `mariadbd` during the 100k MariaDB run
//!   with `perf record` into `DIR/{worker,mariadbd}.perf.data` (that run's figures then
//!   include perf's overhead).
//!
//! Every measured program is a process of its own, so each peak-memory figure (`ru_maxrss` from
//! `wait4`) is that program's alone: the crawler's release binaries, the bare loop and the HTTP
//! server (this binary re-executed with `SYSTEM_BENCH_ROLE=bare` / `server`), and a private
//! `mariadbd` (`crawler_tests::mariadb`). Everything listens on 127.0.0.0/8 only.
//!
//! # Layout
//! - this file: the bench's flow, start to end (`orchestrate`), and the children's roles
//! - `bench`: what the parts share: `Bench`, the checks in flight, the main list's length
//! - `figures`: one crawl's figures
//! - `fixtures`: what is crawled: the URL list (page kinds by a hash of the index) and the
//!   HTTP server child, one listener per loopback host
//! - `bare`: the bare reqwest HEAD loop child
//! - `proc`: running a child to its end, its wall time, peak memory and CPU; CPU of others
//! - `crawl`: one seed + worker run on a backend, checked against the list
//! - `scale`: 1M and 10M rows on MariaDB: claim latency and `crawler-report --dead`
//! - `report`: printing the figures: header, table rows, CPU, memory over time, summary

use std::path::{Path, PathBuf};
use std::process::Command;

use crawler_tests::bench::{raise_fd_limit, HOSTS};
use crawler_tests::mariadb::MariaDb;

use bench::{Bench, ROLE, SMALL};

mod bare;
mod bench;
mod crawl;
mod figures;
mod fixtures;
mod proc;
mod report;
mod scale;

/// The long list, for memory flatness.
const BIG: usize = 1_000_000;
/// A redo log and buffer pool for a write-heavy run, as in `tests/benches/queue.rs`.
const SERVER_FLAGS: &str = "--innodb-log-file-size=512M --innodb-buffer-pool-size=2G";
/// Extra `mariadbd` flags for the private server (`tests/support/mariadb/command.rs`).
const MARIADB_FLAGS_VAR: &str = "CRAWLER_TEST_MARIADB_FLAGS";

fn main() {
    match std::env::var(ROLE).as_deref() {
        Ok("server") => fixtures::serve(),
        Ok("bare") => bare::run(),
        _ => orchestrate(),
    }
}

fn orchestrate() {
    let big = big_runs();
    let scale = flag("SYSTEM_BENCH_SCALE", false);
    report::header(&big, scale);
    raise_fd_limit(); // inherited by every child: pooled connections to 1,000 hosts
    let bins = build_binaries();
    let mut server = proc::Guard::spawn_self("server");
    let bench = Bench {
        bins,
        tmp: tempfile::tempdir().expect("a temp dir"),
        port: server.ready_port(),
        server_pid: server.pid(),
        runtime: tokio::runtime::Runtime::new().expect("a tokio runtime"),
        perf: std::env::var_os("SYSTEM_BENCH_PERF").map(PathBuf::from),
    };
    if std::env::var_os(MARIADB_FLAGS_VAR).is_none() {
        std::env::set_var(MARIADB_FLAGS_VAR, SERVER_FLAGS);
    }
    let mariadb = MariaDb::start();
    println!(
        "HTTP server: {HOSTS} hosts on 127.0.x.y:{}; MariaDB: private mariadbd ({SERVER_FLAGS})\n",
        bench.port
    );

    let small_list = bench.path("urls-100k.txt");
    let expected = fixtures::write_list(&small_list, 0..SMALL, bench.port);
    println!("== {SMALL} URLs ==");
    report::print_heading();
    let bare_before = bare::measure(&bench, &small_list, SMALL);
    let maria = crawl::run(&bench, Some(&mariadb), &small_list, &expected);
    let sqlite = crawl::run(&bench, None, &small_list, &expected);
    let bare_after = bare::measure(&bench, &small_list, SMALL);
    let ceiling = bare_before.max(bare_after);
    println!();
    for run in [&maria, &sqlite] {
        run.print_cpu();
    }
    let mut flatness = Vec::new();
    if !big.is_empty() {
        let big_list = bench.path("urls-1m.txt");
        let expected = fixtures::write_list(&big_list, 0..BIG, bench.port);
        println!("\n== {BIG} URLs ==");
        report::print_heading();
        let maria_big = crawl::run(&bench, Some(&mariadb), &big_list, &expected);
        let sqlite_big = (big.len() > 1).then(|| crawl::run(&bench, None, &big_list, &expected));
        let _ = std::fs::remove_file(&big_list);
        println!();
        maria_big.print_cpu();
        flatness.push((&maria, maria_big));
        if let Some(sqlite_big) = sqlite_big {
            sqlite_big.print_cpu();
            flatness.push((&sqlite, sqlite_big));
        }
    }
    report::summarise(ceiling, &maria, &sqlite, &flatness);
    if scale {
        scale::run(&bench, &mariadb);
    }
    drop(server);
}

/// Builds the crawler's release binaries into this bench's target directory (as
/// `tests/support/bins.rs` does for the tests); returns `target/release`.
fn build_binaries() -> PathBuf {
    let exe = std::env::current_exe().expect("the bench's path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/release/deps")
        .to_path_buf();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--release", "--quiet", "-p", "crawler-worker"])
        .args(["-p", "crawler-coordinator", "--bins"])
        .env(
            "CARGO_TARGET_DIR",
            profile_dir.parent().expect("target dir"),
        )
        .status()
        .expect("run cargo build");
    assert!(
        status.success(),
        "cargo build of the release binaries failed"
    );
    profile_dir
}

/// The backends of the 1M runs, from `SYSTEM_BENCH_BIG`.
fn big_runs() -> Vec<&'static str> {
    match std::env::var("SYSTEM_BENCH_BIG").as_deref() {
        Ok("mariadb") | Err(_) => vec!["mariadb"],
        Ok(_) if flag("SYSTEM_BENCH_BIG", false) => vec!["mariadb", "sqlite"],
        Ok(_) => Vec::new(),
    }
}

/// A boolean env var: `1`/`true`/`yes` or `0`/`false`/`no`; `default` when unset.
fn flag(name: &str, default: bool) -> bool {
    match std::env::var(name).as_deref().map(str::to_ascii_lowercase) {
        Ok(v) if ["1", "true", "yes", "on"].contains(&v.as_str()) => true,
        Ok(v) if ["0", "false", "no", "off", ""].contains(&v.as_str()) => false,
        Ok(v) => panic!("{name}={v}: expected 1 or 0"),
        Err(_) => default,
    }
}
