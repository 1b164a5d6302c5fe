//! Seeding lists: every source in turn, read on a blocking thread and inserted by two
//! concurrent inserters; what a crawl adds besides (start pages, sitemaps, links in files).

use std::path::Path;

use crawler_queue::filter::UrlFilter;
use crawler_queue::{NewSite, Queue};
use futures::StreamExt;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use tokio::sync::mpsc;

use super::summary::SeedSummary;
use super::{crawl, files, read, sitemap};
use crate::error::Error;

/// Chunks inserted at once: the database works on one insert (index updates, the unique
/// check) while the next one travels.
const INSERTERS: usize = 2;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_database_url_is_not_taken_for_a_file() {
        assert!(is_database_url("mysql://u:pw@db/crawl"));
        assert!(is_database_url("SQLite://crawler.db"));
        assert!(!is_database_url("urls.txt"));
        assert!(!is_database_url("https://example.com/list.txt"));
        assert!(!is_database_url("-"));
    }
}
