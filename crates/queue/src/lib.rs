//! The shared library of crawler: the schema, the lease queue over MySQL/MariaDB, PostgreSQL
//! and SQLite, and the configuration every binary shares. The command line that sets it
//! (options, logging, exit codes, man pages) is `crawler-cli`'s: this crate has no clap.
//!
//! A site flows `seed` → pending → `claim` → claimed → `complete` → done (or back to pending
//! for a retry, or by `release`/`reap`), and `recheck` makes old verdicts due again. What
//! moves work is [`Queue`]: seed, claim, extend, complete, give back. The rest are views
//! borrowed from it, each defined, with its accessor, in its own module (which `queue.rs`
//! never imports): the host partitions' leases, [`Queue::parts`] ([`Partitions`]); what the
//! fleet learned of its hosts, [`Queue::hosts`] ([`Hosts`]); recursive checking,
//! [`Queue::follow`] ([`Follow`]), and pages' anchors, [`Queue::anchors`] ([`Anchors`]);
//! reaping, [`Queue::reaping`] ([`Reaping`]), and the leases of such periodic jobs,
//! [`Queue::leases`] ([`Leases`]); the fleet's pause switch, [`Queue::control`] ([`Control`]);
//! the history of verdicts, [`Queue::history`] ([`History`]); archived copies of dead links,
//! [`Queue::archive`] ([`Archive`]); what only reads the results, [`Queue::reports`]
//! ([`Reports`]); the fleet's soft-404 probes, [`Queue::probes`] ([`Probes`]).
//!
//! # Layout
//! - [`config`]: the queue's settings.
//! - [`database_url`]: the database URL, never printed with its password, and checked before
//!   connecting.
//! - [`dialect`]: which SQL a database speaks; [`state`]: a site's place in the queue, as stored.
//! - [`db`]: connecting, migrations, one pool type over the three backends; whether a SQLite file
//!   that is not there is created (seed, worker) or refused (report, reap).
//! - `sql`: every building block of SQL text that differs between the dialects (the clock,
//!   limited updates, the claim's statements and `ClaimShape`, upserts, index hints, a
//!   case-insensitive `LIKE`, row locks, the MySQL session's settings, …), `sql::statement`,
//!   which finishes every statement (`{now}`, the states' and verdicts' names, PostgreSQL's `$n`
//!   placeholders), and `sql::cached!`, the one way each module keeps its own statements, built
//!   once per dialect (and list length).
//! - [`queue`]: claim in held partitions (update-then-select; on MySQL a pick from the index,
//!   then the stamp by id), extend, release.
//! - [`parts`]: host partitions leased to one worker at a time (fleet-wide politeness), the
//!   view [`Partitions`]; [`balance`]: work-aware balance (an idle worker asks for a busy
//!   partition), more of [`Partitions`]; [`hosts`]: what the fleet learned about a host
//!   (backoff, recent error rate), the view [`Hosts`].
//! - [`complete`]: bulk, fenced write-back of results, with retry backoff; [`history`]: a
//!   row per verdict change, written with it, pruned by age (continuous monitoring): the view
//!   [`History`]; read through [`Reports`].
//! - [`reap`]: giving back the work of dead workers, under the fleet's one reaper lease, and
//!   rechecks: the view [`Reaping`] (`Reaping::reap_as_leader`, which the workers and
//!   `crawler-reap` share); `singleton`: such leases, the view [`Leases`].
//! - [`seed`], `workers`: the other operations.
//! - [`report`]: the read side, [`Reports`]: pages of checked sites and of hosts, counts, the
//!   workers, the dashboard's lists (hosts in backoff, the latest dead), referrers, dead links
//!   by page and a site's verdict changes: every method of [`Reports`] is under `report/`.
//! - [`control`]: pausing and resuming the whole fleet (a flag workers read with their
//!   heartbeat), the view [`Control`].
//! - [`verdict`]: what a check found; [`backoff`]: the one exponential backoff (a base
//!   doubling to a cap, jitter if asked) of every wait that grows with failures, never past
//!   [`MAX_DELAY`]; [`filter`]: `--include` and `--exclude`, which URLs the seed takes and the
//!   worker asks. All three are `crawler-verdict`'s, re-exported: the checker speaks them too.
//! - [`soft404`]: the fleet's soft-404 probes, one per host and path pattern (`--soft-404`),
//!   and a site's last check: [`Probes`].
//! - [`anchors`]: fragments (`page#section`): a page's anchors and result, read once for the
//!   fleet, which every fragment of it is decided from: the view [`Anchors`].
//! - [`follow`]: recursive checking: crawls, a page's links added once (fenced by its claim),
//!   robots.txt shared by the fleet: the view [`Follow`]; [`referrers`]: where each link was
//!   found.
//! - `retry`: transient database errors (deadlocks, lost connections) are retried.
//! - [`metrics`]: claim and write-back latency, database errors (no-ops without a recorder).
//! - `error`: the [`Error`] type, and [`error_chain`], an error and its causes on one line.
//!
//! # Features
//! - `testing`: `Queue::claim`, a claim in any partition, for the tests and benchmarks
//!   (`crawler-tests` enables it). A worker claims only in the partitions it holds. And
//!   `Leases::try_lead` and `Leases::runs`, a lease of any name and its count of runs, for
//!   the tests of leases.

