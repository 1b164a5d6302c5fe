//! What becomes of a link a crawl discovers: followed (a page of the crawl, read if it is
//! HTML), only checked, or left out. The same rules for the seed (start pages, sitemaps,
//! files) and every worker (links of pages), built from what the crawl stored.

use regex::Regex;
use url::Url;

use crate::normalize::{normalize, Normal};
use crate::scope::Scope;

/// A crawl's rules.
#[derive(Clone, Debug, Default)]
pub struct Rules {
    pub scopes: Vec<Scope>,
    /// `--include`: a link must match one, if any is given (as the seed's filter).
    pub include: Vec<Regex>,
    /// `--exclude`: a link matching one is neither checked nor followed.
    pub exclude: Vec<Regex>,
    /// Pages further than this from a start page are checked, not read.
    pub max_depth: Option<i32>,
}

/// What to do with one link.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fate {
    /// In scope, within the depth, and maybe HTML: a page of the crawl.
    Follow(Normal),
    /// Checked only: out of scope, too deep, or a file no page is (an image, a PDF).
    Check(Normal),
    /// Left out by `--include`/`--exclude`, or not a URL the queue takes.
    Skip,
}

/// Extensions of files that are never HTML pages: checked (with HEAD), never read.
const NOT_PAGES: &[&str] = &[
    "png", "jpg", "jpeg", "gif", "svg", "webp", "ico", "bmp", "avif", "css", "js", "mjs", "json",
    "pdf", "zip", "gz", "tgz", "bz2", "xz", "7z", "tar", "mp3", "mp4", "webm", "ogg", "wav",
    "woff", "woff2", "ttf", "otf", "eot", "txt", "csv", "xml", "rss", "atom", "exe", "dmg", "deb",
    "rpm", "iso", "doc", "docx", "xls", "xlsx", "ppt", "pptx", "epub", "rst", "py", "c", "h",
];

impl Rules {
    /// The fate of `url`, a link `depth` links from a start page.
    pub fn fate(&self, url: Url, depth: i32) -> Fate {
        let in_scope = self.scopes.iter().any(|s| s.contains(&url));
        let page_like = !is_file(&url);
        let Ok(normal) = normalize(url) else {
            return Fate::Skip;
        };
        let included =
            self.include.is_empty() || self.include.iter().any(|r| r.is_match(&normal.url));
        if !included || self.exclude.iter().any(|r| r.is_match(&normal.url)) {
            return Fate::Skip;
        }
        let deep = self.max_depth.is_some_and(|max| depth > max);
        if in_scope && page_like && !deep {
            Fate::Follow(normal)
        } else {
            Fate::Check(normal)
        }
    }
}

/// Whether the path ends in an extension of files that are not pages.
fn is_file(url: &Url) -> bool {
    let last = url.path().rsplit('/').next().unwrap_or_default();
    last.rsplit_once('.')
        .is_some_and(|(_, ext)| NOT_PAGES.iter().any(|e| ext.eq_ignore_ascii_case(e)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scope::ScopeKind;

    fn rules() -> Rules {
        let start = Url::parse("http://a.example/").unwrap();
        Rules {
            scopes: vec![Scope::of(ScopeKind::Origin, &start)],
            include: vec![],
            exclude: vec![Regex::new("/private/").unwrap()],
            max_depth: Some(2),
        }
    }

    fn fate(url: &str, depth: i32) -> &'static str {
        match rules().fate(Url::parse(url).unwrap(), depth) {
            Fate::Follow(_) => "follow",
            Fate::Check(_) => "check",
            Fate::Skip => "skip",
        }
    }

    #[test]
    fn pages_in_scope_are_followed_and_the_rest_checked() {
        assert_eq!(fate("http://a.example/docs/x.html", 1), "follow");
        assert_eq!(fate("http://a.example/docs/", 2), "follow");
        assert_eq!(fate("http://a.example/docs/x.html", 3), "check");
        assert_eq!(fate("http://b.example/", 1), "check");
        assert_eq!(fate("https://a.example/", 1), "check");
        assert_eq!(fate("http://a.example/logo.PNG", 1), "check");
        assert_eq!(fate("http://a.example/private/x.html", 1), "skip");
        assert_eq!(fate("mailto:x@a.example", 1), "skip");
    }
}
