//! Verdict history (`verdict_changes`), against every backend: a row per change of a site's
//! verdict, none for a check that confirms it or for a stale write-back; pruning by age keeps
//! each site's latest change.

use std::time::Duration;

use crawler_queue::{Db, Finding, NewSite, Queue, Verdict};
use crawler_tests::findings::{alive, outcomes_of};
use crawler_tests::{both_backends, TestDb};

const LEASE: Duration = Duration::from_secs(600);

fn dead() -> Finding {
    Finding {
        verdict: Verdict::Dead,
        status: Some(404),
        ..alive()
    }
}

/// Makes the site due again (as `--recheck-after` does), claims it and writes `finding` back.
async fn check(queue: &Queue, finding: &Finding) {
    queue.recheck(Duration::ZERO).await.expect("recheck");
    let batch = queue.claim("history", 10, LEASE).await.expect("claim");
    assert_eq!(batch.sites.len(), 1, "the one site is due");
    let done = queue.complete(&outcomes_of(batch.sites, finding)).await;
    assert_eq!(done.expect("complete").done, 1);
}

/// A queue on `db` holding one site, never checked.
async fn one_site(db: &TestDb) -> Queue {
    let queue = db.queue().await;
    let site = NewSite {
        url: "https://a.example/page".into(),
        host: "a.example".into(),
    };
    queue.seed(&[site], false).await.unwrap();
    queue
}

fn verdicts(changes: &[crawler_queue::VerdictChange]) -> Vec<&str> {
    changes.iter().map(|c| c.verdict.as_str()).collect()
}

both_backends!(
    async fn a_row_per_change_none_per_repeat_and_pruning_keeps_the_latest(backend: Backend) {
        let db = backend.fresh().await;
        let queue = one_site(&db).await;
        for finding in [alive(), alive(), dead(), dead(), alive()] {
            check(&queue, &finding).await;
        }
        let batch = queue.claim("history", 10, LEASE).await.unwrap();
        assert!(batch.sites.is_empty(), "nothing due until the next recheck");
        let id = {
            queue.recheck(Duration::ZERO).await.unwrap();
            let batch = queue.claim("history", 10, LEASE).await.unwrap();
            let ids: Vec<i64> = batch.sites.iter().map(|s| s.id).collect();
            // Given back before its result arrives: the write-back is stale.
            queue
                .release(batch.token, &ids, Duration::ZERO)
                .await
                .unwrap();
            let stale = queue
                .complete(&outcomes_of(batch.sites, &dead()))
                .await
                .unwrap();
            assert_eq!((stale.done, stale.stale), (0, 1));
            ids[0]
        };
        let changes = queue.reports().verdict_changes(id).await.unwrap();
        assert_eq!(verdicts(&changes), ["alive", "dead", "alive"]);
        assert_eq!(changes[1].http_status, Some(404));
        assert!(changes
            .windows(2)
            .all(|w| w[0].changed_at <= w[1].changed_at));

        assert_eq!(
            queue
                .prune_verdict_changes(Duration::from_secs(3600))
                .await
                .unwrap(),
            0
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
        assert_eq!(
            queue.prune_verdict_changes(Duration::ZERO).await.unwrap(),
            2
        );
        let changes = queue.reports().verdict_changes(id).await.unwrap();
        assert_eq!(verdicts(&changes), ["alive"], "the latest change stays");
        assert_eq!(
            queue.prune_verdict_changes(Duration::ZERO).await.unwrap(),
            0
        );
    }
);

both_backends!(
    async fn crawler_reap_prunes_the_history_it_is_asked_to(backend: Backend) {
        let db = backend.fresh().await;
        let queue = one_site(&db).await;
        for finding in [alive(), dead()] {
            check(&queue, &finding).await;
        }
        let reap = |extra: &[&str]| {
            let out = crawler_tests::bins::run(
                crawler_tests::bins::command("crawler-reap", db.url.expose()).args(extra),
            );
            assert!(
                out.status.success(),
                "{}",
                crawler_tests::bins::stderr(&out)
            );
            crawler_tests::bins::stdout(&out)
        };
        // Both changes are seconds old: an hour's history keeps them, and a pass not asked
        // to prune says nothing of it.
        assert!(!reap(&[]).contains("pruned"));
        assert!(reap(&["--prune-history-after", "1h"]).contains("; 0 old verdict changes pruned"));
        // Two hours older: the first change goes, the site's latest stays however old.
        let raw = Db::connect(&db.url, 1).await.unwrap();
        let age = "UPDATE verdict_changes SET changed_at = changed_at - 7200000";
        let site = "SELECT id FROM sites";
        let id: i64 = match &raw {
            Db::MySql(pool) => {
                sqlx::query(age).execute(pool).await.unwrap();
                sqlx::query_scalar(site).fetch_one(pool).await.unwrap()
            }
            Db::Sqlite(pool) => {
                sqlx::query(age).execute(pool).await.unwrap();
                sqlx::query_scalar(site).fetch_one(pool).await.unwrap()
            }
            Db::Postgres(pool) => {
                sqlx::query(age).execute(pool).await.unwrap();
                sqlx::query_scalar(site).fetch_one(pool).await.unwrap()
            }
        };
        assert!(reap(&["--prune-history-after", "1h"]).contains("; 1 old verdict changes pruned"));
        assert_eq!(
            verdicts(&queue.reports().verdict_changes(id).await.unwrap()),
            ["dead"]
        );
    }
);
