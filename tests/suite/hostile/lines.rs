//! The seed's input at its worst: invisible characters around lines, credentials in URLs, a
//! read error part-way, missing files among good ones. Every good line is still seeded, every
//! bad one named; and the report never prints credentials, whatever the database holds.

use std::io::Write;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::process::Stdio;
use std::time::Duration;

use crawler_queue::{Db, Finding, NewSite, Next, Outcome, Verdict};
use crawler_tests::bins::{command, run, stderr, stdout};
use crawler_tests::{on_every_backend, TestDb};

/// Every URL in the queue, sorted.
pub async fn stored_urls(db: &TestDb) -> Vec<String> {
    let raw = Db::connect(&db.url, 1).await.unwrap();
    let sql = "SELECT url FROM sites ORDER BY url";
    let rows: Vec<(String,)> = match &raw {
        Db::MySql(pool) => sqlx::query_as(sql).fetch_all(pool).await,
        Db::Postgres(pool) => sqlx::query_as(sql).fetch_all(pool).await,
        Db::Sqlite(pool) => sqlx::query_as(sql).fetch_all(pool).await,
    }
    .unwrap();
    raw.close().await;
    rows.into_iter().map(|(url,)| url).collect()
}

/// A file holding `text`.
fn file_of(text: &str) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(text.as_bytes()).unwrap();
    file.flush().unwrap();
    file
}

/// The lines of `err` that start with `path`, without it.
fn named_lines(err: &str, path: &str) -> Vec<String> {
    err.lines()
        .filter_map(|l| l.strip_prefix(path))
        .map(str::to_owned)
        .collect()
}

on_every_backend!(
    async fn invisible_characters_around_lines_are_stripped_and_bad_lines_named(backend: Backend) {
        let db = backend.fresh().await;
        let file = file_of(concat!(
            "a.example\n",
            "\u{feff}https://b.example/\n", // a BOM, not on line 1
            "\u{200b}https://c.example/\u{200b}\n", // zero-width spaces
            "\u{2060} https://d.example/x \u{feff}\r\n", // word joiner, spaces, BOM, CRLF
            "\u{e000}https://e.example/\n", // private use: still not a URL
            "\u{feff}# a comment\n",
            "\u{200b}\u{2060}\n",
        ));
        let out = run(command("crawler-seed", db.url.expose()).arg(file.path()));
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stdout(&out).trim(), "added 4, already known 0, rejected 1");
        let named = named_lines(&stderr(&out), &file.path().display().to_string());
        assert_eq!(named.len(), 1, "{named:?}");
        assert!(named[0].starts_with(":5: "), "{named:?}");
        assert_eq!(
            stored_urls(&db).await,
            [
                "https://a.example/",
                "https://b.example/",
                "https://c.example/",
                "https://d.example/x"
            ]
        );
    }
);

/// A stream for a child's stdin that yields `data`, then fails with ECONNRESET: the other end
/// is closed while data it never read waits in its queue, like a FIFO or socket that breaks.
fn breaking_stdin(data: &[u8]) -> Stdio {
    let (mut ours, mut theirs) = UnixStream::pair().unwrap();
    theirs.write_all(b"never read").unwrap();
    ours.write_all(data).unwrap();
    drop(ours);
    Stdio::from(OwnedFd::from(theirs))
}

on_every_backend!(
    async fn a_read_error_part_way_seeds_what_came_before_and_names_the_line(backend: Backend) {
        let db = backend.fresh().await;
        let lines: String = (0..1500)
            .map(|i| format!("https://h{}.example/{i}\n", i % 7))
            .collect();
        let out = run(command("crawler-seed", db.url.expose())
            .arg("-")
            .stdin(breaking_stdin(lines.as_bytes())));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{err}");
        assert!(
            err.contains("cannot read <stdin> after line 1500: "),
            "{err}"
        );
        assert_eq!(
            stdout(&out).trim(),
            "added 1500, already known 0, rejected 0; \
             not read to the end: <stdin> (stopped after line 1500)"
        );
        assert_eq!(stored_urls(&db).await.len(), 1500);
    }
);

