//! The decision: is an alive answer the same as the answer to a path that cannot exist?
//!
//! Pure: two [`Answer`]s in, a reason out when the page is a soft 404. Where in doubt the page
//! is alive (a user deletes the links reported dead): the root is never a soft 404, nor its
//! default documents (`/index.html`, `/default.aspx`…); nor is a page whose probe got an
//! honest error; nor an `index.*` that redirects to its own directory;
//! nor the page a probe is redirected to (the home or login page itself);
//! nor a page whose body differs from the probe's by more than a few shingles, unless its
//! title says it is missing or it asks not to be indexed, and then only within a gray zone.

use super::fingerprint::{Fingerprint, Signals};

/// Shingles a page may lack of what the probes shared, or have beyond it, besides as many as
/// the probes varied by, and still be the not-found page: a date or a counter the probes did
/// not vary in changes up to three on each side.
pub const SAME: usize = 6;
/// Up to this many (or this share of the probe's, whichever is larger), a page whose title
/// says it is missing, or that asks not to be indexed, is a soft 404.
pub const CLOSE: usize = 24;
pub const CLOSE_SHARE: f64 = 0.05;
/// What a host's not-found page may vary by between two requests (shingles, or this share of
/// the probe's, whichever is larger) for a page judged by a probe asked once to be in the
/// gray zone, and the probe asked again ([`gray`]).
pub const VARIES: usize = 24;
pub const VARIES_SHARE: f64 = 0.1;

/// An answer as the decision sees it: where it ended and what it said.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Answer {
    /// The final status, after redirects.
    pub status: u16,
    /// The final URL with the path asked masked (see [`mask_url`]).
    pub final_url: String,
    /// Redirects that moved the request elsewhere: 0 when they only rewrote the path asked
    /// into its canonical shape (see [`same_shape`]), as a wiki capitalising a title does.
    pub redirects: u32,
    /// `None` when the body was not read or not text. A probe's: what two probes shared.
    pub body: Option<Fingerprint>,
    /// A page's: its body with nothing masked (`None` for a probe, and not stored). An app
    /// shell whose menu says "Deployment" is the probe's shell as it is, and only differs
    /// from it once `/deployment.html`'s words are masked.
    pub bare: Option<Fingerprint>,
    /// A probe's: the shingles one probe had beyond what both shared (how much the host's
    /// not-found page varies between requests); 0 for a page.
    pub spread: usize,
    pub signals: Signals,
}

/// What the checked page is, against its host's probe.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    Alive,
    /// A soft 404, and why (stored and reported).
    Soft404(String),
}

/// Judges `page`, the alive answer to `path`, against `probe`, the answer to `probe_path`.
pub fn decide(path: &str, page: &Answer, probe_path: &str, probe: &Answer) -> Decision {
    if !(200..400).contains(&probe.status) || is_root(path) {
        return Decision::Alive;
    }
    if page.redirects > 0 && probe.redirects > 0 && page.final_url == probe.final_url {
        if is_index_redirect(path, &page.final_url) {
            return Decision::Alive;
        }
        return Decision::Soft404(format!(
            "same final URL as probe {probe_path}: {}",
            page.final_url
        ));
    }
    // A probe sent elsewhere is matched by where it went: a page that is not sent there is
    // the home or login page itself, or another page, and alive whatever its body.
    if probe.redirects > 0 {
        return Decision::Alive;
    }
    let (Some(body), Some(stable)) = (&page.body, &probe.body) else {
        return Decision::Alive;
    };
    // A host whose not-found page changes more than it stays the same is not judged by it.
    let unstable = probe.spread > stable.shingles.len();
    if body.shingles.is_empty() || page.status != probe.status || unstable {
        return Decision::Alive;
    }
    // What the host's not-found page always says and the page does not, and what the page
    // says beyond it: a soft 404 says it all, and no more than a not-found page varies.
    let (missing, extra) = distance(page, stable);
    let of = stable.shingles.len();
    let reason =
        format!("{missing} of the {of} shingles of probe {probe_path} missing, {extra} more");
    if missing + extra <= SAME + probe.spread {
        return Decision::Soft404(format!("body as the probe's: {reason}"));
    }
    let limit = CLOSE.max((of as f64 * CLOSE_SHARE) as usize);
    let close = missing + extra <= limit + probe.spread;
    let weak = if page.signals.title_says_missing() {
        Some("title says not found")
    } else if page.signals.noindex && probe.signals.noindex {
        Some("noindex, as the probe")
    } else {
        None
    };
    match weak {
        Some(weak) if close => {
            Decision::Soft404(format!("body close to the probe's: {reason}; {weak}"))
        }
        _ => Decision::Alive,
    }
}

