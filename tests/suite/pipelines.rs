//! What scripts and CI jobs rely on, on every backend: `crawler-report --fail-on` and its exit
//! code, the report written to a file with `-o`, `--summary` in every format, the site report's
//! columns, `--host HOST:PORT`, and a missing SQLite database refused by report and reap; and of
//! every binary, its own `--help`, its own environment variables, its man page and completions.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use crawler_queue::{Finding, NewSite, Queue, Verdict};
use crawler_tests::bins::{bin, command, run, stderr, stdout};
use crawler_tests::findings::{alive, outcomes_of};
use crawler_tests::site::{spawn_site, Page};
use crawler_tests::{on_every_backend, Backend, TestDb};
use serde_json::{Map, Value};

use crate::e2e::{seed, spawn_worker, url_file, wait};

/// The exit code of a report that found what `--fail-on` names.
const FOUND: i32 = 4;

/// The README's CI recipe's report, but for its `-o FILE`.
const CI_REPORT: [&str; 5] = ["--dead", "--fail-on", "dead", "--format", "csv"];

const LEASE: Duration = Duration::from_secs(600);

const BINARIES: [&str; 5] = [
    "crawler-seed",
    "crawler-worker",
    "crawler-reap",
    "crawler-report",
    "crawler-dashboard",
];

/// The site report's CSV header: the first seven columns as they always were, then the new ones.
const SITE_HEADER: &str = "url,verdict,status,error_kind,final_url,checked_at,attempts,\
                           latency_ms,redirects,last_alive_at,consecutive_failures,detail,\
                           found_on,found_count,dead_since,confirmed_at,archived_url,archived_at,\
                           fragment,changed_at,previous_verdict,moved_to,moved_at";

/// A final result with `verdict` and `status`.
fn finding(verdict: Verdict, status: u16) -> Finding {
    Finding {
        verdict,
        status: Some(status),
        ..alive()
    }
}

/// Claims every due site and gives each the finding `of` its URL.
async fn check_all(queue: &Queue, of: impl Fn(&str) -> Finding) {
    let batch = queue.claim("checker", 1000, LEASE).await.unwrap();
    let outcomes: Vec<_> = batch
        .sites
        .into_iter()
        .flat_map(|site| {
            let finding = of(&site.url);
            outcomes_of([site], &finding)
        })
        .collect();
    queue.complete(&outcomes).await.unwrap();
}

/// Seeds `urls` (`https://HOST/…`, no port) through the queue's API.
async fn seed_urls(queue: &Queue, urls: &[&str]) {
    let sites: Vec<NewSite> = urls
        .iter()
        .map(|url| NewSite {
            url: (*url).into(),
            host: url::Url::parse(url).unwrap().host_str().unwrap().into(),
        })
        .collect();
    queue.seed(&sites, false).await.unwrap();
}

/// A fresh database on `backend` holding `sites` (URLs without port), each with its finding.
async fn checked_sites(backend: Backend, sites: &[(&str, Finding)]) -> (TestDb, Queue) {
    let db = backend.fresh().await;
    let queue = db.queue().await;
    let urls: Vec<&str> = sites.iter().map(|(url, _)| *url).collect();
    seed_urls(&queue, &urls).await;
    let finding_of = |url: &str| sites.iter().find(|(u, _)| *u == url).unwrap().1.clone();
    check_all(&queue, finding_of).await;
    (db, queue)
}

/// `crawler-report` with `args`, run to its end.
fn report(db: &TestDb, args: &[&str]) -> Output {
    run(command("crawler-report", db.url.expose()).args(args))
}

/// `crawler-report` with `args`, which must exit `code`; returns its stdout.
pub(crate) fn report_exits(db: &TestDb, args: &[&str], code: i32) -> String {
    let out = report(db, args);
    assert_eq!(
        out.status.code(),
        Some(code),
        "crawler-report {args:?}: {}",
        stderr(&out)
    );
    stdout(&out)
}

/// The URLs of a text report, sorted.
fn urls_of(text: &str) -> BTreeSet<String> {
    text.lines()
        .map(|line| line.split(' ').next().unwrap().to_owned())
        .collect()
}

/// A CSV report without quoted fields, as one JSON object per row (every value a string).
fn csv_objects(csv: &str) -> Vec<Map<String, Value>> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    lines
        .map(|line| {
            let cells: Vec<&str> = line.split(',').collect();
            assert_eq!(cells.len(), header.len(), "{line}");
            header
                .iter()
                .zip(cells)
                .map(|(k, v)| ((*k).to_owned(), Value::from(v)))
                .collect()
        })
        .collect()
}

