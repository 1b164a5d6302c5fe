//! A worker from start to stop: connect, register, run the stages (see `stages/mod.rs` for
//! how they connect), and on a signal (or once the queue is drained) finish in-flight checks,
//! write back, give back the rest, deregister.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crawler_check::Checker;
use crawler_queue::{DatabaseUrl, Db, Queue};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::archive::{self, Archiver};
use crate::config::WorkerConfig;
use crate::error::Error;
use crate::nudge::Nudge;
use crate::probe_store::FleetProbes;
use crate::stages::claimer::{claim_loop, Ended};
use crate::stages::held::HeldSites;
use crate::stages::parts::Parts;
use crate::stages::paused::Paused;
use crate::stages::share_hosts::HostSharing;
use crate::stages::upkeep::{self, every};
use crate::stages::Ctx;
use crate::stats::Stats;

/// After the grace period, how long the last write-back, the give-back and the goodbye may
/// take before the worker exits without them, whatever the database does (refuses, or hangs).
/// What is then still claimed comes back through its lease or the reaper.
pub const FINAL_WRITE: Duration = Duration::from_secs(10);

/// Connections: claimer, writer (two statements at once), lease keeper, partition keeper,
/// heartbeat and reaper, progress, metrics (the hosts in backoff, every 10 s), and spares for a
/// database that is slow to hand them back (a fleet of N workers opens up to 10 N: size
/// `max_connections` for it).
const POOL_SIZE: u32 = 10;

/// Runs a worker until `shutdown` completes (or, with `drain`, the queue is empty).
pub async fn run(
    url: &DatabaseUrl,
    config: WorkerConfig,
    shutdown: impl Future<Output = ()>,
) -> Result<Ended, Error> {
    raise_open_files_limit();
    // Bound before anything else, so that an address in use stops the worker at once.
    let exporter = match config.metrics {
        Some(addr) => Some(Arc::new(crate::metrics::serve(addr).await?)),
        None => None,
    };
    let queue = Queue::new(Db::connect(url, POOL_SIZE).await?, config.queue.clone());
    let checker = Checker::new(config.check.clone())?;
    // Every server address's budget is the fleet's: shares kept by `share_addresses`.
    checker.addresses().share_with_fleet();
    checker.share_probes(Arc::new(FleetProbes(queue.clone())));
    queue
        .register(&config.id, &crawler_cli::hostname(), std::process::id())
        .await?;
    tracing::info!(id = %config.id, database = %url, "worker started");
    let nudge = Arc::new(Nudge::default());
    let stats = Arc::new(Stats::default());
    let sites =
        crate::sites::SiteCheck::new(queue.clone(), checker.clone(), nudge.clone(), stats.clone());
    let sharing = Arc::new(HostSharing::new(checker.clone()));
    let ctx = Arc::new(Ctx {
        queue,
        config,
        checker,
        sites,
        held: Arc::new(HeldSites::default()),
        parts: Arc::new(Parts::default()),
        sharing,
        stats,
        paused: Arc::new(Paused::default()),
        nudge,
    });
    // A worker started while the fleet is paused claims nothing until it is resumed.
    upkeep::read_paused(&ctx).await;
    // Take a share of the host partitions before claiming anything.
    let first_round = crate::stages::keeper::keep(&ctx).await;

    let stop = CancellationToken::new(); // stop claiming and checking
    let done = CancellationToken::new(); // stop the upkeep, once everything is written or given back
    let mut upkeep = spawn_upkeep(&ctx, first_round, &stop, &done);
    let archiver = match &ctx.config.archive {
        Some(config) => Some(Arc::new(tokio::sync::Mutex::new(
            Archiver::new(
                ctx.queue.clone(),
                config.clone(),
                &ctx.config.check.user_agent,
            )
            .map_err(Error::Archive)?,
        ))),
        None => None,
    };
    if let Some(archiver) = &archiver {
        upkeep.push(tokio::spawn(look_up_archives(
            ctx.clone(),
            archiver.clone(),
            stop.clone(),
        )));
    }
    if let Some(exporter) = &exporter {
        let sample = crate::metrics::sample(ctx.clone(), exporter.clone(), done.clone());
        upkeep.push(tokio::spawn(sample));
    }
    let (site_tx, site_rx) = mpsc::channel(2 * ctx.config.batch_size as usize);
    // Bounded: a writer that falls behind holds up the checks, and so the claims (see checking.rs).
    let (outcome_tx, outcome_rx) = mpsc::channel(2 * crate::stages::writer::FLUSH_AT);
    let mut claimer = tokio::spawn(claim_loop(ctx.claimer(), site_tx, stop.clone()));
    let checking = tokio::spawn(crate::stages::checking::check_loop(
        Arc::new(ctx.checking()),
        site_rx,
        outcome_tx,
        stop.clone(),
    ));
    let writer = tokio::spawn(crate::stages::writer::write_loop(ctx.writer(), outcome_rx));

    let ended = tokio::select! {
        ended = &mut claimer => ended,
        _ = shutdown => {
            tracing::info!(grace = ?ctx.config.grace, "stopping: finishing the checks in flight");
            stop.cancel();
            claimer.await
        }
    }
    .unwrap_or(Ended::Stopped);
    stop.cancel();
    let deadline = tokio::time::Instant::now() + ctx.config.grace + FINAL_WRITE;
    let tasks = [checking.abort_handle(), writer.abort_handle()];
    let finish = async {
        let _ = checking.await;
        let _ = writer.await;
        give_back(&ctx).await;
        give_back_parts(&ctx).await;
        done.cancel();
        for task in upkeep {
            let _ = task.await;
        }
        let _ = ctx.queue.reaping().resign_reaper(&ctx.config.id).await;
        let _ = ctx.queue.deregister(&ctx.config.id).await;
    };
    if tokio::time::timeout_at(deadline, finish).await.is_err() {
        for task in tasks {
            task.abort();
        }
        let held: usize = ctx.held.snapshot().iter().map(|(_, ids)| ids.len()).sum();
        tracing::error!(
            sites = held,
            "the database did not take the last results in time; exiting without them: \
             these sites stay claimed until their lease expires (or the reaper finds this \
             worker silent), then they are checked again"
        );
        tracing::info!(?ended, "worker stopped: {}", ctx.stats.line());
        return Ok(ended);
    }
    if let (Some(archiver), Ended::Drained) = (&archiver, ended) {
        archiver.lock().await.finish(&ctx.config.id).await;
    }
    if ctx.queue.db().dialect() == crawler_queue::Dialect::Sqlite {
        // The embedded database's work is the process's (a server counts its own); at debug,
        // and before the summary, which stays the last line.
        let work = crawler_queue::SqliteWork::now();
        tracing::debug!("the SQLite database's work: {work}");
    }
    tracing::info!(?ended, "worker stopped: {}", ctx.stats.line());
    ctx.queue.db().close().await;
    Ok(ended)
}

