//! A repository's docs (`crawler-seed --links-in`), end to end on every backend: the fixture
//! tree `tests/fixtures/repo/` (nested Markdown and HTML, a `.gitignore`'d folder, a `.ignore`d
//! file, a hidden folder, a file `.git/info/exclude` names, a text file, a file name with a
//! comma) is walked as ripgrep would, or by a glob; every link is found exactly where its URL
//! starts (several on a line, a reference definition, inline HTML, a character reference, a
//! srcset, a `<base href>`); a local site answers them; the report's GitHub workflow commands
//! parse back to every place, and its SARIF validates against the SARIF 2.1.0 schema.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crawler_tests::bins::{command, run, stderr, stdout};
use crawler_tests::static_site::{spawn_static_site, Answer, StaticSite};
use crawler_tests::{on_every_backend, TestDb};
use serde_json::Value;

use crate::e2e::{spawn_worker, wait};

/// The fixture tree, copied to a fresh folder, with the `.git/info/exclude` that git keeps out
/// of a repository's files.
fn copy_of_the_repo() -> tempfile::TempDir {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let target = to.join(entry.file_name());
            match entry.file_type().unwrap().is_dir() {
                true => copy(&entry.path(), &target),
                false => drop(std::fs::copy(entry.path(), target).unwrap()),
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/repo");
    copy(&fixture, dir.path());
    std::fs::create_dir_all(dir.path().join(".git/info")).unwrap();
    std::fs::write(dir.path().join(".git/info/exclude"), "/docs/local.md\n").unwrap();
    dir
}

/// The site the fixture's relative links are on (`--base`): a guide with a section `usage`, a
/// page that refuses robots, an API page; anything else is a 404.
async fn spawn_docs_site() -> StaticSite {
    let pages = HashMap::from([
        (
            "/guide/ok.html".to_owned(),
            Answer::html(r#"<h2 id="usage">Usage</h2>"#),
        ),
        (
            "/private.html".to_owned(),
            Answer::with(403, "text/html", "no"),
        ),
        ("/api/ref.html".to_owned(), Answer::html("<p>ref</p>")),
    ]);
    spawn_static_site("127.0.0.1", pages).await
}

/// `crawler-seed` (or another binary) run in the copy of the repository, as in a CI job.
fn in_repo(name: &str, db: &TestDb, repo: &Path) -> Command {
    let mut cmd = command(name, db.url.expose());
    cmd.current_dir(repo);
    cmd
}

/// Every site of the report: URL → (verdict, fragment, where it was found).
fn sites(db: &TestDb, repo: &Path) -> BTreeMap<String, (String, Option<String>, BTreeSet<String>)> {
    let out = run(in_repo("crawler-report", db, repo).args(["--all", "--format", "ndjson"]));
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out)
        .lines()
        .map(|line| {
            let v: Value = serde_json::from_str(line).unwrap();
            let found_on = v["found_on"].as_array().unwrap().iter();
            let found_on = found_on.map(|r| r.as_str().unwrap().to_owned()).collect();
            let fragment = v["fragment"].as_str().map(str::to_owned);
            let verdict = v["verdict"].as_str().unwrap().to_owned();
            (
                v["url"].as_str().unwrap().to_owned(),
                (verdict, fragment, found_on),
            )
        })
        .collect()
}

/// What every link of the default walk should be: URL → (verdict, fragment, places).
fn expected_sites(
    site: &StaticSite,
    repo: &Path,
) -> BTreeMap<String, (String, Option<String>, BTreeSet<String>)> {
    let guide = std::fs::canonicalize(repo.join("docs/guide.md")).unwrap();
    let guide = url::Url::from_file_path(guide).unwrap();
    let local = |path: &str| site.url(path);
    let unreachable = |path: &str| format!("http://127.0.0.1:1{path}");
    [
        (
            local("/guide/ok.html"),
            "alive",
            None,
            &["README.md:3:18", "docs/guide.md:5:61", "docs/guide.md:5:86"][..],
        ),
        (
            local("/guide/ok.html#usage"),
            "alive",
            Some("found"),
            &["docs/guide.md:5:61"],
        ),
        (
            local("/guide/ok.html#nowhere"),
            "alive",
            Some("missing"),
            &["docs/guide.md:5:86"],
        ),
        (
            local("/gone.html?q=50%25"),
            "dead",
            None,
            &["README.md:3:52"],
        ),
        (
            unreachable("/bare"),
            "unreachable",
            None,
            &["README.md:4:6"],
        ),
        (
            unreachable("/auto"),
            "unreachable",
            None,
            &["README.md:4:47"],
        ),
        (
            local("/gone.html"),
            "dead",
            None,
            &[
                "docs/guide.md:5:46",
                "docs/guide.md:7:50",
                "docs/guide.md:13:12",
                "docs/faq, v2.md:3:14",
                "docs/api/index.html:4:10",
            ],
        ),
        (
            format!("{guide}#install"),
            "alive",
            Some("found"),
            &["docs/guide.md:6:36"],
        ),
        (
            format!("{guide}#elsewhere"),
            "alive",
            Some("missing"),
            &["docs/guide.md:6:62"],
        ),
        (
            local("/private.html"),
            "blocked",
            None,
            &["docs/guide.md:7:10"],
        ),
        (
            local("/api/ref.html"),
            "alive",
            None,
            &["docs/api/index.html:3:23", "docs/api/index.html:4:66"],
        ),
        (
            local("/api/missing.png"),
            "dead",
            None,
            &["docs/api/index.html:4:50"],
        ),
        (
            unreachable("/x?a=1&b=2"),
            "unreachable",
            None,
            &["docs/api/index.html:6:10"],
        ),
    ]
    .into_iter()
    .map(|(url, verdict, fragment, places)| {
        let places = places.iter().map(|p| p.to_string()).collect();
        let fragment = fragment.map(str::to_owned);
        (url, (verdict.to_owned(), fragment, places))
    })
    .collect()
}

/// A workflow command, parsed as the Actions runner parses one: `::NAME PROPS::MESSAGE`, the
/// properties `KEY=VALUE` separated by commas, each value and the message unescaped.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Workflow {
    level: String,
    properties: BTreeMap<String, String>,
    message: String,
}

