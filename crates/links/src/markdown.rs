//! Links of a Markdown file, with their line: inline links and images (`[t](url "title")`,
//! `[t](<url>)`), reference definitions (`[id]: url`), autolinks (`<https://…>`), bare
//! `http(s)://` URLs, and the links of inline HTML (`<a href>`, `<img src>`: README badges).
//! Code is not prose: fenced blocks and `code spans` are skipped, as lychee does by default.

use std::sync::LazyLock;

use regex::Regex;

use crate::html::{self, Found};

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

/// The links of `text`, line by line (on a line: Markdown links, then HTML, then bare URLs); a URL repeated on one line is listed once for that line.
pub fn extract(text: &str) -> Vec<Found> {
    let mut out = Vec::new();
    let mut fences = Fences::default();
    for (i, line) in text.lines().enumerate() {
        let number = i as u32 + 1;
        if fences.code(line) {
            continue;
        }
        let line = without_code_spans(line);
        let mut seen: Vec<String> = Vec::new();
        let mut push = |url: &str| {
            let url = url.trim_start_matches('<').trim_end_matches('>').trim();
            if !url.is_empty() && !seen.iter().any(|s| s == url) {
                seen.push(url.to_owned());
                out.push(Found {
                    url: url.to_owned(),
                    line: number,
                });
            }
        };
        for c in INLINE.captures_iter(&line) {
            push(&c[1]);
        }
        if let Some(c) = DEFINITION.captures(&line) {
            push(&c[1]);
        }
        if line.contains('<') {
            for found in html::extract(&line).links {
                push(&found.url);
            }
        }
        for m in BARE.find_iter(&line) {
            push(trim_bare(m.as_str()));
        }
    }
    out
}

/// `line` with the text of its code spans blanked out.
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
                out.push(' ');
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

    fn links(text: &str) -> Vec<(u32, String)> {
        extract(text).into_iter().map(|f| (f.line, f.url)).collect()
    }

    #[test]
    fn every_kind_of_markdown_link_is_found_with_its_line() {
        let text = "# Title\n\
            See [the guide](docs/guide.md \"Guide\") and ![logo](img/logo.png).\n\
            [ref]: https://a.example/ref\n\
            Autolink <https://a.example/auto> and bare https://a.example/bare.\n\
            (in parens https://a.example/p_(x)) [x](<with space.md>)\n\
            <a href=\"https://a.example/html\"><img src=\"badge.svg\"></a>\n";
        assert_eq!(
            links(text),
            [
                (2, "docs/guide.md".into()),
                (2, "img/logo.png".into()),
                (3, "https://a.example/ref".into()),
                (4, "https://a.example/auto".into()),
                (4, "https://a.example/bare".into()),
                (5, "with space.md".into()),
                (5, "https://a.example/p_(x)".into()),
                (6, "https://a.example/html".into()),
                (6, "badge.svg".into()),
            ]
        );
    }

    #[test]
    fn code_is_not_prose() {
        let text =
            "```sh\ncurl https://a.example/in-fence\n```\nrun `curl https://a.example/span` \
                    then https://a.example/after\n~~~\n[x](y)\n~~~\n";
        assert_eq!(links(text), [(4, "https://a.example/after".into())]);
    }
}
