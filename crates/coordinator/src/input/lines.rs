//! Seed input as numbered lines, in bounded memory whatever the input holds.

use std::io::{self, BufRead};

use super::invisible;
use super::normalize::normalize_with;
use super::seed_url::{Rejection, SeedUrl, MAX_LINE};

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Bytes of a line kept in memory: [`MAX_LINE`] plus a BOM on line 1 and the `\r` of a CRLF.
/// Past this the rest of the line is only counted, so a 1 GiB line costs no more than 8 KiB.
const KEPT: usize = MAX_LINE + BOM.len() + 1;

/// The URLs of seed input, each with its 1-based physical line number; blank and comment lines
/// are skipped but counted, and invisible characters around a line are dropped. An io error is
/// returned once and ends the iteration; [`Lines::number`] then tells how far it got.
pub struct Lines<R> {
    reader: R,
    /// The current line, cut at [`KEPT`] bytes; reused so reading allocates once.
    line: Vec<u8>,
    number: u64,
    done: bool,
    /// A URL keeps its fragment when it names an anchor (`--fragments`): a site of its own.
    keep_fragments: bool,
}

/// The length of the line just read, ending `\n` excluded; the bytes are in `Lines::line`.
struct Length {
    bytes: u64,
    ends_with_cr: bool,
}

impl<R: BufRead> Lines<R> {
    pub fn new(reader: R) -> Self {
        Self {
            reader,
            line: Vec::with_capacity(KEPT),
            number: 0,
            done: false,
            keep_fragments: false,
        }
    }

    /// Lines whose URLs keep a fragment that names an anchor (`crawler-seed --fragments`).
    pub fn keeping_fragments(mut self, keep: bool) -> Self {
        self.keep_fragments = keep;
        self
    }

    /// The physical lines read to their end so far.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// Reads the next physical line, keeping at most [`KEPT`] bytes of it; `None` at the end.
    fn read_line(&mut self) -> io::Result<Option<Length>> {
        self.line.clear();
        let mut length = Length {
            bytes: 0,
            ends_with_cr: false,
        };
        loop {
            let available = match self.reader.fill_buf() {
                Ok(available) => available,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(error),
            };
            if available.is_empty() {
                return Ok((length.bytes > 0).then_some(length));
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let chunk = &available[..newline.unwrap_or(available.len())];
            let room = KEPT - self.line.len();
            self.line.extend_from_slice(&chunk[..chunk.len().min(room)]);
            length.bytes += chunk.len() as u64;
            if let Some(&last) = chunk.last() {
                length.ends_with_cr = last == b'\r';
            }
            let used = chunk.len() + usize::from(newline.is_some());
            self.reader.consume(used);
            if newline.is_some() {
                return Ok(Some(length));
            }
        }
    }

    /// What the line just read holds: `None` for a blank or comment line.
    fn classify(&self, length: Length) -> Option<Result<SeedUrl, Rejection>> {
        let whole = self.line.len() as u64 == length.bytes;
        let mut bytes = &self.line[..];
        let mut len = length.bytes;
        if self.number == 1 && bytes.starts_with(BOM) {
            bytes = &bytes[BOM.len()..];
            len -= BOM.len() as u64;
        }
        if length.ends_with_cr {
            len -= 1;
            if whole {
                bytes = &bytes[..bytes.len() - 1];
            }
        }
        // Checked on bytes first, so overlong or non-UTF-8 comments are still comments.
        if invisible::trim_start(bytes).starts_with(b"#") {
            return None;
        }
        if len > MAX_LINE as u64 {
            return Some(Err(Rejection::TooLong { len }));
        }
        let Ok(text) = std::str::from_utf8(bytes) else {
            return Some(Err(Rejection::NotUtf8));
        };
        // A BOM or zero-width space at the start of a line is no part of its URL (left there,
        // it made the line's scheme unrecognisable, and `https://` was put before it).
        let text = text.trim_matches(invisible::is_invisible);
        if text.is_empty() || text.starts_with('#') {
            return None;
        }
        Some(normalize_with(text, self.keep_fragments))
    }
}

impl<R: BufRead> Iterator for Lines<R> {
    type Item = io::Result<(u64, Result<SeedUrl, Rejection>)>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            let length = match self.read_line() {
                Ok(Some(length)) => length,
                Ok(None) => break,
                Err(error) => {
                    self.done = true;
                    return Some(Err(error));
                }
            };
            self.number += 1;
            if let Some(outcome) = self.classify(length) {
                return Some(Ok((self.number, outcome)));
            }
        }
        self.done = true;
        None
    }
}

