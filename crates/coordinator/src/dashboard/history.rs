//! Progress over time: the counts per state and verdict, sampled by one task into a ring
//! buffer from the dashboard's start.
//!
//! Why sample here rather than group the sites by `checked_at`: a window of `checked_at`
//! reads every site checked in it (at 10,000 sites/s, 6 million rows for ten minutes), for
//! each page that asks, and knows nothing of pending or claimed sites. Sampling reads the
//! counts once per interval whoever watches, however many browsers poll, and the page's
//! totals are the latest sample. The counts scan the table (for millions of sites, a second
//! or more on MySQL), so the sampler spaces its samples by four times what the last one took:
//! it keeps a connection busy a fifth of the time at most, and the plot's resolution drops
//! with the table's size rather than the database's health. The cost: the history starts
//! when the dashboard starts, and is lost when it stops.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crawler_queue::{Queue, Reports, StateCounts, Verdict, VerdictCounts};
use serde::Serialize;
use tokio_util::sync::CancellationToken;

/// A sample a second when the counts are quick.
pub const SAMPLE_EVERY: Duration = Duration::from_secs(1);

/// Samples kept: an hour at one a second.
const KEPT: usize = 3600;

/// The plot's points at most: what the page draws, picked evenly from the samples kept.
const POINTS: usize = 300;

/// The counts at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sample {
    /// Unix milliseconds, on the dashboard's clock (only differences matter).
    pub at: u64,
    pub states: StateCounts,
    pub verdicts: VerdictCounts,
}

/// A point of the plot.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Point {
    pub at: u64,
    /// Verdicts given per second since the previous point (sites done, counted once).
    pub rate: f64,
    /// Dead sites then.
    pub dead: u64,
}

/// The samples, shared between the sampler and the requests. A std mutex: held for a copy,
/// never across an await.
#[derive(Clone, Debug, Default)]
pub struct History(Arc<Mutex<VecDeque<Sample>>>);

impl History {
    pub fn push(&self, sample: Sample) {
        let mut samples = self.0.lock().expect("history lock");
        if samples.len() == KEPT {
            samples.pop_front();
        }
        samples.push_back(sample);
    }

    /// The latest sample, if any was taken yet.
    pub fn latest(&self) -> Option<Sample> {
        self.0.lock().expect("history lock").back().copied()
    }

    /// Up to `POINTS` points, evenly spread over the samples kept, the latest always in.
    pub fn points(&self) -> Vec<Point> {
        let samples = self.0.lock().expect("history lock");
        let step = samples.len().div_ceil(POINTS).max(1);
        let picked: Vec<Sample> = samples.iter().rev().step_by(step).rev().copied().collect();
        drop(samples);
        picked.windows(2).map(|w| point(&w[0], &w[1])).collect()
    }
}

/// The plot's point at `b`, its rate since `a`. A recheck makes done sites pending again,
/// which would read as a negative rate: it reads as none.
fn point(a: &Sample, b: &Sample) -> Point {
    let seconds = (b.at.saturating_sub(a.at) as f64 / 1000.0).max(0.001);
    let done = (b.states.done - a.states.done).max(0);
    Point {
        at: b.at,
        rate: done as f64 / seconds,
        dead: b.verdicts.get(Verdict::Dead),
    }
}

/// Samples the counts into `history` until `stop`; a count that fails is logged and skipped.
pub async fn sample(queue: Queue, history: History, stop: CancellationToken) {
    loop {
        let started = Instant::now();
        match counts(queue.reports()).await {
            Ok(sample) => history.push(sample),
            Err(error) => {
                tracing::warn!(error = %crate::chain(&error), "cannot count the sites; will try again")
            }
        }
        let wait = SAMPLE_EVERY.max(started.elapsed() * 4);
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(wait.saturating_sub(started.elapsed())) => {}
        }
    }
}

async fn counts(reports: Reports<'_>) -> Result<Sample, crawler_queue::Error> {
    let states = reports.state_counts().await?;
    let mut verdicts = VerdictCounts::default();
    for (verdict, n) in reports.verdict_counts().await? {
        verdicts.add(verdict, u64::try_from(n).unwrap_or(0));
    }
    let at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    Ok(Sample {
        at,
        states,
        verdicts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(at: u64, done: i64, dead: u64) -> Sample {
        let mut verdicts = VerdictCounts::default();
        verdicts.add(Verdict::Dead, dead);
        Sample {
            at,
            states: StateCounts {
                done,
                ..StateCounts::default()
            },
            verdicts,
        }
    }

    #[test]
    fn a_point_is_the_rate_since_the_last_and_the_dead_then() {
        let history = History::default();
        history.push(sample(0, 0, 0));
        history.push(sample(2000, 100, 7));
        history.push(sample(3000, 50, 7)); // a recheck made 50 pending again
        assert_eq!(
            history.points(),
            [
                Point {
                    at: 2000,
                    rate: 50.0,
                    dead: 7
                },
                Point {
                    at: 3000,
                    rate: 0.0,
                    dead: 7
                },
            ]
        );
    }

    #[test]
    fn the_plot_keeps_a_bounded_number_of_points_and_the_latest() {
        let history = History::default();
        for i in 0..(KEPT as u64 + 10) {
            history.push(sample(i * 1000, i as i64, 0));
        }
        let points = history.points();
        assert!(points.len() < POINTS, "{}", points.len());
        assert_eq!(points.last().unwrap().at, (KEPT as u64 + 9) * 1000);
        assert!(points.iter().all(|p| p.rate > 0.0));
    }
}
