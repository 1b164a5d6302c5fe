//! Seeding: streams URLs from files or stdin into the queue in bounded memory.
//!
//! A blocking thread reads and normalizes lines (reporting bad ones as `FILE:LINE: reason`) and
//! hands chunks of valid URLs over a small channel to two concurrent inserters, so reading
//! overlaps the database round trips and at most a few chunks are ever in memory, whatever the
//! input's size. A source that cannot be opened, or breaks part-way, costs only itself: what
//! was read of it is seeded, the next source is read, and the summary names it.
//!
//! # Layout
//! - `read`: one source, line by line, into chunks.
//! - [`crawl`]: `--follow` (a recursive check: its rules stored for the fleet, its start
//!   pages), and what `--sitemap` and `--links-in` find, sorted by those rules.
//! - `sitemap`: `--sitemap`, streamed; `files`: `--links-in`, with `FILE:LINE:COL`
//!   referrers, of the files [`walk`] finds in folders and globs.
//! - `sources`: [`seed`] and [`seed_with`] (lists), [`seed_crawl`] (the rest);
//!   `summary`: what it did, [`SeedSummary`].

pub mod crawl;
mod files;
mod read;
mod sitemap;
mod sources;
mod summary;
pub mod walk;

pub use sources::{is_database_url, seed, seed_crawl, seed_with};
pub use summary::{SeedSummary, Unread};