/// Shingles `stable` has that `page` lacks, and that `page` has beyond it. The page is read
/// with its path's words masked, or as it is, whichever is nearer the probe.
fn distance(page: &Answer, stable: &Fingerprint) -> (usize, usize) {
    [page.body.as_ref(), page.bare.as_ref()]
        .into_iter()
        .flatten()
        .filter(|b| !b.shingles.is_empty())
        .map(|b| (stable.missing_from(b), b.missing_from(stable)))
        .min_by_key(|(missing, extra)| missing + extra)
        .unwrap_or((usize::MAX / 4, usize::MAX / 4))
}

/// Whether `page`, which `probe` asked once found alive, might be the not-found page once a
/// second probe says what of that page varies between requests: the gray zone, where the
/// second probe is asked. Only a body in the probe's status can be, and only one within
/// [`SAME`] plus twice what a not-found page may vary by ([`VARIES`], or [`VARIES_SHARE`] of
/// its shingles), as the page and the probe each carry their own variant (plus [`CLOSE`]
/// when the page says it is missing). Outside it, the second probe could not turn the page
/// dead unless its host's not-found page varied by more than that.
pub fn gray(path: &str, page: &Answer, probe: &Answer) -> bool {
    if !(200..400).contains(&probe.status) || is_root(path) || probe.redirects > 0 {
        return false;
    }
    let (Some(body), Some(stable)) = (&page.body, &probe.body) else {
        return false;
    };
    if body.shingles.is_empty() || page.status != probe.status || stable.shingles.is_empty() {
        return false;
    }
    let (missing, extra) = distance(page, stable);
    let of = stable.shingles.len();
    let varies = VARIES.max((of as f64 * VARIES_SHARE) as usize);
    let weak = page.signals.title_says_missing() || page.signals.noindex && probe.signals.noindex;
    let close = if weak {
        CLOSE.max((of as f64 * CLOSE_SHARE) as usize)
    } else {
        0
    };
    missing + extra <= SAME + 2 * varies + close
}

/// The root, or one of its default documents (`/index.html`, `/index.php`, `/default.aspx`…):
/// the home page under another name, never a soft 404.
pub fn is_root(path: &str) -> bool {
    let Some(last) = path.strip_prefix('/') else {
        return path.is_empty();
    };
    if last.is_empty() {
        return true;
    }
    let (stem, ext) = last.split_once('.').unwrap_or((last, ""));
    let stem = stem.to_ascii_lowercase();
    !ext.is_empty() && !ext.contains('/') && matches!(stem.as_str(), "index" | "default")
}

/// Whether `landed`, the path a redirect ended on, is `asked` in another shape: the same
/// once percent-decoded, lower-cased, with `_`, `-`, `+` and spaces as one separator and
/// without a trailing slash (what wikis, slug routers and `DirectorySlash` rewrite).
pub fn same_shape(asked: &str, landed: &str) -> bool {
    let shape = |path: &str| -> String {
        let decoded = percent_decode(path).to_lowercase();
        let mapped: String = decoded
            .chars()
            .map(|c| if matches!(c, '_' | '-' | '+') { ' ' } else { c })
            .collect();
        mapped.trim_end_matches('/').to_owned()
    };
    shape(asked) == shape(landed)
}

