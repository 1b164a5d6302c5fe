//! Politeness as the hosts see it: `crawler-worker --drain` against the meter
//! (`crawler_tests::meter`), a local server of many loopback hosts that measures, per host, the
//! most requests in flight at once and the most started within any one second. Prints those
//! maxima over all hosts and the time against the politeness floor (the URLs of the busiest
//! host at the host rate: no polite crawl can be faster). Asserts nothing about speed.
//!
//! Run: `cargo bench -p crawler-tests --bench politeness`
//!
//! - `POLITENESS_BENCH=a,c` picks scenarios (all by default):
//!   - `a`: 4 workers, 20,000 URLs on 100 hosts, `--host-concurrency 4 --host-rate 10`
//!     (floor 20 s), the meter answering after 200 ms, so each worker alone wants about half
//!     a host's slots (10/s × 0.2 s = 2 of 4);
//!   - `a0`: `a` with hosts that answer at once (zero latency), as issue 38 measured it: the
//!     hosts' rates are the only bound, so what the fleet loses to partitions moving, to
//!     waits and to idle slots shows against the floor;
//!   - `ad`: `a` on `zd`'s list with link rot (below), as issue 57 measured four workers on
//!     MariaDB;
//!   - `b`: 1 worker, 100,000 URLs on 1,000 hosts, lychee's default politeness
//!     (`--host-concurrency 10 --host-rate 20`), and lychee on the same list and meter with the
//!     same limits, if a `lychee` binary is on PATH or in ~/.cargo/bin (else that row is
//!     skipped, saying so); 20 ms;
//!   - `z`: `b` with hosts that answer at once, `--concurrency 128` (lychee's
//!     `--max-concurrency` too): the CPU per URL of each tool, where the server costs nothing;
//!   - `zd`: `z` on a list with link rot, of every hundred URLs 10 dead (404), 5 moved (a 301
//!     to a live page), 1 a second slower, 2 whose HEAD says 404 where GET says 200 (alive);
//!     every verdict is checked;
//!   - `c`: 1 worker, 10,000 URLs on 100 hosts with 10 % of them on one host,
//!     `--host-concurrency 10 --host-rate 50` (floor 20 s); 50 ms;
//!   - `d`: shared hosting: 2 workers, 4,000 URLs on 100 host names resolved (a test DNS,
//!     `--dns-server`) to 4 server addresses, 25 names each, `--host-concurrency 4 --host-rate
//!     10` and the default per-address limits (`--ip-concurrency 16 --ip-rate 40`: per name
//!     alone an address would see 250 a second); 200 ms. Its floor is an address's URLs at
//!     `--ip-rate`.
//!
//!   Every row prints the maxima over the hosts and over the server addresses, each with its
//!   limit: in `a` to `c` every host is an address of its own (the meter's), so the two agree;
//!   in `d` the meter measures per address only, and the per-host columns say `-`. A host
//!   asked more than its rate within one second gets a line of its own: when, and the gaps
//!   between the arrivals of that second.
//! - `POLITENESS_BENCH_MYSQL=mysql://USER:PW@127.0.0.1:PORT/` keeps the queue on that server
//!   (a fresh database per crawl, dropped after); by default it is a fresh SQLite file.
//! - What the database did per URL: on MariaDB from the server's status counters; on SQLite,
//!   which runs inside the worker, from the counts the worker logs when it stops
//!   (`crawler_queue::SqliteWork`) and, where `perf` can count system calls, the machine's
//!   `fsync`/`fdatasync` calls during the drain.
//! - The CPU of each tool per URL, the crawler's seed and drain apart, and then the crawler's
//!   seed + drain with its database's (SQLite's is the tool's; a server's is measured)
//!   against lychee's: issue 57 asks at most 0.8 on SQLite, 0.9 on MariaDB.
//! - On MariaDB, after each crawl, the design's floor on the same list
//!   (`politeness_floor.rs`): the server's CPU and counters per site when a client does
//!   nothing but claim and write back, to set beside the crawler's.
//! - `POLITENESS_BENCH_RUNS=5` runs each scenario five times, the crawler then lychee in turn,
//!   and prints the median and range of the crawler's rate against lychee's.
//! - `POLITENESS_BENCH_FLAGS="--batch-size 1000"` adds flags to every worker's, after the
//!   scenario's (to try a setting without a build).
//!
//! Every server listens on 127.0.0.0/8 only; every crawl is killed after ten minutes.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crawler_queue::{SqliteWork, Verdict, VerdictCounts};
use crawler_tests::bench::host;
use crawler_tests::bench::{find_lychee, lost_in_gaps, raise_fd_limit, source_state, Lychee};
use crawler_tests::bins::{command, run, stderr};
use crawler_tests::dns::{DnsServer, Record};
use crawler_tests::mariadb::{drop_database, URL_VAR};
use crawler_tests::meter::{dead_links_in, first_within, gaps_ms, spawn_meter, Meter, Report};
use crawler_tests::scale::mysql_server_pid;
use crawler_tests::Backend;
use tokio::runtime::Runtime;

