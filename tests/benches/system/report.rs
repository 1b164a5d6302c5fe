//! The figures the bench prints: the header (machine, source, command), the table of runs,
//! where the CPU went, the worker's memory over time, and the summary against the targets.

use std::process::Command;
use std::time::Duration;

use crawler_tests::bench::source_state;

use super::bench::{field, CONCURRENCY};
use super::figures::Crawl;
use super::proc::Measured;

/// The machine, the source, the command and the flags, before any figure.
pub fn header(big: &[&str], scale: bool) {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_kb: f64 = field(&meminfo, "MemTotal:").unwrap_or(0.0);
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map_or("?", |m| m.trim_start_matches([' ', '\t', ':']));
    let date = Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    println!("system benchmark: seed + worker --drain vs a bare reqwest HEAD loop");
    println!(
        "machine: {cores} cores ({model}), {:.1} GiB memory; {date}",
        mem_kb / 1024.0 / 1024.0
    );
    println!("source: {}", source_state());
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load: Vec<&str> = load.split_whitespace().take(3).collect();
    println!("load average at start: {}", load.join(" "));
    println!(
        "command: SYSTEM_BENCH_BIG={} SYSTEM_BENCH_SCALE={} cargo bench -p crawler-tests --bench system",
        match big.len() {
            0 => "0",
            1 => "mariadb",
            _ => "1",
        },
        u8::from(scale)
    );
    println!(
        "worker: --drain --concurrency {} --host-concurrency 64 --host-rate 100000 \
         --timeout 5s --retries 0 --attempts 1; bare loop: HEAD, buffer_unordered({})",
        *CONCURRENCY, *CONCURRENCY
    );
}

/// The table's heading: one row per run follows (the crawls and the bare loop).
pub fn print_heading() {
    println!(
        "{:<14} {:>9} {:>8} {:>8} {:>9} {:>9} {:>8} {:>8} {:>10}",
        "run", "URLs", "seed s", "seed MB", "worker s", "worker MB", "CPU s", "e2e/s", "worker/s"
    );
}

impl Crawl {
    /// Its row of the table under [`print_heading`].
    pub fn print_row(&self) {
        println!(
            "{:<14} {:>9} {:>8.2} {:>8.1} {:>9.2} {:>9.1} {:>8.1} {:>8.0} {:>10.0}",
            format!("{} crawl", self.backend),
            self.n,
            self.seed.wall.as_secs_f64(),
            self.seed.peak_mb(),
            self.worker.wall.as_secs_f64(),
            self.worker.peak_mb(),
            self.worker.cpu,
            self.end_to_end_rate(),
            self.worker_rate(),
        );
    }

    /// Where the CPU went while the worker ran.
    pub fn print_cpu(&self) {
        let (server, db, busy, total) = self.cpu;
        let wall = self.worker.wall.as_secs_f64();
        let db = if self.backend == "MariaDB" {
            format!(", mariadbd {db:.1} s")
        } else {
            String::new()
        };
        let others = busy - self.worker.cpu - self.cpu.1 - server;
        println!(
            "{} {}: worker phase {wall:.1} s: CPU worker {:.1} s ({:.0} us/URL){db}, HTTP server {server:.1} s, \
             other processes {others:.1} s; machine busy {:.0}% of {:.0} cores",
            self.backend,
            self.n,
            self.worker.cpu,
            self.worker.cpu * 1e6 / self.n as f64,
            100.0 * busy / total,
            total / wall,
        );
    }
}

/// The bare loop's row: `n` URLs in `secs`, `failed` of them without an answer.
pub fn print_bare_row(n: usize, secs: f64, run: &Measured, failed: f64) {
    println!(
        "{:<14} {:>9} {:>8} {:>8} {:>9.2} {:>9.1} {:>8.1} {:>8} {:>10.0}{}",
        "bare loop",
        n,
        "-",
        "-",
        secs,
        run.peak_mb(),
        run.cpu,
        "-",
        n as f64 / secs,
        if failed > 0.0 {
            format!("  ({failed} failed)")
        } else {
            String::new()
        }
    );
}

/// The worker's samples: (time, resident memory in KiB, open files, claimed rows).
pub fn print_timeline(timeline: &[(Duration, u64, usize, i64)]) {
    let points: Vec<String> = timeline
        .iter()
        .map(|(t, kb, files, claimed)| {
            format!(
                "{:.0}s {:.0}MB/{files}/{claimed}",
                t.as_secs_f64(),
                *kb as f64 / 1024.0
            )
        })
        .collect();
    println!(
        "  worker RSS / open files / claimed rows over time: {}",
        points.join(", ")
    );
}

/// The rates against the bare loop, and the worker's memory at 100k against 1M.
pub fn summarise(ceiling: f64, maria: &Crawl, sqlite: &Crawl, flatness: &[(&Crawl, Crawl)]) {
    println!("\n== against the targets ==");
    println!("bare loop (ceiling, the better of its two runs): {ceiling:.0} URLs/s");
    for run in [maria, sqlite] {
        println!(
            "{:<8} end to end {:>6.0} URLs/s = {:>5.1}% of the bare loop; worker alone {:>6.0} URLs/s = {:>5.1}%{}",
            run.backend,
            run.end_to_end_rate(),
            100.0 * run.end_to_end_rate() / ceiling,
            run.worker_rate(),
            100.0 * run.worker_rate() / ceiling,
            if run.backend == "MariaDB" { "  (target: end to end >= 70%)" } else { "" },
        );
    }
    for (small, big) in flatness {
        let (a, b) = (small.worker.peak_mb(), big.worker.peak_mb());
        println!(
            "{:<8} worker peak RSS: {a:.1} MB at 100k, {b:.1} MB at 1M: 1M/100k = {:.3} (target: within 10%)",
            small.backend,
            b / a
        );
    }
}
