//! What the benchmarks share: a thousand loopback hosts served on one port, the queue's seed
//! and claim+complete loops with the check stubbed out, the claim latency measurement, the
//! machine's CPU time, and the source the figures come from.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crawler_queue::{NewSite, Queue, PARTS};
use tokio::net::TcpListener;

use crate::findings::{alive, outcomes_of};

/// The lease of the queue benchmarks' claims: longer than any run, so none expires.
pub const LEASE: Duration = Duration::from_secs(600);
/// Sites per claim in the queue benchmarks.
pub const BATCH: u32 = 500;

/// Loopback hosts a benchmark spreads its URLs over.
pub const HOSTS: usize = 1000;

/// The time a host's `arrivals` (in order) lost in gaps past a turn at `rate` per second:
/// small ones (within 1.5 turns, as a margin loses), those up to four turns (as a slowed pace
/// loses), and longer stalls, each with its time from `started` (all on one clock).
pub fn lost_in_gaps(arrivals: &[Duration], started: Duration, rate: f64) -> String {
    let turn = 1.0 / rate;
    let (mut small, mut slowed, mut stalled, mut stalls) = (0.0, 0.0, 0.0, Vec::new());
    for pair in arrivals.windows(2) {
        let gap = (pair[1] - pair[0]).as_secs_f64();
        let lost = gap - turn;
        if lost <= 0.0 {
            continue;
        }
        if gap <= 1.5 * turn {
            small += lost;
        } else if gap <= 4.0 * turn {
            slowed += lost;
        } else {
            stalled += lost;
            let at = pair[0].saturating_sub(started).as_secs_f64();
            stalls.push(format!("{:.0} ms at {at:.1} s", gap * 1000.0));
        }
    }
    format!(
        "{small:.1} s (within 1.5 turns), {slowed:.1} s (1.5-4 turns), {stalled:.1} s (stalls \
         over 4 turns: {})",
        stalls.join(", ")
    )
}

/// The i-th of the [`HOSTS`] loopback addresses: 127.0.1.1 to 127.0.4.250.
pub fn host(i: usize) -> String {
    format!("127.0.{}.{}", 1 + i / 250, 1 + i % 250)
}

