//! Throughput and memory of the checker against a bare reqwest HEAD loop.
//!
//! 100,000 URLs over 1,000 local hosts (127.0.x.y, one listener each on one port). Every
//! measured case runs in a fresh child process (this binary re-executed with
//! `CHECK_BENCH_ROLE=case`), and the HTTP server in another, so each peak-memory figure
//! (VmHWM) is the client's alone. Prints figures; asserts nothing about speed.
//!
//! Run: `cargo bench -p crawler-worker --bench check`

#[path = "check/case.rs"]
mod case;
#[path = "check/server.rs"]
mod server;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use crawler_tests::bench::HOSTS;

use self::case::CONCURRENCY;

const ROLE: &str = "CHECK_BENCH_ROLE";

fn main() {
    match std::env::var(ROLE).as_deref() {
        Ok("server") => server::run(),
        Ok("case") => case::run(),
        _ => orchestrate(),
    }
}

fn orchestrate() {
    let mut server = spawn_child("server", &[]);
    let stdout = server.stdout.take().expect("server stdout is piped");
    let mut ready = String::new();
    BufReader::new(stdout)
        .read_line(&mut ready)
        .expect("server says READY");
    let port = ready
        .trim()
        .strip_prefix("READY ")
        .expect("READY <port>")
        .to_owned();
    println!("checker bench: {HOSTS} hosts on 127.0.x.y:{port}, global concurrency {CONCURRENCY}");
    println!("the checker runs with host_rate 100000/s and host_concurrency {CONCURRENCY}, raised");
    println!("so that politeness is not the bottleneck (its code still runs on every request)\n");
    println!(
        "{:<8} {:>7} {:>8} {:>7} {:>7} {:>10} {:>12}",
        "case", "urls", "seconds", "urls/s", "alive", "peak RSS", "CPU us/url"
    );
    run_case("bare", 10_000, &port);
    run_case("checker", 10_000, &port);
    // Alternate, so that both see the same noise from whatever else runs on the machine.
    let (mut bare, mut checker) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        bare.push(run_case("bare", 100_000, &port));
        checker.push(run_case("checker", 100_000, &port));
    }
    let long = run_case("checker", 300_000, &port);
    let _ = server.kill();
    let _ = server.wait();
    summarise(&bare, &checker, &long);
}

const ROUNDS: usize = 3;

/// What one case measured.
struct Run {
    rate: f64,
    peak_mb: f64,
    cpu_us_per_url: f64,
}

fn summarise(bare: &[Run], checker: &[Run], long: &Run) {
    let median = |runs: &[Run], f: fn(&Run) -> f64| {
        let mut values: Vec<f64> = runs.iter().map(f).collect();
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    };
    let best = |runs: &[Run]| runs.iter().map(|r| r.rate).fold(0.0, f64::max);
    let (b, c) = (median(bare, |r| r.rate), median(checker, |r| r.rate));
    println!(
        "\nat 100,000 URLs, median of {ROUNDS}: checker {c:.0} urls/s, bare loop {b:.0} urls/s"
    );
    println!(
        "checker / bare: {:.1}% (median), {:.1}% (best of each)",
        100.0 * c / b,
        100.0 * best(checker) / best(bare)
    );
    let (bc, cc) = (
        median(bare, |r| r.cpu_us_per_url),
        median(checker, |r| r.cpu_us_per_url),
    );
    println!("client CPU per URL, median: checker {cc:.1} us, bare loop {bc:.1} us");
    println!(
        "checker peak RSS at 300,000 URLs: {:.1} MB (10,000 and 100,000 above)",
        long.peak_mb
    );
}

/// Runs one case in a child process and prints what it measured.
fn run_case(kind: &str, n: usize, port: &str) -> Run {
    let envs = [
        ("CHECK_BENCH_CASE", kind),
        ("CHECK_BENCH_N", &n.to_string()),
        ("CHECK_BENCH_PORT", port),
    ];
    let output = spawn_child("case", &envs)
        .wait_with_output()
        .expect("case runs");
    let text = String::from_utf8_lossy(&output.stdout);
    let line = text.lines().find_map(|l| l.strip_prefix("RESULT "));
    let line = line.unwrap_or_else(|| panic!("case {kind} {n} failed: {text}"));
    let values: Vec<f64> = line.split(' ').map(|v| v.parse().unwrap()).collect();
    let [secs, alive, peak_kb, cpu] = values[..] else {
        panic!("bad RESULT line: {line}")
    };
    let run = Run {
        rate: n as f64 / secs,
        peak_mb: peak_kb / 1024.0,
        cpu_us_per_url: cpu * 1e6 / n as f64,
    };
    println!(
        "{kind:<8} {n:>7} {secs:>8.2} {:>7.0} {alive:>7} {:>7.1} MB {:>12.1}",
        run.rate, run.peak_mb, run.cpu_us_per_url
    );
    run
}

fn spawn_child(role: &str, envs: &[(&str, &str)]) -> Child {
    let exe = std::env::current_exe().expect("own path");
    Command::new(exe)
        .env(ROLE, role)
        .envs(envs.iter().copied())
        .stdout(Stdio::piped())
        .spawn()
        .expect("re-exec the bench")
}
