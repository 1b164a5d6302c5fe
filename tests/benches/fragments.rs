//! Fragments (`page#section`, issue #40) against lychee, in the same run: a generated site
//! served by a private nginx on 127.0.0.1, crawled by the crawler at its defaults on SQLite
//! (`crawler-seed --follow ORIGIN/` then `crawler-worker --drain`) and by lychee with
//! `--include-fragments` at the same politeness (8 per host, one request every 50 ms), given
//! every page. Prints each one's time (seed + drain for the crawler), the broken fragments
//! each found (with the page that links to each) out of those on the site, the valid ones it
//! called missing, the removed pages it found dead, and what nginx was asked per page (a page
//! with many fragments asked is read once). Asserts nothing about speed.
//!
//! Every page of the site has sections by `id`, an `<a name>`, a non-ASCII id linked as written
//! and one linked percent-encoded, an id in mixed case; and links to the next pages' sections:
//! 7 that exist, `#top`, an empty fragment and a text fragment (`#:~:text=`), 4 that do not
//! (a section never there, one in another case, one of its own page, one removed), and a
//! removed page, with and without a fragment: 15 fragment links a page, 4 broken.
//!
//! Run: `cargo bench -p crawler-tests --bench fragments` (needs `nginx`: `apt-get install
//! nginx-light`; lychee is run if it is on PATH or in ~/.cargo/bin, else its row is skipped).
//!
//! - `FRAGMENTS_BENCH_PAGES=20,80`: the sites' sizes, one after the other;
//! - `FRAGMENTS_BENCH_RUNS=3`: runs of each tool per site, alternating (the medians compare);
//! - `FRAGMENTS_BENCH_BASELINE=DIR`: also runs the crawler's binaries in DIR (another build,
//!   say the one before a change), as the row `baseline`;
//! - `TEST_LOG=debug`: the worker's log of each run, kept in /tmp/fragments-bench-*.log.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crawler_tests::bench::{counts, find_lychee, source_state, Lychee};
use crawler_tests::bins::{command, run, stderr, stdout};
use crawler_tests::nginx::Nginx;
use url::Url;

/// What a fragment link of the site is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    /// Its page has the anchor.
    Found,
    /// Its page is there, the anchor is not.
    Missing,
    /// Its page was removed: the link is dead.
    DeadPage,
}

/// The generated site: its files, and every fragment link (by its href on its page's path).
struct Site {
    dir: tempfile::TempDir,
    pages: usize,
    /// (page path, href) → what the link is.
    links: Vec<(String, String, Expect)>,
}

/// What one tool found, compared with the site.
#[derive(Default)]
struct Found {
    time: Duration,
    broken_found: usize,
    broken: usize,
    wrongly_missing: usize,
    removed_dead: usize,
    removed: usize,
    requests: usize,
    most_gets_of_a_page: usize,
    note: String,
}

