//! Referrers: where each link was found. A link counts every page (or place in a file,
//! `FILE:LINE:COL`: [`InFile`], or sitemap) it was found on in `sites.found_count`, and keeps
//! the first [`KEPT`] of them in `referrers`, numbered in the order found; both are written with
//! the links ([`Follow::add_links`](crate::Follow::add_links)). The report reads them through
//! [`Reports`](crate::Reports) (`report/referrers.rs`): a page of sites' referrers, and the dead
//! links grouped by the page that carries them (`crawler-report --dead --by-page`).

/// Referrers kept per link: enough to fix a link everywhere it is on a site's own pages; a
/// link on every page of a big site (a menu) keeps its count and the first of them, so the
/// table grows with the links, not with links times pages.
pub const KEPT: i32 = 1000;

/// Where in a local file a link was found (`crawler-seed --links-in`): its referrer is
/// `FILE:LINE:COL`, the line and column (in characters) from 1 where the link's URL starts.
/// Databases seeded before columns hold `FILE:LINE`, read with no column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InFile<'a> {
    pub file: &'a str,
    pub line: u32,
    pub col: Option<u32>,
}

impl<'a> InFile<'a> {
    /// The referrer of a link at `file`, `line`, `col`.
    pub fn referrer(file: &str, line: u32, col: u32) -> String {
        format!("{file}:{line}:{col}")
    }

    /// `referrer` as a place in a file; `None` for a page or a sitemap (a URL: `scheme://…`).
    pub fn parse(referrer: &'a str) -> Option<InFile<'a>> {
        if is_url(referrer) {
            return None;
        }
        let number = |text: &str| text.parse::<u32>().ok().filter(|&n| n > 0);
        let digits = |text: &str| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
        let (rest, last) = referrer.rsplit_once(':')?;
        let last = number(last)?;
        let (file, line, col) = match rest.rsplit_once(':') {
            Some((file, line)) if digits(line) => (file, number(line)?, Some(last)),
            _ => (rest, last, None),
        };
        (!file.is_empty()).then_some(InFile { file, line, col })
    }
}

/// Whether `referrer` is a URL (`scheme://…`): a page or a sitemap.
fn is_url(referrer: &str) -> bool {
    referrer.split_once("://").is_some_and(|(scheme, _)| {
        let scheme_char = |b: u8| b.is_ascii_alphanumeric() || b"+.-".contains(&b);
        !scheme.is_empty() && scheme.bytes().all(scheme_char)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_place_in_a_file_is_told_from_a_page() {
        let at = |file, line, col| Some(InFile { file, line, col });
        let referrer = InFile::referrer("docs/a b.md", 3, 14);
        assert_eq!(referrer, "docs/a b.md:3:14");
        assert_eq!(InFile::parse(&referrer), at("docs/a b.md", 3, Some(14)));
        assert_eq!(
            InFile::parse("notes:v2.md:7:1"),
            at("notes:v2.md", 7, Some(1))
        );
        assert_eq!(InFile::parse("README.md:12"), at("README.md", 12, None));
        for page in [
            "https://a.example/x:12:3",
            "http://a.example:8080/",
            "https://a.example/sitemap.xml",
            "README.md",
            ":3:4",
            "a.md:0:1",
        ] {
            assert_eq!(InFile::parse(page), None, "{page}");
        }
    }
}
