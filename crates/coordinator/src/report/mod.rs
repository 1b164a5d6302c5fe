//! Reporting: checked sites, or hosts, as text, CSV, JSON or NDJSON, streamed page by page so
//! that millions of rows need no more memory than one page; and the summary.
//!
//! # Layout
//! - `sites`: checked sites by verdict ([`write_sites`]), with the pages they were found on.
//! - `by_page`: dead links grouped by the page that carries them ([`write_by_page`]).
//! - `changes`: how many sites went from each verdict to each other since a time
//!   ([`write_change_summary`]); `since`: that time, as `--changed-since` takes it
//!   ([`parse_since`]).
//! - `hosts`: per host, its sites, the worker holding it, its throttling, its address
//!   ([`write_hosts`]); per server address, its holders and what waits ([`write_addresses`]).
//! - `summary`: counts, workers, the hosts with the most dead sites ([`write_summary`]).
//! - `rows`: what the reports share: each format's framing, CSV quoting.
//! - `github`: GitHub Actions workflow commands (annotations) of failing links, and the model
//!   of a failing link that it shares with `sarif`; `sarif`: SARIF 2.1.0 for code scanning.
//! - `host`: `--host HOST[:PORT]` as typed, to the queue's filter ([`parse_host`]).
//! - `output`: stdout, or a file written whole or not at all ([`Output`]).
//! - `format`: [`Format`]; `fail_on`: [`FailOn`]; `timestamp`: [`rfc3339`].

mod by_page;
mod changes;
mod fail_on;
mod format;
mod github;
mod host;
mod hosts;
mod output;
mod rows;
mod sarif;
mod since;
mod sites;
pub(crate) mod summary;
pub(crate) mod timestamp;

pub use by_page::write_by_page;
pub use changes::write_change_summary;
pub use fail_on::FailOn;
pub use format::Format;
pub use host::parse_host;
pub use hosts::{write_addresses, write_hosts};
pub use output::Output;
pub use since::{parse_since, Since};
pub use sites::write_sites;
pub use summary::write_summary;
pub use timestamp::rfc3339;