fn parse_command(line: &str) -> Workflow {
    let unescape = |text: &str| {
        text.replace("%0D", "\r")
            .replace("%0A", "\n")
            .replace("%3A", ":")
            .replace("%2C", ",")
            .replace("%25", "%")
    };
    let rest = line
        .strip_prefix("::")
        .unwrap_or_else(|| panic!("not a command: {line}"));
    let (head, message) = rest
        .split_once("::")
        .unwrap_or_else(|| panic!("no message: {line}"));
    let (level, properties) = head.split_once(' ').unwrap_or((head, ""));
    let properties = properties
        .split(',')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (key, value) = p.split_once('=').unwrap_or_else(|| panic!("{p} in {line}"));
            (key.to_owned(), unescape(value))
        })
        .collect();
    Workflow {
        level: level.to_owned(),
        properties,
        message: unescape(message),
    }
}

/// `message` with the reason of an unreachable link cut to its kind: whether its host was
/// decided unreachable before or after its own check (`connect: decided for the host: …`)
/// depends on the order of the checks.
fn settled(message: &str) -> String {
    match message.find(" (connect") {
        Some(at) => format!("{} (connect)", &message[..at]),
        None => message.to_owned(),
    }
}

/// The annotation of a failing link at `place` (`FILE:LINE:COL`).
fn annotation(level: &str, place: &str, title: &str, message: String) -> Workflow {
    let mut parts = place.rsplitn(3, ':');
    let (col, line, file) = (parts.next(), parts.next(), parts.next());
    let properties = [
        ("file", file.unwrap()),
        ("line", line.unwrap()),
        ("col", col.unwrap()),
        ("title", title),
    ];
    Workflow {
        level: level.to_owned(),
        properties: properties
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
        message,
    }
}

