//! crawler-worker: claims batches of sites from the queue, checks them over HTTP with the
//! checker (`crawler-check`), and writes the verdicts back: the glue between the queue and the
//! checker, which know nothing of each other.
//!
//! # Layout
//! - `error`: [`Error`], why a worker could not start.
//! - [`config`]: the command line and the validated [`config::WorkerConfig`]; `host_limits`:
//!   the `--host-limits` file; `options`: the values of the request options (`--header`,
//!   `--basic-auth`, `--accept`, `--ca-cert`, `--cookie-jar`…).
//! - [`run`](mod@run): a worker's life, start to stop; it runs the stages.
//! - `sites/`: a claimed site's check: a link, a link to a section (its page's anchors), or
//!   (`--follow`) a page of a crawl, read and its links
//!   handed to the queue; robots.txt per origin; the crawls' rules.
//! - `stages/`: claimer → checking → writer, what they share (`Ctx`), and what serves them:
//!   `held`, the sites this worker holds; `parts`, the host partitions it holds (fleet-wide
//!   politeness: one worker at a time asks a host); `share_hosts`, what it learns of its
//!   hosts, shared with the fleet; `upkeep`, leases, heartbeat (which reads whether the fleet
//!   is paused, into `paused`), reaper, progress. Its `mod.rs` draws how they connect.
//!   `nudge`: how the site checks and the writer wake the claimer when they make work due.
//! - `probe_store`: the queue as the checker's store of soft-404 probes, shared by the fleet.
//! - `archive`: `--archive-lookup`, an archived copy for each dead link, looked up beside the
//!   checks by one worker of the fleet at a time.
//! - `stats`: what this worker has done, a site counted once when it gets its verdict;
//!   `progress`: the bar on a terminal, a periodic log line otherwise; `metrics`: the same
//!   counts and more for Prometheus (`--metrics`).

mod archive;
pub mod config;
mod error;
mod host_limits;
mod metrics;
mod nudge;
mod options;
mod probe_store;
mod progress;
pub mod run;
mod sites;
mod stages;
mod stats;

pub use error::Error;
pub use run::run;
pub use stages::claimer::Ended;
