//! `crawler-report --dead --by-page`: the dead links grouped by the page (or `FILE:LINE`, or
//! sitemap) that carries them, pages in order, so a site owner fixes a page at a time. Read in
//! keyset pages of (page, link); a page's dead links are gathered before it is written (they
//! are bounded by the links of one page). Links found on more pages than are kept
//! (`crawler_queue::referrers::KEPT`) are listed under the first of them only.

use std::borrow::Cow;
use std::io::Write;

use crawler_queue::referrers::DeadOnPage;
use crawler_queue::Reports;
use serde::Serialize;

use super::rows::{Row, Rows};
use super::Format;
use crate::redact::strip_userinfo;
use crate::Error;

/// Pairs fetched per query.
const PAGE: u32 = 5000;

/// One page and its dead links. JSON and NDJSON print it as one object; CSV as a row per link
/// (`page,url,verdict,status,error_kind`); text as the page, then its links indented.
#[derive(Serialize)]
struct PageRow {
    page: String,
    links: Vec<DeadLink>,
}

#[derive(Serialize)]
struct DeadLink {
    url: String,
    verdict: String,
    status: Option<i32>,
    error_kind: Option<String>,
}

impl Row for PageRow {
    fn csv_header() -> String {
        "page,url,verdict,status,error_kind".into()
    }

    /// The page's first link; [`write_page`] writes the others as rows of their own.
    fn csv_fields(&self) -> Vec<Cow<'_, str>> {
        let link = &self.links[0];
        vec![
            self.page.as_str().into(),
            link.url.as_str().into(),
            link.verdict.as_str().into(),
            link.status
                .map(|s| s.to_string())
                .unwrap_or_default()
                .into(),
            link.error_kind.as_deref().unwrap_or("").into(),
        ]
    }

    fn write_text(&self, out: &mut impl Write) -> std::io::Result<()> {
        write!(out, "{}", self.page)?;
        for link in &self.links {
            let code = match (&link.error_kind, link.status) {
                (Some(kind), _) => kind.clone(),
                (None, Some(status)) => status.to_string(),
                (None, None) => "-".into(),
            };
            write!(out, "\n  {} {code} {}", link.url, link.verdict)?;
        }
        Ok(())
    }
}

/// Writes the dead links by page; returns the number of pages.
pub async fn write_by_page(
    reports: Reports<'_>,
    format: Format,
    out: &mut impl Write,
) -> Result<u64, Error> {
    let mut rows = Rows::start::<PageRow>(out, format)?;
    let mut current: Option<PageRow> = None;
    let mut after: Option<(String, i64)> = None;
    loop {
        let batch = reports
            .dead_by_page(after.as_ref().map(|(r, id)| (r.as_str(), *id)), PAGE)
            .await?;
        for pair in &batch {
            let page = strip_userinfo(&pair.referrer).into_owned();
            if current.as_ref().is_some_and(|c| c.page != page) {
                write_page(&mut rows, current.take().expect("checked"), format)?;
            }
            current
                .get_or_insert_with(|| PageRow {
                    page,
                    links: Vec::new(),
                })
                .links
                .push(link(pair));
        }
        match batch.last() {
            Some(last) if batch.len() == PAGE as usize => {
                after = Some((last.referrer.clone(), last.site_id))
            }
            _ => break,
        }
    }
    if let Some(page) = current {
        write_page(&mut rows, page, format)?;
    }
    rows.finish()
}

fn link(pair: &DeadOnPage) -> DeadLink {
    DeadLink {
        url: strip_userinfo(&pair.url).into_owned(),
        verdict: pair.verdict.clone(),
        status: pair.http_status,
        error_kind: pair.error_kind.clone(),
    }
}

/// A page: one row, or in CSV and Markdown one row per link.
fn write_page<O: Write>(
    rows: &mut Rows<'_, O>,
    page: PageRow,
    format: Format,
) -> Result<(), Error> {
    if !matches!(format, Format::Csv | Format::Markdown) {
        return rows.write(&page);
    }
    for link in page.links {
        rows.write(&PageRow {
            page: page.page.clone(),
            links: vec![link],
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_prints_its_dead_links_under_it() {
        let row = PageRow {
            page: "http://a.example/".into(),
            links: vec![
                DeadLink {
                    url: "http://a.example/x".into(),
                    verdict: "dead".into(),
                    status: Some(404),
                    error_kind: None,
                },
                DeadLink {
                    url: "http://a.example/y".into(),
                    verdict: "dead".into(),
                    status: Some(410),
                    error_kind: None,
                },
            ],
        };
        let mut text = Vec::new();
        row.write_text(&mut text).unwrap();
        assert_eq!(
            String::from_utf8(text).unwrap(),
            "http://a.example/\n  http://a.example/x 404 dead\n  http://a.example/y 410 dead"
        );
        assert_eq!(
            row.csv_fields().join(","),
            "http://a.example/,http://a.example/x,dead,404,"
        );
    }
}
