//! Links of an HTML page, by a small tokenizer of start tags.
//!
//! What a browser would request or follow: `a`, `area` and `link` `href` (not `link`s that only
//! warm a connection: `preconnect`, `dns-prefetch`), the `src` of `img`, `script`, `iframe`,
//! `frame`, `source`, `embed`, `track`, `audio`, `video` and `input type=image`, `video`
//! `poster`, `object` `data`, every candidate of `srcset` (and `link` `imagesrcset`), and the
//! first `<base href>`, which the caller resolves the others against. Comments are skipped, and
//! so is the text of `script`, `style`, `textarea`, `title` and `xmp` (a `<a href>` inside a
//! script is a string, not a link). Attribute values have their character references decoded
//! and surrounding whitespace trimmed; what they say is not judged here (see
//! [`crate::normalize::resolve`]). Each link keeps where its URL starts in the page, as written
//! (a reference counts from its `&`): its line and column, for `FILE:LINE:COL`.

use crate::entities::{decode, raw_offset};

/// One link as written on the page, and where its URL starts: the line and the column (from
/// 1; the column in characters, not bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    pub url: String,
    pub line: u32,
    pub col: u32,
}

/// What a page links to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HtmlLinks {
    /// The first `<base href>`, as written: every relative link is relative to it.
    pub base: Option<String>,
    /// In the page's order, repeats included.
    pub links: Vec<Found>,
    /// What a fragment of the page can name: every element's `id` and every `<a name>`, as
    /// written (case kept: ids are case-sensitive), repeats included.
    pub anchors: Vec<String>,
}

/// Elements whose content is text up to their end tag, never markup.
const RAW_TEXT: &[&str] = &["script", "style", "textarea", "title", "xmp"];

/// The links of `html`.
pub fn extract(html: &str) -> HtmlLinks {
    let mut out = HtmlLinks::default();
    let bytes = html.as_bytes();
    let mut cursor = Cursor::default();
    let mut at = 0;
    while let Some(offset) = memchr(b'<', &bytes[at..]) {
        at += offset;
        let rest = &html[at..];
        if rest.starts_with("<!--") {
            at = find_from(html, at + 4, "-->").map_or(html.len(), |end| end + 3);
        } else if rest.starts_with("<!") || rest.starts_with("<?") || rest.starts_with("</") {
            at = find_byte(bytes, at + 2, b'>').map_or(html.len(), |end| end + 1);
        } else if bytes.get(at + 1).is_some_and(u8::is_ascii_alphabetic) {
            cursor.advance(html, at);
            let tag = Tag::parse(html, at + 1);
            tag.collect(cursor, &mut out);
            at = tag.end;
            if RAW_TEXT.contains(&tag.name.as_str()) {
                at = end_of_raw_text(html, at, &tag.name);
            }
        } else {
            at += 1;
        }
    }
    out
}

/// One start tag of the page `source`: its lower-case name, its attributes, and where it ends
/// (after its `>`).
struct Tag<'h> {
    source: &'h str,
    name: String,
    attributes: Vec<Attribute>,
    end: usize,
}

/// An attribute: its name lower-cased, its value decoded, and where the value is written.
struct Attribute {
    name: String,
    value: String,
    raw: std::ops::Range<usize>,
}

/// An attribute's value (or a part of it: a srcset candidate), trimmed, and where in the page
/// it starts.
#[derive(Clone, Copy)]
struct Value<'a> {
    text: &'a str,
    at: usize,
}

