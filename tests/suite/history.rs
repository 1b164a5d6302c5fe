//! Verdict history (`verdict_changes`), against every backend: a row per verdict replaced, none
//! for a site's first verdict, a check that confirms it or a stale write-back; the reader adds
//! the current verdict; pruning by age leaves the current verdict.

use std::time::Duration;

use crawler_queue::{Db, ErrorKind, Finding, NewSite, Queue, Unreachable, Verdict};
use crawler_tests::findings::{alive, outcomes_of};
use crawler_tests::raw::{execute, scalar};
use crawler_tests::{on_every_backend, TestDb};

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
    queue
        .reaping()
        .recheck(Duration::ZERO)
        .await
        .expect("recheck");
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

on_every_backend!(
    async fn a_row_per_change_none_per_repeat_and_pruning_leaves_the_current(backend: Backend) {
        let db = backend.fresh().await;
        let queue = one_site(&db).await;
        for finding in [alive(), alive(), dead(), dead(), alive()] {
            check(&queue, &finding).await;
        }
        let batch = queue.claim("history", 10, LEASE).await.unwrap();
        assert!(batch.sites.is_empty(), "nothing due until the next recheck");
        let id = {
            queue.reaping().recheck(Duration::ZERO).await.unwrap();
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
                .history()
                .prune(Duration::from_secs(3600))
                .await
                .unwrap(),
            0
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
        assert_eq!(queue.history().prune(Duration::ZERO).await.unwrap(), 2);
        let changes = queue.reports().verdict_changes(id).await.unwrap();
        assert_eq!(verdicts(&changes), ["alive"], "the current verdict stays");
        assert_eq!(queue.history().prune(Duration::ZERO).await.unwrap(), 0);
    }
);

on_every_backend!(
    async fn a_first_verdict_costs_the_history_nothing_and_a_replaced_one_keeps_when_it_began(
        backend: Backend,
    ) {
        let db = backend.fresh().await;
        let queue = one_site(&db).await;
        let raw = Db::connect(&db.url, 1).await.unwrap();
        let recorded = "SELECT COUNT(*) FROM verdict_changes";
        let id = scalar(&raw, "SELECT id FROM sites").await;
        check(&queue, &alive()).await;
        assert_eq!(
            scalar(&raw, recorded).await,
            0,
            "the first verdict is the row's own"
        );
        let first = queue.reports().verdict_changes(id).await.unwrap();
        assert_eq!(verdicts(&first), ["alive"]);
        tokio::time::sleep(Duration::from_millis(20)).await;
        check(&queue, &alive()).await;
        assert_eq!(scalar(&raw, recorded).await, 0, "the same verdict again");
        tokio::time::sleep(Duration::from_millis(20)).await;
        check(&queue, &dead()).await;
        assert_eq!(scalar(&raw, recorded).await, 1, "alive, replaced");
        let changes = queue.reports().verdict_changes(id).await.unwrap();
        assert_eq!(verdicts(&changes), ["alive", "dead"]);
        assert_eq!(
            changes[0].changed_at, first[0].changed_at,
            "alive since its first check, not its last"
        );
        assert!(changes[1].changed_at >= changes[0].changed_at + 40);
        // The current verdict recorded already, as a worker before `verdict_since` did: shown once.
        let older =
            "INSERT INTO verdict_changes (site_id, changed_at, verdict, http_status, error_kind) \
                     SELECT id, checked_at, verdict, http_status, error_kind FROM sites";
        execute(&raw, older).await;
        let changes = queue.reports().verdict_changes(id).await.unwrap();
        assert_eq!(verdicts(&changes), ["alive", "dead"]);
    }
);

on_every_backend!(
    async fn a_change_whose_history_cannot_be_written_waits_until_it_can(backend: Backend) {
        let db = backend.fresh().await;
        let queue = one_site(&db).await;
        let raw = Db::connect(&db.url, 1).await.unwrap();
        let id = scalar(&raw, "SELECT id FROM sites").await;
        check(&queue, &alive()).await;
        queue.reaping().recheck(Duration::ZERO).await.unwrap();
        let batch = queue.claim("history", 10, LEASE).await.unwrap();
        let outcomes = outcomes_of(batch.sites, &dead());
        // The history cannot be written: the write-back fails whole, and the verdict stays.
        execute(
            &raw,
            "ALTER TABLE verdict_changes RENAME TO verdict_changes_away",
        )
        .await;
        assert!(queue.complete(&outcomes).await.is_err());
        let dead_now = "SELECT COUNT(*) FROM sites WHERE verdict = 'dead'";
        assert_eq!(
            scalar(&raw, dead_now).await,
            0,
            "no change without its history"
        );
        execute(
            &raw,
            "ALTER TABLE verdict_changes_away RENAME TO verdict_changes",
        )
        .await;
        // Tried again, as the writer does: written once, and recorded once.
        assert_eq!(queue.complete(&outcomes).await.unwrap().done, 1);
        assert_eq!(queue.complete(&outcomes).await.unwrap().stale, 1);
        let changes = queue.reports().verdict_changes(id).await.unwrap();
        assert_eq!(verdicts(&changes), ["alive", "dead"]);
        assert_eq!(changes[1].previous_verdict.as_deref(), Some("alive"));
        assert_eq!(
            scalar(&raw, "SELECT COUNT(*) FROM verdict_changes").await,
            1
        );
    }
);

on_every_backend!(
    async fn a_host_decision_records_the_verdicts_it_replaces(backend: Backend) {
        let db = backend.fresh().await;
        let queue = one_site(&db).await;
        let raw = Db::connect(&db.url, 1).await.unwrap();
        let id = scalar(&raw, "SELECT id FROM sites").await;
        check(&queue, &alive()).await;
        queue.reaping().recheck(Duration::ZERO).await.unwrap();
        queue.parts().take("history", 7, 1024, LEASE).await.unwrap();
        let why = Unreachable {
            kind: ErrorKind::Dns,
            detail: "no such host".into(),
        };
        let hosts = queue.hosts();
        let decided = hosts.decide(7, "a.example", "https://a.example", &why);
        assert_eq!(decided.await.unwrap(), 1);
        let changes = queue.reports().verdict_changes(id).await.unwrap();
        assert_eq!(verdicts(&changes), ["alive", "unreachable"]);
        assert_eq!(changes[1].error_kind.as_deref(), Some("dns"));
        // Decided again (say, by another worker): nothing more to record.
        queue.reaping().recheck(Duration::ZERO).await.unwrap();
        let decided = hosts.decide(7, "a.example", "https://a.example", &why);
        assert_eq!(decided.await.unwrap(), 1);
        let recorded = "SELECT COUNT(*) FROM verdict_changes";
        assert_eq!(scalar(&raw, recorded).await, 1, "alive, replaced once");
    }
);

on_every_backend!(
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
        // Two hours older: the replaced verdict goes; the current one is the site's own row.
        let raw = Db::connect(&db.url, 1).await.unwrap();
        execute(
            &raw,
            "UPDATE verdict_changes SET changed_at = changed_at - 7200000",
        )
        .await;
        let id = scalar(&raw, "SELECT id FROM sites").await;
        assert!(reap(&["--prune-history-after", "1h"]).contains("; 1 old verdict changes pruned"));
        assert_eq!(
            verdicts(&queue.reports().verdict_changes(id).await.unwrap()),
            ["dead"]
        );
    }
);
