//! The stages of a worker and what they share. [`crate::run()`] starts them and stops them;
//! each stage is a loop that owns a narrow context of its own — [`claimer::Claimer`],
//! [`checking::Checking`], [`writer::Writer`]: the handles it uses and nothing else, as
//! mini-redis's handlers each own their connection, db handle and shutdown — made from the
//! worker's [`Ctx`] (`ctx.rs`), which only the background duties (`upkeep`, the partition
//! keeper) read.
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
//! - `share_addresses`: this worker's shares of the server addresses it asks, kept with the
//!   fleet's (`--ip-concurrency`, `--ip-rate`).
//! - `held`: the sites claimed and not yet written back, which the lease keeper extends and
//!   the shutdown gives back.
//! - `parts`: the host partitions held (fleet-wide politeness); `keeper`: their keeper.
//! - `ctx`: what the worker holds, and each stage's narrow context of it; `reconnect`: the
//!   claimer's and the writer's wait for a database that refused them.
//! - `upkeep`: the background duties, each on its own period: leases, heartbeat, reaper,
//!   progress.

pub mod checking;
pub mod claimer;
mod ctx;
pub mod held;
pub mod keeper;
pub mod parts;
pub mod paused;
mod reconnect;
pub mod share_addresses;
pub mod share_hosts;
pub mod upkeep;
pub mod writer;

pub use self::ctx::Ctx;