impl<R: BufRead> std::iter::FusedIterator for Lines<R> {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufReader, Read};

    type Outcome = (u64, Result<String, Rejection>);

    fn read(input: &[u8]) -> Vec<Outcome> {
        read_from(input)
    }

    fn read_from(reader: impl BufRead) -> Vec<Outcome> {
        let lines = Lines::new(reader).map(|item| item.unwrap());
        lines
            .map(|(number, outcome)| (number, outcome.map(|seed| seed.url)))
            .collect()
    }

    fn ok(number: u64, url: &str) -> Outcome {
        (number, Ok(url.to_owned()))
    }

    #[test]
    fn blank_and_comment_lines_are_skipped_but_counted() {
        let input = b"\n# a comment\n   \n  # indented comment\nexample.com\n\n";
        assert_eq!(read(input), [ok(5, "https://example.com/")]);
    }

    #[test]
    fn surrounding_whitespace_is_trimmed() {
        assert_eq!(
            read(b" \t example.com/a \t \n"),
            [ok(1, "https://example.com/a")]
        );
    }

    #[test]
    fn crlf_line_endings_are_accepted() {
        let urls = read(b"a.example\r\n\r\n# c\r\nb.example\r\n");
        assert_eq!(
            urls,
            [ok(1, "https://a.example/"), ok(4, "https://b.example/")]
        );
    }

    #[test]
    fn a_bom_at_the_start_of_the_input_is_skipped() {
        assert_eq!(
            read(b"\xEF\xBB\xBFexample.com\n"),
            [ok(1, "https://example.com/")]
        );
        assert_eq!(read(b"\xEF\xBB\xBF# seeds\r\n"), []);
    }

    #[test]
    fn invisible_characters_around_any_line_are_dropped() {
        let input = "a.example\n\u{feff}https://b.example/\n\u{200b}https://c.example/\u{200b}\n\
                     \u{2060}\u{a0}http://d.example/\u{feff}\r\n\u{feff}# comment\n\u{200b}\n";
        assert_eq!(
            read(input.as_bytes()),
            [
                ok(1, "https://a.example/"),
                ok(2, "https://b.example/"),
                ok(3, "https://c.example/"),
                ok(4, "http://d.example/"),
            ]
        );
    }

    #[test]
    fn a_final_line_without_a_newline_is_read() {
        let urls = read(b"a.example\nb.example");
        assert_eq!(
            urls,
            [ok(1, "https://a.example/"), ok(2, "https://b.example/")]
        );
    }

    #[test]
    fn rejections_carry_their_line_number() {
        let urls = read(b"ftp://x\n\nexample.com\n");
        assert_eq!(urls[0], (1, Err(Rejection::Scheme("ftp".into()))));
        assert_eq!(urls[1], ok(3, "https://example.com/"));
    }

    #[test]
    fn a_line_of_exactly_the_limit_is_accepted_with_crlf_and_bom() {
        let path = "a".repeat(MAX_LINE - "https://example.com/".len());
        let input = format!("\u{feff}https://example.com/{path}\r\n");
        assert_eq!(
            read(input.as_bytes()),
            [ok(1, &format!("https://example.com/{path}"))]
        );
    }

    #[test]
    fn a_20_kib_line_is_rejected_and_the_next_line_still_read() {
        let input = format!("{}\nexample.com\n", "a".repeat(20 * 1024));
        let urls = read(input.as_bytes());
        assert_eq!(urls[0], (1, Err(Rejection::TooLong { len: 20 * 1024 })));
        assert_eq!(urls[1], ok(2, "https://example.com/"));
    }

    #[test]
    fn a_long_comment_line_is_still_a_comment() {
        let input = format!("# {}\nexample.com\n", "x".repeat(20 * 1024));
        assert_eq!(read(input.as_bytes()), [ok(2, "https://example.com/")]);
    }

    #[test]
    fn a_huge_line_without_a_newline_is_skipped_in_bounded_memory() {
        let huge = 64 * 1024 * 1024;
        let input = io::repeat(b'a').take(huge).chain(&b"\nexample.com"[..]);
        let mut lines = Lines::new(BufReader::new(input));
        let (number, outcome) = lines.next().unwrap().unwrap();
        assert_eq!(
            (number, outcome),
            (1, Err(Rejection::TooLong { len: huge }))
        );
        assert!(lines.line.capacity() <= KEPT);
        assert_eq!(lines.next().unwrap().unwrap().0, 2);
    }

    #[test]
    fn non_utf8_bytes_are_rejected_and_the_next_line_still_read() {
        let urls = read(b"https://example.com/\xFF\xFE\nexample.com\n");
        assert_eq!(
            urls,
            [(1, Err(Rejection::NotUtf8)), ok(2, "https://example.com/")]
        );
    }

    #[test]
    fn random_bytes_never_panic() {
        let mut x = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        // Half raw bytes, half URL-ish characters, so the parser sees near-misses too.
        let alphabet = b"htps:/.?#@[]%:\\-_aZ09 \t\r\n\xC3\xA9\xEF\xBB\xBF";
        let input: Vec<u8> = (0..200_000)
            .map(|i| match next() as usize {
                n if i % 2 == 0 => n as u8,
                n => alphabet[n % alphabet.len()],
            })
            .collect();
        let lines = Lines::new(&input[..]).map(Result::unwrap);
        assert!(lines.map(|(number, _)| number).all(|number| number >= 1));
    }

    /// Yields `data`, then fails: `Interrupted` once (retried), then `Other` (returned).
    struct Failing {
        data: &'static [u8],
        interrupted: bool,
    }

    impl Read for Failing {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if !self.data.is_empty() {
                return self.data.read(buf);
            }
            if !self.interrupted {
                self.interrupted = true;
                return Err(io::ErrorKind::Interrupted.into());
            }
            Err(io::Error::other("disk on fire"))
        }
    }

    #[test]
    fn an_io_error_is_returned_once_and_ends_the_iteration() {
        let reader = Failing {
            data: b"a.example\nb.exa",
            interrupted: false,
        };
        let mut lines = Lines::new(BufReader::new(reader));
        assert_eq!(lines.next().unwrap().unwrap().0, 1);
        assert_eq!(
            lines.next().unwrap().unwrap_err().to_string(),
            "disk on fire"
        );
        assert_eq!(lines.number(), 1, "the lines read before the error");
        assert!(lines.next().is_none());
    }
}
