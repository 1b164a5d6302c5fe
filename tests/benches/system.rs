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
//! - `list`: the URL list, page kinds by a hash of the index
//! - `server`: the HTTP server child, one listener per loopback host
//! - `bare`: the bare reqwest HEAD loop child
//! - `proc`: running a child to its end, its wall time, peak memory and CPU; CPU of others
//! - `crawl`: one seed + worker run on a backend, checked against the list
//! - `scale`: 1M and 10M rows on MariaDB: claim latency and `crawler-report --dead`

use std::path::{Path, PathBuf};
use std::process::Command;

use crawler_tests::bench::{host, raise_fd_limit, source_state, HOSTS};
use crawler_tests::mariadb::MariaDb;
use tempfile::TempDir;

/// Hosts the URLs are spread over: 127.0.1.1 to 127.0.4.250, one port.
/// Checks in flight, the same for the worker and the bare loop: `SYSTEM_BENCH_CONCURRENCY`,
/// 128 by default (the worker's own default is 512: run with it to see its memory there).
static CONCURRENCY: std::sync::LazyLock<usize> = std::sync::LazyLock::new(|| {
    std::env::var("SYSTEM_BENCH_CONCURRENCY")
        .map(|v| v.parse().expect("SYSTEM_BENCH_CONCURRENCY: a number"))
        .unwrap_or(128)
});
/// The list of the main comparison, and the long one for memory flatness.
const SMALL: usize = 100_000;
const BIG: usize = 1_000_000;
const ROLE: &str = "SYSTEM_BENCH_ROLE";
/// A redo log and buffer pool for a write-heavy run, as in `tests/benches/queue.rs`.
const SERVER_FLAGS: &str = "--innodb-log-file-size=512M --innodb-buffer-pool-size=2G";
/// Extra `mariadbd` flags for the private server (`tests/support/mariadb/command.rs`).
const MARIADB_FLAGS_VAR: &str = "CRAWLER_TEST_MARIADB_FLAGS";

fn main() {
    match std::env::var(ROLE).as_deref() {
        Ok("server") => server::run(),
        Ok("bare") => bare::run(),
        _ => orchestrate(),
    }
}

/// What every run needs: where the binaries are, a scratch directory, the HTTP server.
struct Bench {
    bins: PathBuf,
    tmp: TempDir,
    port: u16,
    server_pid: u32,
    runtime: tokio::runtime::Runtime,
    perf: Option<PathBuf>,
}

impl Bench {
    fn bin(&self, name: &str) -> Command {
        let mut command = Command::new(self.bins.join(name));
        command.env("RUST_LOG", "warn");
        command
    }

    fn path(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }
}

fn orchestrate() {
    let big = big_runs();
    let scale = flag("SYSTEM_BENCH_SCALE", false);
    header(&big, scale);
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
    let expected = list::write(&small_list, 0..SMALL, bench.port);
    println!("== {SMALL} URLs ==");
    crawl::print_heading();
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
        let expected = list::write(&big_list, 0..BIG, bench.port);
        println!("\n== {BIG} URLs ==");
        crawl::print_heading();
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
    summarise(ceiling, &maria, &sqlite, &flatness);
    if scale {
        scale::run(&bench, &mariadb);
    }
    drop(server);
}

