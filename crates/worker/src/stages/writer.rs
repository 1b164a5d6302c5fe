//! Writing back: results are gathered and stored in bulk, fenced by their claim, once 500 are
//! waiting or the oldest has waited a second: a worker checking 50 sites a second writes 50 at a
//! time, and the database's cost of a result falls with the size of its write-back
//! (docs/scale.md). Host decisions go out every 100 ms whether or not results are written. While
//! the database is away the results wait in memory and are written when it returns; results
//! whose lease was lost meanwhile are dropped by the fence and counted. At shutdown the writer
//! keeps trying until the worker's last deadline (see `run.rs`), which abandons what the
//! database would still not take: those sites stay claimed until their lease expires, a delay,
//! not a loss.

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

/// How often the writer looks at what waits, and shares the checker's host decisions.
const TICK: Duration = Duration::from_millis(100);
/// The longest a result waits to be written back.
const FLUSH_AFTER: Duration = Duration::from_secs(1);
/// Results written back at once, at most (and at once when that many wait).
pub const FLUSH_AT: usize = 500;

pub async fn write_loop(ctx: Writer, mut outcomes: mpsc::Receiver<Outcome>) {
    let mut pending = Vec::new();
    // When the oldest result of `pending` came.
    let mut oldest = tokio::time::Instant::now();
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut failures = 0;
    loop {
        tokio::select! {
            outcome = outcomes.recv() => match outcome {
                Some(outcome) => {
                    if pending.is_empty() {
                        oldest = tokio::time::Instant::now();
                    }
                    pending.push(outcome);
                    if pending.len() < FLUSH_AT {
                        continue;
                    }
                }
                None => break,
            },
            _ = tick.tick() => if pending.is_empty() || oldest.elapsed() < FLUSH_AFTER {
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
