//! What a worker tells Prometheus (`--metrics ADDR`, see `serve`): its verdicts, requests and
//! holdings, and (recorded by the queue itself, see [`crawler_queue::metrics`]) its claim and
//! write-back latency and database errors.
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

mod serve;

use std::sync::Arc;
use std::time::Duration;

use crawler_queue::{Completed, Verdict};
use metrics::{counter, describe_counter, describe_gauge, gauge, Unit};
use tokio_util::sync::CancellationToken;

use crawler_check::requests::{REQUESTS, REQUESTS_IN_FLIGHT};
pub use serve::{serve, Exporter};

/// Counter, label `verdict`: sites given their verdict by this worker, as stored.
pub const VERDICTS: &str = "crawler_verdicts_total";
/// Counter: results sent back to the queue for another check after a transient failure.
pub const RETRIES: &str = "crawler_retries_total";
/// Counter: sites given back unchecked, their host busy (due again when it is free).
pub const DEFERRED: &str = "crawler_deferred_total";
/// Counter: results a write-back dropped, the site's lease lost meanwhile (the fence).
pub const DROPPED_WRITES: &str = "crawler_dropped_writes_total";
/// Gauge: sites claimed and not yet written back.
pub const SITES_HELD: &str = "crawler_sites_held";
/// Gauge: host partitions held (being handed over included).
pub const PARTITIONS_HELD: &str = "crawler_partitions_held";
/// Gauge: hosts of the partitions held whose shared backoff has not passed.
pub const HOSTS_IN_BACKOFF: &str = "crawler_hosts_in_backoff";

/// How often the gauges of what the worker holds are sampled (and the histograms drained):
/// reading them takes two short locks, and a second is well under any scrape interval, so every
/// scrape sees a fresh value. (The hosts in backoff are set by the partition keeper.)
const SAMPLE_EVERY: Duration = Duration::from_secs(1);

/// Gives every metric its help text (the queue's too), and shows each verdict at zero from
/// the start, so a dashboard's series exist before the first write-back.
fn describe() {
    crawler_queue::metrics::describe();
    let counters = [
        (
            VERDICTS,
            "Sites given their verdict by this worker, by verdict",
        ),
        (
            RETRIES,
            "Results sent back for another check after a transient failure",
        ),
        (
            DEFERRED,
            "Sites given back unchecked because their host was busy",
        ),
        (
            DROPPED_WRITES,
            "Results dropped by the write-back: the site's lease was lost",
        ),
        (
            REQUESTS,
            "HTTP requests by status class (1xx-5xx, other), or error: no answer",
        ),
    ];
    for (name, help) in counters {
        describe_counter!(name, Unit::Count, help);
    }
    let gauges = [
        (REQUESTS_IN_FLIGHT, "HTTP requests on the wire"),
        (
            SITES_HELD,
            "Sites claimed by this worker and not yet written back",
        ),
        (
            PARTITIONS_HELD,
            "Host partitions held by this worker (of 1024)",
        ),
        (
            HOSTS_IN_BACKOFF,
            "Hosts in this worker's partitions in backoff (429/503 Retry-After)",
        ),
    ];
    for (name, help) in gauges {
        describe_gauge!(name, Unit::Count, help);
    }
    for verdict in Verdict::ALL {
        counter!(VERDICTS, "verdict" => verdict.as_str()).absolute(0);
    }
}

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
    use super::*;
    use crate::stats::Stats;
    use crawler_check::requests::{record_request, InFlight};
    use metrics_exporter_prometheus::PrometheusBuilder;

    /// What `body` records, in the Prometheus text format, rendered while what it returns
    /// is still alive.
    fn rendered<T>(body: impl FnOnce() -> T) -> String {
        let recorder = PrometheusBuilder::new().build_recorder();
        let handle = recorder.handle();
        let _alive = metrics::with_local_recorder(&recorder, || {
            describe();
            body()
        });
        handle.render()
    }

    #[test]
    fn the_counters_are_what_the_stats_count_from_the_same_write_backs() {
        let stats = Stats::default();
        let text = rendered(|| {
            stats.record(&Completed {
                done: 3,
                verdicts: [Verdict::Dead, Verdict::Alive, Verdict::Alive]
                    .into_iter()
                    .collect(),
                retrying: 2,
                deferred: 4,
                stale: 1,
            });
        });
        for line in [
            r#"crawler_verdicts_total{verdict="alive"} 2"#,
            r#"crawler_verdicts_total{verdict="dead"} 1"#,
            r#"crawler_verdicts_total{verdict="error"} 0"#,
            "crawler_retries_total 2",
            "crawler_deferred_total 4",
            "crawler_dropped_writes_total 1",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
        }
        assert_eq!(stats.checked(), 3);
    }

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
