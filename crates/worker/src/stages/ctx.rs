//! What the worker holds ([`Ctx`]), and the narrow context each stage gets of it: the claimer's,
//! the checking stage's and the writer's hold the handles each uses and nothing else.

use std::sync::Arc;

use crawler_check::Checker;
use crawler_queue::Queue;

use super::held::HeldSites;
use super::parts::Parts;
use super::paused::Paused;
use super::share_hosts::HostSharing;
use super::{checking, claimer, writer};
use crate::config::WorkerConfig;
use crate::stats::Stats;

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