/// Every failing link of `expected` at each of its places: (problem's title, its SARIF rule,
/// message, place), in no particular order.
fn failing(
    expected: &BTreeMap<String, (String, Option<String>, BTreeSet<String>)>,
) -> Vec<(&'static str, &'static str, String, String)> {
    let mut out = Vec::new();
    for (url, (verdict, fragment, places)) in expected {
        let (title, rule, message) = match (verdict.as_str(), fragment.as_deref()) {
            ("alive", Some("missing")) => (
                "Missing fragment",
                "missing-fragment",
                format!("{url}: fragment missing (its page is alive)"),
            ),
            ("alive", _) => continue,
            ("dead", _) => ("Dead link", "dead", format!("{url}: dead (HTTP 404)")),
            ("blocked", _) => (
                "Blocked link",
                "blocked",
                format!("{url}: blocked (HTTP 403)"),
            ),
            ("unreachable", _) => (
                "Unreachable link",
                "unreachable",
                format!("{url}: unreachable (connect)"),
            ),
            other => panic!("{other:?}"),
        };
        for place in places {
            out.push((title, rule, message.clone(), place.clone()));
        }
    }
    out
}

/// The SARIF 2.1.0 JSON schema the `serde-sarif` crate ships (`src/schema.json`), a
/// dev-dependency of these tests, found where cargo unpacked it.
fn sarif_schema() -> Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    // Only this machine's platform: cargo has not fetched the dependencies of others
    // (Windows' console crates), and `--offline` would fail on them.
    let rustc = Command::new("rustc")
        .arg("-vV")
        .output()
        .expect("run rustc -vV");
    let host = String::from_utf8_lossy(&rustc.stdout)
        .lines()
        .find_map(|line| line.strip_prefix("host: ").map(str::to_owned))
        .expect("rustc -vV names the host");
    let metadata = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--offline"])
        .args(["--filter-platform", &host, "--manifest-path"])
        .arg(&manifest)
        .output()
        .expect("run cargo metadata");
    assert!(
        metadata.status.success(),
        "cargo metadata: {}",
        stderr(&metadata)
    );
    let metadata: Value = serde_json::from_slice(&metadata.stdout).unwrap();
    let crate_dir = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "serde-sarif")
        .and_then(|p| p["manifest_path"].as_str())
        .map(|manifest| PathBuf::from(manifest).parent().unwrap().to_path_buf());
    let schema = crate_dir.map(|dir| dir.join("src/schema.json"));
    let text = schema
        .as_ref()
        .and_then(|s| std::fs::read_to_string(s).ok());
    let Some(text) = text else {
        panic!(
            "the SARIF 2.1.0 JSON schema is not there ({schema:?}): it comes with the crate \
             serde-sarif, a dev-dependency of crawler-tests; install it into cargo's registry \
             with `cargo fetch` (or build the tests once with access to crates.io)"
        );
    };
    // The schema's one flaw: a `]` left alone in the pattern of a `language` (of a run, of a
    // tool), which an ECMAScript regular expression reads as itself and the validator refuses
    // as a regex (it checks a schema before it validates with it). Escaped, it means the same.
    let flawed = r#""^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$""#;
    assert!(
        text.contains(flawed),
        "the SARIF schema changed: {schema:?}"
    );
    let text = text.replace(flawed, r#""^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}\\]?$""#);
    serde_json::from_str(&text).expect("the schema is JSON")
}