pub mod addresses;
pub mod anchors;
pub mod archive;
pub mod balance;
pub mod complete;
pub mod config;
pub mod confirm;
pub mod control;
pub mod database_url;
pub mod db;
pub mod dialect;
mod error;
pub mod follow;
pub mod history;
pub mod hosts;
pub mod metrics;
pub mod notify;
pub mod parts;
pub mod queue;
pub mod reap;
pub mod referrers;
pub mod report;
mod retry;
pub mod seed;
pub mod sessions;
mod singleton;
pub mod soft404;
mod sql;
pub mod sqlite_work;
pub mod state;
mod workers;

// The verdict vocabulary, the backoff and the URL filter are the checker's words too: they
// live in `crawler-verdict`, which both depend on, under the same paths as before.
pub use crawler_verdict::{backoff, filter, verdict};

pub use addresses::{AddressHolders, AddressLoad, AddressView, Addresses, Among, SharesRead};
pub use anchors::{Anchors, PageAnchors};
pub use archive::{Archive, Archived, ToArchive};
pub use backoff::MAX_DELAY;
pub use balance::DuePart;
pub use complete::{Completed, Outcome};
pub use config::Confirm;
pub use config::{ClaimMethod, QueueConfig};
pub use control::{Control, FleetState};
pub use database_url::{BadDatabaseUrl, DatabaseUrl, DEFAULT_DATABASE_URL};
pub use db::{Db, Missing};
pub use dialect::Dialect;
pub use error::{error_chain, Error};
pub use follow::{Added, Crawl, Follow, Frontier, Links, NewCrawl, Page, PageLinks};
pub use history::History;
pub use hosts::{HostChecks, HostPace, HostState, Hosts, Throttled, Unreachable};
pub use notify::{Advanced, Change, Cursor, Digest, Notifier};
pub use parts::{part_of, HeldPart, Partitions, PARTS};
pub use queue::{Batch, Queue, Site};
pub use reap::{Reaped, Reaping};
pub use report::{
    After, Backoff, ChangeCount, Changed, ChangesIn, Checked, ChecksIn, DeadOnPage, HostFilter,
    HostRow, Only, Reports, Scope, StateCounts, VerdictChange, VerdictsIn, WorkerRow,
};
pub use retry::is_transient;
pub use seed::{NewSite, Seeded};
pub use sessions::{SessionCheck, Sessions};
pub use singleton::Leases;
pub use soft404::Probes;
pub use sqlite_work::SqliteWork;
pub use state::State;
pub use verdict::{ErrorKind, Finding, Fragment, Next, Verdict, VerdictCounts};