impl<'h> Tag<'h> {
    fn parse(html: &'h str, start: usize) -> Tag<'h> {
        let bytes = html.as_bytes();
        let name_end = scan(bytes, start, |b| {
            b.is_ascii_whitespace() || b == b'/' || b == b'>'
        });
        let name = html[start..name_end].to_ascii_lowercase();
        let mut attributes = Vec::new();
        let mut at = name_end;
        loop {
            at = scan(bytes, at, |b| !(b.is_ascii_whitespace() || b == b'/'));
            match bytes.get(at) {
                None => break,
                Some(b'>') => {
                    at += 1;
                    break;
                }
                Some(_) => {}
            }
            let name_end = scan(bytes, at + 1, |b| {
                b.is_ascii_whitespace() || matches!(b, b'/' | b'>' | b'=')
            });
            let name = html[at..name_end].to_ascii_lowercase();
            at = scan(bytes, name_end, |b| !b.is_ascii_whitespace());
            let mut raw = at..at;
            if bytes.get(at) == Some(&b'=') {
                let open = scan(bytes, at + 1, |b| !b.is_ascii_whitespace());
                raw = match bytes.get(open) {
                    Some(&quote @ (b'"' | b'\'')) => {
                        let end = find_byte(bytes, open + 1, quote).unwrap_or(html.len());
                        at = (end + 1).min(html.len());
                        open + 1..end
                    }
                    _ => {
                        at = scan(bytes, open, |b| b.is_ascii_whitespace() || b == b'>');
                        open..at
                    }
                };
            }
            let value = decode(&html[raw.clone()]).into_owned();
            attributes.push(Attribute { name, value, raw });
        }
        Tag {
            source: html,
            name,
            attributes,
            end: at,
        }
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.value(name).map(|v| v.text)
    }

    fn attribute(&self, name: &str) -> Option<&Attribute> {
        self.attributes.iter().find(|a| a.name == name)
    }

    /// The value of `name`, trimmed of ASCII whitespace, and where it starts.
    fn value(&self, name: &str) -> Option<Value<'_>> {
        let attribute = self.attribute(name)?;
        let text = attribute
            .value
            .trim_end_matches(|c: char| c.is_ascii_whitespace());
        let trimmed = text.trim_start_matches(|c: char| c.is_ascii_whitespace());
        let lead = text.len() - trimmed.len();
        Some(Value {
            text: trimmed,
            at: self.written_at(attribute, lead),
        })
    }

    /// Where byte `decoded` of `attribute`'s decoded value was written in the page.
    fn written_at(&self, attribute: &Attribute, decoded: usize) -> usize {
        let raw = &self.source[attribute.raw.clone()];
        let offset = match attribute.value.len() == raw.len() {
            true => decoded,
            false => raw_offset(raw, decoded),
        };
        attribute.raw.start + offset
    }

    /// The candidates of the srcset `name`, each with where it starts.
    fn srcset(&self, name: &str) -> Vec<Value<'_>> {
        let Some(attribute) = self.attribute(name) else {
            return Vec::new();
        };
        let value = attribute.value.as_str();
        srcset(value)
            .map(|url| Value {
                text: url,
                at: self.written_at(attribute, url.as_ptr() as usize - value.as_ptr() as usize),
            })
            .collect()
    }

    /// Adds this tag's links and anchors to `out`; `start` is where the tag starts.
    fn collect(&self, start: Cursor, out: &mut HtmlLinks) {
        let anchor_names = self.get("id").into_iter().chain(match self.name.as_str() {
            "a" => self.get("name"),
            _ => None,
        });
        out.anchors
            .extend(anchor_names.filter(|a| !a.is_empty()).map(str::to_owned));
        let source = self.source;
        let mut push = |value: Value<'_>| {
            if !value.text.is_empty() {
                let mut at = start;
                at.advance(source, value.at);
                out.links.push(Found {
                    url: value.text.to_owned(),
                    line: at.line,
                    col: at.col,
                })
            }
        };
        let name = self.name.as_str();
        match name {
            "base" => {
                if out.base.is_none() {
                    out.base = self.get("href").map(str::to_owned);
                }
                return;
            }
            "a" | "area" => self.value("href").into_iter().for_each(&mut push),
            "link" => {
                let rel = self.get("rel").unwrap_or_default().to_ascii_lowercase();
                let warm_only = rel
                    .split_ascii_whitespace()
                    .all(|r| matches!(r, "preconnect" | "dns-prefetch"));
                if rel.is_empty() || !warm_only {
                    self.value("href").into_iter().for_each(&mut push);
                }
                self.srcset("imagesrcset").into_iter().for_each(&mut push);
            }
            "img" | "script" | "iframe" | "frame" | "source" | "embed" | "track" | "audio"
            | "video" => self.value("src").into_iter().for_each(&mut push),
            "input"
                if self
                    .get("type")
                    .is_some_and(|t| t.eq_ignore_ascii_case("image")) =>
            {
                self.value("src").into_iter().for_each(&mut push)
            }
            "object" => self.value("data").into_iter().for_each(&mut push),
            _ => {}
        }
        if name == "video" {
            self.value("poster").into_iter().for_each(&mut push);
        }
        if matches!(name, "img" | "source") {
            self.srcset("srcset").into_iter().for_each(&mut push);
        }
    }
}