/// The schema's complaints about `log`, one a line (formats checked too).
fn sarif_errors(log: &Value) -> Vec<String> {
    let schema = sarif_schema();
    assert_eq!(
        schema["title"],
        "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
    );
    let validator = jsonschema::draft7::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the SARIF schema compiles");
    validator
        .iter_errors(log)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

on_every_backend!(
    async fn a_repository_is_walked_and_each_failing_link_annotated_where_it_is(backend: Backend) {
        let site = spawn_docs_site().await;
        let repo = copy_of_the_repo();
        let db = backend.fresh().await;
        let base = site.url("/");
        let seeded = run(in_repo("crawler-seed", &db, repo.path()).args([
            "--links-in",
            ".",
            "--base",
            &base,
        ]));
        assert!(seeded.status.success(), "{}", stderr(&seeded));
        assert!(
            stdout(&seeded).contains(", files read 4"),
            "README.md, docs/guide.md, docs/faq, v2.md, docs/api/index.html: {}",
            stdout(&seeded)
        );
        let mut worker = spawn_worker(&db, "w1", &["--drain"]);
        assert!(wait(&mut worker, Duration::from_secs(60)).success());

        let expected = expected_sites(&site, repo.path());
        assert_eq!(sites(&db, repo.path()), expected);

        // GitHub: what --fail-on counts is an error, the rest warnings; every command parses.
        for (fail_on, errors) in [
            (
                "dead,missing-fragment",
                &["Dead link", "Missing fragment"][..],
            ),
            (
                "not-alive",
                &["Dead link", "Blocked link", "Unreachable link"],
            ),
        ] {
            let out = run(in_repo("crawler-report", &db, repo.path()).args([
                "--all",
                "--format",
                "github",
                "--fail-on",
                fail_on,
            ]));
            assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
            let got: BTreeSet<Workflow> = stdout(&out)
                .lines()
                .map(parse_command)
                .map(|w| Workflow {
                    message: settled(&w.message),
                    ..w
                })
                .collect();
            let want: BTreeSet<Workflow> = failing(&expected)
                .into_iter()
                .map(|(title, _, message, place)| {
                    let level = match errors.contains(&title) {
                        true => "error",
                        false => "warning",
                    };
                    annotation(level, &place, title, message)
                })
                .collect();
            assert_eq!(got, want, "--fail-on {fail_on}:\n{}", stdout(&out));
            assert_eq!(stdout(&out).lines().count(), want.len());
        }

        // SARIF: valid, a result per failing link and place, in a region of its file.
        let out = run(in_repo("crawler-report", &db, repo.path())
            .args([
                "--dead",
                "--blocked",
                "--unreachable",
                "--missing-fragments",
            ])
            .args(["--format", "sarif"]));
        assert!(out.status.success(), "{}", stderr(&out));
        let log: Value = serde_json::from_str(&stdout(&out)).unwrap();
        let errors = sarif_errors(&log);
        assert!(errors.is_empty(), "{}", errors.join("\n"));
        let mut broken = log.clone();
        broken["runs"][0]["results"][0]["message"] = Value::from(404);
        assert!(!sarif_errors(&broken).is_empty(), "the schema checks");
        serde_json::from_value::<serde_sarif::sarif::Sarif>(log.clone()).unwrap();
        let got: BTreeSet<(String, String, String, u64, u64)> = log["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let at = &r["locations"][0]["physicalLocation"];
                (
                    r["ruleId"].as_str().unwrap().to_owned(),
                    settled(r["message"]["text"].as_str().unwrap()),
                    at["artifactLocation"]["uri"].as_str().unwrap().to_owned(),
                    at["region"]["startLine"].as_u64().unwrap(),
                    at["region"]["startColumn"].as_u64().unwrap(),
                )
            })
            .collect();
        let want: BTreeSet<(String, String, String, u64, u64)> = failing(&expected)
            .into_iter()
            .map(|(_, rule, message, place)| {
                let mut parts = place.rsplitn(3, ':');
                let (col, line, file) = (parts.next(), parts.next(), parts.next());
                let uri = file.unwrap().replace(',', "%2C").replace(' ', "%20");
                let number = |n: Option<&str>| n.unwrap().parse().unwrap();
                (rule.to_owned(), message, uri, number(line), number(col))
            })
            .collect();
        assert_eq!(got, want);

        // By page: a file's dead links under it, in line order, each with its place.
        let out = run(in_repo("crawler-report", &db, repo.path()).args(["--dead", "--by-page"]));
        assert!(out.status.success(), "{}", stderr(&out));
        let gone = site.url("/gone.html");
        assert!(
            stdout(&out).contains(&format!(
                "docs/guide.md\n  {gone} 404 dead at 5:46\n  {gone} 404 dead at 7:50\n  \
                 {gone} 404 dead at 13:12\n"
            )),
            "{}",
            stdout(&out)
        );
    }
);

