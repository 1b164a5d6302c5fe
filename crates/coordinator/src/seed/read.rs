//! One source, line by line: valid URLs go to the inserters in chunks (those `--include` and
//! `--exclude` allow), bad lines to stderr as `FILE:LINE: reason`. A source that cannot be opened, or breaks part-way, is named on stderr;
//! what was read of it is sent all the same.

use std::io::BufRead;

use crawler_queue::filter::UrlFilter;
use crawler_queue::seed::SEED_CHUNK;
use crawler_queue::NewSite;
use indicatif::ProgressBar;
use tokio::sync::mpsc;

use super::summary::Unread;
use crate::error::Error;
use crate::input::{self, Lines, SeedUrl};
use crate::redact::strip_userinfo;

/// How reading one source ended.
pub(super) struct SourceRead {
    /// Lines that were not URLs, reported on stderr.
    pub rejected: u64,
    /// URLs the filter left out.
    pub excluded: u64,
    /// `None` when the source was read to its end.
    pub unread: Option<Unread>,
}

/// Reads `source` (`-` is stdin) to its end or its first error, sending valid URLs in chunks.
pub(super) fn read(
    source: &str,
    bar: &ProgressBar,
    filter: &UrlFilter,
    fragments: bool,
    chunks: mpsc::Sender<Vec<NewSite>>,
) -> SourceRead {
    let name = match source {
        "-" => "<stdin>".to_owned(),
        path => strip_userinfo(path).into_owned(),
    };
    match input::open(source) {
        Ok(reader) => read_lines(name, reader, bar, filter, fragments, chunks),
        Err(error) => {
            tell(
                bar,
                &Error::Open {
                    path: name.clone(),
                    source: error,
                },
            );
            SourceRead {
                rejected: 0,
                excluded: 0,
                unread: Some(Unread { name, lines: None }),
            }
        }
    }
}

/// Reads the lines of `reader`, the source called `name`.
fn read_lines(
    name: String,
    reader: impl BufRead,
    bar: &ProgressBar,
    filter: &UrlFilter,
    fragments: bool,
    chunks: mpsc::Sender<Vec<NewSite>>,
) -> SourceRead {
    let mut chunks = Chunks::new(chunks, bar);
    let mut lines = Lines::new(reader).keeping_fragments(fragments);
    let (mut rejected, mut excluded) = (0, 0);
    while let Some(line) = lines.next() {
        match line {
            Ok((_, Ok(url))) if !filter.allows(&url.url) => excluded += 1,
            Ok((_, Ok(url))) => {
                if !chunks.push(url) {
                    break; // the inserters failed; their error is the one to report
                }
            }
            Ok((number, Err(reason))) => {
                rejected += 1;
                bar.suspend(|| crawler_cli::eprint_line(format_args!("{name}:{number}: {reason}")));
            }
            Err(error) => {
                // What came before the error is seeded; the error says how far it got.
                chunks.send();
                let line = lines.number();
                tell(
                    bar,
                    &Error::Read {
                        path: name.clone(),
                        line,
                        source: error,
                    },
                );
                let unread = Unread {
                    name,
                    lines: Some(line),
                };
                return SourceRead {
                    rejected,
                    excluded,
                    unread: Some(unread),
                };
            }
        }
    }
    chunks.send();
    SourceRead {
        rejected,
        excluded,
        unread: None,
    }
}

/// Prints `error: …` on stderr, above the spinner.
fn tell(bar: &ProgressBar, error: &Error) {
    bar.suspend(|| crawler_cli::eprint_line(format_args!("error: {}", crate::error::chain(error))));
}

/// Valid URLs, gathered into chunks of [`SEED_CHUNK`] for the inserters.
struct Chunks<'a> {
    tx: mpsc::Sender<Vec<NewSite>>,
    chunk: Vec<NewSite>,
    bar: &'a ProgressBar,
}

impl<'a> Chunks<'a> {
    fn new(tx: mpsc::Sender<Vec<NewSite>>, bar: &'a ProgressBar) -> Self {
        let chunk = Vec::with_capacity(SEED_CHUNK);
        Chunks { tx, chunk, bar }
    }

    /// Adds `url`, sending the chunk once full; false once the inserters have stopped.
    fn push(&mut self, url: SeedUrl) -> bool {
        self.chunk.push(NewSite {
            url: url.url,
            host: url.host,
        });
        self.chunk.len() < SEED_CHUNK || self.send()
    }

    /// Sends what is gathered; false once the inserters have stopped.
    fn send(&mut self) -> bool {
        if self.chunk.is_empty() {
            return true;
        }
        self.bar.inc(self.chunk.len() as u64);
        let chunk = std::mem::replace(&mut self.chunk, Vec::with_capacity(SEED_CHUNK));
        self.tx.blocking_send(chunk).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{self, BufReader, Read};

    /// Yields `data`, then fails.
    struct Breaking(io::Cursor<Vec<u8>>);

    impl Read for Breaking {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            match self.0.read(buf)? {
                0 => Err(io::ErrorKind::ConnectionReset.into()),
                n => Ok(n),
            }
        }
    }

    #[test]
    fn a_read_error_part_way_sends_every_url_read_before_it() {
        let data: String = (0..1500).map(|i| format!("h{i}.example\n")).collect();
        let reader = BufReader::new(Breaking(io::Cursor::new(data.into_bytes())));
        let (tx, mut rx) = mpsc::channel(4);
        let filter = UrlFilter::default();
        let read = read_lines(
            "list.txt".into(),
            reader,
            &ProgressBar::hidden(),
            &filter,
            false,
            tx,
        );
        let unread = read.unread.expect("the source broke");
        assert_eq!(
            (unread.name.as_str(), unread.lines),
            ("list.txt", Some(1500))
        );
        let mut sent = Vec::new();
        while let Ok(chunk) = rx.try_recv() {
            sent.extend(chunk);
        }
        assert_eq!(sent.len(), 1500);
        assert_eq!(sent[1499].url, "https://h1499.example/");
    }

    #[test]
    fn a_missing_file_is_unread_and_named_without_credentials() {
        let (tx, _rx) = mpsc::channel(4);
        let read = read(
            "https://u:pw@nowhere.invalid/list",
            &ProgressBar::hidden(),
            &UrlFilter::default(),
            false,
            tx,
        );
        let unread = read.unread.expect("no such file");
        assert_eq!(unread.name, "https://nowhere.invalid/list");
        assert_eq!(unread.lines, None);
    }

    #[test]
    fn urls_the_filter_leaves_out_are_counted_and_not_sent() {
        let data = "a.example/docs/1\nA.EXAMPLE/blog\nb.example/docs/2.pdf\nnot a url\n";
        let filter = UrlFilter {
            include: vec![crawler_queue::filter::Regex::new("/docs/").unwrap()],
            exclude: vec![crawler_queue::filter::Regex::new(r"\.pdf$").unwrap()],
        };
        let (tx, mut rx) = mpsc::channel(4);
        let reader = BufReader::new(data.as_bytes());
        let read = read_lines(
            "l".into(),
            reader,
            &ProgressBar::hidden(),
            &filter,
            false,
            tx,
        );
        assert_eq!((read.rejected, read.excluded), (1, 2));
        let sent: Vec<String> = rx.try_recv().unwrap().into_iter().map(|s| s.url).collect();
        assert_eq!(sent, ["https://a.example/docs/1"]);
    }
}
