//! What a worker tells Prometheus (`--metrics ADDR`, see `serve`): its verdicts, requests and
//! holdings, and (recorded by the queue itself, see [`crawler_queue::metrics`]) its claim and
//! write-back latency and database errors. Their names and help texts are `names.rs`.
//!
//! Through the `metrics` facade, whose macros are no-ops until `serve` installs the recorder:
//! a worker run without `--metrics` pays a relaxed load per call, nothing more.
//!
//! One source of truth: the counts of write-backs (verdicts, retries, deferrals, dropped
//! results) are recorded by [`record_completed`], which `Stats::record` calls with the same
//! [`Completed`] it counts for the progress line and the heartbeat. The gauges of what the
//! worker holds are sampled from its own structures by [`sample`], never counted twice.
//! The requests are counted by the checker itself (`crawler-check`'s `requests.rs`); only
//! described here.

mod names;
mod serve;

use std::sync::Arc;
use std::time::Duration;

use crawler_queue::Completed;
use metrics::{counter, gauge};
use tokio_util::sync::CancellationToken;

#[cfg(test)]
pub(crate) use self::names::rendered;
use self::names::{
    DEFERRED, DROPPED_WRITES, HOSTS_IN_BACKOFF, PARTITIONS_HELD, RETRIES, SITES_HELD, VERDICTS,
};
pub use self::serve::{serve, Exporter};

/// How often the gauges of what the worker holds are sampled (and the histograms drained):
/// reading them takes two short locks, and a second is well under any scrape interval, so every
/// scrape sees a fresh value. (The hosts in backoff are set by the partition keeper.)
const SAMPLE_EVERY: Duration = Duration::from_secs(1);

/// Hosts of the held partitions in backoff, as the partition keeper loaded them from the
/// fleet's host table (a server's `Retry-After`; the limiter's own short penalties are not
/// counted).
pub fn hosts_in_backoff(n: usize) {
    gauge!(HOSTS_IN_BACKOFF).set(n as f64);
}

/// Counts what one write-back stored; called by `Stats::record` with what it counts.
pub fn record_completed(completed: &Completed) {
    for (verdict, n) in completed.verdicts.iter() {
        counter!(VERDICTS, "verdict" => verdict.as_str()).increment(n);
    }
    counter!(RETRIES).increment(completed.retrying);
    counter!(DEFERRED).increment(completed.deferred);
    counter!(DROPPED_WRITES).increment(completed.stale);
}

/// What the worker holds, as the gauges sample it: implemented by the stages' context, so
/// that metrics need not know the stages (they record into metrics, never the other way).
pub trait Holdings: Send + Sync {
    /// Sites claimed and not yet written back.
    fn sites(&self) -> usize;
    /// Host partitions held.
    fn partitions(&self) -> usize;
}

/// Samples the gauges of what the worker holds until `stop`, every [`SAMPLE_EVERY`].
pub async fn sample(held: Arc<dyn Holdings>, exporter: Arc<Exporter>, stop: CancellationToken) {
    let mut tick = tokio::time::interval(SAMPLE_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tick.tick() => {}
        }
        gauge!(SITES_HELD).set(held.sites() as f64);
        gauge!(PARTITIONS_HELD).set(held.partitions() as f64);
        exporter.upkeep();
    }
}

#[cfg(test)]
mod tests {
    use crawler_check::requests::{record_request, InFlight};

    use super::*;

    #[test]
    fn a_request_is_in_flight_until_its_guard_is_dropped_however_it_ends() {
        let text = rendered(|| {
            let answered = InFlight::start();
            let on_the_wire = InFlight::start();
            record_request(Some(200));
            drop(answered);
            record_request(None);
            on_the_wire
        });
        assert!(text.contains("crawler_requests_in_flight 1\n"), "{text}");
        assert!(
            text.contains(r#"crawler_requests_total{class="2xx"} 1"#),
            "{text}"
        );
        assert!(
            text.contains(r#"crawler_requests_total{class="error"} 1"#),
            "{text}"
        );
    }
}
