//! What the benchmarks share: a thousand loopback hosts served on one port, the claim latency
//! measurement, the machine's CPU time, and the source the figures come from.

use std::process::Command;
use std::time::{Duration, Instant};

use crawler_queue::Queue;
use tokio::net::TcpListener;

/// Loopback hosts a benchmark spreads its URLs over.
pub const HOSTS: usize = 1000;

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
                .take_parts(&owner, token, share, lease)
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
            queue.release_parts(token).await.expect("give back parts");
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
    match changed.is_empty() {
        true => format!("commit {commit}"),
        false => format!(
            "commit {commit} + uncommitted changes to {}",
            changed.join(", ")
        ),
    }
}
