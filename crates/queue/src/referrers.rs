//! Referrers: where each link was found. A link counts every page (or place in a file,
//! `FILE:LINE:COL`: [`InFile`], or sitemap) it was found on in `sites.found_count`, and keeps
//! the first [`KEPT`] of them in `referrers`, numbered in the order found; both are written with
//! the links ([`Follow::add_links`](crate::Follow::add_links)). Read here for the report,
//! through [`Reports`]: a page of sites' referrers, and the dead links grouped by the page that
//! carries them (`crawler-report --dead --by-page`).

use std::collections::HashMap;

use crate::db::with_pool;
use crate::error::Error;
use crate::report::reports::Reports;
use crate::sql::{cached, placeholders};

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

/// A dead link on a page, for `--by-page`.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct DeadOnPage {
    pub referrer: String,
    pub site_id: i64,
    pub url: String,
    pub verdict: String,
    pub http_status: Option<i32>,
    pub error_kind: Option<String>,
}

impl Reports<'_> {
    /// The kept referrers of the sites `ids`, each in the order found.
    pub async fn referrers_of(&self, ids: &[i64]) -> Result<HashMap<i64, Vec<String>>, Error> {
        let mut found: HashMap<i64, Vec<String>> = HashMap::new();
        for chunk in ids.chunks(1000) {
            let sql = cached!(self.db.dialect(), chunk.len(), |_, n| {
                format!(
                    "SELECT site_id, referrer FROM referrers WHERE site_id IN ({}) ORDER BY site_id, n",
                    placeholders(n)
                )
            });
            let rows: Vec<(i64, String)> = with_pool!(&self.db, pool => {
                let mut q = sqlx::query_as(&sql);
                for id in chunk {
                    q = q.bind(id);
                }
                q.fetch_all(pool).await?
            });
            for (id, referrer) in rows {
                found.entry(id).or_default().push(referrer);
            }
        }
        Ok(found)
    }

    /// Up to `limit` (referrer, dead link) pairs after `after` (a referrer and a site id), in
    /// referrer order, then site id: keyset pages of the dead links grouped by page.
    pub async fn dead_by_page(
        &self,
        after: Option<(&str, i64)>,
        limit: u32,
    ) -> Result<Vec<DeadOnPage>, Error> {
        fn page(after_sql: &str) -> String {
            format!(
                "SELECT r.referrer, r.site_id, s.url, s.verdict, s.http_status, s.error_kind \
                 FROM referrers r JOIN sites s ON s.id = r.site_id \
                 WHERE s.verdict = {{dead}} {after_sql} ORDER BY r.referrer, r.site_id LIMIT ?"
            )
        }
        let sql = match after {
            Some(_) => cached!(self.db.dialect(), |_| {
                page("AND (r.referrer > ? OR (r.referrer = ? AND r.site_id > ?))")
            }),
            None => cached!(self.db.dialect(), |_| page("")),
        };
        Ok(with_pool!(&self.db, pool => {
            let mut q = sqlx::query_as(sql);
            if let Some((referrer, id)) = after {
                q = q.bind(referrer).bind(referrer).bind(id);
            }
            q.bind(i64::from(limit)).fetch_all(pool).await?
        }))
    }
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