on_every_backend!(
    async fn globs_hidden_files_other_extensions_and_a_missing_file(backend: Backend) {
        let site = spawn_docs_site().await;
        let repo = copy_of_the_repo();
        let db = backend.fresh().await;
        let seeded = run(in_repo("crawler-seed", &db, repo.path())
            .args(["--links-in", "docs/**/*.md", "missing.md", "."])
            .args(["--links-in-hidden", "--links-in-ext", "txt"])
            .args(["--base", &site.url("/")]));
        assert_eq!(seeded.status.code(), Some(3), "{}", stderr(&seeded));
        assert!(
            stderr(&seeded).contains("cannot open missing.md: No such file or directory"),
            "{}",
            stderr(&seeded)
        );
        assert!(
            stdout(&seeded).contains(", files read 6; not read to the end: missing.md"),
            "{}",
            stdout(&seeded)
        );
        let mut worker = spawn_worker(&db, "w1", &["--drain"]);
        assert!(wait(&mut worker, Duration::from_secs(60)).success());
        let sites = sites(&db, repo.path());
        let files: BTreeSet<&str> = sites
            .values()
            .flat_map(|(_, _, places)| places)
            .map(|place| place.rsplitn(3, ':').nth(2).unwrap())
            .collect();
        assert_eq!(
            files,
            BTreeSet::from([
                ".hidden/notes.md",
                "README.md",
                "docs/api/index.html",
                "docs/faq, v2.md",
                "docs/guide.md",
                "docs/notes.txt",
            ])
        );
        let hidden = site.url("/never/hidden.html");
        assert_eq!(
            sites[&hidden].2,
            BTreeSet::from([".hidden/notes.md:1:17".into()])
        );
        let txt = "http://127.0.0.1:1/txt";
        assert_eq!(sites[txt].2, BTreeSet::from(["docs/notes.txt:1:13".into()]));
        let ignored: Vec<&String> = sites
            .keys()
            .filter(|url| {
                ["built", "draft", "local", "code", "title", "comment"]
                    .iter()
                    .any(|never| url.contains(&format!("/never/{never}.html")))
            })
            .collect();
        assert!(ignored.is_empty(), "{ignored:?}");

        // Only a glob: the Markdown files it matches, not the ignored ones.
        let db = backend.fresh().await;
        let seeded = run(in_repo("crawler-seed", &db, repo.path()).args([
            "--links-in",
            "docs/*.md",
            "--base",
            &site.url("/"),
        ]));
        assert!(seeded.status.success(), "{}", stderr(&seeded));
        assert!(
            stdout(&seeded).contains(", files read 2"),
            "{}",
            stdout(&seeded)
        );
    }
);

#[test]
fn the_annotation_formats_refuse_what_is_no_list_of_sites() {
    for args in [
        &["--hosts", "--format", "github"][..],
        &["--dead", "--by-page", "--format", "sarif"],
        &["--summary", "--format", "github"],
    ] {
        let out = run(command("crawler-report", "sqlite:///nonexistent/crawler.db").args(args));
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("--format github and sarif annotate failing links"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
}
