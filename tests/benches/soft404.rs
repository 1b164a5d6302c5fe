//! Soft 404s: precision and recall of `--soft-404` on the labelled corpus
//! (`crawler_tests::soft404_site`: soft 404s of every kind and their hard negatives), and what
//! it costs: the extra requests per host and the throughput against the same crawl without it.
//! Asserts nothing.
//!
//! Run: `cargo bench -p crawler-tests --bench soft404`
//!
//! - `SOFT404_BENCH_HOSTS=4`: hosts of each of the 14 kinds (default 4: 56 hosts);
//! - `SOFT404_BENCH_PAGES=10`: real and missing pages of each of the three patterns per host
//!   (default 10: some 65 URLs per host);
//! - `SOFT404_BENCH_ROUNDS=2`: crawls of each mode, alternating; the best time of each counts.
//!
//! The queue is a fresh SQLite file per crawl; one worker, politeness limits raised (as the
//! end-to-end tests), so the time is the checks' and the probes', not the host rate's.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

use crawler_queue::{Checked, ErrorKind, Verdict};
use crawler_tests::bench::{host, raise_fd_limit, source_state};
use crawler_tests::bins::{command, run, stderr};
use crawler_tests::soft404_site::{spawn_corpus, Corpus, Kind, Label};
use crawler_tests::Backend;
use tokio::runtime::Runtime;

const FLAGS: &[&str] = &[
    "--drain",
    "--host-rate",
    "100000",
    "--host-concurrency",
    "64",
    "--concurrency",
    "256",
    "--timeout",
    "10s",
    "--attempts",
    "1",
];

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    raise_fd_limit();
    let runtime = Runtime::new().expect("a tokio runtime");
    let (per_kind, pages) = (
        env("SOFT404_BENCH_HOSTS", 4),
        env("SOFT404_BENCH_PAGES", 10),
    );
    let corpus = runtime.block_on(spawn_corpus(&Kind::ALL, per_kind, pages));
    let tmp = tempfile::tempdir().unwrap();
    let list = tmp.path().join("urls.txt");
    corpus.write_list(&list);
    let _ = crawler_tests::bins::bin("crawler-worker"); // builds the release binaries
    println!(
        "soft-404 benchmark: {}, {} URLs on {} hosts ({per_kind} of each of {} kinds), {} cores",
        source_state(),
        corpus.urls.len(),
        corpus.hosts,
        Kind::ALL.len(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    let mut best: HashMap<bool, (Duration, u64)> = HashMap::new();
    let mut found = Vec::new();
    let mut per_host: HashMap<bool, HashMap<IpAddr, u64>> = HashMap::new();
    let mut probes = Vec::new();
    for _ in 0..env("SOFT404_BENCH_ROUNDS", 2) {
        for soft in [false, true] {
            let before = corpus.requests();
            let hosts_before = corpus.requests_by_host();
            let probes_before = corpus.probes();
            let (time, sites) = runtime.block_on(crawl(&list, soft));
            let requests = corpus.requests() - before;
            let hosts_after = corpus.requests_by_host();
            let made = hosts_after
                .iter()
                .map(|(ip, n)| (*ip, n - hosts_before.get(ip).copied().unwrap_or(0)))
                .collect();
            per_host.insert(soft, made);
            if soft {
                probes = probes_per_host(&corpus, &probes_before);
            }
            println!(
                "  crawl {}: {:.2} s, {requests} requests",
                mode(soft),
                time.as_secs_f64()
            );
            let entry = best.entry(soft).or_insert((time, requests));
            entry.0 = entry.0.min(time);
            if soft {
                found = sites;
            }
        }
    }
    score(&corpus, &found);
    let (off, on) = (best[&false], best[&true]);
    let urls = corpus.urls.len() as f64;
    println!(
        "requests: {} without, {} with --soft-404: {:.1} extra per host ({:.2} per URL)",
        off.1,
        on.1,
        (on.1 as f64 - off.1 as f64) / corpus.hosts as f64,
        on.1 as f64 / off.1 as f64
    );
    let extra: Vec<i64> = per_host[&true]
        .iter()
        .map(|(ip, on)| *on as i64 - per_host[&false].get(ip).copied().unwrap_or(0) as i64)
        .collect();
    println!(
        "per host: probe requests median {} (mean {:.2}, max {}), extra requests median {}; \
         extra requests in all {:+.1} %",
        median(&probes),
        probes.iter().sum::<i64>() as f64 / probes.len().max(1) as f64,
        probes.iter().max().unwrap_or(&0),
        median(&extra),
        100.0 * (on.1 as f64 - off.1 as f64) / off.1 as f64
    );
    println!(
        "throughput: {:.0} URLs/s without, {:.0} with --soft-404 (ratio {:.2}; best of each)",
        urls / off.0.as_secs_f64(),
        urls / on.0.as_secs_f64(),
        off.0.as_secs_f64() / on.0.as_secs_f64()
    );
}

/// The probes (paths of a 20-character token, as the crawler makes them) each host got since
/// `before`, zero for hosts never probed.
fn probes_per_host(corpus: &Corpus, before: &HashMap<(IpAddr, String), u64>) -> Vec<i64> {
    let mut by_host: HashMap<IpAddr, i64> = HashMap::new();
    for (key, n) in corpus.probes() {
        let was = before.get(&key).copied().unwrap_or(0);
        *by_host.entry(key.0).or_default() += (n - was) as i64;
    }
    let mut all: Vec<i64> = (0..corpus.hosts)
        .map(|i| by_host.get(&host(i).parse().unwrap()).copied().unwrap_or(0))
        .collect();
    all.sort_unstable();
    all
}

fn median(values: &[i64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_unstable();
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2] as f64,
        n => (v[n / 2 - 1] + v[n / 2]) as f64 / 2.0,
    }
}