fn main() {
    let _ = crawler_tests::bins::bin("crawler-worker"); // builds the binaries of this profile
    let lychee = find_lychee();
    let runs = counts("FRAGMENTS_BENCH_RUNS", "3")[0].max(1);
    println!(
        "fragments benchmark: {}, {} cores, runs alternating crawler then lychee ({runs} each)",
        source_state(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    match &lychee {
        Some(lychee) => println!("peer: {}", lychee.version),
        None => println!("lychee: skipped (no `lychee` on PATH or in ~/.cargo/bin)"),
    }
    for pages in counts("FRAGMENTS_BENCH_PAGES", "20,80") {
        bench(pages.max(3), runs, lychee.as_ref());
    }
}

fn bench(pages: usize, runs: usize, lychee: Option<&Lychee>) {
    let site = Site::generate(pages);
    let broken = site.links.iter().filter(|l| l.2 == Expect::Missing).count();
    // Each page's `#top`, empty and text fragments are no site of their own.
    let links = site.links.len() + 3 * pages;
    println!(
        "\nsite: {pages} pages, {links} fragment links ({broken} broken; {pages} to sections of \
         removed pages), {pages} removed pages"
    );
    let baseline = std::env::var_os("FRAGMENTS_BENCH_BASELINE").map(PathBuf::from);
    let (mut ours, mut theirs, mut before) = (Vec::new(), Vec::new(), Vec::new());
    for run in 0..runs {
        ours.push(crawl(&site, None, run));
        if let Some(lychee) = lychee {
            theirs.push(check_with_lychee(&site, lychee));
        }
        if let Some(dir) = &baseline {
            before.push(crawl(&site, Some(dir), run));
        }
    }
    println!(
        "{:<8} {:>7} {:>16} {:>15} {:>13} {:>10} {:>16}",
        "tool",
        "time s",
        "broken found",
        "valid missing",
        "removed dead",
        "req/page",
        "GETs of a page"
    );
    for (name, results) in [
        ("crawler", &ours),
        ("lychee", &theirs),
        ("baseline", &before),
    ] {
        for found in results {
            found.print(name, pages);
        }
    }
    if let (Some(a), Some(b)) = (median(&ours), median(&theirs)) {
        println!(
            "median: crawler {:.2} s, lychee {:.2} s: crawler / lychee {:.2}",
            a.as_secs_f64(),
            b.as_secs_f64(),
            a.as_secs_f64() / b.as_secs_f64()
        );
    }
}

fn median(results: &[Found]) -> Option<Duration> {
    let mut times: Vec<Duration> = results.iter().map(|f| f.time).collect();
    times.sort();
    times.get(times.len() / 2).copied()
}

impl Found {
    fn print(&self, name: &str, pages: usize) {
        println!(
            "{name:<8} {:>7.2} {:>16} {:>15} {:>13} {:>10.2} {:>16}{}",
            self.time.as_secs_f64(),
            format!("{} / {}", self.broken_found, self.broken),
            self.wrongly_missing,
            format!("{} / {}", self.removed_dead, self.removed),
            self.requests as f64 / pages as f64,
            self.most_gets_of_a_page,
            self.note
        );
    }

    /// Counts what nginx was asked: requests in all, and the most GETs of one page.
    fn count_requests(&mut self, nginx: &Nginx, site: &Site) {
        let asked = nginx.requests();
        self.requests = asked.values().sum();
        self.most_gets_of_a_page = (0..site.pages)
            .map(|i| asked.get(&format!("GET {}", path(i))).copied().unwrap_or(0))
            .max()
            .unwrap_or(0);
    }
}

/// The path of page `i`: the start page is `/`.
fn path(i: usize) -> String {
    match i {
        0 => "/".to_owned(),
        i => format!("/p{i}.html"),
    }
}

impl Site {
    /// `pages` pages; page `i` links into pages `i + 1` and `i + 2` (modulo `pages`) and its
    /// own sections, and the start page to every page.
    fn generate(pages: usize) -> Site {
        let dir = tempfile::tempdir().unwrap();
        let mut links = Vec::new();
        for i in 0..pages {
            let (t, u) = (path((i + 1) % pages), path((i + 2) % pages));
            let (ti, ui) = ((i + 1) % pages, (i + 2) % pages);
            let mut hrefs: Vec<(String, Expect)> = vec![
                (format!("{t}#s{ti}-0"), Expect::Found),
                (format!("{u}#s{ui}-2"), Expect::Found),
                (format!("{t}#n{ti}"), Expect::Found),
                (format!("{t}#caf%C3%A9-{ti}"), Expect::Found),
                (format!("{t}#überblick-{ti}"), Expect::Found),
                (format!("{t}#CamelCase-{ti}"), Expect::Found),
                (format!("#s{i}-3"), Expect::Found),
                (format!("{t}#gone-{i}"), Expect::Missing),
                (format!("{t}#camelcase-{ti}"), Expect::Missing),
                (format!("{u}#s{ui}-9"), Expect::Missing),
                (format!("#missing-{i}"), Expect::Missing),
                (format!("/removed-{i}.html#intro"), Expect::DeadPage),
            ];
            let mut html = format!(
                "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Page {i}</title>\
                 </head><body>\n<h1 id=\"top-{i}\">Page {i}</h1>\n"
            );
            if i == 0 {
                html.push_str("<nav>");
                for p in 1..pages {
                    html.push_str(&format!("<a href=\"{}\">page {p}</a>\n", path(p)));
                }
                html.push_str("</nav>\n");
            }
            for k in 0..4 {
                html.push_str(&format!(
                    "<h2 id=\"s{i}-{k}\">Section {k}</h2><p>Some text of section {k}.</p>\n"
                ));
            }
            html.push_str(&format!(
                "<p><a name=\"n{i}\"></a>An old anchor.</p>\n<h2 id=\"café-{i}\">Café</h2>\n\
                 <h2 id=\"überblick-{i}\">Überblick</h2>\n<h2 id=\"CamelCase-{i}\">Case</h2>\n<p>"
            ));
            for (href, _) in &hrefs {
                html.push_str(&format!("<a href=\"{href}\">a link</a>\n"));
            }
            // Fragments that always exist, or are no anchor: no site of their own.
            for href in [
                format!("{t}#top"),
                format!("{t}#"),
                format!("{t}#:~:text=Section"),
            ] {
                html.push_str(&format!("<a href=\"{href}\">always there</a>\n"));
            }
            html.push_str(&format!("<a href=\"/removed-{i}.html\">removed</a>\n"));
            html.push_str("</p></body></html>\n");
            let file = match i {
                0 => "index.html".to_owned(),
                i => format!("p{i}.html"),
            };
            std::fs::write(dir.path().join(file), html).unwrap();
            links.extend(hrefs.drain(..).map(|(href, e)| (path(i), href, e)));
        }
        Site { dir, pages, links }
    }

    /// Every fragment link as an absolute URL (as the url crate writes it), what it is, and
    /// the pages that link to it.
    fn expected(&self, origin: &str) -> BTreeMap<String, (Expect, BTreeSet<String>)> {
        let mut expected: BTreeMap<String, (Expect, BTreeSet<String>)> = BTreeMap::new();
        for (page, href, expect) in &self.links {
            let page = Url::parse(&format!("{origin}{page}")).unwrap();
            let url = page.join(href).unwrap().to_string();
            let entry = expected.entry(url).or_insert((*expect, BTreeSet::new()));
            entry.1.insert(page.to_string());
        }
        expected
    }

    fn removed(&self, origin: &str) -> Vec<String> {
        (0..self.pages)
            .map(|i| format!("{origin}/removed-{i}.html"))
            .collect()
    }
}

/// A URL as the url crate writes it, so both tools' URLs compare.
fn normal(url: &str) -> String {
    Url::parse(url).map_or_else(|_| url.to_owned(), |u| u.to_string())
}

/// The crawler at its defaults on a fresh SQLite file: `crawler-seed --follow ORIGIN/`, then
/// `crawler-worker --drain`, timed together; read back with `crawler-report --all`.
fn crawl(site: &Site, bins: Option<&Path>, run_no: usize) -> Found {
    let nginx = Nginx::serve(site.dir.path());
    let db = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", db.path().join("crawl.db").display());
    let command = |name: &str| {
        let mut cmd = command(name, &url);
        if let Some(dir) = bins {
            let mut other = Command::new(dir.join(name));
            other.envs(cmd.get_envs().filter_map(|(k, v)| Some((k, v?))));
            other.stdin(Stdio::null());
            cmd = other;
        }
        cmd
    };
    let started = Instant::now();
    let seeded = run(command("crawler-seed").args(["--follow", &nginx.url("/")]));
    assert!(seeded.status.success(), "{}", stderr(&seeded));
    let worker = run(command("crawler-worker").arg("--drain"));
    let time = started.elapsed();
    assert!(worker.status.success(), "{}", stderr(&worker));
    if std::env::var_os("TEST_LOG").is_some() {
        let which = if bins.is_some() {
            "baseline"
        } else {
            "crawler"
        };
        let log = format!("/tmp/fragments-bench-{which}-{}-{run_no}.log", site.pages);
        std::fs::write(&log, &worker.stderr).unwrap();
        println!("  crawler run {run_no}: the worker's log is in {log}");
    }
    let out = run(command("crawler-report").args(["--all", "--format", "ndjson"]));
    assert!(out.status.success(), "{}", stderr(&out));
    // url → (verdict, fragment, found_on)
    let mut reported: BTreeMap<String, (String, Option<String>, BTreeSet<String>)> =
        BTreeMap::new();
    for line in stdout(&out).lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let found_on = v["found_on"].as_array().unwrap();
        reported.insert(
            normal(v["url"].as_str().unwrap()),
            (
                v["verdict"].as_str().unwrap_or("").to_owned(),
                v["fragment"].as_str().map(str::to_owned),
                found_on
                    .iter()
                    .map(|r| normal(r.as_str().unwrap()))
                    .collect(),
            ),
        );
    }
    let mut found = Found {
        time,
        ..Found::default()
    };
    for (url, (expect, referrers)) in site.expected(nginx.origin()) {
        let site_of = reported.get(&url);
        let missing = site_of.is_some_and(|s| s.1.as_deref() == Some("missing"));
        let on_all = site_of.is_some_and(|s| referrers.is_subset(&s.2));
        match expect {
            Expect::Missing => {
                found.broken += 1;
                found.broken_found += usize::from(missing && on_all);
            }
            Expect::Found => found.wrongly_missing += usize::from(missing),
            Expect::DeadPage => {}
        }
    }
    for url in site.removed(nginx.origin()) {
        found.removed += 1;
        let dead = reported.get(&url).is_some_and(|s| s.0 == "dead");
        found.removed_dead += usize::from(dead);
    }
    found.count_requests(&nginx, site);
    found
}

/// lychee over every page of the site with `--include-fragments`, at the crawler's default
/// politeness; read back from its JSON report.
fn check_with_lychee(site: &Site, lychee: &Lychee) -> Found {
    let nginx = Nginx::serve(site.dir.path());
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("ly.json");
    let started = Instant::now();
    let status = Command::new(&lychee.path)
        .args(["--no-progress", "--include-fragments"])
        .args(["--host-concurrency", "8", "--host-request-interval", "50ms"])
        .args(["--timeout", "20", "--max-retries", "2", "--format", "json"])
        .arg("--output")
        .arg(&out)
        .args((0..site.pages).map(|i| nginx.url(&path(i))))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("start lychee");
    let time = started.elapsed();
    let mut found = Found {
        time,
        ..Found::default()
    };
    let Some(json) = std::fs::read_to_string(&out)
        .ok()
        .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
    else {
        found.note = format!("  (no JSON report; lychee: {status})");
        return found;
    };
    // (url, referring page) of every failure: its error_map is keyed by the input (the page).
    let mut failed: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for map in ["error_map", "fail_map"] {
        for (input, entries) in json[map].as_object().into_iter().flatten() {
            for entry in entries.as_array().into_iter().flatten() {
                let url = normal(entry["url"].as_str().unwrap_or(""));
                failed.entry(url).or_default().insert(normal(input));
            }
        }
    }
    for (url, (expect, referrers)) in site.expected(nginx.origin()) {
        let on_all = failed.get(&url).is_some_and(|on| referrers.is_subset(on));
        match expect {
            Expect::Missing => {
                found.broken += 1;
                found.broken_found += usize::from(on_all);
            }
            Expect::Found => found.wrongly_missing += usize::from(failed.contains_key(&url)),
            Expect::DeadPage => {}
        }
    }
    for url in site.removed(nginx.origin()) {
        found.removed += 1;
        found.removed_dead += usize::from(failed.contains_key(&url));
    }
    found.count_requests(&nginx, site);
    found
}