fn summarise(
    ceiling: f64,
    maria: &crawl::Crawl,
    sqlite: &crawl::Crawl,
    flatness: &[(&crawl::Crawl, crawl::Crawl)],
) {
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

fn header(big: &[&str], scale: bool) {
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

/// The number after `name` on a line of a /proc file such as /proc/meminfo.
fn field(text: &str, name: &str) -> Option<f64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    line[name.len()..].split_whitespace().next()?.parse().ok()
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

mod list {
    //! The URL list: URL i is on host i % 1000; its page kind comes from a hash of i, so kinds
    //! are independent of hosts and evenly spread along the list.

    use std::fs::File;
    use std::io::{BufWriter, Write};
    use std::ops::Range;
    use std::path::Path;

    use crawler_tests::site::Page;

    use super::{host, HOSTS};

    /// How many URLs of a list should end alive and dead.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct Expected {
        pub alive: i64,
        pub dead: i64,
    }

    impl Expected {
        pub fn total(&self) -> usize {
            (self.alive + self.dead) as usize
        }
    }

    /// 10% dead, 5% redirecting (to an alive page), 1% slow (300 ms), the rest alive.
    pub fn page(i: usize) -> Page {
        match mix(i as u64) % 100 {
            0..10 => Page::Dead,
            10..15 => Page::Redirect,
            15 => Page::Slow,
            _ => Page::Alive,
        }
    }

    pub fn url(i: usize, port: u16) -> String {
        format!("http://{}:{port}/{}/{i}", host(i % HOSTS), page(i).name())
    }

    /// Writes the URLs of `range`, one a line, to `path`.
    pub fn write(path: &Path, range: Range<usize>, port: u16) -> Expected {
        let mut out = BufWriter::new(File::create(path).expect("create the URL list"));
        let mut expected = Expected::default();
        for i in range {
            writeln!(out, "{}", url(i, port)).expect("write the URL list");
            match page(i) {
                Page::Dead => expected.dead += 1,
                _ => expected.alive += 1,
            }
        }
        out.flush().expect("write the URL list");
        expected
    }

    /// splitmix64's finalizer: a cheap, well-mixed hash.
    fn mix(mut x: u64) -> u64 {
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        x ^ (x >> 31)
    }
}

mod server {
    //! The HTTP server child: one listener per loopback host, all on one port, each serving
    //! `crawler_tests::site` (pages that answer as their path says). Prints `READY <port>`.

    use std::io::Write;

    use super::raise_fd_limit;

    pub fn run() {
        raise_fd_limit();
        let runtime = tokio::runtime::Runtime::new().expect("server runtime");
        runtime.block_on(async {
            let listeners = crawler_tests::bench::bind_all().await;
            let port = listeners[0].local_addr().unwrap().port();
            println!("READY {port}");
            std::io::stdout().flush().unwrap();
            for listener in listeners {
                tokio::spawn(crawler_tests::site::serve(listener));
            }
            std::future::pending::<()>().await;
        });
    }
}

mod bare {
    //! The ceiling: one reqwest HEAD per URL of the list, `CONCURRENCY` in flight, with the
    //! worker's client settings and none of its work (no limits, classification, redirects or
    //! database). Prints `RESULT <seconds> <answered> <failed>`.

    use std::fs::File;
    use std::io::{BufRead, BufReader};
    use std::path::Path;
    use std::time::{Duration, Instant};

    use futures::{stream, StreamExt};
    use reqwest::redirect::Policy;

    use super::proc::Running;
    use super::{raise_fd_limit, Bench, CONCURRENCY};

    const LIST: &str = "SYSTEM_BENCH_LIST";

    pub fn run() {
        raise_fd_limit();
        let list = std::env::var(LIST).expect("SYSTEM_BENCH_LIST is set");
        let runtime = tokio::runtime::Runtime::new().expect("bare runtime");
        let started = Instant::now();
        let (answered, failed) = runtime.block_on(heads(Path::new(&list)));
        let secs = started.elapsed().as_secs_f64();
        println!("RESULT {secs} {answered} {failed}");
    }

    async fn heads(list: &Path) -> (u64, u64) {
        let client = reqwest::Client::builder()
            .user_agent("crawler-system-bench")
            .redirect(Policy::none())
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(5))
            .no_proxy()
            .tcp_nodelay(true)
            .pool_idle_timeout(Duration::from_secs(30))
            .build()
            .expect("client");
        // Read as it goes, so the list's length costs no memory.
        let file = BufReader::new(File::open(list).expect("open the URL list"));
        let urls = file.lines().map(|line| line.expect("read the URL list"));
        stream::iter(urls)
            .map(|url| {
                let client = client.clone();
                async move { client.head(url).send().await.is_ok() }
            })
            .buffer_unordered(*CONCURRENCY)
            .fold((0, 0), |(ok, failed), answered| async move {
                if answered {
                    (ok + 1, failed)
                } else {
                    (ok, failed + 1)
                }
            })
            .await
    }

    /// Runs the bare loop over `list` in a child; prints its row, returns its URLs/s.
    pub fn measure(bench: &Bench, list: &Path, n: usize) -> f64 {
        let mut command = super::proc::self_command("bare");
        command.env(LIST, list);
        let run = Running::start(command, bench.tmp.path(), "bare").finish(limit(n));
        let text = run.stdout.trim();
        let fields: Vec<f64> = text
            .strip_prefix("RESULT ")
            .unwrap_or_else(|| panic!("the bare loop said: {text}"))
            .split(' ')
            .map(|v| v.parse().expect("a number"))
            .collect();
        let [secs, _answered, failed] = fields[..] else {
            panic!("bad RESULT line: {text}")
        };
        let rate = n as f64 / secs;
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
            rate,
            if failed > 0.0 {
                format!("  ({failed} failed)")
            } else {
                String::new()
            }
        );
        rate
    }

    /// A child's time limit: at least 500 URLs/s, and two minutes.
    pub fn limit(n: usize) -> Duration {
        Duration::from_secs((n as u64 / 500).max(120))
    }
}

