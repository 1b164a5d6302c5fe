//! Link rot over time, on every backend: passes of the binaries over a local site whose links
//! die, recover and move between passes, with new links added for the second
//! (`crawler-seed --recheck`); what `crawler-report --changed-since` lists and counts, what
//! `--fail-on` then fails on, and which links `--moved` says moved.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::time::Duration;

use crawler_tests::bins::{command, run, stderr};
use crawler_tests::static_site::{spawn_static_site, Answer, StaticSite};
use crawler_tests::{on_every_backend, TestDb};
use serde_json::Value;

use crate::e2e::{spawn_worker, wait};
use crate::pipelines::report_exits;

/// The exit code of a report that found what `--fail-on` names.
const FOUND: i32 = 4;

/// The first pass's links, and what each answers then.
fn first_pass() -> Vec<(&'static str, Answer)> {
    vec![
        ("/stays", Answer::html("a page")),
        ("/dies", Answer::html("a page")),
        ("/recovers", Answer::with(404, "text/html", "gone")),
        ("/moves", Answer::html("a page")),
        ("/slash", Answer::html("a page")),
        ("/temporary", Answer::html("a page")),
        ("/new-home", Answer::html("the moved page")),
        ("/slash/", Answer::html("the same page")),
    ]
}

/// What changes before the second pass, and the links it adds.
fn second_pass(site: &StaticSite) {
    site.set("/dies", Answer::with(404, "text/html", "gone"));
    site.set("/recovers", Answer::html("back"));
    site.set("/moves", Answer::redirect(301, "/new-home"));
    site.set("/slash", Answer::redirect(301, "/slash/"));
    site.set("/temporary", Answer::redirect(302, "/new-home"));
    site.set("/new-alive", Answer::html("a new page"));
}

/// A list of `paths` of `site`, as a file.
fn list(site: &StaticSite, paths: &[&str]) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    for path in paths {
        writeln!(file, "{}", site.url(path)).unwrap();
    }
    file
}

/// `crawler-seed` with `args`, then one worker drains the queue.
fn pass(db: &TestDb, args: &[&str], file: &tempfile::NamedTempFile) {
    let out = run(command("crawler-seed", db.url.expose())
        .args(args)
        .arg(file.path()));
    assert!(out.status.success(), "crawler-seed: {}", stderr(&out));
    let mut worker = spawn_worker(db, "w1", &["--drain"]);
    assert!(wait(&mut worker, Duration::from_secs(60)).success());
}

/// The database's clock, as RFC 3339 (what a user would type).
async fn now(db: &TestDb) -> String {
    let ms = db.queue().await.now().await.unwrap();
    let at = time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000).unwrap();
    at.format(&time::format_description::well_known::Rfc3339)
        .unwrap()
}

/// A JSON report: its sites' paths, each with its verdict and the one it replaced (`new` for
/// a first verdict).
fn changes(db: &TestDb, site: &StaticSite, args: &[&str]) -> BTreeMap<String, (String, String)> {
    let mut args = args.to_vec();
    args.extend(["--format", "json"]);
    let json: Value = serde_json::from_str(&report_exits(db, &args, 0)).unwrap();
    let prefix = site.url("");
    json.as_array()
        .unwrap()
        .iter()
        .map(|row| {
            let path = row["url"].as_str().unwrap().strip_prefix(&prefix).unwrap();
            let verdict = row["verdict"].as_str().unwrap().to_owned();
            let previous = row["previous_verdict"].as_str().unwrap_or("new").to_owned();
            assert!(row["changed_at"].as_str().is_some(), "{row}");
            (path.to_owned(), (verdict, previous))
        })
        .collect()
}

fn expect(rows: &[(&str, &str, &str)]) -> BTreeMap<String, (String, String)> {
    rows.iter()
        .map(|(p, v, was)| ((*p).to_owned(), ((*v).to_owned(), (*was).to_owned())))
        .collect()
}

