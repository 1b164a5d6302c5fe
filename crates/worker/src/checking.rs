//! Checking: starts a task per site, sends each outcome to the writer, and on stop lets those
//! in flight finish within the grace period.
//!
//! `--concurrency` bounds the requests on the wire (the checker's global slots), not these
//! tasks: a task waiting for its host holds no slot another host could use. Tasks are bounded
//! by [`tasks_limit`], so memory is; a site whose host would keep it waiting longer than the
//! checker's patience is not waited for but deferred (see `check/ratelimit.rs`).

use std::sync::Arc;

use crawler_queue::{Outcome, Site};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::run::Ctx;

pub async fn check_loop(
    ctx: Arc<Ctx>,
    mut sites: mpsc::Receiver<Site>,
    outcomes: mpsc::Sender<Outcome>,
    stop: CancellationToken,
) {
    let limit = tasks_limit(ctx.config.check.concurrency, ctx.config.batch_size);
    let mut running = JoinSet::new();
    loop {
        tokio::select! {
            biased;
            _ = stop.cancelled() => break,
            Some(done) = running.join_next(), if !running.is_empty() => forward(&ctx, done, &outcomes, stop.cancelled()).await,
            site = sites.recv(), if running.len() < limit => match site {
                Some(site) => {
                    // A partition lost meanwhile: its hosts are another worker's now.
                    let Some(lost) = ctx.parts.watch(site.part) else {
                        ctx.held.remove(site.token, site.id);
                        continue;
                    };
                    let checker = ctx.checker.clone();
                    running.spawn(async move {
                        tokio::select! {
                            finding = checker.check(&site.url) => Ok(Outcome { site, finding }),
                            _ = lost.cancelled() => Err(site),
                        }
                    });
                }
                None => break,
            },
        }
    }
    // Sites not yet started stay held and are given back; those in flight get the grace
    // period, handing over their outcomes included (a writer the database holds up must not
    // hold up the shutdown).
    sites.close();
    let grace = tokio::time::Instant::now() + ctx.config.grace;
    let finish = async {
        while let Some(done) = running.join_next().await {
            forward(&ctx, done, &outcomes, std::future::pending()).await;
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

/// Tasks at once: the requests on the wire, and room for two claims' sites to wait for their
/// hosts, so that whichever host may send next has a site ready.
fn tasks_limit(concurrency: usize, batch_size: u32) -> usize {
    concurrency + 2 * batch_size as usize
}

/// Hands an outcome to the writer, waiting while the writer is behind: that wait stops this
/// loop taking sites, which stops the claimer claiming, so a slow database bounds memory. If
/// `until` completes first (the worker is stopping), the outcome is dropped: its site is still
/// held, and is given back or its lease expires.
async fn forward(
    ctx: &Ctx,
    done: Result<Result<Outcome, Site>, tokio::task::JoinError>,
    outcomes: &mpsc::Sender<Outcome>,
    until: impl std::future::Future<Output = ()>,
) {
    match done {
        // Cancelled: the site's partition was lost. Its claim is no longer extended: it lapses,
        // and the site comes back to whoever holds the partition now.
        Ok(Err(site)) => ctx.held.remove(site.token, site.id),
        Ok(Ok(outcome)) => {
            tokio::select! {
                _ = outcomes.send(outcome) => {}
                _ = until => {}
            }
        }
        // A panicking check loses no site: it stays held and is given back (or its lease expires).
        Err(error) if error.is_panic() => tracing::error!("a check panicked: {error}"),
        Err(_) => {}
    }
}