mod proc {
    //! Child processes: run one to its end and take its wall time, peak memory and CPU time from
    //! `wait4`; read the CPU time of others from /proc; keep the server child in a guard.

    use std::fs::File;
    use std::io::{BufRead, BufReader};
    use std::os::unix::process::CommandExt;
    use std::path::{Path, PathBuf};
    use std::process::{Child, Command, Stdio};
    use std::time::{Duration, Instant};

    use super::ROLE;

    /// This bench re-executed in `role`, dying with the bench.
    pub fn self_command(role: &str) -> Command {
        let exe = std::env::current_exe().expect("own path");
        let mut command = Command::new(exe);
        command.env(ROLE, role);
        command
    }

    /// Makes the kernel kill the child when the thread that spawns it (here, always the main
    /// thread) ends, so no child outlives a killed bench.
    fn tie_to_parent(command: &mut Command) {
        // SAFETY: prctl is async-signal-safe and touches only the child.
        unsafe {
            command.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
    }

    /// A child that runs for the whole bench (the HTTP server), killed when dropped.
    pub struct Guard {
        child: Child,
    }

    impl Guard {
        pub fn spawn_self(role: &str) -> Guard {
            let mut command = self_command(role);
            command.stdin(Stdio::null()).stdout(Stdio::piped());
            tie_to_parent(&mut command);
            Guard {
                child: command.spawn().expect("re-exec the bench"),
            }
        }

        pub fn pid(&self) -> u32 {
            self.child.id()
        }

        /// Waits for the child's `READY <port>` line.
        pub fn ready_port(&mut self) -> u16 {
            let stdout = self.child.stdout.take().expect("stdout is piped");
            let mut line = String::new();
            BufReader::new(stdout)
                .read_line(&mut line)
                .expect("the server says READY");
            line.trim()
                .strip_prefix("READY ")
                .and_then(|p| p.parse().ok())
                .unwrap_or_else(|| panic!("the server said {line:?}, not READY <port>"))
        }
    }

    impl Drop for Guard {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    /// A started child whose output goes to files of the scratch directory.
    pub struct Running {
        pid: libc::pid_t,
        started: Instant,
        name: String,
        out: PathBuf,
        err: PathBuf,
    }

    /// What a child cost, from `wait4`.
    pub struct Measured {
        pub wall: Duration,
        /// Peak resident memory (`ru_maxrss`), KiB.
        pub peak_kb: u64,
        /// User + system CPU time, seconds.
        pub cpu: f64,
        pub stdout: String,
    }

    impl Measured {
        pub fn peak_mb(&self) -> f64 {
            self.peak_kb as f64 / 1024.0
        }
    }

    impl Running {
        pub fn start(mut command: Command, dir: &Path, name: &str) -> Running {
            let out = dir.join(format!("{name}.out"));
            let err = dir.join(format!("{name}.err"));
            command
                .stdin(Stdio::null())
                .stdout(File::create(&out).expect("create a log file"))
                .stderr(File::create(&err).expect("create a log file"));
            tie_to_parent(&mut command);
            let started = Instant::now();
            // Reaped by `wait4` in `reap`, which also gives its peak memory and CPU time.
            #[allow(clippy::zombie_processes)]
            let child = command
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
            Running {
                pid: child.id() as libc::pid_t,
                started,
                name: name.to_owned(),
                out,
                err,
            }
        }

        pub fn pid(&self) -> u32 {
            self.pid as u32
        }

        /// Waits for the child's end (killing it after `limit`); panics with the end of its
        /// stderr unless it exited 0.
        pub fn finish(self, limit: Duration) -> Measured {
            self.finish_sampling(limit, limit, |_| {})
        }

        /// As [`Running::finish`], calling `sample(elapsed)` every `every` while the child runs.
        pub fn finish_sampling(
            self,
            limit: Duration,
            every: Duration,
            sample: impl FnMut(Duration),
        ) -> Measured {
            let (status, usage, wall) = self.reap(limit, every, sample);
            let exited_ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
            if !exited_ok || wall > limit {
                let stderr = std::fs::read_to_string(&self.err).unwrap_or_default();
                let tail: Vec<&str> = stderr.lines().rev().take(20).collect();
                let tail: Vec<&str> = tail.into_iter().rev().collect();
                panic!(
                    "{} failed (wait status {status:#x}, {wall:.1?}, limit {limit:?}); its stderr ends:\n{}",
                    self.name,
                    tail.join("\n")
                );
            }
            let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
            Measured {
                wall,
                peak_kb: usage.ru_maxrss as u64,
                cpu: secs(usage.ru_utime) + secs(usage.ru_stime),
                stdout: std::fs::read_to_string(&self.out).unwrap_or_default(),
            }
        }

        /// Polls `wait4` every 2 ms (at most 2 ms added to the wall time).
        fn reap(
            &self,
            limit: Duration,
            every: Duration,
            mut sample: impl FnMut(Duration),
        ) -> (i32, libc::rusage, Duration) {
            let mut killed = false;
            let mut next_sample = every;
            loop {
                let mut status = 0;
                // SAFETY: wait4 fills the status and the struct it is given; the pid is our
                // child, reaped only here.
                let (done, usage) = unsafe {
                    let mut usage = std::mem::zeroed::<libc::rusage>();
                    let r = libc::wait4(self.pid, &mut status, libc::WNOHANG, &mut usage);
                    (r == self.pid, usage)
                };
                let wall = self.started.elapsed();
                if done {
                    return (status, usage, wall);
                }
                if wall >= next_sample {
                    sample(wall);
                    next_sample += every;
                }
                if wall > limit && !killed {
                    // SAFETY: our child, not yet reaped, so the pid is still ours.
                    unsafe { libc::kill(self.pid, libc::SIGKILL) };
                    killed = true;
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        }
    }

    /// The resident memory (VmRSS) of a live process, KiB (0 if it is gone).
    pub fn rss_kb(pid: u32) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        super::field(&status, "VmRSS:").map_or(0, |kb| kb as u64)
    }

    /// Open file descriptors of a live process (sockets included; 0 if it is gone).
    pub fn open_files(pid: u32) -> usize {
        std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |dir| dir.count())
    }

    /// User + system CPU seconds a live process has used so far (0 if it is gone).
    pub fn cpu_of(pid: u32) -> f64 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // Fields after the command name, which may hold spaces: state is field 3, utime 14.
        let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let ticks = |i: usize| {
            fields
                .get(i)
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        (ticks(11) + ticks(12)) / clock_ticks()
    }

    fn clock_ticks() -> f64 {
        // SAFETY: sysconf has no preconditions.
        unsafe { libc::sysconf(libc::_SC_CLK_TCK) as f64 }
    }
}

mod crawl {
    //! One crawl as a user runs it: `crawler-seed FILE`, then `crawler-worker --drain`, on a
    //! fresh database; then the verdicts are checked against the list.

    use std::path::Path;
    use std::process::Command;
    use std::time::Duration;

    use crawler_queue::{DatabaseUrl, Db, Queue, QueueConfig, Verdict};
    use crawler_tests::mariadb::{self, MariaDb};
    use sqlx::{Connection, MySqlConnection};

    use super::bare::limit;
    use super::list::Expected;
    use super::proc::{cpu_of, open_files, rss_kb, Measured, Running};
    use super::{Bench, CONCURRENCY};
    use crawler_tests::bench::machine_cpu;

    pub struct Crawl {
        pub backend: &'static str,
        pub n: usize,
        pub seed: Measured,
        pub worker: Measured,
        /// CPU seconds during the worker phase: (HTTP server, mariadbd, whole machine busy,
        /// whole machine capacity).
        cpu: (f64, f64, f64, f64),
    }

    impl Crawl {
        pub fn end_to_end_rate(&self) -> f64 {
            self.n as f64 / (self.seed.wall + self.worker.wall).as_secs_f64()
        }

        pub fn worker_rate(&self) -> f64 {
            self.n as f64 / self.worker.wall.as_secs_f64()
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

    pub fn print_heading() {
        println!(
            "{:<14} {:>9} {:>8} {:>8} {:>9} {:>9} {:>8} {:>8} {:>10}",
            "run",
            "URLs",
            "seed s",
            "seed MB",
            "worker s",
            "worker MB",
            "CPU s",
            "e2e/s",
            "worker/s"
        );
    }

    /// Seeds `list` into a fresh database (on `mariadb`, or SQLite when `None`), drains it
    /// with one worker, checks the verdicts, prints a row and drops the database.
    pub fn run(
        bench: &Bench,
        mariadb: Option<&MariaDb>,
        list: &Path,
        expected: &Expected,
    ) -> Crawl {
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
            Some(dir) if backend == "MariaDB" && n == super::SMALL => vec![
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
        print_timeline(&timeline);
        bench.runtime.block_on(check_verdicts(&url, expected));
        match mariadb {
            Some(_) => bench.runtime.block_on(mariadb::drop_database(&url)),
            None => {
                let _ = std::fs::remove_dir_all(&dir);
            }
        }
        crawl
    }

    impl Crawl {
        fn print_row(&self) {
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
        let sql = "SELECT COUNT(*) FROM sites WHERE state = 1";
        let count = match db {
            Db::MySql(pool) => sqlx::query_scalar(sql).fetch_one(pool).await,
            Db::Sqlite(pool) => sqlx::query_scalar(sql).fetch_one(pool).await,
        };
        count.unwrap_or(-1)
    }

    fn print_timeline(timeline: &[(Duration, u64, usize, i64)]) {
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

    /// Every URL has its verdict: alive or dead, as the list says.
    async fn check_verdicts(url: &str, expected: &Expected) {
        let db = Db::connect(&DatabaseUrl::new(url), 1)
            .await
            .expect("connect");
        let queue = Queue::new(db, QueueConfig::default());
        let counts = queue.verdict_counts().await.expect("count verdicts");
        let count = |v| counts.iter().find(|(c, _)| *c == v).map_or(0, |(_, n)| *n);
        let others: i64 = counts
            .iter()
            .filter(|(v, _)| !matches!(v, Verdict::Alive | Verdict::Dead))
            .map(|(_, n)| n)
            .sum();
        let got = Expected {
            alive: count(Verdict::Alive),
            dead: count(Verdict::Dead),
        };
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
}

mod scale {
    //! The table's size: MariaDB with 1M and then 10M rows (10% marked dead by a direct
    //! UPDATE, the rest due). Claim latency of 100 sites (each batch given back at once, so the
    //! table keeps its size) and the time of `crawler-report --dead`.

    use std::time::{Duration, Instant};

    use crawler_queue::{DatabaseUrl, Db, Queue, QueueConfig};
    use crawler_tests::mariadb::MariaDb;
    use sqlx::{Connection, MySqlConnection};

    use super::proc::Running;
    use super::{list, Bench};

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
            list::write(&path, seeded..rows, bench.port);
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
            println!(
                "{rows:>8} rows: claim of 100 ({SAMPLES} claims): p50 {p50:.2?}  p99 {p99:.2?}"
            );
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
                "UPDATE sites SET state = 2, verdict = 'dead', http_status = 404, checked_at = 0 \
                 WHERE id % 10 = 0 AND id > ? AND id <= ?",
            )
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
}
