//! Recursive checking of a real documentation site against Debian's `linkchecker`, in the same
//! run: Python's HTML docs (Debian's `python3.11-doc`), some pages deleted, served by a private
//! nginx on loopback; both crawl it from `index.html` at 10 requests at once, no rate limit,
//! links kept on the site (the crawler with `--include`, linkchecker by its default of not
//! checking external links). Prints each one's time, the broken links each found and their
//! referrers, what one found that the other did not, and false dead links (reported dead, but
//! the file is there), then the crawler's time and database size again with `--no-fragments`
//! (the cost of checking links to sections), and both again at the worker's default pace (20
//! requests a second to a host), where the site's politeness, not the database, sets the time.
//! Asserts nothing.
//!
//! Run: `cargo bench -p crawler-tests --bench follow` (needs `nginx`, `linkchecker` and
//! `python3.11-doc`: `apt-get install nginx-light linkchecker python3.11-doc`).
//!
//! - `FOLLOW_BENCH_DOCS=/usr/share/doc/python3.11/html`: the site;
//! - `FOLLOW_BENCH_DELETE_EVERY=20`: every Nth page (in path order; not `index.html`) deleted;
//! - `FOLLOW_BENCH_LINKCHECKER=0`: skip linkchecker;
//! - `FOLLOW_BENCH_DEFAULTS=0`: skip the two crawls at the worker's default pace (about a
//!   minute);
//! - `FOLLOW_BENCH_PAGES=1000000`: then crawl a generated site of that many pages with 4
//!   workers (`generated.rs`), with and without fragments: every page read once, each
//!   worker's memory as it goes;
//!   `FOLLOW_BENCH_DOCS=none` skips the docs; `FOLLOW_BENCH_BACKEND=sqlite` (default),
//!   `mariadb` or `postgres` (a private server the test support starts).

mod generated;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crawler_tests::bins::{command, run, stderr, stdout};
use crawler_tests::nginx::Nginx;

/// (broken URL, page it is on) pairs.
type Pairs = BTreeSet<(String, String)>;

fn main() {
    let _ = crawler_tests::bins::bin("crawler-worker"); // builds the binaries of this profile
    if std::env::var("FOLLOW_BENCH_DOCS").as_deref() != Ok("none") {
        docs_bench();
    }
    if let Some(pages) = std::env::var("FOLLOW_BENCH_PAGES")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        generated::bench(pages);
    }
}

