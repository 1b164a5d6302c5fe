//! The host book: everything this worker knows of each host, in one entry per host (by name,
//! lower case, no port), and one rule for forgetting it. A bug in host policy starts here.
//!
//! An entry holds:
//! - its limits and pace (`ratelimit.rs`): slots, rate, the adaptive pace after 429/503, a
//!   host-wide deferral, robots.txt's `Crawl-delay` as a floor;
//! - how to ask it (`head.rs`): whether its HEAD answers can be believed;
//! - whether it can be reached (`health.rs`), per origin (`scheme://host:port`: one port may
//!   refuse where another answers);
//! - its robots.txt rules, per origin (loaded by the worker's `sites/robots.rs`);
//! - its soft-404 probes (plain data here, which `soft404/` fills);
//! - what the fleet last said of it (the `hosts` row: [`HostBook::hear`]), and what this worker
//!   last told the fleet ([`HostBook::pace_changes`], [`HostBook::troubled`]).
//!
//! Besides the entries, the book keeps the host decisions made and not yet told to the fleet
//! (`health.rs`). The worker's stages read and write all of it through the book's public
//! methods, naming a host, never holding its entry.
//!
//! The DNS cache (`resolve.rs`) is not here: it is the HTTP client's resolver, by DNS name and
//! the record's lifetime, for every name a redirect may reach.
//!
//! # Layout
//! - `book.rs`: [`HostBook`]: the entries by name, the one rule for forgetting them, what the
//!   stages ask of the book, and the counts of the progress line ([`HostCounts`]).
//! - `host.rs`: one host's entry, and what the fleet said of it ([`FleetSaid`]).
//! - `probes.rs`: a host's soft-404 probes, as the book keeps them.

mod book;
mod host;
mod probes;

pub use self::book::{HostBook, HostCounts};
pub(crate) use self::host::Host;
pub use self::host::{Expected, FleetSaid, RobotsCell};
pub(crate) use self::probes::{HostProbes, Probe, ProbeCell, ProbesOf};
