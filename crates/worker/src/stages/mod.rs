//! The stages of a worker and what they share. [`crate::run()`] starts them and stops them;
//! each stage is a loop that owns a narrow context of its own — [`claimer::Claimer`],
//! [`checking::Checking`], [`writer::Writer`]: the handles it uses and nothing else, as
//! mini-redis's handlers each own their connection, db handle and shutdown — made from the
//! worker's [`Ctx`], which only the background duties (`upkeep`, the partition keeper) read.
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
//! - `writer`: stores the outcomes in bulk, fenced by their claim; tells `share_hosts` what
//!   it learned of the hosts, for the fleet.
//! - `held`: the sites claimed and not yet written back, which the lease keeper extends and
//!   the shutdown gives back.
//! - `parts`: the host partitions held (fleet-wide politeness) and their keeper.
//! - `upkeep`: the background duties, each on its own period: leases, heartbeat, reaper,
//!   progress.

pub mod checking;
pub mod claimer;
pub mod held;
pub mod parts;
pub mod paused;
pub mod share_hosts;
pub mod upkeep;
pub mod writer;

use std::sync::Arc;
use std::time::Duration;

use crawler_check::Checker;
use crawler_queue::backoff::Backoff;
use crawler_queue::Queue;

use crate::config::WorkerConfig;
use crate::stats::Stats;

use self::held::HeldSites;
use self::parts::Parts;
use self::paused::Paused;
use self::share_hosts::HostSharing;

/// The claimer's and the writer's wait after `failures` failures of the database in a row:
/// 200 ms doubling to 5 s, so that a database coming back is found within seconds and one
/// staying away is not pressed.
pub const RECONNECT: Backoff = Backoff::new(Duration::from_millis(200), Duration::from_secs(5));

impl crate::metrics::Holdings for Ctx {
    fn sites(&self) -> usize {
        self.held.count()
    }

    fn partitions(&self) -> usize {
        self.parts.count()
    }
}

/// Everything the worker holds; each stage gets its own narrow part of it.
pub struct Ctx {
    pub queue: Queue,
    pub config: WorkerConfig,
    pub checker: Checker,
    pub held: Arc<HeldSites>,
    /// The host partitions held: sites are claimed, and hosts asked, only in these.
    pub parts: Arc<Parts>,
    /// What this worker learns of its hosts, shared with the fleet after each write-back.
    pub sharing: Arc<HostSharing>,
    pub stats: Arc<Stats>,
    /// Whether the fleet is paused (read with the heartbeat): the claimer waits while it is.
    pub paused: Arc<Paused>,
    /// Checks a site, reading it when it is a page of a crawl (`--follow`, `sites/`).
    pub sites: crate::sites::SiteCheck,
    /// Wakes the claimer when this worker made sites due or wrote back the last it held.
    pub nudge: Arc<crate::nudge::Nudge>,
}

impl Ctx {
    /// The claimer's context: what to claim, where, and what it holds.
    pub fn claimer(&self) -> claimer::Claimer {
        claimer::Claimer {
            queue: self.queue.clone(),
            checker: self.checker.clone(),
            held: self.held.clone(),
            parts: self.parts.clone(),
            paused: self.paused.clone(),
            nudge: self.nudge.clone(),
            owner: self.config.id.clone(),
            batch_size: self.config.batch_size,
            lease: self.config.lease,
            drain: self.config.drain,
        }
    }

    /// The checking stage's context: the checker, and what a cut-off site needs to go back.
    pub fn checking(&self) -> checking::Checking {
        checking::Checking {
            queue: self.queue.clone(),
            sites: self.sites.clone(),
            held: self.held.clone(),
            parts: self.parts.clone(),
            concurrency: self.config.check.concurrency,
            batch_size: self.config.batch_size,
            grace: self.config.grace,
        }
    }

    /// The writer's context: the queue, what it writes for, and what it tells.
    pub fn writer(&self) -> writer::Writer {
        writer::Writer {
            queue: self.queue.clone(),
            held: self.held.clone(),
            stats: self.stats.clone(),
            sharing: self.sharing.clone(),
            nudge: self.nudge.clone(),
            parts_token: self.parts.token,
        }
    }
}
