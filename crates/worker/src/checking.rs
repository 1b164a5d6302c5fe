//! Checking: runs up to `--concurrency` checks at once, sends each outcome to the writer, and
//! on stop lets those in flight finish within the grace period.

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
    let limit = ctx.config.check.concurrency;
    let mut running = JoinSet::new();
    loop {
        tokio::select! {
            biased;
            _ = stop.cancelled() => break,
            Some(done) = running.join_next(), if !running.is_empty() => forward(done, &outcomes).await,
            site = sites.recv(), if running.len() < limit => match site {
                Some(site) => {
                    let checker = ctx.checker.clone();
                    running.spawn(async move {
                        let finding = checker.check(&site.url).await;
                        Outcome { site, finding }
                    });
                }
                None => break,
            },
        }
    }
    // Sites not yet started stay held and are given back; those in flight get the grace period.
    sites.close();
    let grace = tokio::time::sleep(ctx.config.grace);
    tokio::pin!(grace);
    while !running.is_empty() {
        tokio::select! {
            Some(done) = running.join_next() => forward(done, &outcomes).await,
            _ = &mut grace => {
                tracing::info!(sites = running.len(), "grace period over; giving back checks in flight");
                running.abort_all();
                break;
            }
        }
    }
}

/// Hands an outcome to the writer, waiting while the writer is behind: that wait stops this
/// loop taking sites, which stops the claimer claiming, so a slow database bounds memory.
async fn forward(done: Result<Outcome, tokio::task::JoinError>, outcomes: &mpsc::Sender<Outcome>) {
    match done {
        Ok(outcome) => {
            let _ = outcomes.send(outcome).await;
        }
        // A panicking check loses no site: it stays held and is given back (or its lease expires).
        Err(error) if error.is_panic() => tracing::error!("a check panicked: {error}"),
        Err(_) => {}
    }
}
