//! Integration tests of the checker, all in one binary, against local servers only.
//!
//! # Layout
//! - `helpers`: `spawn_site` (hyper) and `spawn_raw` (bare TCP) servers, the test config
//! - `verdicts`: one test per row of the verdict table
//! - `hostile`: servers that misbehave on purpose
//! - `redirects`: chains, loops, limits, and `public_only` on every hop
//! - `retries`: backoff, `Retry-After`
//! - `politeness`: per-host rate, concurrency and 429 penalty, the global limit
//! - `tls`: handshake and certificate failures
//! - `options`: headers, basic auth, cookies, accepted statuses, an extra CA

mod helpers;
mod hostile;
mod options;
mod politeness;
mod redirects;
mod retries;
mod tls;
mod verdicts;
