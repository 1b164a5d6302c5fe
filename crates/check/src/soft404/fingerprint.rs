//! A page's fingerprint: the set of word 3-shingles of its visible text (the first 64 KiB of
//! the body), with the requested path and the probe's token masked, so that a "page not found"
//! template that echoes the path reads the same for every path. A mask is a sequence of whole
//! words (`/docs/old_page.html` is `docs old page html`), so it matches the path however the
//! page spells its separators (`_`, `-`, space, `/`), and never inside another word.
//!
//! Shingle sets, not a simhash: a real page sharing a heavy template with the not-found page
//! (2,000 words of menus around 50 of content) is within a few simhash bits of it, while its
//! shingle sets differ by a hundred shingles. What differs between two answers is counted
//! exactly ([`Fingerprint::missing_from`]), and a soft 404 is an answer that differs from the
//! probe's by almost nothing.

use std::collections::BTreeSet;

/// Visible text this short (in words) says little: an app shell or an empty page. Its markup
/// is fingerprinted instead (script names, ids), which still tells two shells apart.
const MIN_WORDS: usize = 20;
/// Shingles kept at most (64 KiB of text is about 10,000 words; a fingerprint stays under
/// 64 KiB stored).
pub const MAX_SHINGLES: usize = 8192;
/// The word masked text is replaced with.
const MASK: &str = "xmaskx";

/// The shingle hashes of one answer's body, sorted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fingerprint {
    pub shingles: BTreeSet<u64>,
}

/// What one body says, besides its fingerprint: the weak signals that only tip a close call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Signals {
    /// The `<title>`, lower case, trimmed (at most 200 characters).
    pub title: Option<String>,
    /// A `<meta name="robots" content="noindex">`.
    pub noindex: bool,
}

impl Signals {
    /// The title says the page is missing, in one of the common languages.
    pub fn title_says_missing(&self) -> bool {
        self.title.as_deref().is_some_and(says_missing)
    }
}

/// Phrases of "page not found" titles (lower case) in English, German, French, Spanish,
/// Italian, Portuguese, Dutch, Polish, Russian, Japanese and Chinese.
const MISSING: &[&str] = &[
    "not found",
    "404",
    "page not found",
    "does not exist",
    "doesn't exist",
    "nicht gefunden",
    "seite existiert nicht",
    "introuvable",
    "page non trouvée",
    "no encontrada",
    "no encontrado",
    "no existe",
    "non trovata",
    "non trovato",
    "não encontrada",
    "não encontrado",
    "niet gevonden",
    "nie znaleziono",
    "не найдена",
    "не найден",
    "見つかりません",
    "找不到",
    "未找到",
];

fn says_missing(title: &str) -> bool {
    MISSING.iter().any(|phrase| title.contains(phrase))
}

/// The fingerprint and signals of `body` (an HTML or text prefix), with each of `masks` (the
/// path asked, its last segment…) replaced wherever the body echoes it.
pub fn fingerprint(body: &[u8], masks: &[String]) -> (Fingerprint, Signals) {
    let html = String::from_utf8_lossy(body).to_lowercase();
    let masks: Vec<String> = masks.iter().map(|m| m.to_lowercase()).collect();
    let masks: Vec<Vec<&str>> = masks.iter().map(|m| words(m)).collect();
    let signals = signals(&html);
    let visible = visible_text(&html);
    let visible = mask(words(&visible), &masks);
    if visible.len() >= MIN_WORDS {
        return (shingles(&visible), signals);
    }
    (shingles(&mask(words(&html), &masks)), signals)
}

impl Fingerprint {
    /// Shingles of this one that `other` lacks.
    pub fn missing_from(&self, other: &Fingerprint) -> usize {
        self.shingles.difference(&other.shingles).count()
    }

    /// The shingles both have.
    pub fn intersection(&self, other: &Fingerprint) -> Fingerprint {
        let shingles = self
            .shingles
            .intersection(&other.shingles)
            .copied()
            .collect();
        Fingerprint { shingles }
    }

