//! Database URLs that cannot work are usage errors (exit 2) naming the problem in one line,
//! before any connection; and the password in them is never printed, anywhere.

use std::process::Command;

use crawler_tests::bins::{bin, run, stderr, stdout};

/// In every URL below, so that a leak cannot hide.
const PASSWORD: &str = "Pw-7f3e9c1d-never-print";

/// `(URL, a word of the message that names its problem)`.
fn bad_urls() -> Vec<(String, &'static str)> {
    [
        ("oracle://crawler:PW@127.0.0.1:1/crawl", "\"oracle\""),
        ("postgres://crawler:PW@127.0.0.1:1", "no database"),
        (
            "postgresql://crawler:12/PW@127.0.0.1:1/crawl",
            "percent-encode",
        ),
        ("mysql://crawler:PW@127.0.0.1:1", "no database"),
        ("mysql://crawler:PW@127.0.0.1:1/", "no database"),
        ("mysql://crawler:PW@[127.0.0.1/crawl", "malformed"),
        ("mysql://crawler:12/PW@127.0.0.1:1/crawl", "percent-encode"),
        ("mysql://crawler:PW/x@127.0.0.1:1/crawl", "malformed"),
        ("PW@127.0.0.1/crawl", "no scheme"),
        ("sqlite://", "no file"),
    ]
    .into_iter()
    .map(|(url, word)| (url.replace("PW", PASSWORD), word))
    .collect()
}

/// A binary with its arguments, against no database at all unless told.
fn crawler(name: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(bin(name));
    cmd.args(args)
        .env_remove("DATABASE_URL")
        .env("RUST_LOG", "info");
    cmd
}

const BINARIES: [(&str, &[&str]); 4] = [
    ("crawler-seed", &["/dev/null"]),
    ("crawler-worker", &["--drain"]),
    ("crawler-reap", &[]),
    ("crawler-report", &["--dead"]),
];

#[test]
fn database_urls_that_cannot_work_are_usage_errors_without_the_password() {
    for (name, args) in BINARIES {
        for (url, word) in bad_urls() {
            let by_option = run(crawler(name, args).args(["--database-url", &url]));
            let by_env = run(crawler(name, args).env("DATABASE_URL", &url));
            for out in [by_option, by_env] {
                let (out_text, err) = (stdout(&out), stderr(&out));
                assert_eq!(out.status.code(), Some(2), "{name} {url}: {err}");
                assert_eq!(err.lines().count(), 1, "{name} {url}: {err}");
                assert!(
                    err.starts_with("error: the database url") && err.contains(word),
                    "{name} {url}: {err}"
                );
                assert!(
                    !err.contains(PASSWORD) && !out_text.contains(PASSWORD),
                    "{name} {url}: {out_text}{err}"
                );
            }
        }
    }
}

#[test]
fn a_database_url_given_to_seed_as_a_file_is_a_usage_error_without_the_password() {
    let dir = tempfile::tempdir().unwrap();
    let database = format!("sqlite://{}", dir.path().join("crawler.db").display());
    let url = format!("mysql://crawler:{PASSWORD}@127.0.0.1:1/crawl");
    let out = run(crawler("crawler-seed", &[&url]).env("DATABASE_URL", &database));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("mysql://127.0.0.1:1/crawl") && err.contains("--database-url"),
        "{err}"
    );
    assert!(
        !err.contains(PASSWORD) && !stdout(&out).contains(PASSWORD),
        "{err}"
    );
    assert!(
        !dir.path().join("crawler.db").exists(),
        "a usage error connects to nothing"
    );
}
