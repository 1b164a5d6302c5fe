//! Checking: starts a task per site, sends each outcome to the writer, and on stop lets those
//! in flight finish within the grace period.
//!
//! `--concurrency` bounds the requests on the wire (the checker's global slots), not these
//! tasks: a task waiting for its host holds no slot another host could use. Tasks are bounded
//! by [`tasks_limit`], raised at most threefold when they are spread over many hosts
//! ([`TasksByHost`]), so memory is; a site whose host would keep it waiting longer than the
//! checker's patience is not waited for but deferred (see `crawler-check`'s `ratelimit.rs`).

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use crawler_check::{unless_cut, Cut};
use crawler_queue::{Finding, Outcome, Site};
use futures::FutureExt;
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crawler_queue::Queue;

use super::held::HeldSites;
use super::parts::Parts;

/// What the checking stage needs, and nothing else.
pub struct Checking {
    /// Checks a site, reading it when it is a page of a crawl (`--follow`).
    pub sites: crate::sites::SiteCheck,
    /// To give back a site cut off before its first request.
    pub queue: Queue,
    pub held: Arc<HeldSites>,
    /// Which partitions are still held: a check of a lost one is cut off.
    pub parts: Arc<Parts>,
    pub concurrency: usize,
    pub batch_size: u32,
    pub grace: Duration,
}

pub async fn check_loop(
    ctx: Arc<Checking>,
    mut sites: mpsc::Receiver<Site>,
    outcomes: mpsc::Sender<Outcome>,
    stop: CancellationToken,
) {
    let base = tasks_limit(ctx.concurrency, ctx.batch_size);
    let mut running = JoinSet::new();
    let mut hosts = TasksByHost::default();
    loop {
        tokio::select! {
            biased;
            _ = stop.cancelled() => break,
            Some(done) = running.join_next_with_id(), if !running.is_empty() => {
                forward(hosts.ended(done), &outcomes, stop.cancelled()).await
            }
            site = sites.recv(), if running.len() < hosts.limit(base) => match site {
                Some(site) => {
                    let ctx = ctx.clone();
                    let host = site.host.clone();
                    // A partition lost meanwhile: its hosts are another worker's now, and the
                    // site is given back for whoever holds it.
                    let Some(stop) = ctx.parts.watch(site.part) else {
                        let task = running.spawn(async move {
                            give_back(&ctx, site).await;
                            None
                        });
                        hosts.started(task.id(), host);
                        continue;
                    };
                    // Counted before the task runs, so a host's first request knows of the
                    // sites behind it.
                    let expected = ctx.sites.expect(&site);
                    let task = running.spawn(async move {
                        let _expected = expected;
                        // Boxed: the check's future is some 10 KB (a request with its redirects,
                        // retries and reads), and a task's future is moved whole on its way
                        // into the runtime and out of it, five copies a site that cost a tenth
                        // of the worker's CPU; boxed, the task moves a pointer.
                        let cut = Cut::default();
                        let check = Box::pin(ctx.sites.check(&site, &cut));
                        let check = AssertUnwindSafe(check).catch_unwind();
                        match unless_cut(&stop, &cut, check).await {
                            Some(Ok(finding)) => Some(Outcome { site, finding }),
                            Some(Err(panic)) => Some(panicked(site, panic.as_ref())),
                            None => {
                                give_back(&ctx, site).await;
                                None
                            }
                        }
                    });
                    hosts.started(task.id(), host);
                }
                None => break,
            },
        }
    }
    // Sites not yet started stay held and are given back; those in flight get the grace
    // period, handing over their outcomes included (a writer the database holds up must not
    // hold up the shutdown).
    sites.close();
    let grace = tokio::time::Instant::now() + ctx.grace;
    let finish = async {
        while let Some(done) = running.join_next().await {
            forward(done, &outcomes, std::future::pending()).await;
        }
    };
    if tokio::time::timeout_at(grace, finish).await.is_err() {
        tracing::info!(
            sites = running.len(),
            "grace period over; giving back checks in flight"
        );
        running.abort_all();
    }
}

/// Gives back, due at once, a site whose check was cut off (before it sent anything: a check
/// that has sent a request is never cut: `crawler-check`'s `cut.rs`) because its partition was lost or is
/// being handed over, so that the partition's next holder gets it without waiting for the
/// lease; fenced by the claim, so it changes nothing if the site is no longer this worker's.
/// It is forgotten first, so the lease keeper does not take it for lost. (The release is
/// boxed: a rare path, whose database future every check's task would carry otherwise.)
async fn give_back(ctx: &Checking, site: Site) {
    ctx.held.remove(site.token, site.id);
    let ids = [site.id];
    let release = ctx.queue.release(site.token, &ids, Duration::ZERO);
    if let Err(error) = Box::pin(release).await {
        tracing::debug!(error = %crawler_queue::error_chain(&error), "cannot give back a site; its lease will expire");
    }
}

/// The outcome of a check that panicked (a bug): the site gets an `error` verdict saying so,
/// rather than staying held, its lease extended, until the worker stops.
fn panicked(site: Site, panic: &(dyn std::any::Any + Send)) -> Outcome {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_owned());
    tracing::error!(url = %site.url, panic = %what, "a check panicked; its site gets an error verdict");
    Outcome {
        site,
        finding: Finding::internal_error(format!("the worker's check panicked: {what}")),
    }
}

