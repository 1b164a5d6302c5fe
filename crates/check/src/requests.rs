//! The checker's requests, as Prometheus sees them (`--metrics`): counted by the class of
//! their answer, and gauged while on the wire. Here rather than in the worker's `metrics`, so
//! that the checker, usable on its own, needs nothing of the worker around it; the worker's
//! `metrics` describes them with the rest.

use metrics::{counter, gauge};

/// Counter, label `class` (`1xx` … `5xx`, `other`, or `error`: no answer): HTTP requests.
pub const REQUESTS: &str = "crawler_requests_total";
/// Gauge: HTTP requests on the wire now.
pub const REQUESTS_IN_FLIGHT: &str = "crawler_requests_in_flight";

/// Counts one HTTP request by its answer's status class; `None`: no answer.
pub fn record_request(status: Option<u16>) {
    counter!(REQUESTS, "class" => status_class(status)).increment(1);
}

fn status_class(status: Option<u16>) -> &'static str {
    match status.map(|s| s / 100) {
        None => "error",
        Some(1) => "1xx",
        Some(2) => "2xx",
        Some(3) => "3xx",
        Some(4) => "4xx",
        Some(5) => "5xx",
        // LinkedIn's 999 and other inventions.
        Some(_) => "other",
    }
}

/// A request on the wire, counted in the gauge until dropped (answered, failed or cancelled).
pub struct InFlight(());

impl InFlight {
    pub fn start() -> InFlight {
        gauge!(REQUESTS_IN_FLIGHT).increment(1.0);
        InFlight(())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        gauge!(REQUESTS_IN_FLIGHT).decrement(1.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_falls_in_its_class_and_no_answer_is_an_error() {
        let classes = [
            None,
            Some(101),
            Some(204),
            Some(301),
            Some(404),
            Some(503),
            Some(999),
        ];
        let got: Vec<&str> = classes.into_iter().map(status_class).collect();
        assert_eq!(got, ["error", "1xx", "2xx", "3xx", "4xx", "5xx", "other"]);
    }
}
