//! Reporting: checked sites, or hosts, as text, CSV, JSON or NDJSON, streamed page by page so
//! that millions of rows need no more memory than one page; and the summary.
//!
//! # Layout
//! - `sites`: checked sites by verdict ([`write_sites`]).
//! - `hosts`: per host, its sites, the worker holding it, its throttling ([`write_hosts`]).
//! - `summary`: counts, workers, the hosts with the most dead sites ([`write_summary`]).
//! - `rows`: what the streamed reports share: each format's framing, CSV quoting.

mod hosts;
mod rows;
mod sites;
mod summary;

pub use hosts::write_hosts;
pub use sites::write_sites;
pub use summary::write_summary;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Sites: one a line, URL, then status code or error kind, then verdict. Hosts: aligned
    /// columns under a header.
    Text,
    Csv,
    /// One array of objects.
    Json,
    /// One object per line.
    Ndjson,
}

/// Unix milliseconds as RFC 3339 in UTC, e.g. `2026-11-22T14:03:07.123Z`.
pub fn rfc3339(ms: i64) -> String {
    let nanos = i128::from(ms) * 1_000_000;
    time::OffsetDateTime::from_unix_timestamp_nanos(nanos)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn milliseconds_print_as_rfc3339_utc() {
        assert_eq!(rfc3339(1_795_000_000_123), "2026-11-18T11:06:40.123Z");
    }
}
