//! What this worker has done, counted as it goes, and shown as a progress bar on a terminal or
//! a periodic log line otherwise.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use crawler_queue::{Completed, Verdict};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

#[derive(Debug, Default)]
pub struct Stats {
    /// Verdicts written, by `Verdict::ALL` index.
    verdicts: [AtomicU64; 5],
    pub retrying: AtomicU64,
    /// Results dropped because this worker had lost the site's lease meanwhile.
    pub stale: AtomicU64,
}

impl Stats {
    pub fn record(&self, completed: Completed, verdicts: impl Iterator<Item = Verdict>) {
        for v in verdicts {
            let i = Verdict::ALL.iter().position(|x| *x == v).unwrap_or(0);
            self.verdicts[i].fetch_add(1, Relaxed);
        }
        self.retrying.fetch_add(completed.retrying, Relaxed);
        self.stale.fetch_add(completed.stale, Relaxed);
    }

    /// Sites given a verdict by this worker.
    pub fn checked(&self) -> u64 {
        self.verdicts.iter().map(|v| v.load(Relaxed)).sum()
    }

    /// `1234 checked (alive 1000, dead 200, …), 3 retrying, 0 stale`.
    pub fn line(&self) -> String {
        let verdicts: Vec<String> = Verdict::ALL
            .iter()
            .zip(&self.verdicts)
            .map(|(v, n)| format!("{v} {}", n.load(Relaxed)))
            .collect();
        format!(
            "{} checked ({}), {} retrying, {} stale",
            self.checked(),
            verdicts.join(", "),
            self.retrying.load(Relaxed),
            self.stale.load(Relaxed)
        )
    }
}

/// Shows progress every `every` until dropped: a bar on a terminal, else a log line.
pub struct Progress {
    bar: ProgressBar,
    started: Instant,
    last_log: Instant,
    every: Duration,
}

impl Progress {
    pub fn new(every: Duration) -> Progress {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {elapsed} {msg}").expect("valid template"),
        );
        let now = Instant::now();
        Progress {
            bar,
            started: now,
            last_log: now,
            every,
        }
    }

    pub fn update(&mut self, stats: &Stats, remaining: Option<i64>) {
        let rate = stats.checked() as f64 / self.started.elapsed().as_secs_f64().max(0.001);
        let queue = remaining
            .map(|n| format!(", {n} left in the queue"))
            .unwrap_or_default();
        let line = format!("{}, {rate:.0}/s{queue}", stats.line());
        if self.bar.is_hidden() {
            if self.last_log.elapsed() >= self.every {
                tracing::info!("{line}");
                self.last_log = Instant::now();
            }
        } else {
            self.bar.set_message(line);
            self.bar.tick();
        }
    }

    /// Whether a person is watching (stderr is a terminal).
    pub fn on_terminal(&self) -> bool {
        !self.bar.is_hidden()
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}
