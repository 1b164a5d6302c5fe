//! crawler-seed, crawler-reap and crawler-report.

pub mod input;