#[path = "politeness_floor.rs"]
mod floor;
#[path = "politeness_measure.rs"]
mod measure;

use measure::{Bench, Cpu, ServerWork};

/// The longest a crawl may run before it is killed.
const LIMIT: Duration = Duration::from_secs(600);

/// One crawl to measure, and the limits it must keep.
struct Scenario {
    key: &'static str,
    workers: usize,
    urls: usize,
    hosts: usize,
    /// The share of the URLs on host 0 (0: every host has as many).
    share: f64,
    host_concurrency: usize,
    host_rate: usize,
    /// How long the meter takes to answer.
    latency: Duration,
    /// Whether lychee crawls the same list too.
    lychee: bool,
    /// The crawler's `--concurrency` (`None`: its default); lychee's `--max-concurrency` is
    /// this or 128.
    concurrency: Option<usize>,
    /// Host names per server address, resolved through a test DNS (1: every host is an
    /// address of the meter's, named by its IP).
    names_per_address: usize,
    /// Whether the list has link rot mixed in (`Meter::write_list_with_dead_links`).
    dead_links: bool,
}

/// The workers' per-address limits when not given: this many hosts' worth of the host limits
/// (`crawler_check::defaults::HOSTS_PER_ADDRESS`).
const HOSTS_PER_ADDRESS: usize = 4;

/// Scenario `a`, which `a0` varies.
const SCENARIO_A: Scenario = Scenario {
    key: "a",
    workers: 4,
    urls: 20_000,
    hosts: 100,
    share: 0.0,
    host_concurrency: 4,
    host_rate: 10,
    latency: Duration::from_millis(200),
    lychee: false,
    concurrency: None,
    names_per_address: 1,
    dead_links: false,
};

/// Scenario `b`, which `z` varies.
const SCENARIO_B: Scenario = Scenario {
    key: "b",
    workers: 1,
    urls: 100_000,
    hosts: 1000,
    share: 0.0,
    host_concurrency: 10,
    host_rate: 20,
    latency: Duration::from_millis(20),
    lychee: true,
    concurrency: None,
    names_per_address: 1,
    dead_links: false,
};

/// Scenario `z`, which `zd` varies.
const SCENARIO_Z: Scenario = Scenario {
    key: "z",
    latency: Duration::ZERO,
    concurrency: Some(128),
    ..SCENARIO_B
};

const SCENARIOS: [Scenario; 8] = [
    SCENARIO_A,
    Scenario {
        key: "a0",
        latency: Duration::ZERO,
        ..SCENARIO_A
    },
    Scenario {
        key: "ad",
        dead_links: true,
        ..SCENARIO_A
    },
    SCENARIO_B,
    SCENARIO_Z,
    Scenario {
        key: "zd",
        dead_links: true,
        ..SCENARIO_Z
    },
    Scenario {
        key: "c",
        workers: 1,
        urls: 10_000,
        hosts: 100,
        share: 0.1,
        host_concurrency: 10,
        host_rate: 50,
        latency: Duration::from_millis(50),
        lychee: false,
        concurrency: None,
        names_per_address: 1,
        dead_links: false,
    },
    Scenario {
        key: "d",
        workers: 2,
        urls: 4_000,
        hosts: 4,
        share: 0.0,
        host_concurrency: 4,
        host_rate: 10,
        latency: Duration::from_millis(200),
        lychee: false,
        concurrency: None,
        names_per_address: 25,
        dead_links: false,
    },
];

