//! The notifier (`crawler-reap --notify`), on every backend, against a local receiver: every
//! change of verdict delivered, none in two digests once repeats of an id are dropped, a
//! failed POST sent again as the same digest, each POST signed; across a SIGKILL of the
//! notifier mid-delivery, and with two notifiers at once. The URL and the secret never print.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write;
use std::process::{Child, Command};
use std::time::Duration;

use crawler_queue::Db;
use crawler_tests::bins::command;
use crawler_tests::raw::scalar;
use crawler_tests::static_site::{spawn_static_site, Answer, StaticSite};
use crawler_tests::wait::until;
use crawler_tests::webhook::{spawn_webhook, Reply, Webhook};
use crawler_tests::{on_every_backend, TestDb};
use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;

use crate::e2e::{spawn_worker, wait};

const SECRET: &str = "n0tify-s3cret";

/// A change as the receiver read it: the link's path, its verdict, and the one it replaced
/// (`new` for a first verdict).
type Told = (String, String, String);

/// The site: two links alive, two dead at first.
async fn site() -> StaticSite {
    let pages: HashMap<String, Answer> = [
        ("/a", Answer::html("a")),
        ("/dies", Answer::html("b")),
        ("/recovers", Answer::with(404, "text/html", "gone")),
    ]
    .into_iter()
    .map(|(path, answer)| (path.to_owned(), answer))
    .collect();
    spawn_static_site("127.0.0.1", pages).await
}

const PATHS: [&str; 4] = ["/a", "/dies", "/recovers", "/gone"];

/// A notifier process, killed if the test ends before [`stop`].
struct Reaper(Option<Child>);

impl Drop for Reaper {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// `crawler-reap --every 200ms --notify URL` (a settle of 300 ms, each POST 2 s at most), its
/// output captured.
fn notifier(db: &TestDb, hook: &Webhook, id: &str) -> Reaper {
    let mut reap: Command = command("crawler-reap", db.url.expose());
    reap.args(["--every", "200ms", "--id", id])
        .args(["--notify-settle", "300ms", "--notify-timeout", "2s"])
        .env("CRAWLER_NOTIFY_URL", hook.url())
        .env("CRAWLER_NOTIFY_SECRET", SECRET)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    Reaper(Some(reap.spawn().unwrap()))
}

/// Waits until a notifier has started (its cursor exists): changes from then on are told.
async fn started(db: &TestDb) {
    let raw = Db::connect(&db.url, 1).await.unwrap();
    until("a notifier started", Duration::from_secs(30), || async {
        scalar(&raw, "SELECT COUNT(*) FROM notifier").await == 1
    })
    .await;
}

/// Seeds the site's links (`--recheck` after the first pass) and drains them with one worker.
fn pass(db: &TestDb, site: &StaticSite, recheck: bool) {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    for path in PATHS {
        writeln!(file, "{}", site.url(path)).unwrap();
    }
    let mut seed = command("crawler-seed", db.url.expose());
    if recheck {
        seed.arg("--recheck");
    }
    assert!(seed.arg(file.path()).status().unwrap().success());
    let mut worker = spawn_worker(db, "w1", &["--drain"]);
    assert!(wait(&mut worker, Duration::from_secs(60)).success());
}

/// The changes of the two passes.
fn expected() -> BTreeSet<Told> {
    [
        ("/a", "alive", "new"),
        ("/dies", "alive", "new"),
        ("/recovers", "dead", "new"),
        ("/gone", "dead", "new"),
        ("/dies", "dead", "alive"),
        ("/recovers", "alive", "dead"),
    ]
    .iter()
    .map(|(p, v, w)| ((*p).to_owned(), (*v).to_owned(), (*w).to_owned()))
    .collect()
}

/// The changes of the first pass: every link's first verdict.
fn first_pass() -> BTreeSet<Told> {
    expected().into_iter().filter(|t| t.2 == "new").collect()
}

/// Every change delivered (repeats of an id dropped), asserting that none is in two digests.
fn delivered(hook: &Webhook, site: &StaticSite) -> BTreeSet<Told> {
    let prefix = site.url("");
    let mut digests_of: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    let mut told = BTreeSet::new();
    for (id, changes) in hook.delivered() {
        for change in changes {
            let path = change["url"]
                .as_str()
                .unwrap()
                .strip_prefix(&prefix)
                .unwrap()
                .to_owned();
            let at = change["changed_at"].as_str().unwrap().to_owned();
            digests_of
                .entry((path.clone(), at))
                .or_default()
                .push(id.clone());
            let verdict = change["verdict"].as_str().unwrap().to_owned();
            let was = change["previous_verdict"]
                .as_str()
                .unwrap_or("new")
                .to_owned();
            told.insert((path, verdict, was));
        }
    }
    for (change, ids) in &digests_of {
        assert_eq!(ids.len(), 1, "{change:?} in digests {ids:?}");
    }
    told
}

/// Waits until every change of the passes so far is delivered.
async fn all_delivered(hook: &Webhook, site: &StaticSite, want: &BTreeSet<Told>) {
    until(
        "every change delivered",
        Duration::from_secs(60),
        || async { delivered(hook, site).is_superset(want) },
    )
    .await;
}

/// Each POST's signature is the HMAC-SHA256 of its body under the secret.
fn assert_signed(hook: &Webhook) {
    for post in hook.posts() {
        let mut mac = Hmac::<Sha256>::new_from_slice(SECRET.as_bytes()).unwrap();
        mac.update(post.body.as_bytes());
        let hex: String = mac
            .finalize()
            .into_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(post.signature, Some(format!("sha256={hex}")));
        assert_eq!(post.idempotency_key.as_deref(), post.json()["id"].as_str());
    }
}

/// Stops `reaper` and checks that neither the URL's secret path nor the secret printed.
fn stop(mut reaper: Reaper) {
    let reaper = reaper.0.take().unwrap();
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(reaper.id() as i32, libc::SIGTERM) };
    let out = reaper.wait_with_output().unwrap();
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !printed.contains("secret-path") && !printed.contains(SECRET),
        "{printed}"
    );
}

