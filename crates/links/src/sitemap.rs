//! The `<loc>`s of a sitemap (`<urlset>`) or a sitemap index (`<sitemapindex>`), read as the
//! body arrives: a scanner fed chunk by chunk keeps only what a `<loc>` cut in two needs, so a
//! 50 MB sitemap costs its URLs, not its size. (Decompressing `.xml.gz` is the caller's.)

use crate::entities::decode;

/// What the document is, once its root element has been seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SitemapKind {
    /// Not known yet (or neither: then its `<loc>`s are taken as pages).
    Unknown,
    /// `<urlset>`: the `<loc>`s are pages.
    Urlset,
    /// `<sitemapindex>`: the `<loc>`s are more sitemaps.
    Index,
}

/// A sitemap read chunk by chunk.
#[derive(Debug)]
pub struct SitemapScanner {
    text: String,
    /// The bytes of a character cut at the end of the last chunk.
    partial: Vec<u8>,
    kind: SitemapKind,
}

/// Longest `<loc>` kept while waiting for its end: past this it is not a URL we would store.
const MAX_LOC: usize = 16 * 1024;

impl Default for SitemapScanner {
    fn default() -> Self {
        SitemapScanner {
            text: String::new(),
            partial: Vec::new(),
            kind: SitemapKind::Unknown,
        }
    }
}

impl SitemapScanner {
    pub fn kind(&self) -> SitemapKind {
        self.kind
    }

    /// Takes the next chunk of the document; returns the `<loc>`s it completed.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<String> {
        self.partial.extend_from_slice(chunk);
        let valid = match std::str::from_utf8(&self.partial) {
            Ok(text) => text.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => self.partial.len(),
        };
        let bytes: Vec<u8> = self.partial.drain(..valid).collect();
        self.text.push_str(&String::from_utf8_lossy(&bytes));
        self.scan()
    }

    fn scan(&mut self) -> Vec<String> {
        if self.kind == SitemapKind::Unknown {
            if self.text.contains("<sitemapindex") {
                self.kind = SitemapKind::Index;
            } else if self.text.contains("<urlset") {
                self.kind = SitemapKind::Urlset;
            }
        }
        let mut locs = Vec::new();
        let mut consumed = 0;
        loop {
            let Some(open) = self.text[consumed..].find("<loc>") else {
                // Keep a tail that may be the start of a `<loc>` or of the root element.
                consumed = floor_char(&self.text, self.text.len().saturating_sub(16)).max(consumed);
                break;
            };
            let start = consumed + open + "<loc>".len();
            let Some(close) = self.text[start..].find("</loc>") else {
                consumed += open;
                if self.text.len() - consumed > MAX_LOC {
                    consumed = start;
                }
                break;
            };
            let loc = self.text[start..start + close].trim();
            let loc = loc
                .strip_prefix("<![CDATA[")
                .and_then(|l| l.strip_suffix("]]>"))
                .unwrap_or(loc)
                .trim();
            if !loc.is_empty() {
                locs.push(decode(loc).into_owned());
            }
            consumed = start + close + "</loc>".len();
        }
        self.text.drain(..consumed);
        locs
    }
}

fn floor_char(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan_in_pieces(doc: &str, size: usize) -> (Vec<String>, SitemapKind) {
        let mut scanner = SitemapScanner::default();
        let locs = doc
            .as_bytes()
            .chunks(size)
            .flat_map(|c| scanner.feed(c))
            .collect();
        (locs, scanner.kind())
    }

    #[test]
    fn locs_are_found_however_the_body_is_cut() {
        let doc = "<?xml version=\"1.0\"?>\n<urlset xmlns=\"x\"><url><loc> http://a.example/é?a=1&amp;b=2 </loc>\
                   <lastmod>2026</lastmod></url><url><loc><![CDATA[http://a.example/c]]></loc></url></urlset>";
        for size in [1, 2, 3, 7, 64, 4096] {
            let (locs, kind) = scan_in_pieces(doc, size);
            assert_eq!(
                locs,
                ["http://a.example/é?a=1&b=2", "http://a.example/c"],
                "{size}"
            );
            assert_eq!(kind, SitemapKind::Urlset);
        }
    }

    #[test]
    fn an_index_says_so() {
        let doc =
            "<sitemapindex><sitemap><loc>http://a.example/s1.xml.gz</loc></sitemap></sitemapindex>";
        let (locs, kind) = scan_in_pieces(doc, 5);
        assert_eq!(locs, ["http://a.example/s1.xml.gz"]);
        assert_eq!(kind, SitemapKind::Index);
    }
}
