//! Reading results: pages of checked sites and of hosts for the report, and counts for
//! summaries, progress bars and `--drain`. All of it is [`Reports`], the read-side view of the
//! queue ([`Queue::reports`](crate::Queue::reports)); the queue itself only moves work.
//!
//! Pages are keyset-paginated per verdict, in the order the sites got it
//! (`WHERE verdict = ? AND (verdict_since, id) > (?, ?) ORDER BY verdict_since, id LIMIT ?`,
//! served by the `sites_verdict` index, `(verdict, verdict_since, id)`), so a report of
//! millions of rows holds one page in memory and no statement runs for long, and the sites
//! whose verdict changed since a time ([`Scope::changed_since`]) are a range of the same
//! index. The hosts report pages the same way by host name
//! (`hosts.rs`); `--host HOST[:PORT]` is `host_filter.rs`. For the dashboard: the hosts in
//! backoff (`backoffs.rs`), the dead sites checked last (`latest_dead.rs`), and the verdicts
//! and each worker's checks per bucket of time (`over_time.rs`); referrers and dead links by
//! page (`referrers.rs`), a site's verdict changes (`history.rs`). Every method of the view is
//! in this folder, each beside the rows it reads.
//!
//! # Layout
//! - `reports.rs`: [`Reports`] itself and [`Queue::reports`](crate::Queue::reports).
//! - `checked.rs`: a checked site as read ([`Checked`]); `scope.rs`: which sites a page or a
//!   count reads ([`Scope`], [`Only`]) and where the next page starts ([`After`]).
//! - `sites.rs`: pages of checked sites, whether any (or how many) of a scope have a verdict.
//! - `counts.rs`: sites per state ([`StateCounts`]) and per verdict, the hosts with the most
//!   dead sites; `workers.rs`: the registered workers ([`WorkerRow`]).
//! - the rest as above: `hosts.rs`, `host_filter.rs`, `changes.rs`, `backoffs.rs`,
//!   `latest_dead.rs`, `over_time.rs`, `referrers.rs`, `history.rs`.

mod backoffs;
mod changes;
mod checked;
mod counts;
mod history;
mod host_filter;
mod hosts;
mod latest_dead;
mod over_time;
mod referrers;
pub(crate) mod reports;
mod scope;
mod sites;
mod workers;

pub use backoffs::Backoff;
pub use changes::{ChangeCount, Changed, ChangesIn};
pub use checked::Checked;
pub use counts::StateCounts;
pub use history::VerdictChange;
pub use host_filter::HostFilter;
pub use hosts::HostRow;
pub use over_time::{ChecksIn, VerdictsIn};
pub use referrers::DeadOnPage;
pub use reports::Reports;
pub use scope::{After, Only, Scope};
pub use workers::WorkerRow;
