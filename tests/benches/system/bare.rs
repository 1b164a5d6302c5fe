//! The ceiling: one reqwest HEAD per URL of the list, `CONCURRENCY` in flight, with the
//! worker's client settings and none of its work (no limits, classification, redirects or
//! database). Prints `RESULT <seconds> <answered> <failed>`.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::time::{Duration, Instant};

use futures::{stream, StreamExt};
use reqwest::redirect::Policy;

use super::bench::{Bench, CONCURRENCY};
use super::proc::Running;
use crawler_tests::bench::raise_fd_limit;

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
    super::report::print_bare_row(n, secs, &run, failed);
    rate
}

/// A child's time limit: at least 500 URLs/s, and two minutes.
pub fn limit(n: usize) -> Duration {
    Duration::from_secs((n as u64 / 500).max(120))
}