    /// The stored form: 8 bytes per shingle, little-endian, in order.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.shingles.iter().flat_map(|s| s.to_le_bytes()).collect()
    }

    /// Reads [`Fingerprint::to_bytes`]; a trailing partial shingle is ignored.
    pub fn from_bytes(bytes: &[u8]) -> Fingerprint {
        let shingles = bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        Fingerprint { shingles }
    }
}

fn signals(html: &str) -> Signals {
    let title = between(html, "<title", "</title>").map(|t| {
        let t = t.split_once('>').map_or(t, |(_, text)| text);
        t.trim().chars().take(200).collect()
    });
    let noindex = html.match_indices("<meta").any(|(at, _)| {
        let tag = &html[at..html[at..].find('>').map_or(html.len(), |end| at + end)];
        tag.contains("robots") && tag.contains("noindex")
    });
    Signals { title, noindex }
}

fn between<'h>(html: &'h str, open: &str, close: &str) -> Option<&'h str> {
    let start = html.find(open)? + open.len();
    let end = html[start..].find(close)? + start;
    Some(&html[start..end])
}

/// The text a reader sees: tags, comments, scripts and styles removed.
fn visible_text(html: &str) -> String {
    let mut text = String::with_capacity(html.len() / 2);
    let mut rest = html;
    while let Some(lt) = rest.find('<') {
        text.push_str(&rest[..lt]);
        text.push(' ');
        rest = &rest[lt..];
        let skip_to = if rest.starts_with("<!--") {
            "-->"
        } else if rest.starts_with("<script") {
            "</script>"
        } else if rest.starts_with("<style") {
            "</style>"
        } else {
            ">"
        };
        rest = match rest.find(skip_to) {
            Some(end) => &rest[end + skip_to.len()..],
            None => "",
        };
    }
    text.push_str(rest);
    text
}

/// `words` with every run of words that spells a mask (longest first, so a path goes before
/// its last segment) replaced by one [`MASK`].
fn mask<'w>(words: Vec<&'w str>, masks: &[Vec<&str>]) -> Vec<&'w str> {
    let mut masks: Vec<&Vec<&str>> = masks.iter().filter(|m| !m.is_empty()).collect();
    if masks.is_empty() {
        return words;
    }
    masks.sort_by_key(|m| std::cmp::Reverse(m.len()));
    let mut out = Vec::with_capacity(words.len());
    let mut at = 0;
    while at < words.len() {
        let rest = &words[at..];
        match masks.iter().find(|m| rest.starts_with(m)) {
            Some(m) => {
                out.push(MASK);
                at += m.len();
            }
            None => {
                out.push(rest[0]);
                at += 1;
            }
        }
    }
    out
}

fn words(text: &str) -> Vec<&str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect()
}

fn shingles(words: &[&str]) -> Fingerprint {
    let mut shingles = BTreeSet::new();
    let windows: Box<dyn Iterator<Item = &[&str]>> = if words.len() < 3 {
        Box::new((!words.is_empty()).then_some(words).into_iter())
    } else {
        Box::new(words.windows(3))
    };
    for window in windows {
        if shingles.len() >= MAX_SHINGLES {
            break;
        }
        shingles.insert(fnv1a(window));
    }
    Fingerprint { shingles }
}

