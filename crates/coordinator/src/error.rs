//! The coordinator's [`Error`], and `chain`: an error and its causes on one line (the
//! queue's).

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Queue(#[from] crawler_queue::Error),
    #[error("cannot open {path}")]
    Open {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot read {path} after line {line}")]
    Read {
        path: String,
        /// Lines read to their end before the error.
        line: u64,
        #[source]
        source: std::io::Error,
    },
    /// A folder or glob of `--links-in` that could not be walked, in part (the rest is read).
    #[error("cannot walk {path}")]
    Walk {
        path: String,
        #[source]
        source: ignore::Error,
    },
    #[error("bad glob pattern {pattern}")]
    Glob {
        pattern: String,
        #[source]
        source: globset::Error,
    },
    /// A folder or glob of `--links-in` with nothing to read.
    #[error(
        "no file to read in {path}: html and markdown files are read (more kinds with \
         --links-in-ext), not hidden or ignored ones (--links-in-hidden, --links-in-no-ignore)"
    )]
    NoFiles { path: String },
    #[error("cannot write the report")]
    Write(#[from] std::io::Error),
    /// The file given with `-o` cannot be created or put in place.
    #[error("cannot write the report to {path}")]
    Output {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write the report")]
    Json(#[from] serde_json::Error),
    /// A sitemap (`--sitemap`) that could not be fetched or read.
    #[error("cannot fetch {url}")]
    Fetch {
        url: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("cannot fetch {url}: {why}")]
    Sitemap { url: String, why: String },
    /// The notify URL did not acknowledge a digest (`crawler-reap --notify` without `--every`);
    /// it stays stored for the next run. The URL is a secret: never named.
    #[error("the notify URL did not acknowledge digest {digest} after {tries} tries ({refused}); it is kept and sent by the next run")]
    Notify {
        digest: String,
        tries: u32,
        refused: String,
    },
}

impl Error {
    /// Whether the reader of our output went away (`| head`): not worth an error message.
    pub fn is_broken_pipe(&self) -> bool {
        use std::io::ErrorKind::BrokenPipe;
        match self {
            Error::Write(e) => e.kind() == BrokenPipe,
            Error::Json(e) => e.io_error_kind() == Some(BrokenPipe),
            _ => false,
        }
    }
}

pub(crate) use crawler_queue::error_chain as chain;
