//! Hostile input (one bad server, line, pipe or flag never stops or corrupts the rest of the
//! work): each test reproduces one attack or careless use, on every backend where a database
//! is involved.
//!
//! - `servers`: absurd Retry-After, rows the database refuses, shutdown while it refuses.
//! - `lines`: invisible characters, read errors, missing files in the seed's input.
//! - `pipes`: closed stdout/stderr never stop the work.
//! - `flags`: bad option values and database URLs are usage errors, named, before connecting.
//! - `database_urls`: database URLs that cannot work, and passwords that must never print.

mod database_urls;
pub(crate) mod flags;
mod lines;
mod pipes;
mod servers;
