//! The real binaries end to end, on every backend: seed a local site, crawl it with several
//! workers, and check the report against what the site serves.

use std::collections::HashMap;
use std::io::Write;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use crawler_tests::bins::{command, run, stderr, stdout};
use crawler_tests::site::{spawn_site, Page, Site};
use crawler_tests::{on_every_backend, TestDb};

/// Worker options for a local site: no politeness limits worth the name, short timeouts.
pub const FAST: &[&str] = &[
    "--host-rate",
    "100000",
    "--host-concurrency",
    "200",
    // Every local site is on loopback: one address, limited as the hosts are (no more than
    // them), and shared by the fleet through the database all the same.
    "--ip-rate",
    "100000",
    "--ip-concurrency",
    "200",
    "--concurrency",
    "64",
    "--batch-size",
    "100",
    "--timeout",
    "5s",
    "--retries",
    "0",
    "--attempts",
    "1",
    "--reap-every",
    "1s",
];

/// A list of `n` URLs of the site, every kind of page in turn; returns the file and each
/// URL's expected page.
pub fn url_file(
    site: &Site,
    n: usize,
    kinds: &[Page],
) -> (tempfile::NamedTempFile, HashMap<String, Page>) {
    write_urls(std::slice::from_ref(site), n, kinds)
}

/// A list of `per_host` URLs on each of `hosts` sites at 127.0.9.1, 127.0.9.2, …, every kind of
/// page in turn: different hosts to the crawler, so their host partitions spread over a fleet.
pub async fn spread_url_file(
    hosts: usize,
    per_host: usize,
    kinds: &[Page],
) -> (tempfile::NamedTempFile, HashMap<String, Page>) {
    let ips: Vec<String> = (1..=hosts).map(|h| format!("127.0.9.{h}")).collect();
    url_file_at(&ips, per_host, kinds).await
}

/// `per_host` URLs on each of the local hosts `ips` (a test site on each), every kind of page
/// in turn.
pub async fn url_file_at(
    ips: &[String],
    per_host: usize,
    kinds: &[Page],
) -> (tempfile::NamedTempFile, HashMap<String, Page>) {
    let mut sites = Vec::new();
    for ip in ips {
        sites.push(crawler_tests::site::spawn_site_at(ip).await);
    }
    write_urls(&sites, per_host, kinds)
}

/// `per_site` URLs of each of `sites`, every kind of page in turn.
fn write_urls(
    sites: &[Site],
    per_site: usize,
    kinds: &[Page],
) -> (tempfile::NamedTempFile, HashMap<String, Page>) {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    let mut expected = HashMap::new();
    for site in sites {
        for i in 0..per_site {
            let page = kinds[i % kinds.len()];
            let url = site.url(page, i);
            writeln!(file, "{url}").unwrap();
            expected.insert(url, page);
        }
    }
    file.flush().unwrap();
    (file, expected)
}

pub fn seed(db: &TestDb, file: &std::path::Path) -> String {
    let out = run(command("crawler-seed", db.url.expose()).arg(file));
    assert!(
        out.status.success(),
        "crawler-seed failed: {}",
        stderr(&out)
    );
    stdout(&out)
}

pub fn spawn_worker(db: &TestDb, id: &str, extra: &[&str]) -> Child {
    worker_command(db, id, extra).spawn().unwrap()
}

/// Two workers, `w1` and `w2`, drain the queue together; each must end well within `limit`.
pub fn drain_with_two(db: &TestDb, limit: Duration) {
    let mut workers = [
        spawn_worker(db, "w1", &["--drain"]),
        spawn_worker(db, "w2", &["--drain"]),
    ];
    for worker in &mut workers {
        assert!(wait(worker, limit).success());
    }
}

/// `crawler-worker --id id` with the [`FAST`] settings and `extra`, not started.
pub fn worker_command(db: &TestDb, id: &str, extra: &[&str]) -> Command {
    let mut worker = command("crawler-worker", db.url.expose());
    worker.args(["--id", id]).args(FAST).args(extra);
    worker
}

/// Waits for `child` to exit, killing it after `limit`.
pub fn wait(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("a process ran longer than {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Every reported site: url → (verdict, status), asserting none is reported twice.
pub fn reported(db: &TestDb) -> HashMap<String, (String, Option<u64>)> {
    let out = run(command("crawler-report", db.url.expose()).args(["--all", "--format", "ndjson"]));
    assert!(
        out.status.success(),
        "crawler-report failed: {}",
        stderr(&out)
    );
    let mut sites = HashMap::new();
    for line in stdout(&out).lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let url = v["url"].as_str().unwrap().to_owned();
        let verdict = v["verdict"].as_str().unwrap().to_owned();
        assert!(
            sites
                .insert(url.clone(), (verdict, v["status"].as_u64()))
                .is_none(),
            "{url} reported twice"
        );
    }
    sites
}

/// Asserts the report holds every expected URL exactly once, with the verdict its page calls for.
pub fn assert_report_matches(db: &TestDb, expected: &HashMap<String, Page>) {
    let sites = reported(db);
    assert_eq!(
        sites.len(),
        expected.len(),
        "every seeded site reported once"
    );
    for (url, page) in expected {
        let (verdict, status) = page.expected();
        assert_eq!(
            sites.get(url),
            Some(&(verdict.to_owned(), Some(u64::from(status)))),
            "{url}"
        );
    }
}

pub fn unfinished(db: &TestDb) -> (i64, i64) {
    let out = run(command("crawler-report", db.url.expose()).arg("--summary"));
    let text = stdout(&out);
    let line = text
        .lines()
        .find(|l| l.starts_with("sites:"))
        .unwrap_or_else(|| panic!("no summary: {text}"));
    let n: Vec<i64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|s| s.parse().ok())
        .collect();
    (n[0], n[1])
}

