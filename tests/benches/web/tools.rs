//! The two tools, run as a user would over the same list: `crawler-seed` then
//! `crawler-worker --drain` at its defaults (plus a scenario's flags), and lychee; each killed
//! at the cap. What each said of every URL.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub use crawler_tests::bench::{find_lychee, Lychee};
use crawler_tests::bins::{command, run, stderr, stdout};

/// What a tool said about the list.
pub struct Verdicts {
    pub time: Duration,
    /// Whether it ended by itself before the cap.
    pub finished: bool,
    /// Whether each URL it gave a verdict was called alive.
    pub alive: HashMap<String, bool>,
    /// The URLs per verdict and cause (`dead 404`, `unreachable dns`, …).
    pub kinds: BTreeMap<String, usize>,
    /// The last line of the crawler's log (its `worker stopped: …` summary), if any.
    pub summary: String,
    /// Seconds from the worker's start to each URL's last verdict (the crawler's only).
    pub done_at: HashMap<String, f64>,
    /// When the workers were started, since the Unix epoch (the arrivals' clock).
    pub started_at: Duration,
}

/// Seeds `list` into the fresh database `url` and drains it with `flags`, within `cap`.
pub fn crawl(
    url: &str,
    dir: &Path,
    name: &str,
    list: &Path,
    flags: &[&str],
    cap: Duration,
) -> Verdicts {
    let seeded = run(command("crawler-seed", url).arg(list));
    assert!(seeded.status.success(), "crawler-seed: {}", stderr(&seeded));
    let started = Instant::now();
    let started_at = time::OffsetDateTime::now_utc();
    let started_epoch = crawler_tests::stamped::now();
    // Started together, as a fleet starts; each with a log of its own.
    let logs: Vec<_> = (0..workers())
        .map(|i| dir.join(format!("{name}-worker{i}.log")))
        .collect();
    let fleet: Vec<Child> = logs
        .iter()
        .enumerate()
        .map(|(i, log)| {
            command("crawler-worker", url)
                .env("RUST_LOG", "info")
                .args(["--drain", "--id", &format!("{name}-{i}")])
                .args(flags)
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(log).expect("create the worker log"))
                .spawn()
                .expect("start crawler-worker")
        })
        .collect();
    let mut finished = true;
    for worker in fleet {
        let left = cap.saturating_sub(started.elapsed());
        finished &= wait(worker, left);
    }
    let time = started.elapsed();
    let summary = logs
        .iter()
        .map(|log| {
            let log = std::fs::read_to_string(log).unwrap_or_default();
            log.lines()
                .rfind(|l| l.contains("worker stopped"))
                .or_else(|| log.lines().last())
                .unwrap_or("")
                .to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n  ");
    let report = run(command("crawler-report", url).args(["--all", "--format", "ndjson"]));
    assert!(
        report.status.success(),
        "crawler-report: {}",
        stderr(&report)
    );
    let mut verdicts = Verdicts {
        time,
        finished,
        alive: HashMap::new(),
        kinds: BTreeMap::new(),
        summary,
        done_at: HashMap::new(),
        started_at: started_epoch,
    };
    for line in stdout(&report).lines() {
        let site: serde_json::Value = serde_json::from_str(line).expect("an ndjson line");
        let verdict = site["verdict"].as_str().unwrap_or("none").to_owned();
        let cause = match (&site["error_kind"], &site["status"]) {
            (serde_json::Value::String(kind), _) => kind.clone(),
            (_, serde_json::Value::Number(code)) => code.to_string(),
            _ => "-".into(),
        };
        *verdicts
            .kinds
            .entry(format!("{verdict} {cause}"))
            .or_default() += 1;
        let url = site["url"].as_str().unwrap_or("").to_owned();
        if let Some(at) = site["checked_at"].as_str().and_then(|at| {
            time::OffsetDateTime::parse(at, &time::format_description::well_known::Rfc3339).ok()
        }) {
            let after = (at - started_at).as_seconds_f64();
            verdicts.done_at.insert(url.clone(), after);
        }
        verdicts.alive.insert(url, verdict == "alive");
    }
    verdicts
}

/// Runs lychee over `list` within `cap`, and reads its JSON report (none if it was killed).
pub fn lychee(
    lychee: &Lychee,
    dir: &Path,
    list: &Path,
    urls: &[String],
    cap: Duration,
) -> Verdicts {
    let out = dir.join("lychee.json");
    let log = dir.join("lychee.log");
    let _ = std::fs::remove_file(&out);
    let started = Instant::now();
    let started_at = crawler_tests::stamped::now();
    let child = Command::new(&lychee.path)
        .args(["--no-progress", "--format", "json", "--verbose", "--output"])
        .arg(&out)
        .args(crawler_tests::bench::LYCHEE_FLAGS)
        .arg(list)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).expect("create the lychee log"))
        .spawn()
        .expect("start lychee");
    let finished = wait(child, cap);
    let time = started.elapsed();
    let mut verdicts = Verdicts {
        time,
        finished,
        alive: HashMap::new(),
        kinds: BTreeMap::new(),
        summary: String::new(),
        done_at: HashMap::new(),
        started_at,
    };
    let Some(json) = std::fs::read_to_string(&out)
        .ok()
        .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
    else {
        let log = std::fs::read_to_string(&log).unwrap_or_default();
        verdicts.summary = format!("no JSON report; log: {}", log.lines().last().unwrap_or(""));
        return verdicts;
    };
    // With --verbose, every URL found alive (redirects followed) is in success_map; the
    // failures are in error_map, and the timeouts in timeout_map.
    let entries = |map: &str| -> HashMap<String, String> {
        json[map]
            .as_object()
            .into_iter()
            .flat_map(|sources| sources.values())
            .filter_map(|entries| entries.as_array())
            .flatten()
            .map(|entry| {
                let url = entry["url"].as_str().unwrap_or("").to_owned();
                (url, cause(&entry["status"]))
            })
            .collect()
    };
    let alive = entries("success_map");
    let mut failed = entries("error_map");
    failed.extend(
        entries("timeout_map")
            .into_iter()
            .map(|(u, c)| (u, format!("timeout {c}"))),
    );
    for url in urls {
        let find = |map: &HashMap<String, String>| {
            map.get(url)
                .or_else(|| map.get(&format!("{url}/")))
                .cloned()
        };
        let (kind, is_alive) = match (find(&alive), find(&failed)) {
            (Some(_), _) => ("alive".to_owned(), true),
            (None, Some(cause)) => (format!("failed {cause}"), false),
            (None, None) => ("in no map".to_owned(), false),
        };
        *verdicts.kinds.entry(kind).or_default() += 1;
        verdicts.alive.insert(url.clone(), is_alive);
    }
    verdicts.summary = [
        "total",
        "successful",
        "errors",
        "timeouts",
        "redirects",
        "excludes",
    ]
    .iter()
    .map(|k| format!("{k} {}", json[*k]))
    .collect::<Vec<_>>()
    .join(", ");
    verdicts
}

/// A short cause from a lychee status: its code, or the first words of its text.
fn cause(status: &serde_json::Value) -> String {
    if let Some(code) = status["code"].as_u64() {
        return code.to_string();
    }
    let text = status["text"].as_str().unwrap_or("?");
    let text: String = text
        .split_whitespace()
        .take(4)
        .collect::<Vec<_>>()
        .join(" ");
    text.chars().take(40).collect()
}

/// Waits for `child`, killing it at `cap`; whether it ended by itself.
/// `WEB_BENCH_WORKERS`: how many workers crawl the list together (1 by default).
pub fn workers() -> usize {
    std::env::var("WEB_BENCH_WORKERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(1)
}

fn wait(mut child: Child, cap: Duration) -> bool {
    let deadline = Instant::now() + cap;
    loop {
        if child.try_wait().expect("wait for a child").is_some() {
            return true;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
