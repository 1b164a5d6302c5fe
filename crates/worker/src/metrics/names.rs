//! The worker's metrics by name, and their help texts ([`describe`]): what `serve.rs` installs
//! and the rest of the worker records into. The requests' names are the checker's
//! (`crawler-check`'s `requests.rs`), described here with the rest.

use crawler_check::requests::{REQUESTS, REQUESTS_IN_FLIGHT};
use crawler_queue::Verdict;
use metrics::{counter, describe_counter, describe_gauge, Unit};

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

/// Gives every metric its help text (the queue's too), and shows each verdict at zero from
/// the start, so a dashboard's series exist before the first write-back.
pub(super) fn describe() {
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

/// What `body` records, in the Prometheus text format, rendered while what it returns is
/// still alive (the metrics described first).
#[cfg(test)]
pub(crate) fn rendered<T>(body: impl FnOnce() -> T) -> String {
    let recorder = metrics_exporter_prometheus::PrometheusBuilder::new().build_recorder();
    let handle = recorder.handle();
    let _alive = metrics::with_local_recorder(&recorder, || {
        describe();
        body()
    });
    handle.render()
}
