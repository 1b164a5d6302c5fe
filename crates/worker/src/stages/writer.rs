//! Writing back: results are gathered and stored in bulk, every 100 ms or 500 results, fenced
//! by their claim. While the database is away they wait in memory and are written when it
//! returns; results whose lease was lost meanwhile are dropped by the fence and counted. At
//! shutdown the writer keeps trying until the worker's last deadline (see `run.rs`), which
//! abandons what the database would still not take: those sites stay claimed until their
//! lease expires, a delay, not a loss.

use std::sync::Arc;
use std::time::Duration;

use crawler_queue::Outcome;
use tokio::sync::mpsc;

use crawler_queue::Queue;

use super::held::HeldSites;
use super::host_health::HostHealth;
use crate::check::Checker;
use crate::stats::Stats;

/// What the writer needs, and nothing else.
pub struct Writer {
    pub queue: Queue,
    /// Asked for its host decisions, which the writer shares with the fleet.
    pub checker: Checker,
    pub held: Arc<HeldSites>,
    pub stats: Arc<Stats>,
    pub hosts: Arc<HostHealth>,
    /// Fences the host decisions by the partitions held.
    pub parts_token: i64,
}

const FLUSH_EVERY: Duration = Duration::from_millis(100);
pub const FLUSH_AT: usize = 500;

pub async fn write_loop(ctx: Writer, mut outcomes: mpsc::Receiver<Outcome>) {
    let mut pending = Vec::new();
    let mut tick = tokio::time::interval(FLUSH_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut failures = 0;
    loop {
        tokio::select! {
            outcome = outcomes.recv() => match outcome {
                Some(outcome) => {
                    pending.push(outcome);
                    if pending.len() < FLUSH_AT {
                        continue;
                    }
                }
                None => break,
            },
            _ = tick.tick() => if pending.is_empty() {
                // Host decisions go out without waiting for results to carry them.
                ctx.hosts.share(&ctx.queue, &ctx.checker, ctx.parts_token).await;
                continue;
            },
        }
        if flush(&ctx, &mut pending).await {
            failures = 0;
        } else {
            failures += 1;
            tokio::time::sleep(super::RECONNECT.delay(failures)).await;
        }
    }
    while !pending.is_empty() && !flush(&ctx, &mut pending).await {
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// Writes `pending` back; on success empties it and returns true.
async fn flush(ctx: &Writer, pending: &mut Vec<Outcome>) -> bool {
    ctx.held
        .writing(pending.iter().map(|o| (o.site.token, o.site.id)));
    match ctx.queue.complete(pending).await {
        Ok(completed) => {
            if completed.stale > 0 {
                tracing::warn!(
                    results = completed.stale,
                    "dropped results whose lease was lost (another worker has the sites)"
                );
            }
            ctx.stats.record(&completed);
            ctx.hosts.record(&ctx.queue, pending).await;
            ctx.hosts
                .share(&ctx.queue, &ctx.checker, ctx.parts_token)
                .await;
            for o in pending.drain(..) {
                ctx.held.remove(o.site.token, o.site.id);
            }
            true
        }
        Err(error) => {
            tracing::warn!(error = %crate::chain(&error), results = pending.len(), "cannot write results; keeping them to try again");
            false
        }
    }
}
