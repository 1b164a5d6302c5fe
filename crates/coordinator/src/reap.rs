//! Reaping: gives back the claims of expired leases and dead workers, and optionally makes old
//! verdicts due again — once, or every interval under the fleet's reaper lease.

use std::future::Future;
use std::time::Duration;

use crawler_queue::bounds::DurationRange;
use crawler_queue::{Queue, Reaped};

use crate::Error;

/// The singleton lease under which reaping runs, shared with the workers.
pub const REAPER: &str = "reap";

/// The range of `--recheck-after`: shorter would recheck the whole list on every pass, and
/// monitoring yearly or less often is still monitoring.
pub const RECHECK_AFTER: DurationRange =
    DurationRange::at_least(Duration::from_secs(60)).up_to_days(3650);

#[derive(Clone, Debug)]
pub struct ReapConfig {
    /// This process's name in the lease table.
    pub id: String,
    /// A worker silent for this long is taken for dead.
    pub dead_after: Duration,
    /// Done sites checked longer ago than this become due again.
    pub recheck_after: Option<Duration>,
}

/// One pass, whoever holds the lease: every statement rechecks its condition, so running
/// beside another reaper is safe; an operator asking for a pass gets one.
pub async fn reap_once(queue: &Queue, config: &ReapConfig) -> Result<Reaped, Error> {
    let mut reaped = queue.reap(config.dead_after).await?;
    if let Some(age) = config.recheck_after {
        reaped.rechecked = queue.recheck(age).await?;
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
            if !queue.try_lead(REAPER, &config.id, every * 2).await? {
                return Ok(None);
            }
            reap_once(queue, config).await.map(Some)
        };
        match pass.await {
            Ok(Some(reaped)) => crawler_queue::cli::print_line(describe(&reaped)),
            Ok(None) => tracing::debug!("another process holds the reaper lease"),
            Err(error) => {
                tracing::warn!(error = %crate::chain(&error), "reap failed; will try again")
            }
        }
    }
    let _ = queue.resign(REAPER, &config.id).await;
}

/// `gave back 3 expired and 0 abandoned claims; 0 sites due again`.
pub fn describe(r: &Reaped) -> String {
    format!(
        "gave back {} expired and {} abandoned claims; {} sites due again",
        r.expired, r.abandoned, r.rechecked
    )
}