fn docs_bench() {
    let docs = std::env::var("FOLLOW_BENCH_DOCS")
        .unwrap_or_else(|_| "/usr/share/doc/python3.11/html".to_owned());
    let every: usize = std::env::var("FOLLOW_BENCH_DELETE_EVERY")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("site");
    copy_site(Path::new(&docs), &root);
    let deleted = delete_pages(&root, every);
    let pages = html_files(&root).len();
    let nginx = Nginx::serve(&root);
    let base = nginx.url("/");
    println!(
        "follow benchmark: {docs}, {pages} pages served ({} deleted), nginx at {base}, {} cores",
        deleted.len(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );

    let (crawler_time, crawler_pairs, crawler_dead) =
        crawl(tmp.path(), &base, Fragments::Checked, Pace::Unlimited);
    let (plain_time, plain_pairs, _) =
        crawl(tmp.path(), &base, Fragments::Skipped, Pace::Unlimited);
    let size =
        |fragments: Fragments| database_size(tmp.path(), fragments, Pace::Unlimited) as f64 / 1e6;
    println!(
        "crawler with fragments {:.1} s, database {:.1} MB; with --no-fragments {:.1} s, {:.1} MB: \
         {:.2}x the time; {} of the {} broken (link, page) pairs are links to sections",
        crawler_time.as_secs_f64(),
        size(Fragments::Checked),
        plain_time.as_secs_f64(),
        size(Fragments::Skipped),
        crawler_time.as_secs_f64() / plain_time.as_secs_f64(),
        crawler_pairs.difference(&plain_pairs).count(),
        crawler_pairs.len(),
    );
    if std::env::var("FOLLOW_BENCH_DEFAULTS").as_deref() != Ok("0") {
        let (time, pairs, _) = crawl(tmp.path(), &base, Fragments::Checked, Pace::Defaults);
        let (plain, plain_at_defaults, _) =
            crawl(tmp.path(), &base, Fragments::Skipped, Pace::Defaults);
        println!(
            "at the worker's default pace: with fragments {:.1} s, with --no-fragments {:.1} s: \
             {:.2}x the time; broken (link, page) pairs {} and {} (the same as above: {})",
            time.as_secs_f64(),
            plain.as_secs_f64(),
            time.as_secs_f64() / plain.as_secs_f64(),
            pairs.len(),
            plain_at_defaults.len(),
            pairs == crawler_pairs && plain_at_defaults == plain_pairs,
        );
    }
    let linkchecker = (std::env::var("FOLLOW_BENCH_LINKCHECKER").as_deref() != Ok("0"))
        .then(|| linkcheck(tmp.path(), &base));
    drop(nginx);

    let false_dead = |dead: &BTreeSet<String>| {
        dead.iter()
            .filter(|url| exists(&root, &base, url))
            .cloned()
            .collect::<Vec<_>>()
    };
    report(
        "crawler",
        crawler_time,
        &crawler_pairs,
        &false_dead(&crawler_dead),
    );
    if let Some((time, pairs, dead)) = &linkchecker {
        report("linkchecker", *time, pairs, &false_dead(dead));
        let only = |a: &Pairs, b: &Pairs| a.difference(b).count();
        println!(
            "(broken link, page) pairs: {} found by both, {} by the crawler only, {} by linkchecker only",
            crawler_pairs.intersection(pairs).count(),
            only(&crawler_pairs, pairs),
            only(pairs, &crawler_pairs)
        );
        for (url, page) in pairs.difference(&crawler_pairs).take(10) {
            println!("  linkchecker only: {url} on {page}");
        }
        for (url, page) in crawler_pairs.difference(pairs).take(10) {
            println!("  crawler only: {url} on {page}");
        }
        println!(
            "crawler {:.1} s, linkchecker {:.1} s: {:.1}x",
            crawler_time.as_secs_f64(),
            time.as_secs_f64(),
            time.as_secs_f64() / crawler_time.as_secs_f64()
        );
    }
}

fn report(who: &str, time: Duration, pairs: &Pairs, false_dead: &[String]) {
    let urls: BTreeSet<&String> = pairs.iter().map(|(url, _)| url).collect();
    println!(
        "{who}: {:.1} s, {} broken links on {} (link, page) pairs, {} false dead{}",
        time.as_secs_f64(),
        urls.len(),
        pairs.len(),
        false_dead.len(),
        false_dead
            .first()
            .map(|u| format!(" (e.g. {u})"))
            .unwrap_or_default()
    );
}

/// Whether a crawl checks the links to sections of pages (the default) or not
/// (`--no-fragments`).
#[derive(Clone, Copy, PartialEq)]
enum Fragments {
    Checked,
    Skipped,
}

/// How fast a crawl may ask the site: 10 at once with no rate limit, as linkchecker does, or
/// at the worker's defaults (8 at once, 20 a second, to a host).
#[derive(Clone, Copy, PartialEq)]
enum Pace {
    Unlimited,
    Defaults,
}

/// Each crawl has its own database.
fn database(tmp: &Path, fragments: Fragments, pace: Pace) -> PathBuf {
    let fragments = match fragments {
        Fragments::Checked => "",
        Fragments::Skipped => "-no-fragments",
    };
    let pace = match pace {
        Pace::Unlimited => "",
        Pace::Defaults => "-defaults",
    };
    tmp.join(format!("crawl{fragments}{pace}.db"))
}

/// The crawl's SQLite files, its write-ahead log included, in bytes.
fn database_size(tmp: &Path, fragments: Fragments, pace: Pace) -> u64 {
    let db = database(tmp, fragments, pace);
    ["", "-wal"]
        .iter()
        .filter_map(|suffix| std::fs::metadata(format!("{}{suffix}", db.display())).ok())
        .map(|m| m.len())
        .sum()
}

/// Seeds `--follow BASE/index.html`, drains one worker at `pace`; returns the time, the dead
/// links with every page they are on, and the dead URLs.
fn crawl(
    tmp: &Path,
    base: &str,
    fragments: Fragments,
    pace: Pace,
) -> (Duration, Pairs, BTreeSet<String>) {
    let url = format!("sqlite://{}", database(tmp, fragments, pace).display());
    let include = format!("^{}", regex_escape(base));
    let started = Instant::now();
    let start = format!("{base}index.html");
    let mut seed = vec!["--follow", &start, "--include", &include];
    if fragments == Fragments::Skipped {
        seed.push("--no-fragments");
    }
    let seeded = run(command("crawler-seed", &url).args(seed));
    assert!(seeded.status.success(), "{}", stderr(&seeded));
    let unlimited = [
        "--concurrency",
        "10",
        "--host-concurrency",
        "10",
        "--host-rate",
        "1000000",
        "--attempts",
        "1",
    ];
    let pace = match pace {
        Pace::Unlimited => &unlimited[..],
        Pace::Defaults => &[],
    };
    let worker = run(command("crawler-worker", &url).arg("--drain").args(pace));
    assert!(worker.status.success(), "{}", stderr(&worker));
    let time = started.elapsed();
    let out = run(command("crawler-report", &url).args(["--dead", "--format", "ndjson"]));
    let (mut pairs, mut dead) = (Pairs::new(), BTreeSet::new());
    for line in stdout(&out).lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let url = v["url"].as_str().unwrap().to_owned();
        for page in v["found_on"].as_array().unwrap() {
            pairs.insert((url.clone(), normal(page.as_str().unwrap())));
        }
        let kept = v["found_on"].as_array().unwrap().len() as u64;
        if kept < v["found_count"].as_u64().unwrap() {
            println!("  (crawler: {url} is on more pages than it keeps)");
        }
        dead.insert(url);
    }
    (time, pairs, dead)
}

