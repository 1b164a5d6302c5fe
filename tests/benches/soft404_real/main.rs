//! Soft 404s on real server software: dead precision, soft-404 recall (in all and per
//! configuration) and the probes and extra requests per host of `--soft-404`, on
//! `crawler_tests::soft404_real` (Debian's nginx, Apache, lighttpd and Caddy, configured as
//! admins configure a "not found", and MediaWiki and WordPress; labels from the
//! configuration). Asserts nothing.
//!
//! Run: `cargo bench -p crawler-tests --bench soft404_real` (needs `apt-get install
//! nginx-light apache2 lighttpd caddy mediawiki php-fpm php-sqlite3 wordpress
//! wordpress-theme-twentytwentythree`, and `mariadbd` for WordPress's database).
//!
//! One crawl without `--soft-404`, one with, each a fresh SQLite queue drained by one worker
//! with politeness limits raised; requests, probes and body bytes sent are counted in the
//! servers' own access logs (bytes also with each body counted up to the 64 KiB the checker
//! reads with `--soft-404`).

use std::collections::HashMap;

use crawler_queue::{Checked, ErrorKind, Verdict};
use crawler_tests::bench::source_state;
use crawler_tests::soft404_pages::Label;
use crawler_tests::soft404_real::{crawl, RealCorpus, Requests, ALL};
use tokio::runtime::Runtime;

fn main() {
    let runtime = Runtime::new().expect("a tokio runtime");
    let corpus = RealCorpus::spawn(&ALL);
    let tmp = tempfile::tempdir().unwrap();
    let list = tmp.path().join("urls.txt");
    corpus.write_list(&list);
    let _ = crawler_tests::bins::bin("crawler-worker"); // builds the release binaries
    println!(
        "soft-404 real-server benchmark: {}, {} URLs on {} hosts ({} configurations)",
        source_state(),
        corpus.urls.len(),
        corpus.hosts.len(),
        ALL.len()
    );
    let before = corpus.requests();
    runtime.block_on(crawl(&list, false));
    let off = difference(&corpus.requests(), &before);
    let before = corpus.requests();
    let sites = runtime.block_on(crawl(&list, true));
    let on = difference(&corpus.requests(), &before);
    let probed = probed(&corpus, &before);
    score(&corpus, &sites);
    cost(&corpus, &off, &on, &probed);
    bytes(&corpus, &off, &on);
}

/// The patterns each host was probed in during the second crawl (the probes' paths with the
/// token as `*`), by configuration, each with how many times.
fn probed(
    corpus: &RealCorpus,
    before: &HashMap<&'static str, Requests>,
) -> HashMap<&'static str, String> {
    corpus
        .probes()
        .into_iter()
        .map(|(name, paths)| {
            let skip = before.get(name).map_or(0, |r| r.probes as usize);
            let mut patterns: Vec<(String, usize)> = Vec::new();
            for path in &paths[skip.min(paths.len())..] {
                let pattern = pattern(path);
                match patterns.iter_mut().find(|(p, _)| *p == pattern) {
                    Some((_, n)) => *n += 1,
                    None => patterns.push((pattern, 1)),
                }
            }
            let shown: Vec<String> = patterns.iter().map(|(p, n)| format!("{p} x{n}")).collect();
            (name, shown.join(", "))
        })
        .collect()
}

/// `path` with its probe token (the last segment's stem) as `*`.
fn pattern(path: &str) -> String {
    let (dir, last) = path.rsplit_once('/').unwrap_or(("", path));
    let ext = last.split_once('.').map_or("", |(_, ext)| ext);
    if ext.is_empty() {
        format!("{dir}/*")
    } else {
        format!("{dir}/*.{ext}")
    }
}

fn difference(
    after: &HashMap<&'static str, Requests>,
    before: &HashMap<&'static str, Requests>,
) -> HashMap<&'static str, Requests> {
    after
        .iter()
        .map(|(name, a)| {
            let b = before.get(name).copied().unwrap_or_default();
            let r = Requests {
                all: a.all - b.all,
                probes: a.probes - b.probes,
                bytes: a.bytes - b.bytes,
                read: a.read - b.read,
            };
            (*name, r)
        })
        .collect()
}

#[derive(Default)]
struct Tally {
    soft: usize,
    found: usize,
    false_dead: usize,
    dead: usize,
    true_dead: usize,
}

