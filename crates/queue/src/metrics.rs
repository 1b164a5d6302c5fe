//! What the queue measures of its own statements, through the `metrics` facade: the latency of
//! a claim and of a write-back, and the database errors by operation. Without a recorder
//! installed (every binary but a worker run with `--metrics`) each of these is a no-op.
//!
//! The names live here, next to where they are recorded; `describe` gives them their help
//! text, and the worker calls it when it installs its exporter.

use std::time::Instant;

use metrics::{counter, describe_counter, describe_histogram, histogram, Unit};

/// Histogram: a claim of a batch, its statements and retries included.
pub const CLAIM_SECONDS: &str = "crawler_claim_seconds";
/// Histogram: a write-back of results, every chunk and retry included.
pub const WRITE_BACK_SECONDS: &str = "crawler_write_back_seconds";
/// Counter: database errors, labelled `operation` (what the queue was doing) and `outcome`
/// (`retried`: transient, tried again; `gave_up`: returned to the caller).
pub const DATABASE_ERRORS: &str = "crawler_database_errors_total";

/// Gives the queue's metrics their unit and help text.
pub fn describe() {
    describe_histogram!(
        CLAIM_SECONDS,
        Unit::Seconds,
        "Time to claim a batch of sites, retries included"
    );
    describe_histogram!(
        WRITE_BACK_SECONDS,
        Unit::Seconds,
        "Time to write a batch of results back, retries included"
    );
    describe_counter!(
        DATABASE_ERRORS,
        "Database errors by operation: retried (transient) or gave_up (returned to the caller)"
    );
}

/// Records the time since `started` in the histogram `name`.
pub(crate) fn observe(name: &'static str, started: Instant) {
    histogram!(name).record(started.elapsed());
}

/// Counts a database error of `operation`: tried again if `retried`, else returned.
pub(crate) fn database_error(operation: &'static str, retried: bool) {
    let outcome = if retried { "retried" } else { "gave_up" };
    counter!(DATABASE_ERRORS, "operation" => operation, "outcome" => outcome).increment(1);
}

#[cfg(test)]
mod tests {
    use super::*;
    use metrics_exporter_prometheus::PrometheusBuilder;

    #[test]
    fn a_database_error_is_counted_by_operation_and_outcome() {
        let recorder = PrometheusBuilder::new().build_recorder();
        let handle = recorder.handle();
        metrics::with_local_recorder(&recorder, || {
            describe();
            database_error("claim", true);
            database_error("claim", true);
            database_error("complete", false);
        });
        let text = handle.render();
        assert!(
            text.contains(
                r#"crawler_database_errors_total{operation="claim",outcome="retried"} 2"#
            ),
            "{text}"
        );
        assert!(
            text.contains(
                r#"crawler_database_errors_total{operation="complete",outcome="gave_up"} 1"#
            ),
            "{text}"
        );
        assert!(text.contains("# HELP crawler_database_errors_total Database errors"));
    }
}
