//! Progress on stderr. On a terminal, a bar: this worker's verdicts out of those plus the sites
//! still due in the queue, the percentage, the rate over the last 10 s, the time left at that
//! rate, the dead sites so far. Otherwise (a pipe, a log file, `--log-format json`, `-q`), a
//! log line every 10 s with the same rate.
//!
//! The bar belongs to a tracing span, drawn by the logging's `tracing-indicatif` layer, so log
//! lines are written above it rather than through it, and dropping the span clears it.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crawler_queue::Verdict;
use indicatif::ProgressStyle;
use tracing_indicatif::span_ext::IndicatifSpanExt;

use crate::stats::Stats;
use crawler_check::HostCounts;

/// The rate is measured over this much of the recent past, so it follows the crawl as it
/// speeds up or slows down (a lifetime average hides a host gone slow).
const RATE_WINDOW: Duration = Duration::from_secs(10);

/// Shows progress until dropped: a bar on a terminal, else a log line every `every`.
pub struct Progress {
    /// The bar's span; `None` when no bar is drawn.
    bar: Option<tracing::Span>,
    rate: Rate,
    /// The bar's length: this worker's verdicts and the sites due in the queue, at its last
    /// count. Between counts, the verdicts move towards it.
    total: Option<u64>,
    every: Duration,
    last_log: Instant,
}

impl Progress {
    pub fn new(every: Duration) -> Progress {
        let bar = crawler_cli::bars_shown().then(|| {
            let span = tracing::info_span!("progress", indicatif.pb_show = tracing::field::Empty);
            span.pb_set_style(&style());
            span
        });
        Progress {
            bar,
            rate: Rate::new(RATE_WINDOW),
            total: None,
            every,
            last_log: Instant::now(),
        }
    }

    /// Whether a person is watching: only then is the queue counted, for the bar's total.
    pub fn on_terminal(&self) -> bool {
        self.bar.is_some()
    }

    /// Takes a new count of the sites due (pending or claimed) in the queue, made when this
    /// worker had given `checked` verdicts.
    pub fn set_due(&mut self, due: u64, checked: u64) {
        self.total = Some(checked + due);
    }

    /// Shows `stats`; `paused` says the fleet is paused (on the bar and in the line).
    pub fn update(&mut self, stats: &Stats, paused: bool, hosts: HostCounts) {
        let now = Instant::now();
        let checked = stats.checked();
        self.rate.record(now, checked);
        let rate = self.rate.per_second();
        match &self.bar {
            Some(span) => {
                let total = self.total.map(|total| total.max(checked));
                let due = total.map(|total| total - checked);
                span.pb_set_length(total.unwrap_or(checked));
                span.pb_set_position(checked);
                span.pb_set_message(&format!(
                    "{}{}{}",
                    pause_mark(paused),
                    bar_message(stats, rate, due),
                    hosts_part(hosts)
                ));
                // Drawn from the first update on, with a length: a bar without one reads 100 %.
                span.pb_start();
            }
            None if now.duration_since(self.last_log) >= self.every => {
                let window = RATE_WINDOW.as_secs();
                tracing::info!(
                    "{}{}, {rate:.0}/s over the last {window} s{}",
                    pause_mark(paused),
                    stats.line(),
                    hosts_part(hosts)
                );
                self.last_log = now;
            }
            None => {}
        }
    }
}

fn style() -> ProgressStyle {
    ProgressStyle::with_template(
        "{spinner} {elapsed_precise} [{wide_bar}] {human_pos}/{human_len} {percent}% · {msg}",
    )
    .expect("valid template")
    .progress_chars("=> ")
}

/// `850/s, ETA 44s, 12 dead, 3 retrying`; the ETA is `-` until the rate and the queue are known.
fn bar_message(stats: &Stats, rate: f64, due: Option<u64>) -> String {
    let eta = due
        .and_then(|due| eta(due, rate))
        .map(|eta| humantime::format_duration(eta).to_string())
        .unwrap_or_else(|| "-".into());
    format!(
        "{rate:.0}/s, ETA {eta}, {} dead, {} retrying",
        stats.verdicts().get(Verdict::Dead),
        stats.retrying()
    )
}

