//! `excluded`, the verdict of a URL the worker's `--include`/`--exclude` leave out, on every
//! backend: no request, no error kind, and no failure for `crawler-report` (listings, counts,
//! `--fail-on`, JUnit); and the migration that turns the rows older versions stored as
//! `error`/`excluded` into the verdict.

use std::time::Duration;

use crawler_queue::{Db, Finding, NewSite, Queue, Verdict};
use crawler_tests::findings::outcomes_of;
use crawler_tests::raw::execute;
use crawler_tests::site::{spawn_site, Page};
use crawler_tests::{on_every_backend, Backend, TestDb};
use serde_json::Value;

use crate::e2e::{seed, spawn_worker, url_file, wait};
use crate::pipelines::report_exits;

const LEASE: Duration = Duration::from_secs(600);

/// The one object of `crawler-report ARGS --format json` (the summary, or one host).
fn only_object(db: &TestDb, args: &[&str]) -> Value {
    let json = report_exits(db, &[args, &["--format", "json"]].concat(), 0);
    let rows: Vec<Value> = serde_json::from_str(&json).unwrap();
    assert_eq!(rows.len(), 1, "{json}");
    rows.into_iter().next().unwrap()
}

on_every_backend!(
    async fn a_url_the_worker_leaves_out_is_excluded_and_fails_nothing(backend: Backend) {
        let site = spawn_site().await;
        let db = backend.fresh().await;
        let (file, _) = url_file(&site, 3, &[Page::Alive]);
        seed(&db, file.path());
        let left_out = site.url(Page::Alive, 1);
        let mut worker = spawn_worker(&db, "filtering", &["--drain", "--exclude", "/alive/1$"]);
        assert!(wait(&mut worker, Duration::from_secs(60)).success());
        assert!(
            !site.requests().contains_key("/alive/1"),
            "no request for it: {:?}",
            site.requests()
        );

        let listed = report_exits(&db, &["--excluded", "--format", "ndjson"], 0);
        let row: Value = serde_json::from_str(listed.trim()).unwrap();
        assert_eq!(row["url"], left_out.as_str(), "{listed}");
        assert_eq!(row["verdict"], "excluded");
        assert!(
            row["error_kind"].is_null() && row["status"].is_null(),
            "{row}"
        );
        assert_eq!(row["consecutive_failures"], 0, "not a failure: {row}");
        assert_eq!(report_exits(&db, &["--errors"], 0), "");
        let text = report_exits(&db, &["--excluded"], 0);
        assert_eq!(text, format!("{left_out} - excluded\n"));

        // Not a failure: neither --fail-on fails, and JUnit skips it.
        report_exits(&db, &["--all", "--fail-on", "not-alive"], 0);
        report_exits(&db, &["--fail-on", "dead"], 0);
        let junit = report_exits(&db, &["--all", "--format", "junit"], 0);
        assert!(
            junit.contains(
                r#"<testsuite name="crawler-report" tests="3" failures="0" skipped="1">"#
            ),
            "{junit}"
        );
        assert!(
            junit.contains(r#"<skipped message="excluded: not checked"/>"#),
            "{junit}"
        );

        let summary = only_object(&db, &["--summary"]);
        assert_eq!(
            (&summary["alive"], &summary["error"], &summary["excluded"]),
            (&Value::from(2), &Value::from(0), &Value::from(1)),
            "{summary}"
        );
        let host = only_object(&db, &["--hosts"]);
        assert_eq!(
            (&host["alive"], &host["error"], &host["excluded"]),
            (&Value::from(2), &Value::from(0), &Value::from(1)),
            "{host}"
        );
    }
);

/// The migration's file for `backend`, as the queue embeds it.
fn migration(backend: Backend) -> &'static str {
    match backend {
        Backend::Sqlite => {
            include_str!("../../migrations/sqlite/20261127000001_excluded_verdict.sql")
        }
        Backend::MariaDb => {
            include_str!("../../migrations/mysql/20261127000001_excluded_verdict.sql")
        }
        Backend::Postgres => {
            include_str!("../../migrations/postgres/20261127000001_excluded_verdict.sql")
        }
    }
}

