//! crawler-verdict: the words the checker (`crawler-check`) and the queue (`crawler-queue`)
//! share, so that neither needs the other: what a check of a URL found, how long anything
//! found may put a site off, and which URLs are asked at all. Plain data and pure functions:
//! no I/O, no database, no HTTP.
//!
//! # Layout
//! - [`verdict`]: what a check found ([`Finding`]: a [`Verdict`], an [`ErrorKind`], what
//!   follows it, [`Next`]), and the names each is stored and reported by.
//! - [`backoff`]: the one exponential backoff of every wait that grows with failures, and
//!   [`MAX_DELAY`], the bound on every delay an answer can ask for.
//! - [`filter`]: `--include` and `--exclude` ([`UrlFilter`]): the URLs a check leaves out
//!   get the verdict `excluded`.

pub mod backoff;
pub mod filter;
pub mod verdict;

pub use backoff::{Backoff, MAX_DELAY};
pub use filter::UrlFilter;
pub use verdict::{
    ErrorKind, Finding, Fragment, Next, UnknownName, Verdict, VerdictCounts, DEFER_HORIZON,
};
