//! The totals: the counts per state and verdict, sampled by one task, the page's totals being
//! the latest sample.
//!
//! The counts scan the table (for millions of sites, a second or more on MySQL), so they are
//! read once per interval whoever watches, however many browsers poll, and the sampler spaces
//! its samples by four times what the last one took: it keeps a connection busy a fifth of
//! the time at most. The plots read the database by time instead (`history.rs`).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crawler_queue::{Queue, Reports, StateCounts, VerdictCounts};
use tokio_util::sync::CancellationToken;

/// A sample a second when the counts are quick.
pub const SAMPLE_EVERY: Duration = Duration::from_secs(1);

/// The counts at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sample {
    /// Unix milliseconds, on the dashboard's clock.
    pub at: u64,
    pub states: StateCounts,
    pub verdicts: VerdictCounts,
}

/// The latest sample, shared between the sampler and the requests. A std mutex: held for a
/// copy, never across an await.
#[derive(Clone, Debug, Default)]
pub struct Counts(Arc<Mutex<Option<Sample>>>);

impl Counts {
    pub fn set(&self, sample: Sample) {
        *self.0.lock().expect("counts lock") = Some(sample);
    }

    /// The latest sample, if any was taken yet.
    pub fn latest(&self) -> Option<Sample> {
        *self.0.lock().expect("counts lock")
    }
}

/// Samples the counts into `counts` until `stop`; a count that fails is logged and skipped.
pub async fn sample(queue: Queue, counts: Counts, stop: CancellationToken) {
    loop {
        let started = Instant::now();
        match read(queue.reports()).await {
            Ok(sample) => counts.set(sample),
            Err(error) => {
                tracing::warn!(error = %crate::error::chain(&error), "cannot count the sites; will try again")
            }
        }
        let wait = SAMPLE_EVERY.max(started.elapsed() * 4);
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(wait.saturating_sub(started.elapsed())) => {}
        }
    }
}

async fn read(reports: Reports<'_>) -> Result<Sample, crawler_queue::Error> {
    let states = reports.state_counts().await?;
    let verdicts = reports.verdict_counts().await?;
    let at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    Ok(Sample {
        at,
        states,
        verdicts,
    })
}
