//! Claiming: keeps the checkers fed, one batch ahead, until stopped or (with `--drain`) until
//! the whole queue has a verdict. Only sites of the host partitions this worker holds, and
//! nothing while the fleet is paused (`paused.rs`) or while a batch's worth of checks wait for
//! their server addresses' shares from the fleet.

use std::sync::Arc;
use std::time::Duration;

use crawler_queue::Site;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crawler_queue::Queue;

use super::held::HeldSites;
use super::parts::Parts;
use super::paused::Paused;
use crawler_check::Checker;

/// What the claimer needs, and nothing else.
pub struct Claimer {
    pub queue: Queue,
    /// Asked which hosts have enough waiting (claim by host readiness).
    pub checker: Checker,
    pub held: Arc<HeldSites>,
    pub parts: Arc<Parts>,
    pub paused: Arc<Paused>,
    /// Wakes the claimer waiting while nothing was due.
    pub nudge: Arc<crate::nudge::Nudge>,
    /// This worker's id, stamped on its claims.
    pub owner: String,
    pub batch_size: u32,
    pub lease: Duration,
    pub drain: bool,
}

/// How long to wait before claiming again when nothing is due.
const IDLE: Duration = Duration::from_millis(500);
/// How soon the claimer looks again while a batch's worth of checks wait for their
/// addresses' shares from the fleet: `share_addresses` gathers new addresses this long.
const FLEET_WAIT: Duration = Duration::from_millis(20);
/// A host with more checks waiting than it can start in this time at its pace gets no more
/// claimed: its partition is left out of claims until it catches up (Mercator's frontier keeps
/// a queue per host, and takes from the hosts that are ready).
pub const BACKLOG: Duration = Duration::from_secs(2);

/// Why claiming ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    Stopped,
    /// Nothing is pending or claimed anywhere: the crawl is complete.
    Drained,
}

/// Claims a batch whenever the channel to the checkers has room for one (it holds two), so the
/// next batch is ready before the current one is done and the checkers never wait on the
/// database.
pub async fn claim_loop(ctx: Claimer, sites: mpsc::Sender<Site>, stop: CancellationToken) -> Ended {
    let n = ctx.batch_size;
    let mut failures = 0;
    loop {
        let permits = tokio::select! {
            _ = stop.cancelled() => return Ended::Stopped,
            permits = sites.reserve_many(n as usize) => match permits {
                Ok(permits) => permits,
                Err(_) => return Ended::Stopped,
            },
        };
        if ctx.paused.is_paused() {
            // What is held goes on being checked and written back; nothing new is claimed.
            drop(permits);
            if ctx.paused.wait_resumed(&stop).await {
                return Ended::Stopped;
            }
            continue;
        }
        // Checks waiting for their server addresses' shares from the fleet (a new address
        // waits for a round of `share_addresses`) are not joined by more: on a list of many
        // new servers they would pile up to the task limit, each holding its check's memory,
        // while one round registers every address wanted.
        if ctx.checker.addresses().waiting_for_fleet() >= n as usize {
            drop(permits);
            if pause(FLEET_WAIT, &stop).await {
                return Ended::Stopped;
            }
            continue;
        }
        // A claim cut short by the stop may have stamped rows it never read: they wait for
        // their lease to expire, a delay at shutdown only, where a database that hangs must
        // not hold the worker.
        let parts = claimable(&ctx);
        let claimed = tokio::select! {
            _ = stop.cancelled() => return Ended::Stopped,
            claimed = ctx.queue.claim_in_parts(ctx.parts.token, &parts, &ctx.owner, n, ctx.lease) => claimed,
        };
        if let Ok(batch) = &claimed {
            ctx.parts.claimed(batch.sites.len());
        }
        match claimed {
            Ok(batch) if !batch.sites.is_empty() => {
                failures = 0;
                tracing::debug!(
                    token = batch.token,
                    sites = batch.sites.len(),
                    "claimed a batch"
                );
                ctx.held.add(&batch);
                ctx.parts.adopt(batch.sites.iter().map(|s| s.part));
                let mut sites_claimed = batch.sites.into_iter();
                for (site, permit) in sites_claimed.by_ref().zip(permits) {
                    permit.send(site);
                }
                // More than asked for (a database that let a claim's LIMIT slip, as PostgreSQL
                // once did, see `sql::limited_update`): they are held too, so they are checked,
                // not dropped to have their lease extended until the worker stops.
                let extra: Vec<Site> = sites_claimed.collect();
                if !extra.is_empty() {
                    tracing::warn!(
                        asked = n,
                        extra = extra.len(),
                        "a claim returned more sites than asked for; checking them too"
                    );
                }
                for site in extra {
                    if sites.send(site).await.is_err() {
                        return Ended::Stopped;
                    }
                }
                continue;
            }
            Ok(_) => {
                drop(permits);
                // Paused meanwhile: not drained, whatever the queue says, until resumed.
                if ctx.drain
                    && ctx.held.is_empty()
                    && !ctx.paused.is_paused()
                    && is_drained(&ctx).await
                {
                    return Ended::Drained;
                }
                // Draining, with nothing due but sites still held: the next look that can
                // find the crawl complete is right after their last write-back, not at the
                // end of a fixed pause (half a second of a short drain). The worker's own
                // new sites (a page's links, fragments released) are claimed at once too.
                let held = ctx.drain && !ctx.held.is_empty();
                let emptied = async {
                    match held {
                        true => ctx.held.emptied().await,
                        false => std::future::pending().await,
                    }
                };
                let stopped = tokio::select! {
                    stopped = pause(IDLE, &stop) => stopped,
                    () = emptied => false,
                    _ = ctx.nudge.notified() => false,
                };
                if stopped {
                    return Ended::Stopped;
                }
            }
            Err(error) => {
                failures += 1;
                tracing::warn!(error = %crawler_queue::error_chain(&error), "cannot claim; will try again");
                if pause(super::reconnect::RECONNECT.delay(failures), &stop).await {
                    return Ended::Stopped;
                }
            }
        }
    }
}

/// The partitions to claim in: those held (as the keeper last read them) but the partitions
/// of hosts that have enough waiting already.
fn claimable(ctx: &Claimer) -> Vec<i16> {
    let backlogged: std::collections::HashSet<i16> = ctx
        .checker
        .book()
        .backlogged(BACKLOG)
        .iter()
        .map(|host| crawler_queue::parts::part_of(host))
        .collect();
    let mut parts = ctx.parts.active();
    parts.retain(|part| !backlogged.contains(part));
    parts
}

async fn is_drained(ctx: &Claimer) -> bool {
    match ctx.queue.reports().has_unfinished().await {
        Ok(unfinished) => !unfinished,
        Err(error) => {
            tracing::warn!(error = %crawler_queue::error_chain(&error), "cannot count unfinished sites");
            false
        }
    }
}

/// Waits `d`, or less if `stop` is cancelled; returns whether it was.
async fn pause(d: Duration, stop: &CancellationToken) -> bool {
    tokio::select! {
        _ = stop.cancelled() => true,
        _ = tokio::time::sleep(d) => false,
    }
}
