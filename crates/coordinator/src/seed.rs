//! Seeding: streams URLs from files or stdin into the queue in bounded memory.
//!
//! A blocking thread reads and normalizes lines (reporting bad ones as `FILE:LINE: reason`) and
//! hands chunks of valid URLs over a small channel to two concurrent inserters, so reading
//! overlaps the database round trips and at most a few chunks are ever in memory, whatever the
//! input's size.

use crawler_queue::seed::SEED_CHUNK;
use crawler_queue::{NewSite, Queue, Seeded};
use futures::StreamExt;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use tokio::sync::mpsc;

use crate::input::{self, Lines};
use crate::Error;

/// Chunks inserted at once: the database works on one insert (index updates, the unique
/// check) while the next one travels.
const INSERTERS: usize = 2;

/// What a whole seed did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SeedSummary {
    pub seeded: Seeded,
    /// Lines that were not URLs, reported on stderr.
    pub rejected: u64,
}

/// Seeds every source in turn (`-` is stdin). With `recheck`, known URLs become due again.
pub async fn seed(queue: &Queue, sources: &[String], recheck: bool) -> Result<SeedSummary, Error> {
    let bar = spinner();
    let mut summary = SeedSummary::default();
    for source in sources {
        let (chunks_tx, mut chunks) = mpsc::channel::<Vec<NewSite>>(4);
        let reader = {
            let (source, bar) = (source.clone(), bar.clone());
            tokio::task::spawn_blocking(move || read(&source, &bar, chunks_tx))
        };
        let chunks = futures::stream::poll_fn(|cx| chunks.poll_recv(cx));
        let mut inserts = chunks
            .map(|chunk| async move { queue.seed(&chunk, recheck).await })
            .buffer_unordered(INSERTERS);
        while let Some(seeded) = inserts.next().await {
            summary.seeded += seeded?;
            bar.set_message(message(&summary));
        }
        summary.rejected += reader.await.expect("the reader thread panicked")?;
    }
    bar.finish_and_clear();
    Ok(summary)
}

/// Reads one source to its end, sending valid URLs in chunks; returns the rejected lines.
fn read(source: &str, bar: &ProgressBar, chunks: mpsc::Sender<Vec<NewSite>>) -> Result<u64, Error> {
    let name = if source == "-" { "<stdin>" } else { source };
    let file = input::open(source).map_err(|e| Error::Open {
        path: name.into(),
        source: e,
    })?;
    let mut chunk = Vec::with_capacity(SEED_CHUNK);
    let mut rejected = 0;
    for line in Lines::new(file) {
        let (number, parsed) = line.map_err(|e| Error::Read {
            path: name.into(),
            source: e,
        })?;
        match parsed {
            Ok(url) => chunk.push(NewSite {
                url: url.url,
                host: url.host,
            }),
            Err(reason) => {
                rejected += 1;
                bar.suspend(|| {
                    crawler_queue::cli::eprint_line(format_args!("{name}:{number}: {reason}"))
                });
            }
        }
        if chunk.len() == SEED_CHUNK {
            bar.inc(chunk.len() as u64);
            if chunks
                .blocking_send(std::mem::replace(
                    &mut chunk,
                    Vec::with_capacity(SEED_CHUNK),
                ))
                .is_err()
            {
                return Ok(rejected); // the inserter failed; its error is the one to report
            }
        }
    }
    if !chunk.is_empty() {
        let _ = chunks.blocking_send(chunk);
    }
    Ok(rejected)
}

fn spinner() -> ProgressBar {
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
        if self.seeded.rechecked > 0 {
            write!(f, ", due again {}", self.seeded.rechecked)?;
        }
        Ok(())
    }
}
