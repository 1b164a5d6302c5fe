//! The shared library of crawler: the schema, the lease queue over MySQL/MariaDB and SQLite,
//! and the configuration every binary shares.
//!
//! # Layout
//! - [`verdict`]: what a check found (`Verdict`, `ErrorKind`, `Finding`).

pub mod verdict;

pub use verdict::{ErrorKind, Finding, Verdict};
