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
//! with politeness limits raised; requests are counted in the servers' own access logs.

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
    score(&corpus, &sites);
    cost(&corpus, &off, &on);
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

/// Prints probe requests and extra requests per host.
fn cost(
    corpus: &RealCorpus,
    off: &HashMap<&'static str, Requests>,
    on: &HashMap<&'static str, Requests>,
) {
    let mut probes = Vec::new();
    let mut extra = Vec::new();
    println!(
        "{:<16} {:>8} {:>8} {:>7}",
        "configuration", "without", "with", "probes"
    );
    for (config, _) in &corpus.hosts {
        let (a, b) = (off[config.name], on[config.name]);
        println!(
            "{:<16} {:>8} {:>8} {:>7}",
            config.name, a.all, b.all, b.probes
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