/// Unix milliseconds of an RFC 3339 time.
fn millis(value: &Value) -> i64 {
    let text = value.as_str().unwrap_or_else(|| panic!("a time: {value}"));
    let time = time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|e| panic!("{text}: {e}"));
    (time.unix_timestamp_nanos() / 1_000_000) as i64
}

/// A SQLite database that exists, made by `crawler-seed` from an empty list.
fn seeded_sqlite(dir: &Path) -> String {
    let url = format!("sqlite://{}", dir.join("crawler.db").display());
    let out = run(command("crawler-seed", &url).arg("/dev/null"));
    assert!(out.status.success(), "{}", stderr(&out));
    url
}

on_every_backend!(
    async fn fail_on_exits_4_only_when_the_report_finds_such_a_site(backend: Backend) {
        let (db, _) = checked_sites(
            backend,
            &[
                ("https://a.example/ok", alive()),
                ("https://a.example/gone", finding(Verdict::Dead, 404)),
                ("https://b.example/ok", alive()),
                ("https://b.example/private", finding(Verdict::Blocked, 403)),
            ],
        )
        .await;

        let dead = report_exits(&db, &["--dead", "--fail-on", "dead"], FOUND);
        assert_eq!(dead, "https://a.example/gone 404 dead\n");
        report_exits(&db, &["--dead"], 0);
        let none = report_exits(
            &db,
            &["--dead", "--fail-on", "dead", "--host", "b.example"],
            0,
        );
        assert_eq!(none, "", "b.example has no dead site");
        report_exits(
            &db,
            &["--dead", "--fail-on", "not-alive", "--host", "b.example"],
            FOUND,
        );
        report_exits(
            &db,
            &["--alive", "--fail-on", "not-alive", "--host", "a.example"],
            FOUND,
        );
        report_exits(&db, &["--summary", "--fail-on", "dead"], FOUND);
        report_exits(&db, &["--fail-on", "dead", "--format", "json"], FOUND);
        let out = report(&db, &["--dead", "--fail-on", "gone"]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains("--fail-on"), "{}", stderr(&out));
    }
);

on_every_backend!(
    async fn a_report_written_with_o_holds_what_stdout_would_and_stdout_stays_empty(
        backend: Backend,
    ) {
        let (db, _) = checked_sites(
            backend,
            &[
                ("https://a.example/1", alive()),
                ("https://a.example/2", finding(Verdict::Dead, 410)),
            ],
        )
        .await;
        let dir = tempfile::tempdir().unwrap();
        for (format, args) in [
            ("csv", &["--all"][..]),
            ("json", &["--dead"][..]),
            ("ndjson", &["--summary"][..]),
            ("text", &["--hosts"][..]),
        ] {
            let path = dir.path().join(format!("report.{format}"));
            let to_stdout = report_exits(&db, &[args, &["--format", format]].concat(), 0);
            let path_text = path.to_str().unwrap();
            let printed = report_exits(
                &db,
                &[args, &["--format", format, "-o", path_text]].concat(),
                0,
            );
            assert_eq!(printed, "", "{format}: nothing on stdout");
            let written = std::fs::read_to_string(&path).unwrap();
            assert_eq!(written, to_stdout, "{format}");
        }
        // A failing report still writes its file, then exits 4.
        let path = dir.path().join("dead.csv");
        let path_text = path.to_str().unwrap();
        report_exits(&db, &[&CI_REPORT[..], &["-o", path_text]].concat(), FOUND);
        let rows = csv_objects(&std::fs::read_to_string(&path).unwrap());
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0]["url"], "https://a.example/2");
        let names: BTreeSet<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names.len(), 5, "no temporary file is left: {names:?}");
    }
);

#[test]
fn an_unwritable_report_file_is_an_error_naming_it_and_an_old_one_is_kept_on_failure() {
    let dir = tempfile::tempdir().unwrap();
    let url = seeded_sqlite(dir.path());
    let not_a_dir = dir.path().join("plain-file");
    std::fs::write(&not_a_dir, "").unwrap();
    let target = not_a_dir.join("report.csv");
    let out = run(command("crawler-report", &url).args(["--all", "-o", target.to_str().unwrap()]));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: ") && err.contains(target.to_str().unwrap()),
        "{err}"
    );

    // A report that fails (here, no database) leaves the file it would replace as it was.
    let old = dir.path().join("old.csv");
    std::fs::write(&old, "old report\n").unwrap();
    let out = run(
        command("crawler-report", "mysql://crawler@127.0.0.1:1/crawl").args([
            "--all",
            "-o",
            old.to_str().unwrap(),
        ]),
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&old).unwrap(), "old report\n");
    let names: BTreeSet<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|name| !name.starts_with("crawler.db"))
        .collect();
    assert_eq!(
        names,
        BTreeSet::from(["old.csv".to_owned(), "plain-file".to_owned()]),
        "no temporary file is left"
    );
}