on_every_backend!(
    async fn three_draining_workers_crawl_a_site_and_the_report_matches_it(backend: Backend) {
        let site = spawn_site().await;
        let db = backend.fresh().await;
        let (file, expected) = url_file(
            &site,
            5000,
            &[
                Page::Alive,
                Page::Alive,
                Page::Dead,
                Page::Redirect,
                Page::Slow,
                Page::Gone,
                Page::Blocked,
                Page::Error,
            ],
        );
        assert_eq!(
            seed(&db, file.path()).trim(),
            "added 5000, already known 0, rejected 0"
        );
        let mut workers: Vec<_> = (0..3)
            .map(|i| spawn_worker(&db, &format!("w{i}"), &["--drain"]))
            .collect();
        tokio::task::spawn_blocking(move || {
            for w in &mut workers {
                assert!(wait(w, Duration::from_secs(180)).success());
            }
        })
        .await
        .unwrap();
        assert_report_matches(&db, &expected);
        assert_eq!(unfinished(&db), (0, 0));
        let dead = run(command("crawler-report", db.url.expose()).arg("--dead"));
        let dead = stdout(&dead);
        assert_eq!(
            dead.lines().count(),
            expected
                .values()
                .filter(|p| p.expected().0 == "dead")
                .count()
        );
        assert!(
            dead.lines()
                .all(|l| l.ends_with(" 404 dead") || l.ends_with(" 410 dead")),
            "{dead}"
        );
    }
);

on_every_backend!(
    async fn bad_input_is_reported_by_line_and_every_good_line_is_seeded(backend: Backend) {
        let db = backend.fresh().await;
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(b"\xEF\xBB\xBFhttps://one.example/\r\n")
            .unwrap(); // 1: BOM + CRLF
        file.write_all(b"\x00\xFF\xFEgarbage\x81\n").unwrap(); // 2: not UTF-8
        file.write_all(&[b'a'; 20_000]).unwrap(); // 3: too long
        file.write_all(b"\nftp://files.example/x\n").unwrap(); // 4: another scheme
        file.write_all(b"# a comment\n\n").unwrap(); // 5, 6
        file.write_all(b"HTTPS://ONE.example:443/#frag\n").unwrap(); // 7: duplicate of line 1
        file.write_all(b"two.example/page\n").unwrap(); // 8: no scheme
        file.write_all(b"http://bad host/\n").unwrap(); // 9: bad host
        file.write_all(b"http://three.example").unwrap(); // 10: no final newline
        file.flush().unwrap();
        let out = run(command("crawler-seed", db.url.expose()).arg(file.path()));
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stdout(&out).trim(), "added 3, already known 1, rejected 4");
        let path = file.path().display().to_string();
        let errors: Vec<_> = stderr(&out)
            .lines()
            .filter(|l| l.starts_with(&path))
            .map(|l| l[path.len()..].to_owned())
            .collect();
        assert_eq!(errors.len(), 4, "{errors:?}");
        for (line, words) in [(2, "utf-8"), (3, "longer than 8192"), (4, "ftp"), (9, "")] {
            assert!(
                errors
                    .iter()
                    .any(|e| e.starts_with(&format!(":{line}: ")) && e.contains(words)),
                "line {line}: {errors:?}"
            );
        }
        let counts = run(command("crawler-report", db.url.expose()).arg("--summary"));
        assert!(
            stdout(&counts).contains("sites: 3 pending"),
            "{}",
            stdout(&counts)
        );
    }
);

