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

pub mod crawl;
mod files;
mod read;
mod sitemap;
pub mod walk;

use std::path::Path;

use crawler_queue::filter::UrlFilter;
use crawler_queue::{NewSite, Queue, Seeded};
use futures::StreamExt;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use tokio::sync::mpsc;

use crate::Error;

/// Chunks inserted at once: the database works on one insert (index updates, the unique
/// check) while the next one travels.
const INSERTERS: usize = 2;

/// What a whole seed did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SeedSummary {
    pub seeded: Seeded,
    /// Lines that were not URLs, reported on stderr.
    pub rejected: u64,
    /// URLs left out by `--include`/`--exclude`.
    pub excluded: u64,
    /// Pages to read (`--follow`: start pages, and sitemap URLs in scope).
    pub pages: u64,
    /// Relative links of `--links-in` files skipped for want of `--base`.
    pub relative: u64,
    /// Files of `--links-in` read.
    pub files: u64,
    /// Sources read to their end.
    pub complete: u64,
    /// Sources not read to their end, in order (each reported on stderr when it failed).
    pub unread: Vec<Unread>,
}

/// A source that could not be read to its end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unread {
    /// As printed: `<stdin>` for `-`, a path without credentials.
    pub name: String,
    /// Lines read before the error (their URLs are seeded); `None` if it could not be opened.
    pub lines: Option<u64>,
}

impl SeedSummary {
    /// Whether anything was read: a whole source, or lines of one before it broke.
    pub fn read_anything(&self) -> bool {
        self.complete > 0 || self.unread.iter().any(|u| u.lines.unwrap_or(0) > 0)
    }
}

/// Seeds every source in turn (`-` is stdin). With `recheck`, known URLs become due again. A
/// source that fails is named and skipped; only a database error ends the seed early.
pub async fn seed(queue: &Queue, sources: &[String], recheck: bool) -> Result<SeedSummary, Error> {
    seed_with(queue, sources, recheck, &UrlFilter::default(), false).await
}

/// [`seed`], taking only the URLs `filter` allows (as normalized); with `fragments`, a URL
/// keeps a fragment that names an anchor (`crawler-seed --fragments`).
pub async fn seed_with(
    queue: &Queue,
    sources: &[String],
    recheck: bool,
    filter: &UrlFilter,
    fragments: bool,
) -> Result<SeedSummary, Error> {
    let bar = spinner();
    let mut summary = SeedSummary::default();
    for source in sources {
        let (chunks_tx, mut chunks) = mpsc::channel::<Vec<NewSite>>(4);
        let reader = {
            let (source, bar, filter) = (source.clone(), bar.clone(), filter.clone());
            tokio::task::spawn_blocking(move || {
                read::read(&source, &bar, &filter, fragments, chunks_tx)
            })
        };
        let chunks = futures::stream::poll_fn(|cx| chunks.poll_recv(cx));
        let mut inserts = chunks
            .map(|chunk| async move { queue.seed(&chunk, recheck).await })
            .buffer_unordered(INSERTERS);
        while let Some(seeded) = inserts.next().await {
            summary.seeded += seeded?;
            bar.set_message(message(&summary));
        }
        let read = reader.await.expect("the reader thread panicked");
        summary.rejected += read.rejected;
        summary.excluded += read.excluded;
        match read.unread {
            Some(unread) => summary.unread.push(unread),
            None => summary.complete += 1,
        }
    }
    bar.finish_and_clear();
    Ok(summary)
}

/// Seeds what `args` ask besides lists: a crawl's start pages, sitemaps, links in files.
pub async fn seed_crawl(
    queue: &Queue,
    args: &crawl::CrawlArgs,
    filter: &UrlFilter,
    summary: &mut SeedSummary,
) -> Result<(), Error> {
    let seeding = crawl::start(queue, args, filter, summary).await?;
    sitemap::seed_sitemaps(&seeding, &args.sitemap, summary).await?;
    let (walking, base) = (args.walking(), args.base.as_ref());
    files::seed_files(&seeding, &args.links_in, &walking, base, summary).await
}