on_every_backend!(
    async fn the_summary_is_printed_in_the_format_asked_for(backend: Backend) {
        let (db, queue) = checked_sites(
            backend,
            &[
                ("https://a.example/1", alive()),
                ("https://a.example/2", alive()),
                ("https://a.example/3", finding(Verdict::Dead, 404)),
            ],
        )
        .await;
        seed_urls(&queue, &["https://b.example/new"]).await;

        let counts = [
            ("pending", 1),
            ("claimed", 0),
            ("done", 3),
            ("alive", 2),
            ("dead", 1),
            ("blocked", 0),
            ("unreachable", 0),
            ("error", 0),
        ];
        let json: Value =
            serde_json::from_str(&report_exits(&db, &["--summary", "--format", "json"], 0))
                .unwrap();
        let summary = &json.as_array().expect("an array of one summary")[0];
        for (key, n) in counts {
            assert_eq!(summary[key], n, "{key} in {summary}");
        }
        assert_eq!(summary["workers"], Value::Array(vec![]), "{summary}");
        assert_eq!(summary["top_dead_hosts"][0]["host"], "a.example");
        assert_eq!(summary["top_dead_hosts"][0]["dead"], 1);

        let ndjson = report_exits(&db, &["--format", "ndjson"], 0);
        assert_eq!(ndjson.lines().count(), 1, "{ndjson}");
        assert_eq!(&serde_json::from_str::<Value>(&ndjson).unwrap(), summary);

        let csv = csv_objects(&report_exits(&db, &["--summary", "--format", "csv"], 0));
        assert_eq!(csv.len(), 1);
        for (key, n) in counts {
            assert_eq!(csv[0][key], n.to_string(), "{key} in {csv:?}");
        }
        assert_eq!(csv[0]["workers"], "0");

        let text = report_exits(&db, &["--summary"], 0);
        assert!(
            text.starts_with("sites: 1 pending, 0 claimed, 3 done\n"),
            "{text}"
        );
        for format in ["csv", "json", "ndjson"] {
            let out = report(&db, &["--dead", "--summary", "--format", format]);
            assert_eq!(out.status.code(), Some(2), "{format}: {}", stderr(&out));
            assert!(stderr(&out).contains("--summary"), "{}", stderr(&out));
        }
    }
);

on_every_backend!(
    async fn site_rows_carry_latency_redirects_final_url_last_alive_and_failures(backend: Backend) {
        let db = backend.fresh().await;
        let queue = db.queue().await;
        seed_urls(&queue, &["https://a.example/moved", "https://a.example/up"]).await;
        let first_check = queue.now().await.unwrap();
        check_all(&queue, |_| alive()).await;
        let alive_by = queue.now().await.unwrap();
        // /moved is checked again, and now redirects twice to a 404.
        let moved = NewSite {
            url: "https://a.example/moved".into(),
            host: "a.example".into(),
        };
        assert_eq!(queue.seed(&[moved], true).await.unwrap().rechecked, 1);
        check_all(&queue, |_| Finding {
            final_url: Some("https://a.example/new-home".into()),
            redirects: 2,
            latency: Duration::from_millis(35),
            ..finding(Verdict::Dead, 404)
        })
        .await;

        let ndjson = report_exits(&db, &["--all", "--format", "ndjson"], 0);
        let rows: Vec<Value> = ndjson
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let row = |url: &str| {
            rows.iter()
                .find(|r| r["url"] == url)
                .unwrap_or_else(|| panic!("{url} in {ndjson}"))
                .clone()
        };
        let (up, moved) = (row("https://a.example/up"), row("https://a.example/moved"));
        // Their order is the unit tests' (report/sites.rs), and the CSV header's below.
        let keys: BTreeSet<&str> = up.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, SITE_HEADER.split(',').collect(), "{up}");
        assert_eq!(up["latency_ms"], 20);
        assert_eq!(up["redirects"], 0);
        assert_eq!(up["consecutive_failures"], 0);
        assert_eq!(up["last_alive_at"], up["checked_at"]);
        assert_eq!(moved["verdict"], "dead");
        assert_eq!(moved["latency_ms"], 35);
        assert_eq!(moved["redirects"], 2);
        assert_eq!(moved["final_url"], "https://a.example/new-home");
        assert_eq!(moved["consecutive_failures"], 1);
        let last_alive = millis(&moved["last_alive_at"]);
        assert!((first_check..=alive_by).contains(&last_alive), "{moved}");
        assert!(millis(&moved["checked_at"]) >= last_alive);

        let csv = report_exits(&db, &["--dead", "--format", "csv"], 0);
        assert_eq!(csv.lines().next().unwrap(), SITE_HEADER);
        let csv = csv_objects(&csv);
        assert_eq!(csv[0]["redirects"], "2");
        assert_eq!(csv[0]["latency_ms"], "35");
        assert_eq!(csv[0]["consecutive_failures"], "1");
        assert_eq!(csv[0]["last_alive_at"], moved["last_alive_at"]);
        let text = report_exits(&db, &["--dead"], 0);
        assert_eq!(
            text, "https://a.example/moved 404 dead\n",
            "text is unchanged"
        );
    }
);

