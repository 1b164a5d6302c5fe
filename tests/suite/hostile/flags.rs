//! See mod.rs. A bad value exits 2 with an `error:` line naming its option, before any database
//! connection: the database URL these tests give cannot be opened, which would exit 1.

use std::process::Command;
use std::time::Duration;

use crawler_tests::bins::{bin, run, stderr};
use crawler_tests::on_every_backend;
use crawler_tests::site::{spawn_site, Page};

use crate::e2e::{reported, seed, spawn_worker, url_file, wait};

/// A database that cannot be opened: reaching it exits 1, not 2.
const NO_DATABASE: &str = "sqlite:///nonexistent/dir/crawler.db";

/// Runs binary `name` with `args` (and `env`) against [`NO_DATABASE`].
pub(crate) fn run_against_nothing(
    name: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> (Option<i32>, String) {
    let mut cmd = Command::new(bin(name));
    cmd.args(args).env("DATABASE_URL", NO_DATABASE);
    for (key, value) in env {
        cmd.env(key, value);
    }
    let out = run(&mut cmd);
    (out.status.code(), stderr(&out))
}

/// Asserts exit 2 and a first line `error: …` naming `option`, with no panic.
pub(crate) fn assert_usage_error(name: &str, args: &[&str], env: &[(&str, &str)], option: &str) {
    let (code, err) = run_against_nothing(name, args, env);
    let first = err.lines().next().unwrap_or_default();
    let context = format!("{name} {args:?} {env:?}: {err}");
    assert_eq!(code, Some(2), "{context}");
    assert!(
        first.starts_with("error: ") && first.contains(option),
        "{context}"
    );
    assert!(!err.contains("panicked"), "{context}");
}

const TOO_LONG: &str = "99999999999h";

#[test]
fn zero_durations_are_usage_errors_that_name_the_option() {
    for option in [
        "--heartbeat",
        "--reap-every",
        "--lease",
        "--timeout",
        "--connect-timeout",
        "--dead-after",
        "--retry-delay",
    ] {
        assert_usage_error("crawler-worker", &[option, "0s"], &[], option);
    }
    for option in ["--every", "--dead-after", "--recheck-after"] {
        assert_usage_error("crawler-reap", &[option, "0s"], &[], option);
    }
}

#[test]
fn durations_long_enough_to_overflow_are_usage_errors() {
    for option in [
        "--heartbeat",
        "--reap-every",
        "--lease",
        "--grace",
        "--timeout",
        "--connect-timeout",
        "--dead-after",
        "--retry-delay",
        "--max-retry-after",
    ] {
        assert_usage_error("crawler-worker", &[option, TOO_LONG], &[], option);
    }
    for option in ["--every", "--dead-after", "--recheck-after"] {
        assert_usage_error("crawler-reap", &[option, TOO_LONG], &[], option);
    }
}

#[test]
fn a_bad_duration_from_the_environment_names_its_option() {
    let env = [("CRAWLER_HEARTBEAT", "0s")];
    assert_usage_error("crawler-worker", &[], &env, "--heartbeat");
    let env = [("CRAWLER_REAPER_EVERY", TOO_LONG)];
    assert_usage_error("crawler-reap", &[], &env, "--every");
}

#[test]
fn a_dead_after_within_two_heartbeats_is_a_usage_error() {
    for args in [
        &["--heartbeat", "10s", "--dead-after", "10s"][..],
        &["--heartbeat", "1m", "--dead-after", "5s"][..],
        // The default heartbeat is 10s.
        &["--dead-after", "15s"][..],
        &["--heartbeat", "31s"][..],
    ] {
        assert_usage_error("crawler-worker", args, &[], "--dead-after");
    }
}

#[test]
fn values_at_the_edges_of_their_ranges_get_as_far_as_the_database() {
    for (name, args) in [
        (
            "crawler-worker",
            &[
                "--heartbeat",
                "100ms",
                "--dead-after",
                "200ms",
                "--reap-every",
                "100ms",
            ][..],
        ),
        ("crawler-worker", &["--lease", "1s", "--timeout", "1ms"][..]),
        (
            "crawler-worker",
            &["--connect-timeout", "1ms", "--retry-delay", "100ms"][..],
        ),
        (
            "crawler-worker",
            &["--grace", "0s", "--max-retry-after", "0s"][..],
        ),
        (
            "crawler-worker",
            &[
                "--lease",
                "30d",
                "--heartbeat",
                "15d",
                "--dead-after",
                "30d",
            ][..],
        ),
        ("crawler-worker", &["--id", &"é".repeat(255)][..]),
        (
            "crawler-reap",
            &["--every", "100ms", "--dead-after", "200ms"][..],
        ),
        (
            "crawler-reap",
            &["--recheck-after", "3650d", "--id", &"x".repeat(255)][..],
        ),
    ] {
        let (code, err) = run_against_nothing(name, args, &[]);
        assert_eq!(code, Some(1), "{name} {args:?}: {err}");
        assert!(err.contains("/nonexistent/dir"), "{name} {args:?}: {err}");
    }
}

#[test]
fn an_id_longer_than_its_column_is_a_usage_error() {
    let long = "w".repeat(256);
    let wide = "é".repeat(256);
    // A terminal escape: ids are printed in logs and reports.
    for id in [&long, &wide, "", "w\u{1b}[2J"] {
        assert_usage_error("crawler-worker", &["--id", id], &[], "--id");
        assert_usage_error("crawler-reap", &["--id", id], &[], "--id");
    }
    let env = [("CRAWLER_WORKER_ID", long.as_str())];
    assert_usage_error("crawler-worker", &[], &env, "--id");
}

on_every_backend!(
    async fn an_id_as_wide_as_its_column_claims_and_reaps(backend: Backend) {
        let site = spawn_site().await;
        let db = backend.fresh().await;
        let (file, _) = url_file(&site, 3, &[Page::Alive]);
        seed(&db, file.path());
        // 255 characters of two bytes each: the columns count characters, not bytes.
        let mut worker = spawn_worker(&db, &"é".repeat(255), &["--drain"]);
        let status =
            tokio::task::spawn_blocking(move || wait(&mut worker, Duration::from_secs(60)))
                .await
                .unwrap();
        assert!(status.success(), "{status:?}");
        let verdicts: Vec<_> = reported(&db).into_values().map(|(v, _)| v).collect();
        assert_eq!(verdicts, ["alive"; 3]);
    }
);

#[test]
fn a_bad_host_limits_file_is_a_usage_error_naming_its_line() {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    std::io::Write::write_all(&mut file, b"# mine\nok.example 4 10\nbad.example four 10\n")
        .unwrap();
    let path = file.path().to_str().unwrap().to_owned();
    assert_usage_error(
        "crawler-worker",
        &["--host-limits", &path],
        &[],
        &format!("{path}:3"),
    );
    assert_usage_error(
        "crawler-worker",
        &["--host-limits", "/nonexistent/limits.txt"],
        &[],
        "--host-limits",
    );
}
