//! Reaping: gives back the claims of expired leases and dead workers, and optionally makes old
//! verdicts due again and prunes the verdict history — once, or every interval under the
//! fleet's reaper lease.

use std::future::Future;
use std::time::Duration;

use crawler_cli::bounds::DurationRange;
use crawler_queue::{Queue, Reaped};

use crate::error::Error;

/// The range of `--recheck-after`: shorter would recheck the whole list on every pass, and
/// monitoring yearly or less often is still monitoring.
pub const RECHECK_AFTER: DurationRange =
    DurationRange::at_least(Duration::from_secs(60)).up_to_days(3650);

/// The range of `--prune-history-after`: a history kept less than an hour tells little, and
/// one kept longer than ten years is not pruned.
pub const PRUNE_HISTORY_AFTER: DurationRange =
    DurationRange::at_least(Duration::from_secs(3600)).up_to_days(3650);

#[derive(Clone, Debug)]
pub struct ReapConfig {
    /// This process's name in the lease table.
    pub id: String,
    /// A worker silent for this long is taken for dead.
    pub dead_after: Duration,
    /// Done sites checked longer ago than this become due again.
    pub recheck_after: Option<Duration>,
    /// Verdict changes older than this are deleted (each site's latest one stays).
    pub prune_history_after: Option<Duration>,
}

/// One pass, whoever holds the lease: every statement rechecks its condition, so running
/// beside another reaper is safe; an operator asking for a pass gets one.
pub async fn reap_once(queue: &Queue, config: &ReapConfig) -> Result<Reaped, Error> {
    let reaped = queue.reaping().reap(config.dead_after).await?;
    recheck(queue, config, reaped).await
}

/// After a reap, the `--recheck-after` and `--prune-history-after` parts of the pass, counted
/// into `reaped`.
async fn recheck(queue: &Queue, config: &ReapConfig, mut reaped: Reaped) -> Result<Reaped, Error> {
    if let Some(age) = config.recheck_after {
        reaped.rechecked = queue.reaping().recheck(age).await?;
    }
    if let Some(age) = config.prune_history_after {
        reaped.pruned = Some(queue.history().prune(age).await?);
        // The notifier's acknowledged digests age with the history they told.
        queue.notifier().prune(age).await?;
    }
    Ok(reaped)
}

/// A pass every `every` while this process holds the reaper lease, until `shutdown`; prints
/// each pass that did something. Database errors are logged and the next tick tries again.
pub async fn reap_every(
    queue: &Queue,
    config: &ReapConfig,
    every: Duration,
    shutdown: impl Future<Output = ()>,
) {
    tokio::pin!(shutdown);
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            _ = tick.tick() => {}
        }
        let pass = async {
            match queue
                .reaping()
                .reap_as_leader(&config.id, config.dead_after, every)
                .await?
            {
                Some(reaped) => recheck(queue, config, reaped).await.map(Some),
                None => Ok(None),
            }
        };
        match pass.await {
            Ok(Some(reaped)) => crawler_cli::print_line(describe(&reaped)),
            Ok(None) => tracing::debug!("another process holds the reaper lease"),
            Err(error) => {
                tracing::warn!(error = %crate::error::chain(&error), "reap failed; will try again")
            }
        }
    }
    let _ = queue.reaping().resign_reaper(&config.id).await;
}

/// `gave back 3 expired and 0 abandoned claims; 0 sites due again`, and with
/// `--prune-history-after`, `; 7 old verdict changes pruned`.
pub fn describe(r: &Reaped) -> String {
    let pruned = r
        .pruned
        .map(|n| format!("; {n} old verdict changes pruned"))
        .unwrap_or_default();
    let confirming = match r.confirming {
        0 => String::new(),
        n => format!("; {n} dead sites due for a confirming check"),
    };
    format!(
        "gave back {} expired and {} abandoned claims; {} sites due again{confirming}{pruned}",
        r.expired, r.abandoned, r.rechecked
    )
}