/// `path` percent-decoded (as UTF-8, lossily); a `+` stays a `+`.
pub fn percent_decode(path: &str) -> String {
    url::form_urlencoded::parse(format!("p={}", path.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}

/// `…/index.html` (or `default.aspx`, `home.php`…) redirected to its own directory: the
/// canonical address of a real page, not a missing one sent home.
fn is_index_redirect(path: &str, final_url: &str) -> bool {
    let (dir, last) = path.rsplit_once('/').unwrap_or(("", path));
    let stem = last.split('.').next().unwrap_or_default();
    let index_like = matches!(stem, "index" | "default" | "home" | "welcome");
    let final_path = url::Url::parse(final_url)
        .map(|u| u.path().to_owned())
        .unwrap_or_default();
    index_like && final_path.trim_end_matches('/') == dir
}

/// `url` with `path` (as asked, and percent-encoded, as a `?next=` parameter carries it)
/// replaced, so that a redirect to `/login?next=/a` and to `/login?next=/b` are the same.
pub fn mask_url(url: &str, path: &str) -> String {
    if path.len() <= 1 {
        return url.to_owned();
    }
    let encoded: String = url::form_urlencoded::byte_serialize(path.as_bytes()).collect();
    let encoded_upper = encoded.replace("%2f", "%2F");
    let mut masked = url.to_owned();
    for form in [
        encoded_upper,
        encoded.replace("%2F", "%2f"),
        path.to_owned(),
    ] {
        masked = masked.replace(&form, "{path}");
    }
    masked
}

#[cfg(test)]
mod tests {
    use super::super::fingerprint::fingerprint;
    use super::*;

    fn html(body: &str, title: &str) -> Vec<u8> {
        let nav = "home products pricing about contact support blog careers press news";
        format!("<title>{title}</title><nav>{nav}</nav><main>{body}</main><footer>acme inc all rights reserved</footer>").into_bytes()
    }

    fn answer(path: &str, body: &str, title: &str) -> Answer {
        let (fp, signals) = fingerprint(&html(body, title), &[path.to_owned()]);
        Answer {
            status: 200,
            final_url: format!("http://a.example{path}"),
            redirects: 0,
            body: Some(fp),
            bare: None,
            spread: 0,
            signals,
        }
    }

    fn redirected(path: &str, to: &str) -> Answer {
        Answer {
            status: 200,
            final_url: mask_url(to, path),
            redirects: 1,
            ..Answer::default()
        }
    }

    const PROBE: &str = "/docs/x7f3kq9.html";

    #[test]
    fn a_not_found_template_echoing_the_path_is_a_soft_404() {
        let probe = answer(PROBE, &format!("sorry, {PROBE} is not here"), "Oops");
        let page = answer(
            "/docs/old.html",
            "sorry, /docs/old.html is not here",
            "Oops",
        );
        let decision = decide("/docs/old.html", &page, PROBE, &probe);
        assert!(
            matches!(decision, Decision::Soft404(ref why) if why.contains("0 of")),
            "{decision:?}"
        );
    }

    #[test]
    fn a_real_page_in_the_same_heavy_template_is_alive() {
        let probe = answer(PROBE, "sorry, this page is not here", "Not found");
        let page = answer(
            "/docs/a.html",
            "the widget manual covers setup and care",
            "Docs",
        );
        assert_eq!(
            decide("/docs/a.html", &page, PROBE, &probe),
            Decision::Alive
        );
    }

    #[test]
    fn a_title_saying_not_found_tips_only_a_close_call() {
        let long = "word ".repeat(0) + "our shop has many fine things to show you today and more";
        let probe = answer(PROBE, &format!("{long} missing page"), "Not found");
        let close = answer("/docs/b.html", &format!("{long} absent item"), "Not found");
        assert!(matches!(
            decide("/docs/b.html", &close, PROBE, &probe),
            Decision::Soft404(_)
        ));
        let untitled = answer("/docs/b.html", &format!("{long} absent item"), "Shop");
        assert_eq!(
            decide("/docs/b.html", &untitled, PROBE, &probe),
            Decision::Alive
        );
    }

    #[test]
    fn the_same_redirect_target_as_the_probe_is_a_soft_404_with_the_path_masked() {
        let probe = redirected(PROBE, "http://a.example/login?next=%2Fdocs%2Fx7f3kq9.html");
        let page = redirected(
            "/docs/old.html",
            "http://a.example/login?next=%2Fdocs%2Fold.html",
        );
        let decision = decide("/docs/old.html", &page, PROBE, &probe);
        assert!(
            matches!(decision, Decision::Soft404(ref why) if why.contains("/login")),
            "{decision:?}"
        );
        let home = redirected("/docs/old.html", "http://a.example/");
        assert_eq!(
            decide("/docs/old.html", &home, PROBE, &probe),
            Decision::Alive
        );
    }

    /// A probe of two: what `a` and `b` share, and how much one has beyond it.
    fn probed(a: &Answer, b: &Answer) -> Answer {
        let (fa, fb) = (a.body.clone().unwrap(), b.body.clone().unwrap());
        let stable = fa.intersection(&fb);
        let spread = fa.missing_from(&stable).max(fb.missing_from(&stable));
        Answer {
            body: Some(stable),
            spread,
            ..a.clone()
        }
    }

    /// A "popular now" list that changes with `seed`, as a not-found page's sidebar does.
    fn popular(seed: &str) -> String {
        format!("popular now: {seed} red fox jumps {seed} lazy dog naps {seed} at noon")
    }

    /// The answer to `token` of a host whose not-found page carries [`popular`] of `seed`.
    fn varying_probe(token: &str, seed: &str) -> Answer {
        answer(
            token,
            &format!("sorry, {token} is not here. {}", popular(seed)),
            "Oops",
        )
    }

    #[test]
    fn a_not_found_page_that_varies_is_judged_by_what_its_probes_shared() {
        let probe = probed(
            &varying_probe("/docs/x1.html", "alpha"),
            &varying_probe("/docs/x2.html", "beta"),
        );
        assert!(probe.spread > SAME, "{}", probe.spread);
        let page = answer(
            "/docs/old.html",
            &format!("sorry, /docs/old.html is not here. {}", popular("gamma")),
            "Oops",
        );
        assert!(matches!(
            decide("/docs/old.html", &page, PROBE, &probe),
            Decision::Soft404(_)
        ));
        let short = answer(
            "/docs/contact.html",
            &format!("call us at 555 0100. {}", popular("delta")),
            "Contact",
        );
        assert_eq!(
            decide("/docs/contact.html", &short, PROBE, &probe),
            Decision::Alive
        );
    }

    #[test]
    fn a_page_near_a_probe_asked_once_is_in_the_gray_zone_and_a_far_one_is_not() {
        let once = varying_probe("/docs/x1.html", "alpha");
        let page = answer(
            "/docs/old.html",
            &format!("sorry, /docs/old.html is not here. {}", popular("gamma")),
            "Oops",
        );
        // Asked once, the probe cannot tell the list that changes from a page's own words:
        // the page is alive by it, and in the gray zone; asked twice, it is a soft 404.
        assert_eq!(
            decide("/docs/old.html", &page, PROBE, &once),
            Decision::Alive
        );
        assert!(gray("/docs/old.html", &page, &once));
        let twice = probed(&once, &varying_probe("/docs/x2.html", "beta"));
        assert!(matches!(
            decide("/docs/old.html", &page, PROBE, &twice),
            Decision::Soft404(_)
        ));
        // A page the probe asked once already finds dead, or that is far from it, or one
        // in another status, or the root, is not.
        let same = varying_probe("/docs/gone.html", "alpha");
        assert!(matches!(
            decide("/docs/gone.html", &same, PROBE, &once),
            Decision::Soft404(_)
        ));
        let manual = words_of("the widget manual covers setup care cleaning storage", 12);
        let real = answer("/docs/a.html", &manual, "Docs");
        assert!(!gray("/docs/a.html", &real, &once));
        assert!(!gray("/", &page, &once));
        let moved = Answer {
            status: 203,
            ..page.clone()
        };
        assert!(!gray("/docs/old.html", &moved, &once));
    }

    /// `text` repeated with a counter, `n` times: a page of its own words.
    fn words_of(text: &str, n: usize) -> String {
        (0..n).map(|i| format!("{text} part {i} ")).collect()
    }

    #[test]
    fn the_page_the_probe_is_redirected_to_is_alive() {
        let login = answer("/login", "sign in with your name and password", "Sign in");
        let mut probe = login.clone();
        probe.redirects = 1;
        probe.final_url = mask_url("http://a.example/login?next=%2Fx7f3kq9", "/x7f3kq9");
        assert_eq!(
            decide("/login", &login, "/x7f3kq9", &probe),
            Decision::Alive
        );
    }

    #[test]
    fn an_index_page_redirecting_to_its_directory_is_alive() {
        let probe = redirected("/x7f3kq9.html", "http://a.example/");
        let index = redirected("/index.html", "http://a.example/");
        assert_eq!(
            decide("/index.html", &index, "/x7f3kq9.html", &probe),
            Decision::Alive
        );
        let other = redirected("/old.html", "http://a.example/");
        assert!(matches!(
            decide("/old.html", &other, "/x7f3kq9.html", &probe),
            Decision::Soft404(_)
        ));
    }

    #[test]
    fn an_honest_probe_or_the_root_never_makes_a_soft_404() {
        let page = answer("/docs/old.html", "same", "same");
        let mut probe = page.clone();
        probe.status = 404;
        assert_eq!(
            decide("/docs/old.html", &page, PROBE, &probe),
            Decision::Alive
        );
        probe.status = 200;
        assert_eq!(decide("/", &page, PROBE, &probe), Decision::Alive);
        assert!(matches!(
            decide("/docs/old.html", &page, PROBE, &probe),
            Decision::Soft404(_)
        ));
    }

    #[test]
    fn the_roots_default_documents_are_the_root() {
        let shell = answer("/x", "the app needs javascript", "App");
        for path in ["/index.html", "/INDEX.HTM", "/index.php", "/default.aspx"] {
            assert_eq!(
                decide(path, &shell, PROBE, &shell),
                Decision::Alive,
                "{path}"
            );
        }
        for path in ["/docs/index.html", "/indexes.html", "/index"] {
            assert!(
                matches!(decide(path, &shell, PROBE, &shell), Decision::Soft404(_)),
                "{path}"
            );
        }
    }

    #[test]
    fn a_shell_naming_the_pages_word_is_matched_by_its_bare_body() {
        let menu = "installation deployment templating configuration reference faq \
            read on deployment and templating or start a deployment now";
        let shell = |path: &str| {
            let masks = [path.to_owned(), "deployment".to_owned()];
            let page = html(&format!("{menu} loading the app"), "Docs");
            let (body, signals) = fingerprint(&page, &masks);
            let (bare, _) = fingerprint(&page, &[]);
            Answer {
                status: 200,
                body: Some(body),
                bare: Some(bare),
                signals,
                ..Answer::default()
            }
        };
        let probe = Answer {
            bare: None,
            ..answer("/0x7f3kq9.html", &format!("{menu} loading the app"), "Docs")
        };
        let page = shell("/deployment.html");
        assert!(matches!(
            decide("/deployment.html", &page, "/0x7f3kq9.html", &probe),
            Decision::Soft404(_)
        ));
        let without_bare = Answer { bare: None, ..page };
        assert_eq!(
            decide("/deployment.html", &without_bare, "/0x7f3kq9.html", &probe),
            Decision::Alive
        );
    }

    #[test]
    fn a_canonical_shape_is_the_same_path() {
        assert!(same_shape("/wiki/missing_article", "/wiki/Missing_article"));
        assert!(same_shape(
            "/wiki/missing%20article",
            "/wiki/Missing_article"
        ));
        assert!(same_shape("/docs", "/docs/"));
        assert!(same_shape("/blog/old_post", "/blog/old-post"));
        assert!(!same_shape("/wiki/missing_article", "/wiki/Main_Page"));
        assert!(!same_shape("/docs/old", "/"));
    }

    #[test]
    fn an_empty_body_or_no_body_is_alive() {
        let empty = Answer {
            body: Some(Fingerprint::default()),
            status: 200,
            ..Answer::default()
        };
        assert_eq!(decide("/a", &empty, PROBE, &empty), Decision::Alive);
        let none = Answer {
            status: 200,
            ..Answer::default()
        };
        assert_eq!(decide("/a", &none, PROBE, &none), Decision::Alive);
    }
}