on_every_backend!(
    async fn host_with_a_port_keeps_the_sites_on_that_port(backend: Backend) {
        let db = backend.fresh().await;
        let mut list = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(
            &mut list,
            b"https://a.example/1\n\
              https://a.example:8080/2\n\
              http://a.example:8080/3\n\
              http://a.example/4\n\
              HTTPS://A.example:443/5\n\
              https://b.example:8080/6\n\
              http://a.example:443/7\n",
        )
        .unwrap();
        seed(&db, list.path());
        check_all(&db.queue().await, |_| alive()).await;

        let on = |host: &str| urls_of(&report_exits(&db, &["--all", "--host", host], 0));
        let urls = |paths: &[&str]| -> BTreeSet<String> {
            paths.iter().map(|p| (*p).to_owned()).collect()
        };
        assert_eq!(
            on("a.example:8080"),
            urls(&["http://a.example:8080/3", "https://a.example:8080/2"])
        );
        assert_eq!(
            on("A.Example:443"),
            urls(&[
                "http://a.example:443/7",
                "https://a.example/1",
                "https://a.example/5"
            ])
        );
        assert_eq!(on("a.example:80"), urls(&["http://a.example/4"]));
        assert_eq!(on("a.example").len(), 6, "no port: every port");
        assert_eq!(on("a.example:9"), urls(&[]));
        assert_eq!(on("b.example:8080"), urls(&["https://b.example:8080/6"]));
        let csv = csv_objects(&report_exits(
            &db,
            &["--all", "--host", "a.example:8080", "--format", "csv"],
            0,
        ));
        assert_eq!(csv.len(), 2);
        report_exits(
            &db,
            &["--all", "--host", "a.example:8080", "--fail-on", "dead"],
            0,
        );
        for (args, word) in [
            (&["--all", "--host", "https://a.example/"][..], "--host"),
            (&["--all", "--host", "a.example:99999"][..], "--host"),
            (&["--hosts", "--host", "a.example:8080"][..], "--host"),
        ] {
            let out = report(&db, args);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
            assert!(stderr(&out).contains(word), "{args:?}: {}", stderr(&out));
        }
    }
);