on_every_backend!(
    async fn a_second_pass_reports_what_changed_and_fails_only_on_what_broke(backend: Backend) {
        let db = backend.fresh().await;
        let pages: HashMap<String, Answer> = first_pass()
            .into_iter()
            .map(|(path, answer)| (path.to_owned(), answer))
            .collect();
        let site = spawn_static_site("127.0.0.1", pages).await;
        let first = [
            "/stays",
            "/dies",
            "/recovers",
            "/moves",
            "/slash",
            "/temporary",
        ];
        pass(&db, &[], &list(&site, &first));
        let after_first = now(&db).await;
        // Every first verdict is a change: a new link is news.
        assert_eq!(
            changes(&db, &site, &["--all", "--changed-since", "1h"]).len(),
            first.len()
        );

        second_pass(&site);
        let mut both = first.to_vec();
        both.extend(["/new-alive", "/new-dead"]);
        pass(&db, &["--recheck"], &list(&site, &both));

        let since = ["--changed-since", after_first.as_str()];
        assert_eq!(
            changes(&db, &site, &[&["--all"][..], &since].concat()),
            expect(&[
                ("/dies", "dead", "alive"),
                ("/new-alive", "alive", "new"),
                ("/new-dead", "dead", "new"),
                ("/recovers", "alive", "dead"),
            ]),
            "every change of verdict, and only those: a move is not one"
        );
        assert_eq!(
            changes(&db, &site, &[&["--alive"][..], &since].concat()),
            expect(&[
                ("/new-alive", "alive", "new"),
                ("/recovers", "alive", "dead")
            ])
        );
        let newly_dead = [&["--dead", "--fail-on", "dead"][..], &since].concat();
        let text = report_exits(&db, &newly_dead, FOUND);
        let mut lines: Vec<&str> = text.lines().collect();
        lines.sort();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(lines[0].starts_with(&format!("{} 404 dead was alive since ", site.url("/dies"))));
        assert!(lines[1].starts_with(&format!("{} 404 dead new since ", site.url("/new-dead"))));
        let summary = report_exits(
            &db,
            &[&["--summary", "--format", "csv"][..], &since].concat(),
            0,
        );
        let counts: Vec<&str> = summary
            .lines()
            .skip(1)
            .map(|line| line.split_once(',').unwrap().1)
            .collect();
        assert_eq!(
            counts,
            [",alive,1", ",dead,1", "alive,dead,1", "dead,alive,1"],
            "new links first, then by previous verdict: {summary}"
        );

        // Moved: the permanent redirect to another page, not the one that adds a slash, nor the
        // temporary one; listed with the URL to write instead, and newly moved since the first.
        let moved = |args: &[&str]| {
            let args = [&["--moved", "--format", "json"][..], args].concat();
            let json: Value = serde_json::from_str(&report_exits(&db, &args, 0)).unwrap();
            let rows = json.as_array().unwrap().clone();
            rows.iter()
                .map(|r| {
                    (
                        r["url"].as_str().unwrap().to_owned(),
                        r["moved_to"].as_str().unwrap().to_owned(),
                    )
                })
                .collect::<Vec<_>>()
        };
        let expected = vec![(site.url("/moves"), site.url("/new-home"))];
        assert_eq!(moved(&[]), expected);
        assert_eq!(moved(&since), expected, "newly moved");
        report_exits(
            &db,
            &[&["--moved", "--fail-on", "moved"][..], &since].concat(),
            FOUND,
        );

        let before_third = now(&db).await;
        pass(&db, &["--recheck"], &list(&site, &both));
        let since = ["--changed-since", before_third.as_str()];
        let unchanged = [&["--dead", "--fail-on", "dead"][..], &since].concat();
        assert_eq!(
            report_exits(&db, &unchanged, 0),
            "",
            "nothing broke in the third pass"
        );
        assert!(changes(&db, &site, &[&["--all"][..], &since].concat()).is_empty());
        assert!(
            moved(&since).is_empty(),
            "moved before the third pass: not newly"
        );
        assert_eq!(moved(&[]), expected, "still moved");
        report_exits(
            &db,
            &[&["--moved", "--fail-on", "moved"][..], &since].concat(),
            0,
        );
        // The links that were dead already still fail a report that does not ask for changes.
        report_exits(&db, &["--dead", "--fail-on", "dead"], FOUND);
    }
);
