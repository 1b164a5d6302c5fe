//! A measured case, in its own process: the checker or the bare reqwest loop over N URLs.
//! Prints `RESULT <seconds> <alive> <VmHWM kB> <CPU seconds>`.

use std::time::{Duration, Instant};

use crawler_check::{CheckConfig, Checker, Verdict};
use crawler_tests::bench::{host, raise_fd_limit, HOSTS};
use futures::{stream, StreamExt};
use reqwest::redirect::Policy;

/// Global in-flight limit, the same for the checker and the bare loop (lychee's default).
pub const CONCURRENCY: usize = 128;

pub fn run() {
    raise_fd_limit();
    let var = |name| std::env::var(name).unwrap_or_else(|_| panic!("{name} is set"));
    let (kind, n, port) = (
        var("CHECK_BENCH_CASE"),
        var("CHECK_BENCH_N"),
        var("CHECK_BENCH_PORT"),
    );
    let n: usize = n.parse().unwrap();
    // Generated lazily, so the list's length costs no memory of its own.
    let urls = (0..n).map(move |i| format!("http://{}:{port}/page/{i}", host(i % HOSTS)));
    let runtime = tokio::runtime::Runtime::new().expect("case runtime");
    let started = Instant::now();
    let alive = runtime.block_on(async {
        let job = async move {
            match kind.as_str() {
                "checker" => checker_loop(urls).await,
                _ => bare_loop(urls).await,
            }
        };
        job.await
    });
    let secs = started.elapsed().as_secs_f64();
    println!("RESULT {secs} {alive} {} {}", peak_rss_kb(), cpu_seconds());
}

async fn checker_loop(urls: impl Iterator<Item = String>) -> usize {
    let config = CheckConfig {
        concurrency: CONCURRENCY,
        host_concurrency: CONCURRENCY,
        host_rate: 100_000.0,
        ..CheckConfig::default()
    };
    let checker = Checker::new(config).expect("checker");
    let checks = stream::iter(urls).map(|url| {
        let checker = checker.clone();
        async move { checker.check(&url).await.verdict == Verdict::Alive }
    });
    checks
        .buffer_unordered(CONCURRENCY)
        .filter(|alive| std::future::ready(*alive))
        .count()
        .await
}

/// The ceiling: the same client settings as the checker's, no limits, no classification.
async fn bare_loop(urls: impl Iterator<Item = String>) -> usize {
    let defaults = CheckConfig::default();
    let client = reqwest::Client::builder()
        .user_agent(defaults.user_agent)
        .redirect(Policy::none())
        .connect_timeout(defaults.connect_timeout)
        .timeout(defaults.timeout)
        .no_proxy()
        .tcp_nodelay(true)
        .pool_idle_timeout(Duration::from_secs(30))
        .http2_max_header_list_size(256 * 1024)
        .build()
        .expect("client");
    let heads = stream::iter(urls).map(|url| {
        let client = client.clone();
        async move {
            client
                .head(url)
                .send()
                .await
                .is_ok_and(|r| r.status().is_success())
        }
    });
    heads
        .buffer_unordered(CONCURRENCY)
        .filter(|alive| std::future::ready(*alive))
        .count()
        .await
}

/// The process's peak resident memory (VmHWM), in kB.
fn peak_rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .unwrap_or("VmHWM: 0 kB");
    line.split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// User and system CPU time of this process so far: steadier than wall time on a busy machine.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let usage = unsafe {
        let mut usage = std::mem::zeroed::<libc::rusage>();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}