fn mode(soft: bool) -> &'static str {
    if soft {
        "with --soft-404"
    } else {
        "without"
    }
}

/// Seeds the list into a fresh SQLite queue and drains it with one worker: the drain's time
/// and every site as checked.
async fn crawl(list: &std::path::Path, soft: bool) -> (Duration, Vec<Checked>) {
    let db = Backend::Sqlite.fresh().await;
    let url = db.url.expose();
    let seeded = run(command("crawler-seed", url).arg(list));
    assert!(seeded.status.success(), "crawler-seed: {}", stderr(&seeded));
    let started = Instant::now();
    let mut worker = command("crawler-worker", url);
    worker.args(FLAGS);
    if soft {
        worker.arg("--soft-404");
    }
    let out = tokio::task::spawn_blocking(move || run(&mut worker))
        .await
        .unwrap();
    let time = started.elapsed();
    assert!(out.status.success(), "crawler-worker: {}", stderr(&out));
    let queue = db.queue().await;
    let mut sites = Vec::new();
    for verdict in Verdict::ALL {
        let mut after = crawler_queue::After::START;
        loop {
            let page = queue
                .reports()
                .checked_page(verdict, Default::default(), after, 10_000)
                .await
                .unwrap();
            let Some(last) = page.last() else { break };
            after = crawler_queue::After::site(last, crawler_queue::Only::All);
            sites.extend(page);
        }
    }
    (time, sites)
}

/// Prints precision and recall over the labelled URLs, per kind of host and in all.
fn score(corpus: &Corpus, sites: &[Checked]) {
    let by_url: HashMap<String, &Checked> = sites.iter().map(|s| (normalized(&s.url), s)).collect();
    let mut rows: Vec<(String, Tally)> = Kind::ALL
        .iter()
        .map(|k| (format!("{k:?}"), Tally::default()))
        .collect();
    let mut all = Tally::default();
    let mut wrong = Vec::new();
    for (url, label, kind) in &corpus.urls {
        let Some(site) = by_url.get(&normalized(url)) else {
            wrong.push(format!("not reported: {url}"));
            continue;
        };
        let soft = site.error_kind == Some(ErrorKind::Soft404);
        let tally = &mut rows
            .iter_mut()
            .find(|(k, _)| *k == format!("{kind:?}"))
            .unwrap()
            .1;
        for t in [tally, &mut all] {
            t.add(*label, soft, site.verdict);
        }
        let missed = *label == Label::Soft404 && !soft;
        if missed
            || (*label != Label::Soft404 && soft)
            || (*label == Label::Real && site.verdict != Verdict::Alive)
        {
            wrong.push(format!(
                "{label:?} {url}: {} {:?} {:?}",
                site.verdict, site.status, site.detail
            ));
        }
    }
    println!(
        "{:<18} {:>6} {:>6} {:>6} {:>6} {:>10} {:>8}",
        "kind", "TP", "FP", "FN", "real", "precision", "recall"
    );
    for (kind, t) in rows.iter().chain([&("all".to_owned(), all)]) {
        println!(
            "{kind:<18} {:>6} {:>6} {:>6} {:>6} {:>10} {:>8}",
            t.tp,
            t.fp,
            t.fn_,
            t.real,
            ratio(t.tp, t.tp + t.fp),
            ratio(t.tp, t.tp + t.fn_)
        );
    }
    println!("real pages not alive: {}", all.real_not_alive);
    for line in wrong.iter().take(20) {
        println!("  {line}");
    }
}

fn ratio(a: usize, b: usize) -> String {
    if b == 0 {
        "-".into()
    } else {
        format!("{:.3}", a as f64 / b as f64)
    }
}

fn normalized(url: &str) -> String {
    url::Url::parse(url).unwrap().to_string()
}

#[derive(Clone, Copy, Default)]
struct Tally {
    tp: usize,
    fp: usize,
    fn_: usize,
    real: usize,
    real_not_alive: usize,
}

impl Tally {
    fn add(&mut self, label: Label, soft: bool, verdict: Verdict) {
        match (label, soft) {
            (Label::Soft404, true) => self.tp += 1,
            (Label::Soft404, false) => self.fn_ += 1,
            (_, true) => self.fp += 1,
            _ => {}
        }
        if label == Label::Real {
            self.real += 1;
            self.real_not_alive += usize::from(verdict != Verdict::Alive);
        }
    }
}