/// Whether a source is a database URL given where a file was meant (and no file has that name):
/// `crawler-seed mysql://…/crawl urls.txt` would fill the default database instead.
pub fn is_database_url(source: &str) -> bool {
    let scheme = source
        .split_once("://")
        .map(|(s, _)| s.to_ascii_lowercase());
    let database = matches!(
        scheme.as_deref(),
        Some("mysql" | "mariadb" | "sqlite" | "postgres" | "postgresql")
    );
    database && !Path::new(source).exists()
}

/// A spinner on stderr, where the logging draws bars (a terminal, text, no `-q`).
fn spinner() -> ProgressBar {
    if !crawler_cli::bars_shown() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{spinner} {elapsed} {pos} URLs read ({per_sec}) {msg}")
            .expect("valid template"),
    );
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    bar
}

fn message(s: &SeedSummary) -> String {
    format!("added {}, already known {}", s.seeded.added, s.seeded.known)
}

impl std::fmt::Display for SeedSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "added {}, already known {}, rejected {}",
            self.seeded.added, self.seeded.known, self.rejected
        )?;
        if self.excluded > 0 {
            write!(f, ", excluded {}", self.excluded)?;
        }
        if self.pages > 0 {
            write!(f, ", pages to follow {}", self.pages)?;
        }
        if self.files > 0 {
            write!(f, ", files read {}", self.files)?;
        }
        if self.relative > 0 {
            write!(f, ", relative links skipped {} (no --base)", self.relative)?;
        }
        if self.seeded.rechecked > 0 {
            write!(f, ", due again {}", self.seeded.rechecked)?;
        }
        for (i, unread) in self.unread.iter().enumerate() {
            f.write_str(if i == 0 {
                "; not read to the end: "
            } else {
                ", "
            })?;
            match unread.lines {
                Some(n) => write!(f, "{} (stopped after line {n})", unread.name)?,
                None => write!(f, "{} (cannot open)", unread.name)?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_names_each_source_not_read_to_the_end() {
        let mut summary = SeedSummary {
            rejected: 2,
            complete: 1,
            ..SeedSummary::default()
        };
        summary.seeded.added = 7;
        assert_eq!(summary.to_string(), "added 7, already known 0, rejected 2");
        summary.excluded = 3;
        assert_eq!(
            summary.to_string(),
            "added 7, already known 0, rejected 2, excluded 3"
        );
        summary.excluded = 0;
        summary.files = 4;
        assert_eq!(
            summary.to_string(),
            "added 7, already known 0, rejected 2, files read 4"
        );
        summary.files = 0;
        summary.unread = vec![
            Unread {
                name: "big.txt".into(),
                lines: Some(1500),
            },
            Unread {
                name: "missing.txt".into(),
                lines: None,
            },
        ];
        assert_eq!(
            summary.to_string(),
            "added 7, already known 0, rejected 2; not read to the end: \
             big.txt (stopped after line 1500), missing.txt (cannot open)"
        );
    }

    #[test]
    fn nothing_was_read_when_every_source_failed_before_its_first_line() {
        let unread = |lines| Unread {
            name: "x".into(),
            lines,
        };
        let mut summary = SeedSummary {
            unread: vec![unread(None), unread(Some(0))],
            ..SeedSummary::default()
        };
        assert!(!summary.read_anything());
        summary.unread.push(unread(Some(3)));
        assert!(summary.read_anything());
    }

    #[test]
    fn a_database_url_is_not_taken_for_a_file() {
        assert!(is_database_url("mysql://u:pw@db/crawl"));
        assert!(is_database_url("SQLite://crawler.db"));
        assert!(!is_database_url("urls.txt"));
        assert!(!is_database_url("https://example.com/list.txt"));
        assert!(!is_database_url("-"));
    }
}