/// The second pass's changes: one link dies, one recovers.
fn change(site: &StaticSite) {
    site.set("/dies", Answer::with(404, "text/html", "gone"));
    site.set("/recovers", Answer::html("back"));
}

on_every_backend!(
    async fn every_change_is_delivered_once_and_a_failed_post_goes_again_as_itself(
        backend: Backend,
    ) {
        let db = backend.fresh().await;
        let site = site().await;
        let hook = spawn_webhook(|n| match n {
            0 => Reply::Status(500),
            1 => Reply::Status(429),
            _ => Reply::Status(200),
        })
        .await;
        let reaper = notifier(&db, &hook, "r1");
        started(&db).await;
        pass(&db, &site, false);
        all_delivered(&hook, &site, &first_pass()).await;
        change(&site);
        pass(&db, &site, true);
        all_delivered(&hook, &site, &expected()).await;
        assert_eq!(delivered(&hook, &site), expected());
        let posts = hook.posts();
        assert_eq!(posts[0].reply, Reply::Status(500));
        assert_eq!(
            posts[0].idempotency_key, posts[1].idempotency_key,
            "sent again as itself"
        );
        assert_eq!(posts[1].idempotency_key, posts[2].idempotency_key);
        assert_eq!(posts[0].body, posts[2].body);
        let text = posts[2].json()["text"].as_str().unwrap().to_owned();
        assert!(text.starts_with("crawler: "), "{text}");
        assert_signed(&hook);
        stop(reaper);
    }
);

on_every_backend!(
    async fn a_notifier_killed_mid_delivery_leaves_the_rest_to_the_next(backend: Backend) {
        let db = backend.fresh().await;
        let site = site().await;
        let hook = spawn_webhook(|n| match n {
            0 => Reply::Hang,
            _ => Reply::Status(200),
        })
        .await;
        let mut killed = notifier(&db, &hook, "r1");
        started(&db).await;
        pass(&db, &site, false);
        until("a first POST", Duration::from_secs(30), || async {
            !hook.posts().is_empty()
        })
        .await;
        let mut child = killed.0.take().unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
        // The next notifier sends the digest in flight and what the first had not read yet,
        // before the second pass: a change replaced before any digest held it is told once, at
        // its latest state (notify.rs), which would leave the first pass's untold.
        let next = notifier(&db, &hook, "r2");
        all_delivered(&hook, &site, &first_pass()).await;
        change(&site);
        pass(&db, &site, true);
        all_delivered(&hook, &site, &expected()).await;
        assert_eq!(delivered(&hook, &site), expected());
        let posts = hook.posts();
        assert_eq!(posts[0].reply, Reply::Hang);
        assert_eq!(
            posts[0].idempotency_key, posts[1].idempotency_key,
            "the digest in flight is sent again, as itself"
        );
        assert_signed(&hook);
        stop(next);
    }
);

on_every_backend!(
    async fn two_notifiers_at_once_put_each_change_in_one_digest(backend: Backend) {
        let db = backend.fresh().await;
        let site = site().await;
        let hook = spawn_webhook(|_| Reply::Status(200)).await;
        let one = notifier(&db, &hook, "r1");
        let two = notifier(&db, &hook, "r2");
        started(&db).await;
        pass(&db, &site, false);
        // Told before the second pass replaces them (see the test above).
        all_delivered(&hook, &site, &first_pass()).await;
        change(&site);
        pass(&db, &site, true);
        all_delivered(&hook, &site, &expected()).await;
        assert_eq!(delivered(&hook, &site), expected());
        let ids: Vec<Value> = hook
            .posts()
            .iter()
            .map(|p| p.json()["id"].clone())
            .collect();
        let distinct: BTreeSet<String> = ids.iter().map(|v| v.to_string()).collect();
        assert_eq!(distinct.len(), ids.len(), "every digest sent once: {ids:?}");
        stop(one);
        stop(two);
    }
);