/// Runs linkchecker at 10 threads; returns its time, broken links and pages, broken URLs.
fn linkcheck(tmp: &Path, base: &str) -> (Duration, Pairs, BTreeSet<String>) {
    // linkchecker run as root drops to `nobody`: its output goes where nobody can write.
    let out_dir = tmp.join("linkchecker");
    std::fs::create_dir_all(&out_dir).unwrap();
    chmod(&out_dir, "777");
    let csv = out_dir.join("out.csv");
    let started = Instant::now();
    let status = Command::new("linkchecker")
        .args(["--threads", "10", "--no-status", "-F"])
        .arg(format!("csv/utf-8/{}", csv.display()))
        .arg(format!("{base}index.html"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run linkchecker (apt-get install linkchecker)");
    let time = started.elapsed();
    assert!(
        status.code().is_some_and(|c| c <= 1),
        "linkchecker: {status}"
    );
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    let header: Vec<&str> = lines.next().unwrap().split(';').collect();
    let col = |name| header.iter().position(|h| *h == name).unwrap();
    let (url_col, parent_col, valid_col) = (col("url"), col("parentname"), col("valid"));
    let (mut pairs, mut dead) = (Pairs::new(), BTreeSet::new());
    for line in lines {
        let fields: Vec<&str> = line.split(';').collect();
        if fields.len() <= valid_col || fields[valid_col] != "False" {
            continue;
        }
        let url = normal(fields[url_col]);
        pairs.insert((url.clone(), normal(fields[parent_col])));
        dead.insert(url);
    }
    (time, pairs, dead)
}

/// A URL without its fragment, as both tools' URLs compare.
fn normal(url: &str) -> String {
    url::Url::parse(url.trim_matches('"'))
        .map(|mut u| {
            u.set_fragment(None);
            u.to_string()
        })
        .unwrap_or_else(|_| url.to_owned())
}

/// Whether the file `url` names is on the site (then reporting it dead is a false dead).
fn exists(root: &Path, base: &str, url: &str) -> bool {
    let Some(path) = url.strip_prefix(base) else {
        return false;
    };
    let path = path.split(['?', '#']).next().unwrap_or_default();
    let file = root.join(path);
    file.is_file() || file.join("index.html").is_file()
}

fn copy_site(from: &Path, to: &Path) {
    let status = Command::new("cp")
        .arg("-rL")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(status.success(), "copy {}", from.display());
    chmod(to.parent().unwrap(), "755");
    let status = Command::new("chmod")
        .args(["-R", "a+rX"])
        .arg(to)
        .status()
        .unwrap();
    assert!(status.success());
}

fn chmod(path: &Path, mode: &str) {
    let status = Command::new("chmod").arg(mode).arg(path).status().unwrap();
    assert!(status.success());
}

fn html_files(root: &Path) -> Vec<PathBuf> {
    let out = Command::new("find")
        .arg(root)
        .args(["-name", "*.html", "-type", "f"])
        .output()
        .unwrap();
    let mut files: Vec<PathBuf> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(PathBuf::from)
        .collect();
    files.sort();
    files
}

/// Deletes every `every`th page but the start page; returns their paths under `root`.
fn delete_pages(root: &Path, every: usize) -> Vec<PathBuf> {
    let pages: Vec<PathBuf> = html_files(root)
        .into_iter()
        .filter(|p| p != &root.join("index.html"))
        .collect();
    let deleted: Vec<PathBuf> = pages.into_iter().step_by(every.max(1)).collect();
    for page in &deleted {
        std::fs::remove_file(page).unwrap();
    }
    deleted
}

fn regex_escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let special = "\\.+*?()|[]{}^$".contains(c);
            special
                .then_some('\\')
                .into_iter()
                .chain(std::iter::once(c))
        })
        .collect()
}
