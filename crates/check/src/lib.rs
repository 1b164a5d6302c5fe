//! crawler-check: the checker, a URL in and a [`Finding`] out, and the host book, everything
//! it knows of each host. It knows nothing of the queue: it speaks the verdict vocabulary
//! (`crawler-verdict`), and what the fleet tells it or learns from it passes through the
//! worker (`crawler-worker`), which is the glue between the two.
//!
//! Its face: [`Checker::check`] (and [`Checker::check_page`], [`Checker::fetch_text`] for a
//! check that reads the body), [`Checker::book`], the [`HostBook`] that the worker's stages
//! read and write, and [`unless_cut`] with its [`Cut`], to cut a check off before its first
//! request only.
//!
//! # Layout
//! - `checker.rs`: [`Checker`], the retry loop; `config.rs`: [`CheckConfig`], [`HostLimit`],
//!   [`defaults`]; `error.rs`: [`CheckError`].
//! - `redirect.rs`: one attempt — HEAD then GET, redirects followed hop by hop; `ask.rs`: how
//!   each hop is asked (plain data: the body to keep, the check's cut).
//! - `head.rs`: whether a host's HEAD can be believed, so each hop costs one request where it
//!   can.
//! - `asker.rs`: the `Asker`, which owns the client, the host book and the limits, and one
//!   request through them.
//! - `cut.rs`: cutting a check off only before its first request, never once one is sent.
//! - `reply.rs`: what those hand back: a request's `Reply` or `Failure`, an `Attempt`.
//! - `requests.rs`: the requests counted for Prometheus (`--metrics`).
//! - `hosts/`: the host book, everything this worker knows of each host in one entry, the one
//!   rule for forgetting it, and the decisions to tell the fleet.
//! - `ratelimit.rs`: per-host concurrency, rate and adaptive pace (429s); the global in-flight
//!   limit; the fleet's pause.
//! - `health.rs`: whether a host can be reached at all, decided once for the host.
//! - `resolve.rs`: the DNS cache, which also applies the public-only filter; `dns.rs`: the
//!   small DNS client of `--dns-server`.
//! - `address.rs`: which addresses count as public, and the guard every hop passes.
//! - `addresses.rs`: politeness per server address (`--ip-concurrency`, `--ip-rate`), and
//!   each address's share of its budget in a fleet.
//! - `retry.rs`: backoff and `Retry-After`.
//! - `classify.rs`: statuses and errors into verdicts, the last attempt into the finding.
//! - `accept.rs`: which statuses count as alive (`--accept`, `--accept-host`).
//! - `auth.rs`: per-host basic auth; `cookies.rs`: the cookie jar, read only.
//! - `soft404/`: soft 404s (`--soft-404`): probes, fingerprints, the decision.
//! - `page.rs`: reading a page's body for `--follow` (and a robots.txt).
//! - `stand_in.rs` (tests only): the stand-in host book of the unit tests below the book.

mod accept;
mod address;
mod addresses;
mod ask;
mod asker;
mod auth;
mod checker;
mod classify;
mod config;
mod cookies;
mod cut;
mod dns;
mod error;
mod head;
mod health;
mod hosts;
mod page;
mod ratelimit;
mod redirect;
mod reply;
pub mod requests;
mod resolve;
mod retry;
mod soft404;
#[cfg(test)]
mod stand_in;

pub use crawler_verdict::{ErrorKind, Finding, Next, Verdict};

pub use self::accept::StatusSet;
pub use self::address::is_public;
pub use self::addresses::{
    AddressBook, AddressLimit, AddressReport, AddressShare, IDLE as ADDRESS_IDLE,
};
pub use self::auth::BasicAuth;
pub use self::checker::Checker;
pub use self::classify::is_throttling;
pub use self::config::{defaults, user_agent, CheckConfig, HostLimit};
pub use self::cookies::CookieJar;
pub use self::cut::{unless_cut, Cut};
pub use self::error::CheckError;
pub use self::health::HostDecision;
pub use self::hosts::{Expected, FleetSaid, HostBook, HostCounts, RobotsCell};
pub use self::page::{PAGE_CAP, ROBOTS_CAP};
pub use self::ratelimit::PaceReport;
pub use self::soft404::{LastCheck, ProbeStore, StoredProbe, TTL as SOFT_404_TTL};