/// The URLs of a `srcset`: comma-separated candidates, each a URL and an optional descriptor
/// (`a.png 1x, b.png 2x`). A URL may itself contain commas (`data:` aside, rare); it ends at
/// whitespace, as the HTML spec parses it, and a comma that ends it is the separator.
pub fn srcset(set: &str) -> impl Iterator<Item = &str> {
    let mut rest = set;
    std::iter::from_fn(move || loop {
        rest = rest.trim_start_matches(|c: char| c.is_ascii_whitespace() || c == ',');
        if rest.is_empty() {
            return None;
        }
        let end = rest
            .find(|c: char| c.is_ascii_whitespace())
            .unwrap_or(rest.len());
        let url = rest[..end].trim_end_matches(',');
        let had_comma = url.len() < end;
        rest = &rest[end..];
        if !had_comma {
            // Skip the descriptor, up to the next comma.
            rest = rest.find(',').map_or("", |comma| &rest[comma..]);
        }
        if !url.is_empty() {
            return Some(url);
        }
    })
}

/// Where the raw text of `name` (a [`RAW_TEXT`] element) that starts at `at` ends: after its
/// end tag, or at the end of the page.
fn end_of_raw_text(html: &str, at: usize, name: &str) -> usize {
    let bytes = html.as_bytes();
    let mut from = at;
    while let Some(lt) = find_from(html, from, "</") {
        let after = lt + 2;
        let candidate = bytes.get(after..after + name.len());
        let ends = candidate.is_some_and(|c| c.eq_ignore_ascii_case(name.as_bytes()))
            && bytes
                .get(after + name.len())
                .is_none_or(|&b| b.is_ascii_whitespace() || b == b'>' || b == b'/');
        if ends {
            return find_byte(bytes, after, b'>').map_or(html.len(), |end| end + 1);
        }
        from = after;
    }
    html.len()
}

/// A place in a page: its byte offset, line and column (from 1; the column in characters).
/// Tags come in order, so the cursor moves forward through the page once; a link inside a tag
/// is found from a copy at the tag's start.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cursor {
    at: usize,
    pub line: u32,
    pub col: u32,
}

impl Default for Cursor {
    fn default() -> Self {
        Cursor {
            at: 0,
            line: 1,
            col: 1,
        }
    }
}

impl Cursor {
    /// Moves forward to byte `to` of `text` (a char boundary; nothing if it is behind).
    pub(crate) fn advance(&mut self, text: &str, to: usize) {
        for &b in &text.as_bytes()[self.at.min(to)..to] {
            match b {
                b'\n' => {
                    self.line += 1;
                    self.col = 1;
                }
                // A UTF-8 continuation byte is not a character of its own.
                b if b & 0xC0 == 0x80 => {}
                _ => self.col += 1,
            }
        }
        self.at = self.at.max(to);
    }
}

/// The first index from `at` whose byte stops `scan`ning (`stop` says so), or the end.
fn scan(bytes: &[u8], at: usize, stop: impl Fn(u8) -> bool) -> usize {
    bytes[at.min(bytes.len())..]
        .iter()
        .position(|&b| stop(b))
        .map_or(bytes.len(), |i| at + i)
}

fn find_byte(bytes: &[u8], at: usize, byte: u8) -> Option<usize> {
    memchr(byte, &bytes[at.min(bytes.len())..]).map(|i| at + i)
}

fn find_from(text: &str, at: usize, needle: &str) -> Option<usize> {
    text.get(at..)?.find(needle).map(|i| at + i)
}