#[test]
fn report_and_reap_refuse_a_sqlite_database_that_does_not_exist() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("typo.db");
    let url = format!("sqlite://{}", path.display());
    for (name, args) in [
        ("crawler-report", &["--dead"][..]),
        ("crawler-report", &[][..]),
        ("crawler-reap", &[][..]),
    ] {
        let out = run(command(name, &url).args(args));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(err.contains(path.to_str().unwrap()), "{name}: {err}");
        assert!(!path.exists(), "{name} created {}", path.display());
    }
    // The seed still creates it, and then the report reads it.
    let out = run(command("crawler-seed", &url).arg("/dev/null"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(path.exists());
    let out = run(command("crawler-report", &url).arg("--dead"));
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn each_binary_has_its_own_about_line_in_help() {
    let abouts: Vec<String> = BINARIES
        .iter()
        .map(|name| {
            let out = run(Command::new(bin(name)).arg("--help"));
            assert!(out.status.success(), "{name}");
            stdout(&out).lines().next().unwrap_or_default().to_owned()
        })
        .collect();
    let distinct: BTreeSet<&String> = abouts.iter().collect();
    assert_eq!(distinct.len(), BINARIES.len(), "{abouts:#?}");
    for (name, about) in BINARIES.iter().zip(&abouts) {
        assert!(
            !about.is_empty() && !about.contains("crawler-seed, crawler-reap and crawler-report"),
            "{name}: {about}"
        );
    }
}

/// The environment variables `name` reads, as its `--help` names them.
pub fn env_vars(name: &str) -> BTreeSet<String> {
    let out = run(Command::new(bin(name)).arg("--help").env_clear());
    stdout(&out)
        .split("[env: ")
        .skip(1)
        .map(|rest| rest.split([']', '=']).next().unwrap().to_owned())
        .collect()
}

#[test]
fn no_two_binaries_read_one_environment_variable_unless_it_means_the_same_to_both() {
    // The same setting for each binary that reads it, so a fleet sets it once.
    let shared = [
        "DATABASE_URL",
        "CRAWLER_DEAD_AFTER",
        "CRAWLER_INCLUDE",
        "CRAWLER_EXCLUDE",
        "CRAWLER_LOG_FORMAT",
        // One file for every binary, a table each (crates/cli/src/config.rs).
        "CRAWLER_CONFIG",
    ];
    let read: Vec<(&str, BTreeSet<String>)> = BINARIES.iter().map(|n| (*n, env_vars(n))).collect();
    for (i, (a, a_vars)) in read.iter().enumerate() {
        for (b, b_vars) in &read[i + 1..] {
            let both: Vec<&String> = a_vars
                .intersection(b_vars)
                .filter(|v| !shared.contains(&v.as_str()))
                .collect();
            assert!(both.is_empty(), "{a} and {b} both read {both:?}");
        }
    }
    assert!(read[2].1.contains("CRAWLER_REAPER_EVERY"), "{:?}", read[2]);
    assert!(read[1].1.contains("CRAWLER_REAP_EVERY"), "{:?}", read[1]);
}

#[test]
fn a_one_shot_reap_ignores_the_workers_reap_interval_in_its_environment() {
    let dir = tempfile::tempdir().unwrap();
    let url = seeded_sqlite(dir.path());
    let mut reap = command("crawler-reap", &url)
        .env("CRAWLER_REAP_EVERY", "1s")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let status = wait(&mut reap, Duration::from_secs(20));
    assert!(status.success(), "{status:?}");
    let mut out = String::new();
    std::io::Read::read_to_string(&mut reap.stdout.take().unwrap(), &mut out).unwrap();
    assert_eq!(out.lines().count(), 1, "one pass: {out}");
    assert!(out.starts_with("gave back "), "{out}");
}

#[test]
fn every_binary_generates_its_man_page_and_shell_completions_without_a_database() {
    for name in BINARIES {
        let generate = |kind: &str| {
            let out = run(Command::new(bin(name))
                .args(["--generate", kind])
                .env("DATABASE_URL", "sqlite:///nonexistent/dir/crawler.db"));
            assert!(out.status.success(), "{name} {kind}: {}", stderr(&out));
            stdout(&out)
        };
        let man = generate("man");
        assert!(
            man.starts_with(".ie") || man.contains(".TH"),
            "{name}: {man}"
        );
        assert!(
            man.contains(name) && man.contains("database\\-url"),
            "{name}: {man}"
        );
        for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
            let script = generate(&format!("complete-{shell}"));
            assert!(
                script.contains(name) && script.contains("database-url"),
                "{name} {shell}: {script}"
            );
            assert!(!script.contains("--generate"), "{name} {shell}: hidden");
        }
        let help = stdout(&run(Command::new(bin(name)).arg("--help")));
        assert!(!help.contains("--generate"), "{name}: {help}");
    }
}

on_every_backend!(
    async fn the_ci_recipe_fails_the_job_on_dead_links_and_passes_without(backend: Backend) {
        let site = spawn_site().await;
        let dir = tempfile::tempdir().unwrap();
        let dead_csv = dir.path().join("dead.csv");
        let dead_csv = dead_csv.to_str().unwrap();
        let recipe = [&CI_REPORT[..], &["-o", dead_csv]].concat();
        for (kinds, code, dead) in [
            (&[Page::Alive, Page::Redirect][..], 0, 0),
            (
                &[Page::Alive, Page::Dead, Page::Gone, Page::Redirect][..],
                FOUND,
                10,
            ),
        ] {
            let db = backend.fresh().await;
            let (list, _) = url_file(&site, 20, kinds);
            seed(&db, list.path());
            let mut worker = spawn_worker(&db, "ci", &["--drain"]);
            let status =
                tokio::task::spawn_blocking(move || wait(&mut worker, Duration::from_secs(60)))
                    .await
                    .unwrap();
            assert!(status.success(), "{status:?}");
            let out = report(&db, &recipe);
            assert_eq!(out.status.code(), Some(code), "{}", stderr(&out));
            let rows = csv_objects(&std::fs::read_to_string(dead_csv).unwrap());
            assert_eq!(rows.len(), dead, "{rows:?}");
            assert!(rows.iter().all(|r| r["verdict"] == "dead"), "{rows:?}");
        }
    }
);
