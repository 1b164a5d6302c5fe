//! Links of a Markdown file, with their line and column: inline links and images
//! (`[t](url "title")`, `[t](<url>)`), reference definitions (`[id]: url`), autolinks
//! (`<https://…>`), bare `http(s)://` URLs, and the links of inline HTML (`<a href>`,
//! `<img src>`: README badges). Code is not prose: fenced blocks and `code spans` are
//! skipped, as lychee does by default.

use std::sync::LazyLock;

use regex::Regex;

use crate::html::{self, Cursor, Found};

static INLINE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\]\(\s*(<[^>]*>|[^\s)]*(?:\([^\s)]*\)[^\s)]*)*)").unwrap());
static DEFINITION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)").unwrap());
static BARE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"(?i)\bhttps?://[^\s<>"'`]+"#).unwrap());

/// Fenced code blocks (```` ``` ```` or `~~~`, indented three spaces at most, closed by a fence
/// of the same character at least as long), followed line by line.
#[derive(Default)]
pub(crate) struct Fences {
    open: Option<String>,
}

impl Fences {
    /// Whether `line` is code: a fence itself, or a line inside a fenced block.
    pub(crate) fn code(&mut self, line: &str) -> bool {
        let trimmed = line.trim_start_matches(' ');
        let marker: String = trimmed
            .chars()
            .take_while(|&c| c == '`' || c == '~')
            .collect();
        if line.len() - trimmed.len() <= 3 && marker.len() >= 3 {
            match &self.open {
                None => self.open = Some(marker),
                Some(open) if marker.starts_with(open.as_str()) => self.open = None,
                Some(_) => {}
            }
            return true;
        }
        self.open.is_some()
    }
}

/// The links of `text`, line by line, each at the line and column (in characters) where its
/// URL starts. On a line, in the order they are written; a URL found by two rules at one place
/// (an inline link's URL is a bare URL too) is listed once, and a bare URL inside a link's
/// text (`[https://a.example](https://a.example)`) or inside another link is not a link.
pub fn extract(text: &str) -> Vec<Found> {
    let mut out = Vec::new();
    let mut fences = Fences::default();
    for (i, line) in text.lines().enumerate() {
        if fences.code(line) {
            continue;
        }
        let line = without_code_spans(line);
        let mut found = links_of_line(&line);
        found.sort_by_key(|(at, _)| *at);
        let mut cursor = Cursor::default();
        for (at, url) in found {
            cursor.advance(&line, at);
            out.push(Found {
                url,
                line: i as u32 + 1,
                col: cursor.col,
            });
        }
    }
    out
}

/// The links of one line (code spans blanked), each with the byte where its URL starts.
fn links_of_line(line: &str) -> Vec<(usize, String)> {
    let mut links = Links::default();
    for c in INLINE.captures_iter(line) {
        let destination = c.get(1).expect("a group");
        links.add(destination.as_str(), destination.start());
        links
            .texts
            .push(link_text(line, c.get(0).expect("a match").start()));
    }
    if let Some(destination) = DEFINITION.captures(line).and_then(|c| c.get(1)) {
        links.add(destination.as_str(), destination.start());
    }
    if line.contains('<') {
        for found in html::extract(line).links {
            let at = line
                .char_indices()
                .nth(found.col as usize - 1)
                .map_or(line.len(), |(at, _)| at);
            links.add(&found.url, at);
        }
    }
    for m in BARE.find_iter(line) {
        let inside = |&(start, end): &(usize, usize)| start < m.start() && m.start() < end;
        if !links.texts.iter().flatten().any(inside) {
            links.add(trim_bare(m.as_str()), m.start());
        }
    }
    links.found
}

/// The links of a line so far, and the places they cover.
#[derive(Default)]
struct Links {
    found: Vec<(usize, String)>,
    /// Each link's URL, from its first byte to past its last (none found inside counts).
    spans: Vec<(usize, usize)>,
    /// Each inline link's text, between its brackets.
    texts: Vec<Option<(usize, usize)>>,
}

impl Links {
    /// Adds `written` (a destination as written, `<…>` and spaces trimmed) found at byte `at`,
    /// unless it is empty or inside a link found before.
    fn add(&mut self, written: &str, at: usize) {
        let url = written.trim_start_matches('<').trim_start();
        let start = at + written.len() - url.len();
        let url = url.trim_end_matches('>').trim_end();
        let taken = self
            .spans
            .iter()
            .any(|&(s, e)| s <= start && start < e.max(s + 1));
        if url.is_empty() || taken {
            return;
        }
        self.spans.push((start, start + url.len()));
        self.found.push((start, url.to_owned()));
    }
}