/// Tasks at once: the requests on the wire, sites waiting for their hosts' turns (the
/// claimer keeps each host's wait short, `claimer::BACKLOG`), and room for two claims, so that
/// whichever host may send next has a site ready. [`TasksByHost::limit`] raises it for a
/// worker whose tasks are spread over many hosts.
fn tasks_limit(concurrency: usize, batch_size: u32) -> usize {
    4 * concurrency + 2 * batch_size as usize
}

/// Sites waiting per host, wanted for each host with tasks: one being asked, and the next
/// ready for the host's next turn, with some over for the hosts that a claim leaves out.
const PER_HOST: usize = 4;

/// How far [`TasksByHost::limit`] may raise [`tasks_limit`]: memory stays bounded.
const MAX_RAISE: usize = 3;

/// The running tasks' hosts. A claim's sites fall on hosts at random, so a fixed number of
/// tasks spread over many hosts leaves many of them with nothing ready when their turn comes:
/// 1,512 tasks over 1,000 hosts is 1.5 a host, and about a fifth of the hosts have none at any
/// moment (a closed queue of N tasks over M hosts keeps them busy N/(N+M-1) of the time; at
/// [`PER_HOST`] a host, four fifths). So the limit grows with the hosts that have tasks.
#[derive(Default)]
struct TasksByHost {
    host_of: HashMap<tokio::task::Id, String>,
    tasks: HashMap<String, usize>,
}

impl TasksByHost {
    fn started(&mut self, task: tokio::task::Id, host: String) {
        *self.tasks.entry(host.clone()).or_default() += 1;
        self.host_of.insert(task, host);
    }

    /// A task ended (finished, panicked or aborted): its host has one task fewer.
    fn ended<T>(
        &mut self,
        done: Result<(tokio::task::Id, T), tokio::task::JoinError>,
    ) -> Result<T, tokio::task::JoinError> {
        let id = match &done {
            Ok((id, _)) => *id,
            Err(error) => error.id(),
        };
        let host = self.host_of.remove(&id);
        if let Some(Entry::Occupied(mut tasks)) = host.map(|host| self.tasks.entry(host)) {
            *tasks.get_mut() -= 1;
            if *tasks.get() == 0 {
                tasks.remove();
            }
        }
        done.map(|(_, out)| out)
    }

    /// Tasks at once: `base`, or [`PER_HOST`] for each host with tasks, up to [`MAX_RAISE`]
    /// times `base`.
    fn limit(&self, base: usize) -> usize {
        (PER_HOST * self.tasks.len()).clamp(base, MAX_RAISE * base)
    }
}

/// Hands an outcome to the writer, waiting while the writer is behind: that wait stops this
/// loop taking sites, which stops the claimer claiming, so a slow database bounds memory. If
/// `until` completes first (the worker is stopping), the outcome is dropped: its site is still
/// held, and is given back or its lease expires.
async fn forward(
    done: Result<Option<Outcome>, tokio::task::JoinError>,
    outcomes: &mpsc::Sender<Outcome>,
    until: impl std::future::Future<Output = ()>,
) {
    match done {
        // Cut off before it sent anything: the site's partition was lost or is being handed over, and the
        // site was given back (or, if the database refused, its claim lapses, no longer extended).
        Ok(None) => {}
        Ok(Some(outcome)) => {
            tokio::select! {
                _ = outcomes.send(outcome) => {}
                _ = until => {}
            }
        }
        Err(error) if error.is_panic() => tracing::error!("a check task panicked: {error}"),
        // Aborted at the end of the grace period: the site stays held and is given back.
        Err(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn tasks_spread_over_many_hosts_raise_the_limit_within_its_bound() {
        let base = tasks_limit(128, 500);
        assert_eq!(base, 1512);
        let mut tasks = JoinSet::new();
        let mut hosts = TasksByHost::default();
        // A few hosts with many tasks each: the limit stays the base.
        for i in 0..200 {
            let task = tasks.spawn(async {});
            hosts.started(task.id(), format!("h{}", i % 10));
        }
        assert_eq!(hosts.limit(base), base);
        // 1,000 hosts with tasks: four each.
        for i in 0..1000 {
            let task = tasks.spawn(async {});
            hosts.started(task.id(), format!("h{i}"));
        }
        assert_eq!(hosts.limit(base), 4000);
        // Ever more hosts: never past three times the base.
        for i in 1000..2000 {
            let task = tasks.spawn(async {});
            hosts.started(task.id(), format!("h{i}"));
        }
        assert_eq!(hosts.limit(base), 3 * base);
        // As tasks end, their hosts are forgotten.
        while let Some(done) = tasks.join_next_with_id().await {
            hosts.ended(done).expect("an empty task ends well");
        }
        assert!(hosts.tasks.is_empty() && hosts.host_of.is_empty());
        assert_eq!(hosts.limit(base), base);
    }

    #[test]
    fn a_panicked_check_gives_its_site_a_final_error_saying_why() {
        let site = crawler_tests::findings::claimed_site(3, "127.0.0.1");
        let panic = std::panic::catch_unwind(|| panic!("index {} out of range", 9)).unwrap_err();
        let outcome = panicked(site, panic.as_ref());
        assert_eq!(outcome.site.id, 3);
        let finding = outcome.finding;
        assert_eq!(finding.verdict, crawler_queue::Verdict::Error);
        assert_eq!(finding.next, crawler_queue::Next::Final);
        assert_eq!(
            finding.detail.as_deref(),
            Some("the worker's check panicked: index 9 out of range")
        );
    }
}
