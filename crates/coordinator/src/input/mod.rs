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
//! - `seed_url`: what a line becomes, a [`SeedUrl`] or a [`Rejection`], and [`MAX_LINE`].

mod invisible;
mod lines;
mod normalize;
mod seed_url;

use std::fs::File;
use std::io::{self, BufRead, BufReader};

pub use lines::Lines;
pub use normalize::normalize;
pub use seed_url::{Rejection, SeedUrl, MAX_LINE};

/// Read buffer for [`open`]: large reads keep syscalls rare on lists of millions of lines.
const READ_BUFFER: usize = 64 * 1024;

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
}