/// The text of the inline link whose `](` is at byte `close`: from its matching `[`, if any.
fn link_text(line: &str, close: usize) -> Option<(usize, usize)> {
    let mut depth = 0;
    for (at, b) in line.as_bytes()[..close].iter().enumerate().rev() {
        match b {
            b']' => depth += 1,
            b'[' if depth == 0 => return Some((at, close)),
            b'[' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// `line` with every character of its code spans (their backquotes too) made a space, so
/// nothing in code is a link and every other character keeps its column.
fn without_code_spans(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(open) = rest.find('`') {
        let ticks = rest[open..].bytes().take_while(|&b| b == b'`').count();
        let delimiter = &rest[open..open + ticks];
        let after = &rest[open + ticks..];
        match after.find(delimiter) {
            Some(close) => {
                out.push_str(&rest[..open]);
                let span = &rest[open..open + 2 * ticks + close];
                out.extend(span.chars().map(|_| ' '));
                rest = &after[close + ticks..];
            }
            None => {
                out.push_str(&rest[..open + ticks]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// A bare URL without the punctuation prose puts after it: `(see https://a.example/x).`
fn trim_bare(url: &str) -> &str {
    let mut url = url;
    loop {
        let Some(last) = url.chars().last() else {
            return url;
        };
        let unbalanced = (last == ')' && url.matches('(').count() < url.matches(')').count())
            || (last == ']' && url.matches('[').count() < url.matches(']').count());
        if matches!(last, '.' | ',' | ';' | ':' | '!' | '?' | '*' | '_') || unbalanced {
            url = &url[..url.len() - last.len_utf8()];
        } else {
            return url;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn links(text: &str) -> Vec<(u32, u32, String)> {
        let found = extract(text).into_iter();
        found.map(|f| (f.line, f.col, f.url)).collect()
    }

    #[test]
    fn every_kind_of_markdown_link_is_found_where_its_url_starts() {
        let text = "# Title\n\
            See [the guide](docs/guide.md \"Guide\") and ![logo](img/logo.png).\n\
            [ref]: https://a.example/ref\n\
            Autolink <https://a.example/auto> and bare https://a.example/bare.\n\
            (in parens https://a.example/p_(x)) [x](<with space.md>)\n\
            <a href=\"https://a.example/html\"><img src=\"badge.svg\"></a>\n";
        assert_eq!(
            links(text),
            [
                (2, 17, "docs/guide.md".into()),
                (2, 52, "img/logo.png".into()),
                (3, 8, "https://a.example/ref".into()),
                (4, 11, "https://a.example/auto".into()),
                (4, 44, "https://a.example/bare".into()),
                (5, 12, "https://a.example/p_(x)".into()),
                (5, 42, "with space.md".into()),
                (6, 10, "https://a.example/html".into()),
                (6, 44, "badge.svg".into()),
            ]
        );
    }

    #[test]
    fn each_place_is_a_link_of_its_own_and_a_url_in_a_link_is_not_another() {
        let text = "Ünïcode `code ä` [a](https://a.example/x) and [b](https://a.example/x) again\n\
            [https://a.example/text](https://a.example/target) \
            [![badge](https://a.example/b.svg)](https://a.example/y)\n  \
            [def]: <https://a.example/def> \"title\"\n\
            x <a href=\"https://a.example/?p=1&amp;q=2\">y</a> <https://a.example/auto>\n\
            [go](/redirect?to=https://a.example/inner)\n";
        assert_eq!(
            links(text),
            [
                (1, 22, "https://a.example/x".into()),
                (1, 51, "https://a.example/x".into()),
                (2, 26, "https://a.example/target".into()),
                (2, 62, "https://a.example/b.svg".into()),
                (2, 88, "https://a.example/y".into()),
                (3, 11, "https://a.example/def".into()),
                (4, 12, "https://a.example/?p=1&q=2".into()),
                (4, 51, "https://a.example/auto".into()),
                (5, 6, "/redirect?to=https://a.example/inner".into()),
            ]
        );
    }

    #[test]
    fn code_is_not_prose() {
        let text =
            "```sh\ncurl https://a.example/in-fence\n```\nrun `curl https://a.example/span` \
                    then https://a.example/after\n~~~\n[x](y)\n~~~\n";
        assert_eq!(links(text), [(4, 40, "https://a.example/after".into())]);
    }
}