on_every_backend!(
    async fn a_missing_file_is_named_and_the_others_are_seeded(backend: Backend) {
        let db = backend.fresh().await;
        let a = file_of("a.example\nb.example\n");
        let b = file_of("c.example\na.example\n");
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.txt");
        let out = run(command("crawler-seed", db.url.expose())
            .arg(a.path())
            .arg(&missing)
            .arg(b.path()));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!("error: cannot open {}: ", missing.display())),
            "{err}"
        );
        assert_eq!(
            stdout(&out).trim(),
            format!(
                "added 3, already known 1, rejected 0; not read to the end: {} (cannot open)",
                missing.display()
            )
        );
        assert_eq!(stored_urls(&db).await.len(), 3);

        let alone = run(command("crawler-seed", db.url.expose()).arg(&missing));
        assert_eq!(
            alone.status.code(),
            Some(1),
            "nothing read: {}",
            stderr(&alone)
        );
    }
);

/// A checked site whose URL and final URL carry credentials, as no seed would store them.
async fn checked_with_credentials(db: &TestDb) {
    let queue = db.queue().await;
    let site = NewSite {
        url: "https://user:s3cret@x.example/page".into(),
        host: "x.example".into(),
    };
    queue.seed(&[site], false).await.unwrap();
    let batch = queue.claim("w", 10, Duration::from_secs(60)).await.unwrap();
    let finding = Finding {
        verdict: Verdict::Dead,
        status: Some(404),
        error_kind: None,
        final_url: Some("https://other:s3cret@y.example:8443/gone?q=1".into()),
        redirects: 1,
        latency: Duration::from_millis(5),
        attempts: 1,
        next: Next::Final,
        detail: None,
        fragment: None,
        moved_to: None,
    };
    let outcomes: Vec<_> = batch
        .sites
        .into_iter()
        .map(|site| Outcome {
            site,
            finding: finding.clone(),
        })
        .collect();
    assert_eq!(queue.complete(&outcomes).await.unwrap().done, 1);
    queue.db().close().await;
}

on_every_backend!(
    async fn credentials_are_refused_at_seed_and_never_printed_by_the_report(backend: Backend) {
        let db = backend.fresh().await;
        let file = file_of("https://user:s3cret@x.example/page\nhttp://bob@y.example/\n");
        let out = run(command("crawler-seed", db.url.expose()).arg(file.path()));
        assert!(out.status.success(), "{}", stderr(&out));
        let named = named_lines(&stderr(&out), &file.path().display().to_string());
        assert_eq!(named.len(), 2, "{}", stderr(&out));
        for (line, number) in named.iter().zip([":1: ", ":2: "]) {
            assert!(
                line.starts_with(number) && line.contains("not a public link"),
                "{line}"
            );
            assert!(!line.contains("s3cret"), "{line}");
        }
        assert!(stored_urls(&db).await.is_empty());

        checked_with_credentials(&db).await;
        for format in ["text", "csv", "json", "ndjson"] {
            let out = run(
                command("crawler-report", db.url.expose()).args(["--dead", "--format", format])
            );
            let text = stdout(&out);
            assert!(out.status.success(), "{format}: {}", stderr(&out));
            assert!(text.contains("https://x.example/page"), "{format}: {text}");
            assert!(
                !text.contains("s3cret") && !text.contains("user"),
                "{format}: {text}"
            );
        }
        let ndjson =
            run(command("crawler-report", db.url.expose()).args(["--dead", "--format", "ndjson"]));
        let record: serde_json::Value = serde_json::from_str(stdout(&ndjson).trim()).unwrap();
        assert_eq!(record["final_url"], "https://y.example:8443/gone?q=1");
    }
);
