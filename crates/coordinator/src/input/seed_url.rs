//! What a line of seed input becomes: a [`SeedUrl`], or the [`Rejection`] that says why it is
//! not one; and the longest line taken, [`MAX_LINE`].

/// The longest line accepted, in bytes, not counting the line ending (and a BOM on line 1).
///
/// Far above any real URL (browsers and servers stop around 2–8 KiB), low enough that a line is
/// always cheap to hold, and the bound on a normalized URL the database has to store.
pub const MAX_LINE: usize = 8192;

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

#[cfg(test)]
mod tests {
    use super::*;

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
