//! Writing back: results are gathered and stored in bulk, fenced by their claim, once 500 are
//! waiting, the oldest has waited a second, none has come for 250 ms, or every site held has
//! its result waiting (nothing else can come: the end of a round, of a drain): a worker
//! checking 50 sites a second writes 50 at a time, and the database's cost of a result falls
//! with the size of its write-back (docs/scale.md). Host decisions go out every 100 ms whether
//! or not results are written. While the database is away the results wait in memory and are
//! written when it returns; results whose lease was lost meanwhile are dropped by the fence and
//! counted. At shutdown the writer keeps trying until the worker's last deadline (see
//! `run.rs`), which abandons what the database would still not take: those sites stay claimed
//! until their lease expires, a delay, not a loss.

use std::sync::Arc;
use std::time::Duration;

use crawler_queue::Outcome;
use tokio::sync::mpsc;

use crawler_queue::Queue;

use super::held::HeldSites;
use super::share_hosts::HostSharing;
use crate::stats::Stats;

/// What the writer needs, and nothing else.
pub struct Writer {
    pub queue: Queue,
    pub held: Arc<HeldSites>,
    pub stats: Arc<Stats>,
    /// What the checker learned of its hosts (its host decisions), which the writer shares
    /// with the fleet after each write-back.
    pub sharing: Arc<HostSharing>,
    /// Told when the last site held is written back: the claimer looks at once.
    pub nudge: Arc<crate::nudge::Nudge>,
    /// Fences the host decisions by the partitions held.
    pub parts_token: i64,
}

/// How often the writer looks at what waits, and shares the checker's host decisions.
const TICK: Duration = Duration::from_millis(100);
/// The longest a result waits to be written back.
const FLUSH_AFTER: Duration = Duration::from_secs(1);
/// What waits is written sooner when no result has come for this long: the checkers went
/// quiet (the end of a drain, a pause), and nothing is gained by waiting for more.
const QUIET: Duration = Duration::from_millis(250);
/// Results written back at once, at most (and at once when that many wait).
pub const FLUSH_AT: usize = 500;

pub async fn write_loop(ctx: Writer, mut outcomes: mpsc::Receiver<Outcome>) {
    let mut pending = Vec::new();
    // When the oldest result of `pending` came, and the latest.
    let mut oldest = tokio::time::Instant::now();
    let mut latest = oldest;
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut failures = 0;
    loop {
        tokio::select! {
            outcome = outcomes.recv() => match outcome {
                Some(outcome) => {
                    latest = tokio::time::Instant::now();
                    if pending.is_empty() {
                        oldest = latest;
                    }
                    pending.push(outcome);
                    if pending.len() < FLUSH_AT && !all_waiting(&ctx.held, pending.len()) {
                        continue;
                    }
                }
                None => break,
            },
            _ = tick.tick() => if !time_to_write(pending.len(), oldest.elapsed(), latest.elapsed()) {
                // Host decisions go out without waiting for results to carry them.
                ctx.sharing.share(&ctx.queue, ctx.parts_token).await;
                continue;
            },
        }
        if flush(&ctx, &mut pending).await {
            failures = 0;
        } else {
            failures += 1;
            tokio::time::sleep(super::reconnect::RECONNECT.delay(failures)).await;
        }
    }
    while !pending.is_empty() && !flush(&ctx, &mut pending).await {
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// Whether the `waiting` results are those of every site held: nothing else is being
/// checked, so none will come to join them (the end of a drain), and they are written at once.
fn all_waiting(held: &HeldSites, waiting: usize) -> bool {
    waiting >= held.count()
}

/// Whether `waiting` results are written back now, short of [`FLUSH_AT`]: the oldest came
/// `oldest` ago, the latest `latest` ago.
fn time_to_write(waiting: usize, oldest: Duration, latest: Duration) -> bool {
    waiting > 0 && (oldest >= FLUSH_AFTER || latest >= QUIET)
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
            ctx.sharing.record(&ctx.queue, pending).await;
            ctx.sharing.share(&ctx.queue, ctx.parts_token).await;
            for o in pending.drain(..) {
                ctx.held.remove(o.site.token, o.site.id);
            }
            if ctx.held.is_empty() {
                ctx.nudge.nudge();
            }
            true
        }
        Err(error) => {
            tracing::warn!(error = %crawler_queue::error_chain(&error), results = pending.len(), "cannot write results; keeping them to try again");
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn a_busy_worker_writes_a_seconds_results_at_once_and_a_quiet_one_at_once() {
        // 50 sites/s: a result every 20 ms, so results gather for a second.
        assert!(!time_to_write(25, MS(500), MS(20)));
        assert!(time_to_write(50, MS(1000), MS(20)));
        // The checkers went quiet (the drain's last results): no waiting for more.
        assert!(!time_to_write(3, MS(300), MS(200)));
        assert!(time_to_write(3, MS(300), MS(250)));
        assert!(!time_to_write(0, MS(5000), MS(5000)));
    }
}