fn memchr(byte: u8, bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == byte)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(html: &str) -> Vec<String> {
        extract(html).links.into_iter().map(|f| f.url).collect()
    }

    #[test]
    fn links_of_every_kind_are_found_in_order() {
        let page = r#"<!DOCTYPE html><html><head>
            <link rel="stylesheet" href="s.css"><link rel=preconnect href="//fonts.example">
            <script src="app.js"></script></head><body>
            <a href="a.html">A</a> <A HREF='b.html'>B</A> <a href=c.html>C</a>
            <img src="i.png" srcset="i-1x.png 1x, i-2x.png 2x">
            <iframe src="/frame"></iframe><video poster="p.jpg" src="v.mp4"></video>
            <picture><source srcset="w.webp 100w,x.webp"></picture>
            <area href="map.html"><object data="o.svg"></object>
            <input type="image" src="go.png"><input type="text" src="no.png">
            </body></html>"#;
        assert_eq!(
            urls(page),
            [
                "s.css", "app.js", "a.html", "b.html", "c.html", "i.png", "i-1x.png", "i-2x.png",
                "/frame", "v.mp4", "p.jpg", "w.webp", "x.webp", "map.html", "o.svg", "go.png"
            ]
        );
    }

    #[test]
    fn comments_scripts_and_styles_hide_what_looks_like_links() {
        let page = r#"<!-- <a href="commented.html"> --><script>
            document.write('<a href="scripted.html">');</SCRIPT >
            <style>a[href="styled.html"]{}</style><title><a href="t.html"></title>
            <a href="real.html">"#;
        assert_eq!(urls(page), ["real.html"]);
    }

    #[test]
    fn the_first_base_counts_and_references_are_decoded() {
        let links = extract(
            "<base href=\"/docs/\"><base href=\"/other/\">\n\n<a href=\" x?a=1&amp;b=2 \">",
        );
        assert_eq!(links.base.as_deref(), Some("/docs/"));
        assert_eq!(
            links.links,
            [Found {
                url: "x?a=1&b=2".into(),
                line: 3,
                col: 11
            }]
        );
    }

    #[test]
    fn broken_markup_ends_without_panicking() {
        for page in [
            "<a href=\"x",
            "<a href",
            "<a",
            "<",
            "<!--",
            "<script>",
            "<a href='é'>",
        ] {
            let _ = extract(page);
        }
        assert_eq!(urls("<a href='é'>"), ["é"]);
        assert_eq!(urls("a < b <a href=x>"), ["x"]);
    }

    #[test]
    fn ids_of_any_element_and_names_of_links_are_anchors() {
        let page = r#"<h2 id="Intro">x</h2><a name="old-style"></a><div ID='x y'>
            <input name="not-an-anchor"><!-- <p id="commented"> --><script>'<p id="s">'</script>
            <section id="">"#;
        assert_eq!(extract(page).anchors, ["Intro", "old-style", "x y"]);
    }

    fn places(html: &str) -> Vec<(String, u32, u32)> {
        let links = extract(html).links.into_iter();
        links.map(|f| (f.url, f.line, f.col)).collect()
    }

    #[test]
    fn each_link_is_where_its_url_starts_in_characters() {
        let page = "<p>é <a href=\"a.html\">ü</a> <a href='b.html'> <img src=c.png\n\
                    srcset=\" d.png 1x,\n  e.png 2x\"></p>\n\
                    \t<video\n   poster=\"p.jpg\" src=\"v.mp4\">";
        assert_eq!(
            places(page),
            [
                ("a.html".into(), 1, 15),
                ("b.html".into(), 1, 38),
                ("c.png".into(), 1, 56),
                ("d.png".into(), 2, 10),
                ("e.png".into(), 3, 3),
                ("v.mp4".into(), 5, 24),
                ("p.jpg".into(), 5, 12),
            ]
        );
    }

    #[test]
    fn a_url_written_with_references_starts_at_its_first_one() {
        let page = "<a href=\"&#104;ttps://a.example/?x=1&amp;y=2\">\
                    <img srcset=\"&#x61;.png 1x, b&amp;c.png 2x\"><a href=\"&#32; z.html\">";
        assert_eq!(
            places(page),
            [
                ("https://a.example/?x=1&y=2".into(), 1, 10),
                ("a.png".into(), 1, 60),
                ("b&c.png".into(), 1, 75),
                ("z.html".into(), 1, 106),
            ]
        );
    }

    #[test]
    fn srcset_candidates_are_split_on_commas_after_urls() {
        let got: Vec<&str> = srcset(" a.png 1x ,b.png,  c.png 480w ").collect();
        assert_eq!(got, ["a.png", "b.png", "c.png"]);
    }
}
