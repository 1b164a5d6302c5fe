//! Reading seed input: a file (or stdin) of URLs, one a line, turned into normalized URLs.
//!
//! Scripts depend on this contract: blank lines and `#` comments are skipped, a line without a
//! scheme is taken as `https://`, only http and https are accepted, invisible characters around
//! a line (whitespace, controls, a BOM, zero-width spaces) are dropped, and every other line comes
//! back as a [`Rejection`] with its 1-based physical line number, so the caller can print
//! `FILE:LINE: reason` and go on. Memory stays bounded whatever the input: at most one line of
//! [`MAX_LINE`] bytes (plus a few) is held, longer lines are counted and discarded.
//!
//! # Layout
//! - [`normalize`](normalize()): one line of text to a [`SeedUrl`], or why it is not one.
//! - [`Lines`]: the iterator over a reader, with line numbers, BOM, CRLF and overlong lines.
//! - `invisible`: the characters dropped around a line (BOM, zero-width space, controls).

mod invisible;
mod lines;
mod normalize;

use std::fs::File;
use std::io::{self, BufRead, BufReader};

pub use lines::Lines;
pub use normalize::normalize;

/// The longest line accepted, in bytes, not counting the line ending (and a BOM on line 1).
///
/// Far above any real URL (browsers and servers stop around 2–8 KiB), low enough that a line is
/// always cheap to hold, and the bound on a normalized URL the database has to store.
pub const MAX_LINE: usize = 8192;

/// Read buffer for [`open`]: large reads keep syscalls rare on lists of millions of lines.
const READ_BUFFER: usize = 64 * 1024;

/// A URL ready for the queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedUrl {
    /// The normalized URL: two spellings of the same URL give the same string, so the database
    /// can refuse duplicates by plain equality.
    pub url: String,
    /// The normalized host without port (IPv6 literals keep their brackets): the key for
    /// per-host politeness and for reports.
    pub host: String,
}

/// Why a line is not a URL to check. Data for the caller to report, not a failure of the run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    #[error("line is not valid utf-8")]
    NotUtf8,
    /// `len` is the whole line's length, counted while discarding it.
    #[error("line is longer than {MAX_LINE} bytes ({len} bytes)")]
    TooLong { len: u64 },
    #[error("scheme \"{0}\" is not http or https")]
    Scheme(String),
    #[error("bad host: {0}")]
    Host(String),
    /// Credentials would be stored in the database and printed in reports.
    #[error("url contains a user name or password: a link with credentials is not a public link to check")]
    Credentials,
    #[error("not a url: {0}")]
    Invalid(String),
}

/// Opens seed input: `-` is stdin, anything else a file path (write `./-` for a file named `-`).
pub fn open(path: &str) -> io::Result<Box<dyn BufRead + Send>> {
    if path == "-" {
        return Ok(Box::new(BufReader::with_capacity(READ_BUFFER, io::stdin())));
    }
    let file = File::open(path)?;
    Ok(Box::new(BufReader::with_capacity(READ_BUFFER, file)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn open_reads_a_file_line_by_line() {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(b"# seeds\nexample.com\n").unwrap();
        let reader = open(file.path().to_str().unwrap()).unwrap();
        let lines: Vec<_> = Lines::new(reader).map(Result::unwrap).collect();
        let url = lines[0].1.as_ref().unwrap();
        assert_eq!((lines[0].0, url.url.as_str()), (2, "https://example.com/"));
    }

    #[test]
    fn open_fails_on_a_missing_file() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.txt");
        let error = open(missing.to_str().unwrap()).err().unwrap();
        assert_eq!(error.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn rejections_read_as_lowercase_reasons() {
        assert_eq!(
            Rejection::TooLong { len: 20480 }.to_string(),
            "line is longer than 8192 bytes (20480 bytes)"
        );
        assert_eq!(
            Rejection::Scheme("ftp".into()).to_string(),
            "scheme \"ftp\" is not http or https"
        );
    }
}