/// FNV-1a over the words, separated: stable across processes and Rust versions, since
/// fingerprints are stored and compared by other workers.
fn fnv1a(words: &[&str]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in words.iter().flat_map(|w| w.bytes().chain([0])) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEMPLATE: &str = "<html><head><title>Acme shop</title><script>var x = 1;</script>\
        </head><body><nav>home products about contact support blog careers press</nav>";

    fn page(content: &str) -> Vec<u8> {
        format!("{TEMPLATE}<main>{content}</main><footer>copyright acme corporation all rights reserved 2026</footer></body></html>").into_bytes()
    }

    fn masks(path: &str) -> Vec<String> {
        vec![path.to_owned(), path.rsplit('/').next().unwrap().to_owned()]
    }

    #[test]
    fn a_template_that_echoes_the_path_reads_the_same_for_every_path() {
        let a = fingerprint(
            &page("sorry, /docs/old-page.html was not found on this server"),
            &masks("/docs/old-page.html"),
        );
        let b = fingerprint(
            &page("sorry, /docs/x7f3kq9.html was not found on this server"),
            &masks("/docs/x7f3kq9.html"),
        );
        assert_eq!(a.0, b.0);
        let unmasked = fingerprint(&page("sorry, /docs/old-page.html was not found"), &[]);
        assert!(b.0.missing_from(&unmasked.0) > 0);
    }

    #[test]
    fn real_pages_in_one_heavy_template_differ_by_their_content() {
        let a = fingerprint(&page("the blue widget is a fine widget for gardens"), &[]).0;
        let b = fingerprint(&page("our red gadget fits any kitchen drawer well"), &[]).0;
        assert!(a.missing_from(&b) >= 10, "{}", a.missing_from(&b));
        assert_eq!(a.intersection(&b).missing_from(&a), 0);
    }

    #[test]
    fn scripts_styles_comments_and_tags_are_not_visible_text() {
        let text = visible_text("<p>a</p><script>b()</script><style>.c{}</style><!-- d -->e");
        assert_eq!(words(&text), ["a", "e"]);
    }

    #[test]
    fn a_short_shell_is_told_apart_by_its_markup() {
        let a = fingerprint(b"<div id=root></div><script src=/app.1.js></script>", &[]).0;
        let b = fingerprint(b"<div id=app></div><script src=/main.9.js></script>", &[]).0;
        assert!(a.missing_from(&b) > 0);
        assert_eq!(fingerprint(b"", &[]).0.shingles.len(), 0);
    }

    #[test]
    fn titles_saying_not_found_are_seen_in_several_languages() {
        for title in [
            "Page Not Found",
            "Seite nicht gefunden",
            "Page introuvable",
            "Страница не найдена",
        ] {
            let html = format!("<html><title>{title}</title></html>");
            assert!(
                fingerprint(html.as_bytes(), &[]).1.title_says_missing(),
                "{title}"
            );
        }
        let (_, signals) = fingerprint(b"<title>Widgets</title>", &[]);
        assert!(!signals.title_says_missing() && !signals.noindex);
        let (_, signals) = fingerprint(br#"<meta name="robots" content="noindex,follow">"#, &[]);
        assert!(signals.noindex);
    }

    #[test]
    fn a_mask_is_whole_words_whatever_the_separators() {
        let masks = vec!["/wiki/missing_article".to_owned(), "missing_article".into()];
        let title = fingerprint(
            &page("missing article: there is no text in this page"),
            &masks,
        );
        let dashed = fingerprint(
            &page("missing-article: there is no text in this page"),
            &masks,
        );
        let other = fingerprint(
            &page("x7abc: there is no text in this page"),
            &["x7abc".into()],
        );
        assert_eq!(title.0, other.0);
        assert_eq!(dashed.0, other.0);
        // "deployment" is no mask of "deployments" nor of "redeployment".
        let text = "guides: deployments and redeployment done right every single day";
        let masked = fingerprint(&page(text), &["deployment".into()]).0;
        assert_eq!(masked, fingerprint(&page(text), &[]).0);
    }

    #[test]
    fn a_fingerprint_round_trips_through_its_stored_form() {
        let f = fingerprint(&page("anything at all will do here"), &[]).0;
        assert_eq!(Fingerprint::from_bytes(&f.to_bytes()), f);
        assert_eq!(fnv1a(&["a", "b"]), fnv1a(&["a", "b"]));
        assert_ne!(fnv1a(&["ab", ""]), fnv1a(&["a", "b"]));
    }
}