on_every_backend!(
    async fn sigterm_mid_crawl_gives_back_the_workers_sites_at_once(backend: Backend) {
        let site = spawn_site().await;
        let db = backend.fresh().await;
        let (file, expected) = url_file(&site, 600, &[Page::Slow]);
        seed(&db, file.path());
        let mut first = spawn_worker(
            &db,
            "first",
            &["--concurrency", "20", "--grace", "1s", "--lease", "10m"],
        );
        let started = Instant::now();
        while reported(&db).len() < 40 {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the first worker checks nothing"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        unsafe { libc::kill(first.id() as i32, libc::SIGTERM) };
        let status = wait(&mut first, Duration::from_secs(15));
        assert!(
            status.success(),
            "a worker stopped by SIGTERM exits 0: {status:?}"
        );
        let (pending, claimed) = unfinished(&db);
        assert_eq!(claimed, 0, "nothing stays claimed after a clean stop");
        assert!(pending > 0);
        // Its lease was 10 minutes: the rest finishes now only because it gave its sites back.
        let mut second = spawn_worker(&db, "second", &["--drain"]);
        assert!(wait(&mut second, Duration::from_secs(60)).success());
        assert_report_matches(&db, &expected);
    }
);

on_every_backend!(
    async fn four_processes_starting_at_once_migrate_one_database(backend: Backend) {
        let db = backend.fresh().await;
        // The seed, as the report and the reaper refuse a SQLite database that is not there.
        let children: Vec<_> = (0..4)
            .map(|_| {
                command("crawler-seed", db.url.expose())
                    .arg("/dev/null")
                    .output()
            })
            .collect();
        for child in children {
            let out = child.unwrap();
            assert!(out.status.success(), "{}", stderr(&out));
        }
    }
);

#[test]
fn an_unreachable_database_is_one_clear_line_without_the_password() {
    let url = "mysql://crawler:s3cret-pw@127.0.0.1:1/crawldb";
    for (name, args) in [
        ("crawler-seed", &["/dev/null"][..]),
        ("crawler-worker", &[][..]),
        ("crawler-reap", &[][..]),
        ("crawler-report", &["--dead"][..]),
    ] {
        let mut cmd = command(name, url);
        cmd.args(args);
        let started = Instant::now();
        let out = run(&mut cmd);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{name} took {:?}",
            started.elapsed()
        );
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(
            err.contains("127.0.0.1:1") && err.contains("crawldb"),
            "{name}: {err}"
        );
        assert!(
            !err.contains("s3cret") && !err.contains("panicked"),
            "{name}: {err}"
        );
    }
}

#[test]
fn help_names_every_default_and_environment_variable_but_no_password() {
    for name in [
        "crawler-seed",
        "crawler-worker",
        "crawler-reap",
        "crawler-report",
    ] {
        let out = run(Command::new(crawler_tests::bins::bin(name))
            .arg("--help")
            .env("DATABASE_URL", "mysql://u:s3cret@h/d"));
        let help = stdout(&out);
        assert!(out.status.success());
        assert!(
            help.contains("[env: DATABASE_URL]") && !help.contains("s3cret"),
            "{name}: {help}"
        );
        let version = run(Command::new(crawler_tests::bins::bin(name)).arg("--version"));
        assert!(stdout(&version).starts_with(&format!("{name} ")));
    }
    let worker = stdout(&run(Command::new(crawler_tests::bins::bin(
        "crawler-worker",
    ))
    .arg("--help")));
    for option in [
        "--lease",
        "--concurrency",
        "--batch-size",
        "--timeout",
        "--host-rate",
        "--public-only",
    ] {
        // The option's block: its line and the description lines under it.
        let block: Vec<&str> = worker
            .lines()
            .skip_while(|l| !l.trim_start().starts_with(option))
            .take_while({
                let mut first = true;
                move |l| std::mem::take(&mut first) || !l.trim_start().starts_with('-')
            })
            .collect();
        assert!(!block.is_empty(), "{option} missing");
        assert!(
            block.concat().contains("[env: CRAWLER_"),
            "{option} has an env var: {block:?}"
        );
    }
    assert!(
        worker.contains("[default: 2m]") && worker.contains("[default: 512]"),
        "{worker}"
    );
}

#[test]
fn bad_option_values_are_usage_errors_that_name_the_option() {
    for (name, args, words) in [
        ("crawler-worker", &["--host-rate", "0"][..], "--host-rate"),
        ("crawler-worker", &["--lease", "10ms"][..], "--lease"),
        ("crawler-worker", &["--batch-size", "0"][..], "--batch-size"),
        ("crawler-worker", &["--lease", "soon"][..], "--lease"),
        ("crawler-reap", &["--every", "0s"][..], "--every"),
        ("crawler-report", &["--format", "xml"][..], "--format"),
        (
            "crawler-seed",
            &["--no-such-option"][..],
            "--no-such-option",
        ),
    ] {
        let out = run(Command::new(crawler_tests::bins::bin(name))
            .args(args)
            .env("DATABASE_URL", "sqlite:///nonexistent/x.db"));
        assert_eq!(
            out.status.code(),
            Some(2),
            "{name} {args:?}: {}",
            stderr(&out)
        );
        assert!(
            stderr(&out).contains(words),
            "{name} {args:?}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn the_worker_raises_a_low_open_files_limit() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("crawler.db").display());
    let mut cmd = command("crawler-worker", &url);
    cmd.arg("--drain").env("RUST_LOG", "info");
    // SAFETY: setrlimit between fork and exec touches only the child.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
            let limit = libc::rlimit {
                rlim_cur: 256,
                rlim_max: 4096,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    let out = run(&mut cmd);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("raised the open-files limit from 256 to 4096"),
        "{}",
        stderr(&out)
    );
}