/// What the bar and the line start with while the fleet is paused.
/// The hosts in trouble, when any is: " · hosts: 3 unreachable, 1 throttled, 0 deferred".
fn hosts_part(hosts: HostCounts) -> String {
    if hosts.unreachable + hosts.throttled + hosts.deferred == 0 {
        return String::new();
    }
    format!(
        " · hosts: {} unreachable, {} throttled, {} deferred",
        hosts.unreachable, hosts.throttled, hosts.deferred
    )
}

fn pause_mark(paused: bool) -> &'static str {
    if paused {
        "PAUSED · "
    } else {
        ""
    }
}

/// How long `due` sites take at `rate` a second, in whole seconds; `None` at no rate.
fn eta(due: u64, rate: f64) -> Option<Duration> {
    (rate > 0.0).then(|| Duration::from_secs((due as f64 / rate).ceil() as u64))
}

/// A count's rate of growth over a sliding window of time.
#[derive(Debug)]
struct Rate {
    window: Duration,
    /// (when, the count then), oldest first: the last one taken before the window, and those
    /// within it.
    samples: VecDeque<(Instant, u64)>,
}

impl Rate {
    fn new(window: Duration) -> Rate {
        Rate {
            window,
            samples: VecDeque::new(),
        }
    }

    fn record(&mut self, now: Instant, count: u64) {
        self.samples.push_back((now, count));
        let start = now.checked_sub(self.window).unwrap_or(now);
        while self.samples.get(1).is_some_and(|(t, _)| *t <= start) {
            self.samples.pop_front();
        }
    }

    /// Per second, between the oldest sample kept and the newest; zero before any time passed.
    fn per_second(&self) -> f64 {
        let (Some((t0, n0)), Some((t1, n1))) = (self.samples.front(), self.samples.back()) else {
            return 0.0;
        };
        let seconds = t1.duration_since(*t0).as_secs_f64();
        if seconds == 0.0 {
            return 0.0;
        }
        n1.saturating_sub(*n0) as f64 / seconds
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_forgets_what_happened_before_its_window() {
        let start = Instant::now();
        let mut rate = Rate::new(Duration::from_secs(10));
        // A fast start: 1,000 sites in 5 s; then 5 s of nothing; then 10 sites a second.
        for (s, count) in [
            (0, 0),
            (5, 1000),
            (10, 1000),
            (15, 1000),
            (20, 1050),
            (25, 1100),
        ] {
            rate.record(start + Duration::from_secs(s), count);
        }
        assert_eq!(rate.per_second(), 10.0);
    }

    #[test]
    fn the_rate_is_measured_over_what_it_has_before_the_window_fills() {
        let start = Instant::now();
        let mut rate = Rate::new(Duration::from_secs(10));
        assert_eq!(rate.per_second(), 0.0);
        rate.record(start, 0);
        assert_eq!(rate.per_second(), 0.0);
        rate.record(start + Duration::from_secs(2), 100);
        assert_eq!(rate.per_second(), 50.0);
    }

    #[test]
    fn the_eta_is_the_sites_due_at_the_rate_and_unknown_at_no_rate() {
        assert_eq!(eta(100, 10.0), Some(Duration::from_secs(10)));
        assert_eq!(eta(101, 10.0), Some(Duration::from_secs(11)));
        assert_eq!(eta(0, 10.0), Some(Duration::ZERO));
        assert_eq!(eta(100, 0.0), None);
    }

    #[test]
    fn the_bar_and_the_line_start_with_paused_while_the_fleet_is() {
        assert_eq!(pause_mark(true), "PAUSED · ");
        assert_eq!(pause_mark(false), "");
    }

    #[test]
    fn the_bar_tells_the_rate_the_eta_the_dead_and_the_retries() {
        let stats = Stats::default();
        assert_eq!(
            bar_message(&stats, 0.0, None),
            "0/s, ETA -, 0 dead, 0 retrying"
        );
        assert_eq!(
            bar_message(&stats, 850.0, Some(850 * 90)),
            "850/s, ETA 1m 30s, 0 dead, 0 retrying"
        );
    }
}
