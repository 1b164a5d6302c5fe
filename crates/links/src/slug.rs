//! The anchors of a Markdown file, as GitHub renders it: each heading's slug (github-slugger's
//! rules: the heading's text lower-cased, every character dropped that is not a letter, a mark,
//! a digit, `_`, `-` or a space, each space turned into `-`; a slug already taken gets `-1`,
//! `-2`…, in the file's order), an explicit `{#id}` after a heading, and the ids and
//! `<a name>`s of the file's inline HTML. Headings in fenced code are not headings.
//!
//! A heading's text is what GitHub shows: a link's text without its target, an image's alt
//! text, code spans' content, without emphasis markers (`*`, and `_` around words) and HTML
//! tags.

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;

use crate::html;
use crate::markdown::Fences;

static ATX: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$").unwrap());
static SETEXT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^ {0,3}(=+|-+)[ \t]*$").unwrap());
static EXPLICIT_ID: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[ \t]*\{#([^\s}]+)\}[ \t]*$").unwrap());
static LINK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"!?\[([^\]]*)\]\([^)]*\)|!?\[([^\]]*)\]\[[^\]]*\]").unwrap());
static TAG: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"</?[A-Za-z][^>]*>").unwrap());
static DROPPED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[^\p{L}\p{M}\p{N}\p{Pc} -]").unwrap());

/// GitHub's slug of a heading's text (without the `-1` of a repeat).
pub fn slug(text: &str) -> String {
    DROPPED
        .replace_all(&text.trim().to_lowercase(), "")
        .replace(' ', "-")
}

/// Slugs in a file's order, repeats numbered as GitHub numbers them.
#[derive(Default)]
struct Slugger {
    occurrences: HashMap<String, u32>,
}

impl Slugger {
    fn next(&mut self, text: &str) -> String {
        let original = slug(text);
        let mut result = original.clone();
        while self.occurrences.contains_key(&result) {
            let n = self.occurrences.get_mut(&original).map_or(1, |n| {
                *n += 1;
                *n
            });
            result = format!("{original}-{n}");
        }
        self.occurrences.insert(result.clone(), 0);
        result
    }
}

/// The text GitHub shows for a heading's Markdown.
fn shown(markdown: &str) -> String {
    let text = LINK.replace_all(markdown, |c: &regex::Captures| {
        c.get(1).or(c.get(2)).map_or("", |m| m.as_str()).to_owned()
    });
    let text = TAG.replace_all(&text, "");
    let text = text.replace(['*', '`'], "");
    text.split(' ')
        .map(|word| word.trim_matches('_'))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every anchor of the Markdown `text`: heading slugs, explicit ids, inline HTML's ids and
/// names, in the file's order.
pub fn markdown_anchors(text: &str) -> Vec<String> {
    let mut anchors = Vec::new();
    let mut slugger = Slugger::default();
    let mut fences = Fences::default();
    let mut previous: Option<&str> = None;
    for line in text.lines() {
        if fences.code(line) {
            previous = None;
            continue;
        }
        let heading = match (ATX.captures(line), previous) {
            (Some(atx), _) => Some(atx.get(1).map_or("", |m| m.as_str()).to_owned()),
            (None, Some(text)) if SETEXT.is_match(line) => Some(text.trim().to_owned()),
            _ => None,
        };
        if let Some(heading) = heading {
            let heading = match EXPLICIT_ID.captures(&heading) {
                Some(id) => {
                    anchors.push(id[1].to_owned());
                    heading[..id.get(0).unwrap().start()].to_owned()
                }
                None => heading,
            };
            anchors.push(slugger.next(&shown(&heading)));
            previous = None;
            continue;
        }
        if line.contains('<') {
            anchors.extend(html::extract(line).anchors);
        }
        let paragraph = !line.trim().is_empty() && !line.starts_with("    ");
        previous = paragraph.then_some(line);
    }
    anchors
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GitHub's slugs (github-slugger's fixtures and what github.com renders).
    #[test]
    fn slugs_follow_githubs_rules() {
        for (heading, expected) in [
            ("Hello World", "hello-world"),
            ("Hello, World!", "hello-world"),
            ("  Leading and trailing  ", "leading-and-trailing"),
            ("API (v2) — Reference", "api-v2--reference"),
            ("foo.bar/baz", "foobarbaz"),
            ("snake_case_name", "snake_case_name"),
            ("kebab-case-name", "kebab-case-name"),
            ("C++ & Rust", "c--rust"),
            ("Ünïcödé Tëxt", "ünïcödé-tëxt"),
            ("日本語の見出し", "日本語の見出し"),
            ("Привет мир", "привет-мир"),
            ("emoji 🎉 party", "emoji--party"),
            ("100% sure?", "100-sure"),
            ("What's new", "whats-new"),
            ("a  b", "a--b"),
            ("1.2.3 Release", "123-release"),
            ("`code` heading", "code-heading"),
        ] {
            assert_eq!(slug(&shown(heading)), expected, "{heading:?}");
        }
    }

    #[test]
    fn repeated_headings_are_numbered_as_github_numbers_them() {
        let text = "# Intro\n## Intro\n### Intro\n# Intro-1\n# Intro 1\n";
        assert_eq!(
            markdown_anchors(text),
            ["intro", "intro-1", "intro-2", "intro-1-1", "intro-1-2"]
        );
    }

    #[test]
    fn a_headings_shown_text_is_slugged_not_its_markdown() {
        let text = "## [Install](https://a.example/) **now** _quickly_ `cargo`\n\
                    # Closing hashes ##\n\
                    #NotAHeading\n\
                    Setext one\n==========\n\
                    Setext two\n---\n\
                    ## Custom {#my-id}\n\
                    <a name=\"legacy\"></a><span id=\"Mixed\">x</span>\n\
                    ```\n# not a heading\n```\n    # indented code\n";
        assert_eq!(
            markdown_anchors(text),
            [
                "install-now-quickly-cargo",
                "closing-hashes",
                "setext-one",
                "setext-two",
                "my-id",
                "custom",
                "legacy",
                "Mixed",
            ]
        );
    }
}