/// Lets a process hold thousands of sockets (one listener per host, pooled connections).
pub fn raise_fd_limit() {
    // SAFETY: plain libc calls on a local struct.
    unsafe {
        let mut limit = std::mem::zeroed::<libc::rlimit>();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

/// Binds every one of the [`HOSTS`] on one port; tries another port if one of them is taken.
pub async fn bind_all() -> Vec<TcpListener> {
    bind_hosts(HOSTS).await
}

/// Binds the first `n` of the [`HOSTS`] on one port; tries another port if one of them is taken.
pub async fn bind_hosts(n: usize) -> Vec<TcpListener> {
    assert!((1..=HOSTS).contains(&n), "1 to {HOSTS} hosts, not {n}");
    'port: for _ in 0..10 {
        let first = TcpListener::bind((host(0), 0))
            .await
            .expect("bind 127.0.1.1");
        let port = first.local_addr().unwrap().port();
        let mut listeners = vec![first];
        for i in 1..n {
            match TcpListener::bind((host(i), port)).await {
                Ok(listener) => listeners.push(listener),
                Err(_) => continue 'port,
            }
        }
        return listeners;
    }
    panic!("no port free on all {n} loopback addresses");
}

/// `n` sites from number `from`, over 1,000 hosts (no HTTP: the check is stubbed out).
pub fn sites(from: usize, n: usize) -> Vec<NewSite> {
    (from..from + n)
        .map(|i| NewSite {
            url: format!("https://h{}.example/page/{i}", i % 1000),
            host: format!("h{}.example", i % 1000),
        })
        .collect()
}

/// Seeds `n` sites in chunks of 1,000 from `writers` concurrent tasks; returns URLs/s.
pub async fn seed(queue: &Queue, n: usize, writers: usize) -> f64 {
    let started = Instant::now();
    let per = n.div_ceil(writers);
    let tasks: Vec<_> = (0..writers)
        .map(|w| {
            let queue = queue.clone();
            tokio::spawn(async move {
                let end = ((w + 1) * per).min(n);
                for from in (w * per..end).step_by(10_000) {
                    queue
                        .seed(&sites(from, 10_000.min(end - from)), false)
                        .await
                        .unwrap();
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    n as f64 / started.elapsed().as_secs_f64()
}

/// `claimers` tasks claim and complete until nothing is due, claimer `c` through
/// `queues[c % queues.len()]` (one queue per database node, or just one); returns sites/s,
/// the whole machine's CPU time per site in microseconds, and the mean time a batch spends in
/// claim and in complete.
pub async fn drain(queues: &[Queue], claimers: usize) -> (f64, f64, Duration, Duration) {
    let started = Instant::now();
    let busy = machine_cpu().0;
    let tasks: Vec<_> = (0..claimers)
        .map(|c| {
            let queue = queues[c % queues.len()].clone();
            tokio::spawn(async move {
                let (mut n, mut batches, mut claiming, mut completing) =
                    (0u64, 0u32, Duration::ZERO, Duration::ZERO);
                // As workers do: each holds its fair share of the host partitions and claims
                // only there; its write-backs are fenced by them.
                let (owner, token) = (format!("bench{c}"), c as i64 + 1);
                let share = u32::from(PARTS).div_ceil(claimers as u32);
                queue
                    .parts()
                    .take(&owner, token, share, LEASE)
                    .await
                    .unwrap();
                loop {
                    let t = Instant::now();
                    let batch = queue.claim_held(token, &owner, BATCH, LEASE).await.unwrap();
                    claiming += t.elapsed();
                    if batch.sites.is_empty() {
                        return (n, batches, claiming, completing);
                    }
                    let outcomes = outcomes_of(batch.sites, &alive());
                    let t = Instant::now();
                    n += queue.complete(&outcomes).await.unwrap().done;
                    completing += t.elapsed();
                    batches += 1;
                }
            })
        })
        .collect();
    let (mut total, mut batches, mut claiming, mut completing) =
        (0, 0, Duration::ZERO, Duration::ZERO);
    for t in tasks {
        let (n, b, c, w) = t.await.unwrap();
        (total, batches, claiming, completing) =
            (total + n, batches + b, claiming + c, completing + w);
    }
    let rate = total as f64 / started.elapsed().as_secs_f64();
    let cpu = (machine_cpu().0 - busy) * 1e6 / total.max(1) as f64;
    (
        rate,
        cpu,
        claiming / batches.max(1),
        completing / batches.max(1),
    )
}

/// Claim latency (p50, p99) of `samples` claims of 100 sites by each of `fleet` claimers at
/// once. With a fleet of one, a claim in every partition ([`Queue::claim`]); with more, each
/// claimer holds its share of the host partitions and claims there, as the workers of a fleet
/// do. Each batch is given back at once (due again), so the table keeps its size and its count
/// of due rows while it is measured.
pub async fn claim_latency(queue: &Queue, fleet: usize, samples: usize) -> (Duration, Duration) {
    let lease = Duration::from_secs(600);
    let share = u32::from(crawler_queue::PARTS).div_ceil(fleet as u32);
    let claimers = (0..fleet).map(|c| async move {
        let token = c as i64 + 1;
        if fleet > 1 {
            let owner = format!("latency{c}");
            queue
                .parts()
                .take(&owner, token, share, lease)
                .await
                .expect("take parts");
        }
        let mut times = Vec::with_capacity(samples);
        for _ in 0..samples {
            let started = Instant::now();
            let batch = match fleet {
                1 => queue.claim("latency", 100, lease).await,
                _ => queue.claim_held(token, "latency", 100, lease).await,
            }
            .expect("claim");
            times.push(started.elapsed());
            assert_eq!(batch.sites.len(), 100, "the table ran out of due sites");
            let ids: Vec<i64> = batch.sites.iter().map(|s| s.id).collect();
            queue
                .release(batch.token, &ids, Duration::ZERO)
                .await
                .expect("give back");
        }
        if fleet > 1 {
            queue.parts().release(token).await.expect("give back parts");
        }
        times
    });
    let mut times: Vec<Duration> = futures::future::join_all(claimers)
        .await
        .into_iter()
        .flatten()
        .collect();
    times.sort();
    (times[times.len() / 2], times[times.len() * 99 / 100])
}

/// The comma-separated counts in the environment variable `var` (claimers per run, say), or
/// those of `default`; panics naming `var` when one is not a number.
pub fn counts(var: &str, default: &str) -> Vec<usize> {
    std::env::var(var)
        .unwrap_or_else(|_| default.into())
        .split(',')
        .map(|n| {
            n.trim()
                .parse()
                .unwrap_or_else(|_| panic!("{var}: a comma-separated list of counts"))
        })
        .collect()
}

/// (busy, total) CPU seconds of the whole machine so far, from /proc/stat.
pub fn machine_cpu() -> (f64, f64) {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let line = stat.lines().next().unwrap_or("");
    let values: Vec<f64> = line
        .split_whitespace()
        .skip(1)
        .map(|v| v.parse().unwrap_or(0.0))
        .collect();
    let total: f64 = values.iter().take(8).sum();
    let idle = values.get(3).copied().unwrap_or(0.0) + values.get(4).copied().unwrap_or(0.0);
    // SAFETY: sysconf has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    ((total - idle) / ticks, total / ticks)
}

/// The commit the binaries are built from, and the files changed since (figures depend on it).
pub fn source_state() -> String {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_default()
    };
    let commit = git(&["rev-parse", "--short", "HEAD"]);
    let changed = git(&[
        "status",
        "--short",
        "--untracked-files=no",
        "--",
        "../crates",
    ]);
    let changed: Vec<&str> = changed.lines().filter_map(|l| l.get(3..)).collect();
    if let Some(dir) = std::env::var_os(crate::bins::BINS_VAR) {
        return format!(
            "the binaries of {} (the harness at commit {commit})",
            std::path::Path::new(&dir).display()
        );
    }
    match changed.is_empty() {
        true => format!("commit {commit}"),
        false => format!(
            "commit {commit} + uncommitted changes to {}",
            changed.join(", ")
        ),
    }
}

/// A lychee binary and what `--version` says it is (the benchmarks that run the peer).
pub struct Lychee {
    pub path: PathBuf,
    pub version: String,
}

/// `lychee` on PATH, or in ~/.cargo/bin (where `cargo install lychee` puts it).
pub fn find_lychee() -> Option<Lychee> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let cargo_bin = std::env::var_os("HOME").map(|home| Path::new(&home).join(".cargo/bin"));
    let path = std::env::split_paths(&path)
        .chain(cargo_bin)
        .map(|dir| dir.join("lychee"))
        .find(|candidate| candidate.is_file())?;
    let version = Command::new(&path).arg("--version").output().ok()?;
    let version = String::from_utf8_lossy(&version.stdout).trim().to_owned();
    Some(Lychee { path, version })
}

/// Makes a network namespace with only `lo` up, whose `/etc/resolv.conf` names a DNS server on
/// 127.0.0.1, runs this bench again inside it with `inside` set to the namespace's name, and
/// removes the namespace; returns the inner run's exit code. `prefix` names the namespace
/// (`prefix-PID`). Needs root (`ip netns`).
pub fn rerun_in_namespace(prefix: &str, inside: &str) -> i32 {
    let name = format!("{prefix}-{}", std::process::id());
    let etc = Path::new("/etc/netns").join(&name);
    let ip = |args: &[&str]| {
        let status = Command::new("ip").args(args).status().expect("run ip");
        assert!(
            status.success(),
            "ip {args:?} failed (the bench needs root)"
        );
    };
    ip(&["netns", "add", &name]);
    std::fs::create_dir_all(&etc).expect("create /etc/netns/NAME");
    std::fs::write(etc.join("resolv.conf"), "nameserver 127.0.0.1\n").expect("write resolv.conf");
    ip(&["-n", &name, "link", "set", "lo", "up"]);
    let exe = std::env::current_exe().expect("the bench's path");
    let status = Command::new("ip")
        .args(["netns", "exec", &name])
        .arg(exe)
        .args(std::env::args_os().skip(1))
        .env(inside, &name)
        .status()
        .expect("run the bench in its namespace");
    ip(&["netns", "del", &name]);
    let _ = std::fs::remove_dir_all(&etc);
    status.code().unwrap_or(1)
}

/// The crawler's defaults, in lychee's flags: 512 in flight, 8 per host, 20/s per host (one
/// request every 50 ms), 20 s per request, 2 retries, 10 redirects, 2xx alive.
pub const LYCHEE_FLAGS: &[&str] = &[
    "--max-concurrency",
    "512",
    "--host-concurrency",
    "8",
    "--host-request-interval",
    "50ms",
    "--timeout",
    "20",
    "--max-retries",
    "2",
    "--max-redirects",
    "10",
    "--accept",
    "200..=299",
];
