//! crawler-seed, crawler-reap, crawler-report and crawler-dashboard: load the list, recover
//! stalled work, read the verdicts, watch the crawl. The binaries in `src/bin` parse arguments
//! (with `crawler-cli`, which also holds the options they share) and call into these modules.
//!
//! # Layout
//! - [`input`]: reading and normalizing seed lines.
//! - [`seed`]: streaming them into the queue.
//! - [`reap`]: one pass, or every interval under the fleet's reaper lease (the queue's
//!   `Reaping::reap_as_leader`, which the workers call too).
//! - [`notify`]: each change of verdict POSTed to a webhook, in digests (`crawler-reap
//!   --notify`), under the notifier's lease.
//! - [`control`]: pausing and resuming the fleet (`crawler-reap --pause`, the dashboard).
//! - [`report`]: checked sites, hosts and the summary in four formats, to stdout or a file.
//! - [`dashboard`]: a live web page of the crawl (`crawler-dashboard`).
//! - [`redact`]: URLs shown without their credentials.
//! - `error`: the [`Error`] type.

pub mod control;
pub mod dashboard;
mod error;
pub mod input;
pub mod notify;
pub mod reap;
pub mod redact;
pub mod report;
pub mod seed;

pub use error::Error;