/// `POLITENESS_BENCH_RUNS`: how many times each scenario runs, the crawler then lychee in turn
/// (1 by default). One run's ratio is noisy on a shared machine (lychee alone took 6.3 to 10.7
/// s on the same z list in one session); several in turn give a median.
fn runs() -> usize {
    std::env::var("POLITENESS_BENCH_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1)
        .max(1)
}

fn main() {
    let picked = std::env::var("POLITENESS_BENCH").unwrap_or_else(|_| "a,b,c".into());
    let picked: Vec<&str> = picked.split(',').map(str::trim).collect();
    raise_fd_limit(); // inherited by the workers: connections to 1,000 hosts
    let backend = backend();
    let database = match backend {
        Backend::MariaDb => std::env::var(URL_VAR)
            .ok()
            .and_then(|url| url::Url::parse(&url).ok()?.port())
            .and_then(mysql_server_pid),
        _ => None,
    };
    let bench = Bench {
        runtime: Runtime::new().expect("a tokio runtime"),
        backend,
        tmp: tempfile::tempdir().expect("a temp dir"),
        database,
    };
    let _ = crawler_tests::bins::bin("crawler-worker"); // builds the release binaries
    println!(
        "politeness benchmark: {}, queue on {:?}, {} cores",
        source_state(),
        bench.backend,
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    for scenario in SCENARIOS.iter().filter(|s| picked.contains(&s.key)) {
        scenario.run(&bench);
    }
}

impl Scenario {
    /// The per-address rate the workers take when not told: four hosts' worth.
    fn ip_rate(&self) -> usize {
        HOSTS_PER_ADDRESS * self.host_rate
    }

    fn run(&self, bench: &Bench) {
        let meter = bench
            .runtime
            .block_on(spawn_meter(self.hosts, self.latency));
        let path = bench.tmp.path().join(format!("urls-{}.txt", self.key));
        let (floor, most, dns) = if self.names_per_address > 1 {
            let (dns, most) = self.write_named_list(&meter, &path);
            (most as f64 / self.ip_rate() as f64, most, Some(dns))
        } else {
            let list = match self.dead_links {
                true => meter.write_list_with_dead_links(&path, self.urls, self.share),
                false => meter.write_list(&path, self.urls, self.share),
            };
            let most = list.most_on_one_host();
            (most as f64 / self.host_rate as f64, most, None)
        };
        let dns_flags: Vec<String> = match &dns {
            Some(dns) => vec!["--dns-server".into(), dns.addr().to_string()],
            None => Vec::new(),
        };
        println!(
            "\n== {}: {} worker(s), {} URLs on {} hosts on {} addresses (at most {most} on one \
             {}), --host-concurrency {} --host-rate {}, answers after {:?}; floor {floor:.1} s ==",
            self.key,
            self.workers,
            self.urls,
            self.hosts * self.names_per_address,
            self.hosts,
            if dns.is_some() { "address" } else { "host" },
            self.host_concurrency,
            self.host_rate,
            self.latency
        );
        println!(
            "{:<22} {:>8} {:>8} {:>9} {:>14} {:>14} {:>16} {:>16}",
            "run",
            "time s",
            "/floor",
            "requests",
            "host in flight",
            "host in 1 s",
            "address in flight",
            "address in 1 s"
        );
        let runs = runs();
        let mut ratios = Vec::new();
        for run in 1..=runs {
            if runs > 1 {
                println!("-- run {run} of {runs}");
            }
            meter.reset();
            ratios.extend(self.crawler_then_lychee(bench, &path, floor, &meter, &dns_flags));
        }
        if ratios.len() > 1 {
            ratios.sort_by(f64::total_cmp);
            println!(
                "the crawler's rate / lychee's over {} runs in turn: median {:.2}, from {:.2} to {:.2}",
                ratios.len(),
                ratios[ratios.len() / 2],
                ratios[0],
                ratios[ratios.len() - 1]
            );
        }
        let _ = std::fs::remove_file(&path);
    }

    /// One crawl, then lychee on the same list and meter where the scenario has it: their rows,
    /// and the crawler's rate against lychee's (seed + drain against lychee's time).
    fn crawler_then_lychee(
        &self,
        bench: &Bench,
        path: &Path,
        floor: f64,
        meter: &Meter,
        dns_flags: &[String],
    ) -> Option<f64> {
        let (seed, seed_cpu, crawler, cpu, drain_started) = self.crawl(bench, path, dns_flags);
        self.print_row(
            &format!("crawler, {} worker(s)", self.workers),
            crawler,
            floor,
            meter,
        );
        println!(
            "  (after crawler-seed: {:.1} s, not counted) drain's {}",
            seed.as_secs_f64(),
            cpu.per_url(self.urls)
        );
        println!("  crawler-seed's {}", seed_cpu.per_url(self.urls));
        let arrivals = meter.arrivals();
        println!(
            "  {}",
            hosts_in_time(&arrivals, drain_started, self.host_rate)
        );
        if self.names_per_address == 1 {
            for over in over_the_rate(&arrivals, drain_started, self.host_rate) {
                println!("  over the rate: {over}");
            }
        }
        if bench.backend == Backend::MariaDb {
            floor::print(bench, path, self.urls);
        }
        if !self.lychee {
            return None;
        }
        meter.reset();
        let Some(lychee) = find_lychee() else {
            println!("lychee: skipped (no `lychee` on PATH or in ~/.cargo/bin)");
            return None;
        };
        let (time, lychee_cpu) = Cpu::of(bench, || self.lychee(bench, &lychee, path));
        self.print_row(&lychee.version, time, floor, meter);
        println!("  {}", lychee_cpu.per_url(self.urls));
        // Issue 57's measure: the crawler's CPU per URL, seed and drain, its database's
        // included (SQLite is in the tool; a server's is `database`), against lychee's.
        let crawler_cpu = seed_cpu.with_database() + cpu.with_database();
        let lychee_cpu = lychee_cpu.with_database();
        let us = |s: f64| s * 1e6 / self.urls as f64;
        println!(
            "CPU per URL, seed + drain with the database's: crawler {:.0} µs, lychee {:.0} µs: {:.2}",
            us(crawler_cpu),
            us(lychee_cpu),
            crawler_cpu / lychee_cpu
        );
        let rate = time.as_secs_f64() / (seed + crawler).as_secs_f64();
        println!(
            "crawler / lychee time: drain {:.2}, seed + drain {:.2} (the crawler's rate / \
             lychee's: {rate:.2})",
            crawler.as_secs_f64() / time.as_secs_f64(),
            (seed + crawler).as_secs_f64() / time.as_secs_f64(),
        );
        Some(rate)
    }

    /// The workers' flags: politeness, and the defaults for the rest.
    fn flags(&self) -> Vec<String> {
        let concurrency = self.host_concurrency.to_string();
        let rate = self.host_rate.to_string();
        let mut flags: Vec<String> = [
            "--drain",
            "--host-concurrency",
            &concurrency,
            "--host-rate",
            &rate,
        ]
        .map(str::to_owned)
        .to_vec();
        if let Some(n) = self.concurrency {
            flags.extend(["--concurrency".to_owned(), n.to_string()]);
        }
        let extra = std::env::var("POLITENESS_BENCH_FLAGS").unwrap_or_default();
        flags.extend(extra.split_whitespace().map(str::to_owned));
        flags
    }

    /// Seeds the list into a fresh database, then drains it: the time of each, and what the
    /// drain cost.
    fn crawl(
        &self,
        bench: &Bench,
        list: &Path,
        dns_flags: &[String],
    ) -> (Duration, Cpu, Duration, Cpu, Duration) {
        let db = bench.runtime.block_on(bench.backend.fresh());
        let url = db.url.expose();
        let before_seed = ServerWork::now(bench, url);
        let started = Instant::now();
        let (seeded, seed_cpu) = Cpu::of(bench, || run(command("crawler-seed", url).arg(list)));
        assert!(seeded.status.success(), "crawler-seed: {}", stderr(&seeded));
        let seed = started.elapsed();
        let before_drain = ServerWork::now(bench, url);
        let logs: Vec<_> = (0..self.workers)
            .map(|i| bench.tmp.path().join(format!("worker-{}-{i}", self.key)))
            .collect();
        let fsyncs = (bench.backend == Backend::Sqlite).then(|| Fsyncs::start(bench, self.key));
        // On the meter's clock (its arrivals are the kernel's receive times since the epoch).
        let drain_started = crawler_tests::stamped::now();
        let (time, cpu) = Cpu::of(bench, || {
            let started = Instant::now();
            let workers: Vec<Child> = logs
                .iter()
                .enumerate()
                .map(|(i, log)| {
                    let mut worker = embedded_work(bench, command("crawler-worker", url), log);
                    worker
                        .args(["--id", &format!("bench-{i}")])
                        .args(dns_flags)
                        .args(self.flags())
                        .spawn()
                        .expect("start crawler-worker")
                })
                .collect();
            assert!(
                wait_all(workers, &[0]),
                "a worker failed or ran out of time"
            );
            started.elapsed()
        });
        if bench.backend == Backend::Sqlite {
            println!(
                "  SQLite's work (in the worker): drain {}",
                SqliteCounts::of(&logs, fsyncs.and_then(Fsyncs::stop)).per_url(self.urls)
            );
        }
        if bench.backend == Backend::MariaDb {
            let after = ServerWork::now(bench, url);
            println!(
                "  the server's work (all its clients): seed {}; drain {}",
                before_drain.since(before_seed).per_url(self.urls),
                after.since(before_drain).per_url(self.urls)
            );
        }
        let counts = bench.runtime.block_on(async {
            let queue = db.queue().await;
            let counts = queue
                .reports()
                .verdict_counts()
                .await
                .expect("count the verdicts");
            queue.db().close().await;
            counts
        });
        let dead = match self.dead_links {
            true => dead_links_in(self.urls),
            false => 0,
        };
        let mut right = VerdictCounts::default();
        right.add(Verdict::Alive, (self.urls - dead) as u64);
        right.add(Verdict::Dead, dead as u64);
        match counts == right {
            true => println!("  every verdict right: {right:?}"),
            false => println!("  WARNING: verdicts {counts:?}; expected {right:?}"),
        }
        if bench.backend == Backend::MariaDb {
            bench.runtime.block_on(drop_database(url));
        }
        (seed, seed_cpu, time, cpu, drain_started)
    }

    /// Times lychee over the list with the same limits: per host the concurrency and the
    /// interval (1 / rate; a burst of one, as the crawler's), and the crawler's defaults for
    /// the rest (128 in flight, 20 s timeout, 2 retries).
    fn lychee(&self, bench: &Bench, lychee: &Lychee, list: &Path) -> Duration {
        let interval = format!("{}ms", 1000 / self.host_rate);
        let log = bench.tmp.path().join("lychee.log");
        let started = Instant::now();
        let child = Command::new(&lychee.path)
            .args(["--no-progress", "--max-concurrency"])
            .arg(self.concurrency.unwrap_or(128).to_string())
            .args(["--host-concurrency", &self.host_concurrency.to_string()])
            .args(["--host-request-interval", &interval])
            .args(["--timeout", "20", "--max-retries", "2", "--accept", "200"])
            .arg(list)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("create the lychee log"))
            .spawn()
            .expect("start lychee");
        // lychee exits with 2 when it found broken links, as it must on a list with dead ones.
        let ok: &[i32] = if self.dead_links { &[0, 2] } else { &[0] };
        if !wait_all(vec![child], ok) {
            let log = std::fs::read_to_string(&log).unwrap_or_default();
            println!("  WARNING: lychee failed or ran out of time: {log}");
        }
        started.elapsed()
    }

    /// Writes the list of a shared-hosting scenario: `names_per_address` names on each of the
    /// meter's addresses, resolved by a test DNS it starts; the URLs take the names in turn.
    /// Returns the DNS server and the most URLs on one address.
    fn write_named_list(&self, meter: &Meter, path: &Path) -> (DnsServer, usize) {
        let names = self.hosts * self.names_per_address;
        let name = |i: usize| format!("h{i}.politeness-bench");
        let records: HashMap<String, Record> = (0..names)
            .map(|i| {
                (
                    name(i),
                    Record::A(host(i % self.hosts).parse().expect("an IPv4")),
                )
            })
            .collect();
        let dns = DnsServer::start(SocketAddr::from(([127, 0, 0, 1], 0)), records)
            .expect("start the test DNS");
        let port = url::Url::parse(&meter.url(0, 0))
            .ok()
            .and_then(|u| u.port())
            .expect("the meter's port");
        let mut out = String::new();
        let mut per_address = vec![0; self.hosts];
        for n in 0..self.urls {
            let i = n % names;
            out.push_str(&format!("http://{}:{port}/{n}\n", name(i)));
            per_address[i % self.hosts] += 1;
        }
        std::fs::write(path, out).expect("write the URL list");
        (dns, per_address.into_iter().max().unwrap_or(0))
    }

    fn print_row(&self, name: &str, time: Duration, floor: f64, meter: &Meter) {
        let Report {
            requests,
            max_in_flight,
            max_per_second,
        } = meter.peaks();
        // The meter's tallies are per address; a host is one only when named by its IP.
        let (host_in_flight, host_per_second) = if self.names_per_address == 1 {
            (
                format!("{max_in_flight} (limit {})", self.host_concurrency),
                format!("{max_per_second} (limit {})", self.host_rate),
            )
        } else {
            ("-".to_owned(), "-".to_owned())
        };
        println!(
            "{name:<22} {:>8.1} {:>8.2} {requests:>9} {host_in_flight:>14} {host_per_second:>14} \
             {:>16} {:>16}",
            time.as_secs_f64(),
            time.as_secs_f64() / floor,
            format!(
                "{max_in_flight} (limit {})",
                HOSTS_PER_ADDRESS * self.host_concurrency
            ),
            format!("{max_per_second} (limit {})", self.ip_rate()),
        );
    }
}

/// When the hosts were asked (`arrivals` by host, each in order), from the drain's start
/// (`started`, on the meter's clock): the median and latest of their first requests and of
/// their last, and the host that ended last, its requests against the time they take at `rate`
/// and the time its gaps lost. Where a drain's time over its floor went: hosts started late
/// (claims, hand-overs), asked slower than their rate, or ended late.
fn hosts_in_time(arrivals: &[Vec<Duration>], started: Duration, rate: usize) -> String {
    let asked: Vec<&Vec<Duration>> = arrivals.iter().filter(|a| !a.is_empty()).collect();
    let Some(last) = asked.iter().max_by_key(|a| a[a.len() - 1]) else {
        return "no host was asked".to_owned();
    };
    let from_start = |at: Duration| at.saturating_sub(started).as_secs_f64();
    let median_and_max = |mut times: Vec<f64>| {
        times.sort_by(f64::total_cmp);
        (times[times.len() / 2], times[times.len() - 1])
    };
    let (first_median, first_max) =
        median_and_max(asked.iter().map(|a| from_start(a[0])).collect());
    let (last_median, last_max) =
        median_and_max(asked.iter().map(|a| from_start(a[a.len() - 1])).collect());
    format!(
        "hosts' first requests at {first_median:.1} s (median), {first_max:.1} s (latest); their \
         last at {last_median:.1} s, {last_max:.1} s; the last host done: {} requests from {:.1} \
         to {:.1} s, {:.1} s at its rate; its gaps past a turn lost {}",
        last.len(),
        from_start(last[0]),
        from_start(last[last.len() - 1]),
        last.len() as f64 / rate as f64,
        lost_in_gaps(last, started, rate as f64)
    )
}

/// The hosts (`arrivals` by host, each in order) asked more than `rate` times within one
/// second: when, from the drain's start (`started`), and the gaps in milliseconds between the
/// arrivals of that second.
fn over_the_rate(arrivals: &[Vec<Duration>], started: Duration, rate: usize) -> Vec<String> {
    let mut over = Vec::new();
    for (host, times) in arrivals.iter().enumerate() {
        let Some(first) = first_within(times, rate + 1, Duration::from_secs(1)) else {
            continue;
        };
        let second = &times[first..=first + rate];
        over.push(format!(
            "host {host}, {} starts from {:.3} s, gaps in ms {:?}",
            rate + 1,
            second[0].saturating_sub(started).as_secs_f64(),
            gaps_ms(second)
        ));
    }
    over
}

/// On SQLite, `worker` set to log, into `log`, the database's work it counted
/// (`crawler_queue::SqliteWork`, at its stop, at debug level); on a server, as it is.
fn embedded_work(bench: &Bench, mut worker: Command, log: &Path) -> Command {
    if bench.backend == Backend::Sqlite {
        worker
            .env("RUST_LOG", "warn,crawler_worker::run=debug")
            .stderr(std::fs::File::create(log).expect("create a worker's log"));
    }
    worker
}

/// The system calls that flush a file to disk, as perf's tracepoints name them.
const FSYNC_EVENTS: &str = "syscalls:sys_enter_fsync,syscalls:sys_enter_fdatasync";

/// `perf stat` counting [`FSYNC_EVENTS`] on the whole machine (`-a`, so that it adds nothing
/// to the worker's own context switches, as a per-process count would) until [`Fsyncs::stop`];
/// nothing where perf cannot (not installed, or not allowed).
struct Fsyncs {
    perf: Option<(Child, std::path::PathBuf)>,
}

impl Fsyncs {
    fn start(bench: &Bench, name: &str) -> Fsyncs {
        let out = bench.tmp.path().join(format!("{name}.perf"));
        let perf = Command::new("perf")
            .args(["stat", "-a", "-x", ",", "-e", FSYNC_EVENTS, "-o"])
            .arg(&out)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok();
        if perf.is_some() {
            std::thread::sleep(Duration::from_millis(300)); // its counters open
        }
        Fsyncs {
            perf: perf.map(|child| (child, out)),
        }
    }

    /// The calls counted since `start`, if perf counted them.
    fn stop(self) -> Option<u64> {
        let (mut child, out) = self.perf?;
        // perf prints its counts on SIGINT.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        child.wait().ok()?;
        let text = std::fs::read_to_string(out).ok()?;
        let counts: Vec<u64> = text
            .lines()
            .filter(|line| line.contains("syscalls:sys_enter_"))
            .filter_map(|line| line.split(',').next()?.trim().parse().ok())
            .collect();
        (counts.len() == 2).then(|| counts.iter().sum())
    }
}

/// What the workers of a SQLite crawl said their database did, summed over their logs.
struct SqliteCounts {
    /// `None` if a worker did not say.
    work: Option<SqliteWork>,
    /// `fsync` and `fdatasync` calls on the machine during the drain (`None` where perf could
    /// not count them).
    fsyncs: Option<u64>,
}

impl SqliteCounts {
    fn of(logs: &[std::path::PathBuf], fsyncs: Option<u64>) -> SqliteCounts {
        let mut work = Some(SqliteWork::default());
        for log in logs {
            let text = std::fs::read_to_string(log).unwrap_or_default();
            let said = text.lines().find_map(|line| {
                SqliteWork::parse(line.split("the SQLite database's work: ").nth(1)?)
            });
            work = work.zip(said).map(|(mut sum, one)| {
                sum += one;
                sum
            });
        }
        SqliteCounts { work, fsyncs }
    }

    fn per_url(&self, urls: usize) -> String {
        let per = |n: u64| n as f64 / urls as f64;
        let work = match self.work {
            Some(work) => format!(
                "statements {:.3}, commits {:.3}, rows written {:.2}",
                per(work.statements),
                per(work.commits),
                per(work.rows_written)
            ),
            None => "statements, commits: not logged".to_owned(),
        };
        let fsyncs = match self.fsyncs {
            Some(n) => format!("fsyncs {:.4} (the machine's)", per(n)),
            None => "fsyncs: not counted (needs perf)".to_owned(),
        };
        format!("{work}, {fsyncs} per URL")
    }
}

/// Waits for every child, killing those still running after [`LIMIT`]; whether all exited
/// with a code of `ok`.
fn wait_all(mut children: Vec<Child>, ok: &[i32]) -> bool {
    let deadline = Instant::now() + LIMIT;
    let mut all_ok = true;
    for child in &mut children {
        loop {
            match child.try_wait().expect("wait for a child") {
                Some(status) => {
                    all_ok &= status.code().is_some_and(|code| ok.contains(&code));
                    break;
                }
                None if Instant::now() > deadline => {
                    let _ = child.kill();
                }
                None => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    }
    all_ok
}

/// SQLite, or the MariaDB that `POLITENESS_BENCH_MYSQL` names (on this machine only).
fn backend() -> Backend {
    match std::env::var("POLITENESS_BENCH_MYSQL") {
        Ok(admin) if !admin.is_empty() => {
            let host = url::Url::parse(&admin)
                .ok()
                .and_then(|url| url.host_str().map(str::to_owned));
            assert!(
                matches!(host.as_deref(), Some(h) if h.starts_with("127.") || h == "localhost"),
                "POLITENESS_BENCH_MYSQL: a server on 127.0.0.0/8 only"
            );
            // `Backend::MariaDb` makes its databases on the server that `URL_VAR` names.
            std::env::set_var(URL_VAR, admin);
            Backend::MariaDb
        }
        _ => Backend::Sqlite,
    }
}
