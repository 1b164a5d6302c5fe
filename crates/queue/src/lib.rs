//! The shared library of crawler: the schema, the lease queue over MySQL/MariaDB and SQLite,
//! and the configuration every binary shares.
//!
//! A site flows `seed` → pending → `claim` → claimed → `complete` → done (or back to pending
//! for a retry, or by `release`/`reap`), and `recheck` makes old verdicts due again.
//!
//! # Layout
//! - [`cli`]: exit codes and signals for the binaries; [`logging`]: `-q`, `-v`,
//!   `--log-format`, colour and progress bars.
//! - [`generate`]: every binary's man page and shell completions (`--generate KIND`).
//! - [`bounds`]: the ranges option values must lie in (durations, ids), checked while parsing.
//! - [`config`]: the database URL (never printed with its password) and queue settings.
//! - [`database_url`]: checking a database URL before connecting.
//! - [`db`]: connecting, migrations, one pool type over both backends; whether a SQLite file
//!   that is not there is created (seed, worker) or refused (report, reap).
//! - `sql`: every statement that differs between MySQL and SQLite.
//! - [`queue`]: claim (update-then-select), extend, release.
//! - [`parts`]: host partitions leased to one worker at a time (fleet-wide politeness);
//!   [`balance`]: work-aware balance (an idle worker asks for a busy partition);
//!   [`hosts`]: what the fleet learned about a host (backoff, recent error rate).
//! - [`complete`]: bulk, fenced write-back of results, with retry backoff.
//! - [`seed`], [`reap`], `workers`, `singleton`, [`report`]: the other operations.
//! - [`control`]: pausing and resuming the whole fleet (a flag workers read with their
//!   heartbeat).
//! - [`verdict`]: what a check found.
//! - [`soft404`]: the fleet's soft-404 probes, one per host and path pattern (`--soft-404`).
//! - [`filter`]: `--include` and `--exclude`, which URLs the seed takes and the worker asks.
//! - `retry`: transient database errors (deadlocks, lost connections) are retried.
//! - [`metrics`]: claim and write-back latency, database errors (no-ops without a recorder).

pub mod balance;
pub mod bounds;
pub mod cli;
pub mod complete;
pub mod config;
pub mod control;
pub mod database_url;
pub mod db;
mod error;
pub mod filter;
pub mod generate;
pub mod hosts;
pub mod logging;
pub mod metrics;
pub mod parts;
pub mod queue;
pub mod reap;
pub mod report;
mod retry;
pub mod seed;
mod singleton;
pub mod soft404;
mod sql;
pub mod verdict;
mod workers;

pub use balance::DuePart;
pub use complete::{Completed, Outcome};
pub use config::{
    ClaimMethod, DatabaseArgs, DatabaseUrl, QueueConfig, DEFAULT_DATABASE_URL, MAX_DELAY,
};
pub use control::FleetState;
pub use database_url::BadDatabaseUrl;
pub use db::{Db, Dialect, Missing};
pub use error::Error;
pub use hosts::{HostChecks, HostState, Throttled};
pub use logging::{LogArgs, LogFormat};
pub use parts::{part_of, HeldPart, PARTS};
pub use queue::{Batch, Queue, Site, State};
pub use reap::Reaped;
pub use report::{Backoff, Checked, HostFilter, HostRow, StateCounts, WorkerRow};
pub use retry::is_transient;
pub use seed::{NewSite, Seeded};
pub use verdict::{ErrorKind, Finding, Verdict, VerdictCounts};
