//! Reading what a check fetched, for `--follow`: the body of an alive HTML page in scope (its
//! links are the crawl's next pages), or a robots.txt. The check is the usual one (limits,
//! retries, redirects, verdict), made with GETs, and the final answer's body comes back with
//! its finding, read up to a cap; nothing is decompressed (none is asked for).
//!
//! How far to read is a [`Reading`], a field of the check's [`Ask`](crate::ask::Ask) that the
//! asker (`asker.rs`) reads when it takes a body; a check that reads nothing is the check it
//! always was. The checks that read are [`Checker::check_page`](crate::Checker::check_page) and
//! [`Checker::fetch_text`](crate::Checker::fetch_text).

use reqwest::header::{HeaderMap, CONTENT_ENCODING, CONTENT_TYPE};

use crate::reply::{Attempt, End};

/// A page's body is read up to this: the largest pages of documentation sites (a full index)
/// are 1–3 MiB; past it, the links of the first 8 MiB are followed.
pub const PAGE_CAP: usize = 8 * 1024 * 1024;
/// A robots.txt is read up to this (RFC 9309 asks crawlers to read at least 500 KiB).
pub const ROBOTS_CAP: usize = 512 * 1024;

/// What a check reads of the final answer's body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Reading {
    /// Bytes read at most.
    pub cap: usize,
    /// Only an HTML body (`text/html`, XHTML, or unlabelled); otherwise any text.
    pub html_only: bool,
}

impl Reading {
    /// A page of a crawl: its HTML, up to [`PAGE_CAP`].
    pub(crate) const PAGE: Reading = Reading {
        cap: PAGE_CAP,
        html_only: true,
    };
    /// A robots.txt: any text, up to [`ROBOTS_CAP`].
    pub(crate) const TEXT: Reading = Reading {
        cap: ROBOTS_CAP,
        html_only: false,
    };
}

/// Whether a 2xx response is worth keeping for `reading`: not compressed, and HTML (or, for
/// a text reading, any text), by its `Content-Type` (none counts as HTML, as browsers sniff).
pub(crate) fn wanted(reading: Reading, headers: &HeaderMap) -> bool {
    let encoded = headers
        .get(CONTENT_ENCODING)
        .is_some_and(|v| !v.as_bytes().eq_ignore_ascii_case(b"identity"));
    let kind = headers
        .get(CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).to_ascii_lowercase());
    let fits = kind.as_deref().is_none_or(|kind| {
        let html = kind.starts_with("text/html") || kind.starts_with("application/xhtml");
        html || (!reading.html_only && kind.starts_with("text/"))
    });
    fits && !encoded
}

/// The body the final answer of `attempt` kept, if any.
pub(crate) fn body_of(attempt: &Attempt) -> Option<Vec<u8>> {
    match &attempt.end {
        End::Answered(reply) => reply.body.clone(),
        End::Failed { .. } => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(kind: Option<&str>, encoding: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        if let Some(kind) = kind {
            h.insert(CONTENT_TYPE, HeaderValue::from_str(kind).unwrap());
        }
        if let Some(encoding) = encoding {
            h.insert(CONTENT_ENCODING, HeaderValue::from_str(encoding).unwrap());
        }
        h
    }

    #[test]
    fn only_html_is_read_as_a_page_and_any_text_as_a_robots_file() {
        let page = Reading {
            cap: 1,
            html_only: true,
        };
        let text = Reading {
            cap: 1,
            html_only: false,
        };
        assert!(wanted(
            page,
            &headers(Some("text/html; charset=utf-8"), None)
        ));
        assert!(wanted(page, &headers(Some("application/xhtml+xml"), None)));
        assert!(wanted(page, &headers(None, None)));
        assert!(!wanted(page, &headers(Some("text/plain"), None)));
        assert!(!wanted(page, &headers(Some("image/png"), None)));
        assert!(!wanted(page, &headers(Some("text/html"), Some("gzip"))));
        assert!(wanted(text, &headers(Some("text/plain"), None)));
        assert!(!wanted(
            text,
            &headers(Some("application/octet-stream"), None)
        ));
    }
}