fn spawn_upkeep(
    ctx: &Arc<Ctx>,
    first_round: crate::stages::keeper::Round,
    stop: &CancellationToken,
    done: &CancellationToken,
) -> Vec<tokio::task::JoinHandle<()>> {
    let c = ctx.clone();
    let leases = every(ctx.config.lease / 3, done.clone(), move || {
        let c = c.clone();
        async move { upkeep::extend_leases(&c).await }
    });
    let parts = keep_parts(ctx.clone(), first_round, stop.clone());
    let c = ctx.clone();
    let heartbeat = every(ctx.config.heartbeat, done.clone(), move || {
        let c = c.clone();
        async move { upkeep::heartbeat(&c).await }
    });
    let c = ctx.clone();
    let reaper = every(ctx.config.reap_every, stop.clone(), move || {
        let c = c.clone();
        async move { upkeep::reap(&c).await }
    });
    let addresses = crate::stages::share_addresses::share_loop(ctx.clone(), done.clone());
    vec![
        tokio::spawn(addresses),
        tokio::spawn(leases),
        tokio::spawn(parts),
        tokio::spawn(heartbeat),
        tokio::spawn(reaper),
        tokio::spawn(upkeep::progress(ctx.clone(), done.clone())),
    ]
}

/// Keeps the host partitions until `stop`, each round after the wait the last one calls for
/// (`stages::keeper::Cadence`).
async fn keep_parts(ctx: Arc<Ctx>, first: crate::stages::keeper::Round, stop: CancellationToken) {
    let mut cadence = crate::stages::keeper::Cadence::new(ctx.config.lease);
    let mut round = first;
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(cadence.next(round)) => {}
        }
        round = crate::stages::keeper::keep(&ctx).await;
    }
}

/// Looks up archived copies of dead sites every [`archive::EVERY`] while the fleet is not
/// paused (when this worker holds the archive lease), until `stop`.
async fn look_up_archives(
    ctx: Arc<Ctx>,
    archiver: Arc<tokio::sync::Mutex<Archiver>>,
    stop: CancellationToken,
) {
    every(archive::EVERY, stop.clone(), move || {
        let (ctx, archiver, stop) = (ctx.clone(), archiver.clone(), stop.clone());
        async move {
            if ctx.paused.is_paused() {
                return;
            }
            let mut archiver = archiver.lock().await;
            // A pass takes a while at a polite rate: a stopping worker does not wait for it.
            tokio::select! {
                _ = stop.cancelled() => {}
                _ = archiver.pass(&ctx.config.id) => {}
            }
        }
    })
    .await;
}

/// Gives back every site still held (not started, or cut off by the grace period), due at once.
async fn give_back(ctx: &Ctx) {
    for (token, ids) in ctx.held.snapshot() {
        match ctx.queue.release(token, &ids, Duration::ZERO).await {
            Ok(n) => tracing::info!(sites = n, "gave back unfinished sites"),
            Err(error) => {
                tracing::warn!(error = %crawler_queue::error_chain(&error), sites = ids.len(), "cannot give back sites; their lease will expire")
            }
        }
    }
}

/// Gives back every host partition, so that other workers take them at once rather than after
/// the lease.
async fn give_back_parts(ctx: &Ctx) {
    ctx.parts.clear();
    match ctx.queue.parts().release(ctx.parts.token).await {
        Ok(n) => tracing::info!(partitions = n, "gave back host partitions"),
        Err(error) => {
            tracing::warn!(error = %crawler_queue::error_chain(&error), "cannot give back host partitions; their lease will expire")
        }
    }
}

/// Raises the soft limit on open files to the hard limit. Every check holds a socket, and the
/// connection pool keeps idle ones to recently seen hosts; at a common default soft limit of
/// 1,024, connects would fail with EMFILE and live sites would be reported unreachable.
fn raise_open_files_limit() {
    // SAFETY: getrlimit/setrlimit on a local, zero-initialized struct.
    unsafe {
        let mut limit = std::mem::zeroed::<libc::rlimit>();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 || limit.rlim_cur >= limit.rlim_max
        {
            return;
        }
        let before = limit.rlim_cur;
        limit.rlim_cur = limit.rlim_max;
        if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0 {
            tracing::info!(
                "raised the open-files limit from {before} to {}",
                limit.rlim_max
            );
        }
    }
}
