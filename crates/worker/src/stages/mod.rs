//! The stages of a worker and what they share. [`crate::run()`] starts them and stops them;
//! each stage is a loop, and all of them share one [`Ctx`].
//!
//! ```text
//! claimer ──sites──▶ checking ──outcomes──▶ writer
//!    ▲                                         │
//!    └──────────── held (claimed, not written) ┘   upkeep: extend leases, heartbeat, reap
//!    └── only in the host partitions held (parts) ─   kept every lease / 3: extend, balance
//! ```
//!
//! The three stages are joined by bounded channels, so a stage that falls behind holds up the
//! one before it: a slow database slows the checks, which slow the claims, and memory stays
//! bounded. What they must all see goes through the [`Ctx`] instead.
//!
//! # Layout
//! - `claimer`: claims a batch whenever the checkers have room for one; waits while the fleet
//!   is paused (`paused`: the switch as the heartbeat last read it).
//! - `checking`: a task per site, bounded; sends each outcome on to the writer.
//! - `writer`: stores the outcomes in bulk, fenced by their claim; tells `host_health` what
//!   it learned of the hosts, for the fleet.
//! - `held`: the sites claimed and not yet written back, which the lease keeper extends and
//!   the shutdown gives back.
//! - `parts`: the host partitions held (fleet-wide politeness) and their keeper.
//! - `upkeep`: the background duties, each on its own period: leases, heartbeat, reaper,
//!   progress.

pub mod checking;
pub mod claimer;
pub mod held;
pub mod host_health;
pub mod parts;
pub mod paused;
pub mod upkeep;
pub mod writer;

use std::time::Duration;

use crawler_queue::backoff::Backoff;
use crawler_queue::Queue;

use crate::check::Checker;
use crate::config::WorkerConfig;
use crate::stats::Stats;

use self::held::Held;
use self::host_health::HostHealth;
use self::parts::Parts;
use self::paused::Paused;

/// The claimer's and the writer's wait after `failures` failures of the database in a row:
/// 200 ms doubling to 5 s, so that a database coming back is found within seconds and one
/// staying away is not pressed.
pub const RECONNECT: Backoff = Backoff::new(Duration::from_millis(200), Duration::from_secs(5));

/// Everything the stages share.
pub struct Ctx {
    pub queue: Queue,
    pub config: WorkerConfig,
    pub checker: Checker,
    pub held: Held,
    /// The host partitions held: sites are claimed, and hosts asked, only in these.
    pub parts: Parts,
    /// What this worker learns of its hosts, shared with the fleet after each write-back.
    pub hosts: HostHealth,
    pub stats: Stats,
    /// Whether the fleet is paused (read with the heartbeat): the claimer waits while it is.
    pub paused: Paused,
    /// Checks a site, reading it when it is a page of a crawl (`--follow`, `follow/`).
    pub follow: crate::follow::Follow,
}