/// Runs `sql` on `db` with `value` bound to its one placeholder.
async fn execute_binding(db: &Db, sql: &str, value: &str) {
    let sql = db.statement(sql);
    match db {
        Db::MySql(pool) => sqlx::query(&sql).bind(value).execute(pool).await.map(drop),
        Db::Postgres(pool) => sqlx::query(&sql).bind(value).execute(pool).await.map(drop),
        Db::Sqlite(pool) => sqlx::query(&sql).bind(value).execute(pool).await.map(drop),
    }
    .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// Claims every due site and gives each `finding`.
async fn check_all(queue: &Queue, finding: &Finding) {
    queue.reaping().recheck(Duration::ZERO).await.unwrap();
    let batch = queue.claim("checker", 10, LEASE).await.unwrap();
    assert!(!batch.sites.is_empty(), "sites due");
    queue
        .complete(&outcomes_of(batch.sites, finding))
        .await
        .unwrap();
}

on_every_backend!(
    async fn the_migration_turns_an_excluded_error_into_the_verdict(backend: Backend) {
        let db = backend.fresh().await;
        let queue = db.queue().await;
        let sites: Vec<NewSite> = ["https://a.example/private", "https://a.example/broken"]
            .into_iter()
            .map(|url| NewSite {
                url: url.into(),
                host: "a.example".into(),
            })
            .collect();
        queue.seed(&sites, false).await.unwrap();
        check_all(&queue, &Finding::internal_error("no answer".into())).await;
        // What an older worker stored for the first, in the site and in its history; the
        // second is a real error, and stays one.
        let raw = Db::connect(&db.url, 1).await.unwrap();
        let private = "https://a.example/private";
        // (An older worker recorded every verdict in the history, the first included.)
        for sql in [
            "UPDATE sites SET error_kind = 'excluded' WHERE url = ?",
            "INSERT INTO verdict_changes (site_id, changed_at, verdict, http_status, error_kind) \
             SELECT id, checked_at, verdict, NULL, 'excluded' FROM sites WHERE url = ?",
        ] {
            execute_binding(&raw, sql, private).await;
        }
        // This version knows no error kind `excluded`: unmigrated, the row cannot be read.
        report_exits(&db, &["--errors"], 1);

        execute(&raw, migration(backend)).await;
        let excluded = report_exits(&db, &["--excluded", "--format", "ndjson"], 0);
        let row: Value = serde_json::from_str(excluded.trim()).unwrap();
        assert_eq!(row["url"], private, "{excluded}");
        assert!(row["error_kind"].is_null(), "{row}");
        let errors = report_exits(&db, &["--errors"], 0);
        assert_eq!(errors, "https://a.example/broken - error (no answer)\n");
        let id = row_id(&queue, private).await;
        let history = queue.reports().verdict_changes(id).await.unwrap();
        assert_eq!(
            history
                .iter()
                .map(|c| (c.verdict.as_str(), c.error_kind.as_deref()))
                .collect::<Vec<_>>(),
            [("excluded", None)]
        );

        // A worker of this version finds it excluded again: no change to record.
        check_all(&queue, &Finding::excluded()).await;
        assert_eq!(queue.reports().verdict_changes(id).await.unwrap().len(), 1);
        let migrated = only_object(&db, &["--summary"]);
        assert_eq!(
            (&migrated["error"], &migrated["excluded"]),
            (&Value::from(0), &Value::from(2)),
            "{migrated}"
        );
    }
);

/// The id of the site with `url`, from the report's page of excluded sites.
async fn row_id(queue: &Queue, url: &str) -> i64 {
    let page = queue
        .reports()
        .checked_page(
            Verdict::Excluded,
            Default::default(),
            crawler_queue::After::START,
            10,
        )
        .await
        .unwrap();
    page.iter().find(|s| s.url == url).expect("listed").id
}
