//! The worker's request options from the command line: a bad value exits 2 with an `error:`
//! line naming its option before any database connection, and a password never prints, in
//! an error or in `--help`. And `--include`/`--exclude`, at seed and at check.

use std::io::Write;
use std::process::Command;

use crawler_tests::backend::Backend;
use crawler_tests::bins::{bin, command, run, stdout};

use crate::hostile::flags::{assert_usage_error, run_against_nothing};

const WORKER: &str = "crawler-worker";

// Each option as clap names it in a bad value's error, with its value name: an unknown
// option's error names it without one, so these tests fail where the option is missing.
const HEADER: &str = "'--header <NAME: VALUE>'";
const BASIC_AUTH: &str = "'--basic-auth <HOST=USER:PASSWORD>'";
const ACCEPT: &str = "'--accept <CODES>'";
const ACCEPT_HOST: &str = "'--accept-host <HOST=CODES>'";
const CA_CERT: &str = "'--ca-cert <FILE>'";
const CONTACT: &str = "'--contact <URL>'";

/// A file holding `text`.
fn file_with(text: &str) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(text.as_bytes()).unwrap();
    file
}

#[test]
fn a_malformed_header_is_a_usage_error_naming_the_flag() {
    for header in ["no colon", "Bad Name: v", ": v", "X-Bell: a\u{7}b"] {
        assert_usage_error(WORKER, &["--header", header], &[], HEADER);
    }
    let env = [("CRAWLER_HEADER", "X-Ok: 1\nbroken")];
    assert_usage_error(WORKER, &[], &env, HEADER);
}

#[test]
fn a_bad_basic_auth_is_a_usage_error_that_never_shows_the_password() {
    for value in [
        "s3cret",
        "a.example=s3cret",
        "a.example:8080=op:s3cret",
        "https://a.example=op:s3cret",
    ] {
        assert_usage_error(WORKER, &["--basic-auth", value], &[], BASIC_AUTH);
        let (_, err) = run_against_nothing(WORKER, &["--basic-auth", value], &[]);
        assert!(!err.contains("s3cret"), "{err}");
    }
    let twice = [
        "--basic-auth",
        "a.example=op:s3cret",
        "--basic-auth",
        "A.example=x:y",
    ];
    assert_usage_error(
        WORKER,
        &twice,
        &[],
        "--basic-auth: a.example is given twice",
    );
    let env = [("CRAWLER_BASIC_AUTH", "a.example=op:pw,s3cret")];
    assert_usage_error(WORKER, &[], &env, BASIC_AUTH);
    let (_, err) = run_against_nothing(WORKER, &[], &env);
    assert!(!err.contains("s3cret"), "{err}");
}

#[test]
fn help_never_shows_the_password_nor_the_headers_from_the_environment() {
    let out = run(Command::new(bin(WORKER))
        .arg("--help")
        .env("CRAWLER_BASIC_AUTH", "a.example=op:s3cret")
        .env("CRAWLER_HEADER", "X-Token: t0ken"));
    let help = stdout(&out);
    assert!(help.contains("--basic-auth") && help.contains("CRAWLER_BASIC_AUTH"));
    assert!(
        !help.contains("s3cret") && !help.contains("t0ken"),
        "{help}"
    );
}

#[test]
fn bad_status_lists_are_usage_errors_naming_the_flag() {
    for codes in ["", "42", "2xx", "300..=200", "200,,403"] {
        assert_usage_error(WORKER, &["--accept", codes], &[], ACCEPT);
    }
    for value in ["a.example", "a.example=4xx", "a.example:80=403", "=403"] {
        assert_usage_error(WORKER, &["--accept-host", value], &[], ACCEPT_HOST);
    }
    let twice = [
        "--accept-host",
        "a.example=403",
        "--accept-host",
        "a.example=429",
    ];
    assert_usage_error(
        WORKER,
        &twice,
        &[],
        "--accept-host: a.example is given twice",
    );
    assert_usage_error(WORKER, &[], &[("CRAWLER_ACCEPT", "ok")], ACCEPT);
}

#[test]
fn a_bad_ca_file_is_a_usage_error_naming_it() {
    let empty = file_with("");
    let garbage = file_with("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
    for file in [&empty, &garbage] {
        let path = file.path().to_str().unwrap();
        assert_usage_error(WORKER, &["--ca-cert", path], &[], path);
        assert_usage_error(WORKER, &["--ca-cert", path], &[], CA_CERT);
    }
    let missing = "/nonexistent/corporate-ca.pem";
    assert_usage_error(WORKER, &["--ca-cert", missing], &[], missing);
}

#[test]
fn a_bad_cookie_jar_is_a_usage_error_naming_its_line_and_never_a_value() {
    let jar =
        file_with("# Netscape HTTP Cookie File\n.a.example\tTRUE\t/\tFALSE\tsoon\tsid\ts3cret\n");
    let path = jar.path().to_str().unwrap().to_owned();
    let line = format!("--cookie-jar: {path}:2");
    assert_usage_error(WORKER, &["--cookie-jar", &path], &[], &line);
    let (_, err) = run_against_nothing(WORKER, &["--cookie-jar", &path], &[]);
    assert!(!err.contains("s3cret"), "{err}");
    let missing = "/nonexistent/cookies.txt";
    let cannot = format!("--cookie-jar: cannot read {missing}");
    assert_usage_error(WORKER, &["--cookie-jar", missing], &[], &cannot);
}

#[test]
fn a_contact_must_be_a_url_and_goes_with_the_default_user_agent_only() {
    for contact in ["ops@example.com", "ftp://ops.example/", "call me"] {
        assert_usage_error(WORKER, &["--contact", contact], &[], CONTACT);
    }
    let both = [
        "--contact",
        "https://ops.example/",
        "--user-agent",
        "mine/1",
    ];
    assert_usage_error(WORKER, &both, &[], CONTACT);
    assert_usage_error(WORKER, &["--user-agent", "a\u{7}b"], &[], "--user-agent");
}

#[test]
fn a_bad_regular_expression_is_a_usage_error_for_the_seed_and_the_worker() {
    for binary in ["crawler-seed", WORKER] {
        assert_usage_error(binary, &["--include", "("], &[], "'--include <REGEX>'");
        assert_usage_error(binary, &["--exclude", "[a-"], &[], "'--exclude <REGEX>'");
    }
    let env = [("CRAWLER_EXCLUDE", "ok\n(")];
    assert_usage_error("crawler-seed", &[], &env, "'--exclude <REGEX>'");
}

#[tokio::test]
async fn the_seed_skips_and_counts_the_urls_its_filter_leaves_out() {
    let db = Backend::Sqlite.fresh().await;
    let list = file_with("a.example/docs/1\nA.example/blog\nb.example/docs/x.pdf\nnot a url\n");
    let seed = command("crawler-seed", db.url.expose())
        .arg(list.path())
        .args(["--include", "/docs/", "--exclude", "[.]pdf$"])
        .output()
        .unwrap();
    assert!(seed.status.success(), "{seed:?}");
    let summary = stdout(&seed);
    let expected = "added 1, already known 0, rejected 1, excluded 2";
    assert_eq!(summary.trim(), expected);
}
