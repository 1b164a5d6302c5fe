//! Fragments (`page#section`): which of them name an anchor to look for, and whether a page's
//! anchors have it.
//!
//! A fragment is looked for after percent-decoding, case-sensitively, as browsers match HTML
//! ids. Some always exist and are never looked for: the empty fragment and `#top` (the top of
//! the page, whatever it holds, in any case as HTML says), and a text fragment
//! (`#:~:text=…`, Chrome's fragment directive: what follows `:~:` is no anchor, and
//! `#sec:~:text=…` looks for `sec` only).

use std::collections::HashSet;

use url::Url;

/// The fragment directive's delimiter (text fragments).
const DIRECTIVE: &str = ":~:";

/// The anchor `fragment` (as it is in a URL, without its `#`) asks for, percent-decoded, or
/// `None` when it exists on any page.
pub fn anchor_of(fragment: &str) -> Option<String> {
    let fragment = fragment
        .find(DIRECTIVE)
        .map_or(fragment, |at| &fragment[..at]);
    let anchor = percent_decode(fragment);
    match anchor.is_empty() || anchor.eq_ignore_ascii_case("top") {
        true => None,
        false => Some(anchor),
    }
}

/// `url` split into the page (without its fragment) and the anchor its fragment asks for, when
/// it asks for one ([`anchor_of`]).
pub fn split(url: &Url) -> Option<(Url, String)> {
    let anchor = anchor_of(url.fragment()?)?;
    let mut page = url.clone();
    page.set_fragment(None);
    Some((page, anchor))
}

/// The anchors of one page (or file): what its fragments may name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Anchors(HashSet<String>);

impl Anchors {
    /// Whether `anchor` (decoded, as [`anchor_of`] gives it) is one of them; an anchor that is
    /// itself written percent-encoded in the page matches too.
    pub fn has(&self, anchor: &str) -> bool {
        self.0.contains(anchor)
    }

    /// The anchors as stored: one a line (an id holds no whitespace; a name that holds a line
    /// break could not be linked to anyway).
    pub fn to_text(&self) -> String {
        let mut all: Vec<&str> = self.0.iter().map(String::as_str).collect();
        all.sort_unstable();
        all.join("\n")
    }

    /// The anchors of [`Anchors::to_text`].
    pub fn from_text(text: &str) -> Anchors {
        text.lines().map(str::to_owned).collect()
    }

    /// Whether the anchors stored as `text` ([`Anchors::to_text`]) hold `anchor`: as
    /// `Anchors::from_text(text).has(anchor)`, without building the set (a page's fragments
    /// are decided one by one, each against the page's whole text).
    pub fn text_has(text: &str, anchor: &str) -> bool {
        text.lines().any(|line| line == anchor)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl FromIterator<String> for Anchors {
    fn from_iter<I: IntoIterator<Item = String>>(names: I) -> Anchors {
        let mut set = HashSet::new();
        for name in names {
            if name.contains('%') {
                set.insert(percent_decode(&name));
            }
            set.insert(name);
        }
        Anchors(set)
    }
}

/// `text` with its `%XX` escapes decoded (as UTF-8, lossily); a `%` that starts no escape is
/// kept as it is.
pub fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let escape = bytes.get(at + 1..at + 3).and_then(|hex| {
            let hex = std::str::from_utf8(hex).ok()?;
            u8::from_str_radix(hex, 16).ok()
        });
        match (bytes[at], escape) {
            (b'%', Some(byte)) => {
                out.push(byte);
                at += 3;
            }
            (byte, _) => {
                out.push(byte);
                at += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_top_and_text_fragments_are_no_anchors() {
        for always in ["", "top", "TOP", "Top", ":~:text=hello", ":~:text=a&text=b"] {
            assert_eq!(anchor_of(always), None, "{always:?}");
        }
        assert_eq!(anchor_of("sec:~:text=x").as_deref(), Some("sec"));
        assert_eq!(anchor_of("topics").as_deref(), Some("topics"));
    }

    #[test]
    fn fragments_are_percent_decoded_and_case_kept() {
        assert_eq!(anchor_of("caf%C3%A9").as_deref(), Some("café"));
        assert_eq!(anchor_of("a%20b").as_deref(), Some("a b"));
        assert_eq!(anchor_of("100%").as_deref(), Some("100%"));
        assert_eq!(anchor_of("Intro").as_deref(), Some("Intro"));
        let anchors: Anchors = ["Intro".to_owned(), "café".to_owned()]
            .into_iter()
            .collect();
        assert!(anchors.has("Intro"));
        assert!(!anchors.has("intro"));
        assert!(anchors.has(&anchor_of("caf%C3%A9").unwrap()));
    }

    #[test]
    fn a_url_splits_into_its_page_and_anchor() {
        let url = Url::parse("http://a.example/p.html?q=1#S%C3%A9c").unwrap();
        let (page, anchor) = split(&url).unwrap();
        assert_eq!(page.as_str(), "http://a.example/p.html?q=1");
        assert_eq!(anchor, "Séc");
        assert_eq!(split(&Url::parse("http://a.example/#top").unwrap()), None);
        assert_eq!(split(&Url::parse("http://a.example/").unwrap()), None);
    }

    #[test]
    fn anchors_round_trip_through_their_text() {
        let anchors: Anchors = ["b", "a", "x%41"].map(str::to_owned).into_iter().collect();
        assert_eq!(Anchors::from_text(&anchors.to_text()), anchors);
        assert!(anchors.has("xA") && anchors.has("x%41"));
        // Read from the text as from the set, whole lines only.
        let text = anchors.to_text();
        for anchor in ["a", "b", "xA", "x%41", "", "x", "ab", "b\na"] {
            assert_eq!(
                Anchors::text_has(&text, anchor),
                anchors.has(anchor),
                "{anchor:?}"
            );
        }
    }
}
