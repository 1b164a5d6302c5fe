//! The worker's background duties: extending its leases, saying it is alive (and reading
//! whether the fleet is paused), reaping for the fleet when it holds the reaper's lease, and
//! showing progress.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::ctx::Ctx;
use crate::progress::Progress;

/// Runs `job` every `period` until `stop`. A job that overruns delays the next tick.
pub async fn every<F, Fut>(period: Duration, stop: CancellationToken, mut job: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tick.tick() => job().await,
        }
    }
}

/// Extends the lease of every claim still held, and forgets sites another worker now has.
pub async fn extend_leases(ctx: &Ctx) {
    for (token, ids) in ctx.held.snapshot() {
        match ctx.queue.extend(token, &ids, ctx.config.lease).await {
            Ok(gone) => {
                let lost = ctx.held.lose(token, &gone);
                if !lost.is_empty() {
                    tracing::warn!(
                        token,
                        sites = lost.len(),
                        "lost the lease on sites (reaped while this worker was away)"
                    );
                }
            }
            Err(error) => {
                tracing::warn!(error = %crawler_queue::error_chain(&error), "cannot extend a lease; will try again")
            }
        }
    }
}

/// Says this worker is alive, then reads whether the fleet is paused: so a pause or a resume
/// reaches every worker within one `--heartbeat`.
pub async fn heartbeat(ctx: &Ctx) {
    say_alive(ctx).await;
    read_paused(ctx).await;
}

/// Reads the fleet's pause switch into `ctx.paused`, and logs a change once. A read that fails
/// keeps the last value: a database gone away neither pauses nor resumes the fleet.
pub async fn read_paused(ctx: &Ctx) {
    let paused = match ctx.queue.control().is_paused().await {
        Ok(paused) => paused,
        Err(error) => {
            tracing::warn!(error = %crawler_queue::error_chain(&error), "cannot read whether the fleet is paused");
            return;
        }
    };
    // The checker first: no request starts from here on, whatever the claimer does.
    ctx.checker.pause(paused);
    if !ctx.paused.set(paused) {
        return;
    }
    if paused {
        tracing::info!(
            "fleet paused: no new request; the sites held stay claimed until it is resumed"
        );
    } else {
        tracing::info!("fleet resumed: claiming again");
    }
}

async fn say_alive(ctx: &Ctx) {
    let id = &ctx.config.id;
    match ctx.queue.heartbeat(id, ctx.stats.checked()).await {
        Ok(true) => {}
        Ok(false) => {
            tracing::warn!("this worker was taken for dead; registering again");
            if let Err(error) = ctx
                .queue
                .register(id, &crawler_cli::hostname(), std::process::id())
                .await
            {
                tracing::warn!(error = %crawler_queue::error_chain(&error), "cannot register again");
            }
        }
        Err(error) => {
            tracing::warn!(error = %crawler_queue::error_chain(&error), "cannot send a heartbeat")
        }
    }
}

/// Reaps for the whole fleet if this worker holds (or takes) the reaper's lease.
pub async fn reap(ctx: &Ctx) {
    let config = &ctx.config;
    let reaped = ctx
        .queue
        .reaping()
        .reap_as_leader(&config.id, config.dead_after, config.reap_every)
        .await;
    match reaped {
        Ok(Some(r)) if r.expired + r.abandoned > 0 => {
            tracing::info!(
                expired = r.expired,
                abandoned = r.abandoned,
                "gave back sites of stalled workers"
            );
        }
        Ok(Some(r)) if r.confirming > 0 => {
            tracing::info!(
                sites = r.confirming,
                "dead sites due for a confirming check (--confirm)"
            );
        }
        Ok(_) => {}
        Err(error) => tracing::warn!(error = %crawler_queue::error_chain(&error), "cannot reap"),
    }
}

/// How often the progress bar redraws from this worker's counts: often enough to look live,
/// and what it reads is in memory (counters, the host maps), never the database.
const PROGRESS_TICK: Duration = Duration::from_millis(250);
/// How often the bar's total is counted again from the queue: counting the sites due scans
/// the table, so rarely, and only for a person watching a terminal.
const COUNT_DUE_EVERY: Duration = Duration::from_secs(5);
/// How often a progress line is logged where no bar is drawn (a pipe, a log file): as long as
/// the window its rate is measured over (`RATE_WINDOW` in `progress.rs`), so each line's rate
/// covers the time since the line before.
const LOG_PROGRESS_EVERY: Duration = Duration::from_secs(10);

/// Shows progress until `stop`, from this worker's counts every [`PROGRESS_TICK`]. On a
/// terminal the bar's total also needs the sites due in the queue, counted every
/// [`COUNT_DUE_EVERY`]; a count the database is slow to give never holds up `stop`.
pub async fn progress(ctx: Arc<Ctx>, stop: CancellationToken) {
    let count_due_every_ticks = (COUNT_DUE_EVERY.as_millis() / PROGRESS_TICK.as_millis()) as u64;
    let mut progress = Progress::new(LOG_PROGRESS_EVERY);
    let mut tick = tokio::time::interval(PROGRESS_TICK);
    for ticks in 0u64.. {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tick.tick() => {}
        }
        if progress.on_terminal() && ticks % count_due_every_ticks == 0 {
            let checked = ctx.stats.checked();
            let reports = ctx.queue.reports();
            let counts = tokio::select! {
                _ = stop.cancelled() => return,
                counts = reports.state_counts() => counts,
            };
            if let Ok(c) = counts {
                progress.set_due((c.pending + c.claimed).max(0) as u64, checked);
            }
        }
        progress.update(
            &ctx.stats,
            ctx.paused.is_paused(),
            ctx.checker.book().counts(),
        );
    }
}