/// Prints dead precision, soft-404 recall per configuration and in all, and what was wrong.
fn score(corpus: &RealCorpus, sites: &[Checked]) {
    let by_url: HashMap<String, &Checked> = sites.iter().map(|s| (normalized(&s.url), s)).collect();
    let mut tallies: Vec<(&str, Tally)> = corpus
        .hosts
        .iter()
        .map(|(c, _)| (c.name, Tally::default()))
        .collect();
    let mut all = Tally::default();
    let mut wrong = Vec::new();
    for (url, label, name) in &corpus.urls {
        let Some(site) = by_url.get(&normalized(url)) else {
            wrong.push(format!("not reported: {url}"));
            continue;
        };
        let soft = site.error_kind == Some(ErrorKind::Soft404);
        let dead = site.verdict == Verdict::Dead;
        let tally = &mut tallies.iter_mut().find(|(n, _)| n == name).unwrap().1;
        for t in [tally, &mut all] {
            t.soft += usize::from(*label == Label::Soft404);
            t.found += usize::from(*label == Label::Soft404 && soft);
            t.dead += usize::from(dead);
            t.true_dead += usize::from(dead && *label != Label::Real);
            t.false_dead += usize::from(dead && *label == Label::Real);
        }
        let missed = *label == Label::Soft404 && !soft;
        if missed || (*label == Label::Real && site.verdict != Verdict::Alive) {
            wrong.push(format!(
                "{label:?} {name} {url}: {} {:?} {:?}",
                site.verdict, site.status, site.detail
            ));
        }
    }
    println!(
        "{:<16} {:>5} {:>6} {:>7} {:>10} {:>8}",
        "configuration", "soft", "found", "recall", "real dead", "dead"
    );
    for (name, t) in tallies.iter().chain([&("all", all)]) {
        println!(
            "{name:<16} {:>5} {:>6} {:>7} {:>10} {:>8}",
            t.soft,
            t.found,
            ratio(t.found, t.soft),
            t.false_dead,
            t.dead
        );
    }
    let all = &tallies.iter().fold(Tally::default(), |mut a, (_, t)| {
        a.true_dead += t.true_dead;
        a.dead += t.dead;
        a.found += t.found;
        a.soft += t.soft;
        a
    });
    println!(
        "dead precision {} ({} of {} reported dead are missing pages); soft-404 recall {}",
        ratio(all.true_dead, all.dead),
        all.true_dead,
        all.dead,
        ratio(all.found, all.soft)
    );
    for line in &wrong {
        println!("  {line}");
    }
}

/// Prints probe requests, extra requests and the patterns probed per host.
fn cost(
    corpus: &RealCorpus,
    off: &HashMap<&'static str, Requests>,
    on: &HashMap<&'static str, Requests>,
    probed: &HashMap<&'static str, String>,
) {
    let mut probes = Vec::new();
    let mut extra = Vec::new();
    println!(
        "{:<16} {:>5} {:>8} {:>8} {:>7} {:>7}  probed",
        "configuration", "URLs", "without", "with", "extra", "probes"
    );
    for (config, _) in &corpus.hosts {
        let (a, b) = (off[config.name], on[config.name]);
        let urls = corpus.urls.iter().filter(|u| u.2 == config.name).count();
        let percent = 100.0 * (b.all as f64 - a.all as f64) / a.all as f64;
        println!(
            "{:<16} {urls:>5} {:>8} {:>8} {percent:>+6.1}% {:>7}  {}",
            config.name,
            a.all,
            b.all,
            b.probes,
            probed.get(config.name).map_or("", String::as_str)
        );
        probes.push(b.probes as i64);
        extra.push(b.all as i64 - a.all as i64);
    }
    let total = |m: &HashMap<&str, Requests>| m.values().map(|r| r.all).sum::<u64>() as f64;
    println!(
        "per host ({:.1} URLs each): probe requests median {}, max {}; extra requests median {}; \
         extra requests in all {:+.1} %",
        corpus.urls.len() as f64 / corpus.hosts.len() as f64,
        median(&probes),
        probes.iter().max().unwrap_or(&0),
        median(&extra),
        100.0 * (total(on) - total(off)) / total(off)
    );
}

/// Prints the body bytes the servers sent per host and per URL listed, without and with
/// `--soft-404` (a HEAD is sent no body; a GET is, which the checker reads up to 4 KiB
/// without the flag, 64 KiB with it), and with the flag counting each body up to 64 KiB.
fn bytes(
    corpus: &RealCorpus,
    off: &HashMap<&'static str, Requests>,
    on: &HashMap<&'static str, Requests>,
) {
    println!(
        "{:<16} {:>14} {:>14} {:>14}   (body KiB sent per URL)",
        "configuration", "without", "with", "with, read"
    );
    let per_url = |b: u64, urls: usize| b as f64 / 1024.0 / urls as f64;
    let (mut without, mut with, mut read) = (0, 0, 0);
    for (config, _) in &corpus.hosts {
        let (a, b) = (off[config.name], on[config.name]);
        let urls = corpus.urls.iter().filter(|u| u.2 == config.name).count();
        println!(
            "{:<16} {:>14.1} {:>14.1} {:>14.1}",
            config.name,
            per_url(a.bytes, urls),
            per_url(b.bytes, urls),
            per_url(b.read, urls)
        );
        (without, with, read) = (without + a.bytes, with + b.bytes, read + b.read);
    }
    let urls = corpus.urls.len();
    println!(
        "body bytes sent per URL: {:.1} KiB without --soft-404, {:.1} KiB with ({:.1} KiB \
         counting each body up to 64 KiB); in all {:.0} KiB and {:.0} KiB",
        per_url(without, urls),
        per_url(with, urls),
        per_url(read, urls),
        without as f64 / 1024.0,
        with as f64 / 1024.0
    );
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
