//! What the tests and benchmarks share: fresh databases on every backend, the private MariaDB
//! and PostgreSQL servers they start, a local website, and the crawler's binaries.
//!
//! # Layout
//! - [`backend`]: `Backend`, `TestDb`, and `on_every_backend!` (one test body, run on each backend).
//! - [`mariadb`]: private `mariadbd` servers on their own data directories and ports.
//! - [`galera`]: a three-node Galera cluster of such servers, whose nodes can be killed.
//! - [`postgres`]: private PostgreSQL servers, on `mariadb`'s spawner and scratch directory.
//! - [`site`]: a local website whose paths say what they answer.
//! - [`nginx`]: a private nginx serving a directory, counting every request (fragments).
//! - [`meter`]: a local server of many hosts that measures what each one sees (politeness).
//! - [`stamped`]: a server's TCP stream that knows when its bytes arrived (the kernel's
//!   receive time), so the meters count what the client sent, not their own scheduling.
//! - [`dns`]: a tiny authoritative DNS server (A, NXDOMAIN, SERVFAIL, silent) counting queries.
//! - [`bench`]: what the benchmarks share (loopback hosts, claim latency).
//! - [`scale`]: millions of realistic rows made in SQL, table sizes, the database's CPU time.
//! - [`recorder`]: servers that record every request, or never answer; [`dns`]: a DNS
//!   server that counts queries.
//! - [`bins`]: the crawler's binaries, built once and run as a user would.
//! - [`installed`]: the message of a test that needs a Debian package not installed.
//! - [`archive`]: a stand-in for the Wayback Machine's availability API (`--archive-lookup`).
//! - [`findings`]: findings and outcomes to write back without an HTTP check.
//! - [`webhook`]: a webhook receiver that records each POST and answers as told (the
//!   notifier's tests).
//! - [`terminal`]: a pseudo-terminal to run a binary in, as a person would.
//! - [`wait`]: bounded waits for a condition, in place of fixed sleeps.
//! - [`static_site`]: a static website from a table of paths, counting every request (the
//!   recursive checks' site).
//! - [`soft404_site`]: a labelled corpus of soft 404s and hard negatives on many loopback
//!   hosts (`soft404_pages`: their kinds, pages and labels).
//! - [`soft404_real`]: a labelled soft-404 corpus of real server software (nginx, Apache,
//!   lighttpd, Caddy from Debian), configured as admins configure a "not found".

pub mod archive;
pub mod backend;
pub mod bench;
pub mod bins;
pub mod dns;
pub mod findings;
pub mod galera;
pub mod installed;
pub mod mariadb;
pub mod meter;
pub mod nginx;
pub mod postgres;
pub mod raw;
pub mod recorder;
pub mod scale;
pub mod site;
pub mod soft404_pages;
pub mod soft404_real;
pub mod soft404_site;
pub mod stamped;
pub mod static_site;
pub mod terminal;
pub mod wait;
pub mod webhook;

pub use backend::{Backend, PrivateServer, TestDb};
pub use installed::not_installed;
