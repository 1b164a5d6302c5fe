//! A fleet on a Galera cluster (three MariaDB nodes, `tests/support/galera.rs`), its workers
//! connected to different nodes. Galera certifies a transaction only at commit: two workers
//! claiming the same rows through two nodes both succeed locally, and the later commit fails
//! with a deadlock (1213), which the queue retries (`crates/queue/src/retry.rs`), and every
//! write-back is fenced by the claim: each site ends with exactly one verdict, read through
//! every node, and is requested once. A killed node costs its workers their connection;
//! pointed at another node, as an operator would, they finish the crawl and no site is lost.

use std::collections::HashMap;
use std::process::Child;

use crawler_queue::DatabaseUrl;
use crawler_tests::galera::{Galera, NODES};
use crawler_tests::site::{spawn_site, Page, Site};
use crawler_tests::{Backend, TestDb};

use crate::e2e::{assert_report_matches, seed, spawn_worker, unfinished, url_file};
use crate::faults::{wait_all, wait_for_progress, QUICK};

/// Enough sites that workers on three nodes claim side by side for a while.
const SITES: usize = 2000;
/// Two workers per node.
const WORKERS: usize = 2 * NODES;

/// The test database on node `i`.
fn on_node(cluster: &Galera, i: usize, database: &str) -> TestDb {
    TestDb::external(DatabaseUrl::new(cluster.url(i, database)), Backend::MariaDb)
}

/// Starts a cluster, makes a database and seeds `urls` through node 0; returns the database
/// on each node once every node has the seeded sites (and the schema the seed made: workers
/// that start on other nodes find it there, rather than migrating it at the same moment).
async fn seeded(cluster: &Galera, urls: &std::path::Path) -> Vec<TestDb> {
    let name = cluster.create_database().await;
    let dbs: Vec<TestDb> = (0..NODES).map(|i| on_node(cluster, i, &name)).collect();
    seed(&dbs[0], urls);
    cluster.settle().await;
    dbs
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_on_every_node_check_each_site_exactly_once() {
    let (_cluster, site, expected, dbs) = crawl_through_every_node().await;
    for db in &dbs {
        assert_report_matches(db, &expected);
        assert_eq!(unfinished(db), (0, 0));
    }
    // Exactly once on the wire too: a partition handed from worker to worker (all sites are
    // on one host) never cuts off a check that has sent its request (check/cut.rs).
    let not_once = not_checked_once(&site, &expected);
    assert!(
        not_once.is_empty(),
        "sites not requested exactly once (path, requests): {not_once:?}"
    );
}

/// [`SITES`] sites crawled by [`WORKERS`] workers spread over the nodes, to the end.
async fn crawl_through_every_node() -> (Galera, Site, HashMap<String, Page>, Vec<TestDb>) {
    let cluster = Galera::start();
    let site = spawn_site().await;
    let (file, expected) = url_file(&site, SITES, &[Page::Alive, Page::Dead, Page::Redirect]);
    let dbs = seeded(&cluster, file.path()).await;
    let before = cluster.conflicts().await;
    let workers: Vec<Child> = (0..WORKERS)
        .map(|w| spawn_worker(&dbs[w % NODES], &format!("w{w}"), &["--drain"]))
        .collect();
    wait_all(workers).await;
    cluster.settle().await;
    let conflicts = cluster.conflicts().await.total() - before.total();
    // Shown with --nocapture: how often the nodes' workers met at commit.
    println!("{SITES} sites by {WORKERS} workers on {NODES} nodes: {conflicts} conflicts");
    (cluster, site, expected, dbs)
}

/// The seeded paths the site did not see exactly one check of ([`Site::checks`]), with the
/// count it saw.
fn not_checked_once(site: &Site, expected: &HashMap<String, Page>) -> Vec<(String, usize)> {
    let (checks, origin) = (site.checks(), format!("http://{}", site.addr));
    expected
        .keys()
        .map(|url| url.strip_prefix(&origin).expect("a URL of the site"))
        .map(|path| (path.to_owned(), checks.get(path).copied().unwrap_or(0)))
        .filter(|&(_, checks)| checks != 1)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_node_loses_no_site_once_its_workers_use_another() {
    let mut cluster = Galera::start();
    let site = spawn_site().await;
    let (file, expected) = url_file(&site, 900, &[Page::Slow, Page::Alive, Page::Gone]);
    let dbs = seeded(&cluster, file.path()).await;
    let flags = [&["--drain"], QUICK].concat();
    let mut workers: Vec<Child> = (0..NODES)
        .map(|i| spawn_worker(&dbs[i], &format!("w{i}"), &flags))
        .collect();
    wait_for_progress(&dbs[0], 100).await;

    let victim = NODES - 1;
    cluster.kill(victim).await;
    // Its worker cannot reach the node again: the operator restarts it against another. What
    // it held comes back when its lease and heartbeat run out.
    let mut stranded = workers.remove(victim);
    let _ = stranded.kill();
    let _ = stranded.wait();
    workers.push(spawn_worker(&dbs[0], &format!("w{victim}-moved"), &flags));
    wait_all(workers).await;
    cluster.settle().await;

    for i in cluster.alive() {
        assert_report_matches(&dbs[i], &expected);
        assert_eq!(unfinished(&dbs[i]), (0, 0));
    }
}
