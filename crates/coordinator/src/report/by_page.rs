//! `crawler-report --dead --by-page`: the dead links grouped by the page (or file, or sitemap)
//! that carries them, pages in order, so a site owner fixes a page at a time. A link of a file
//! (`--links-in`, found at `FILE:LINE:COL`) is under its file, with its line and column, in
//! line order: a file is the page a person edits. Read in keyset pages of (referrer, link); a
//! page's dead links are gathered before it is written (they are bounded by the links of one
//! page). Links found on more pages than are kept (`crawler_queue::referrers::KEPT`) are listed
//! under the first of them only.

use std::borrow::Cow;
use std::io::Write;

use crawler_queue::referrers::InFile;
use crawler_queue::DeadOnPage;
use crawler_queue::Reports;
use serde::Serialize;

use super::format::Format;
use super::rows::{Row, Rows};
use crate::error::Error;
use crate::redact::strip_userinfo;

/// Pairs fetched per query.
const PAGE: u32 = 5000;

/// One page and its dead links. JSON and NDJSON print it as one object; CSV as a row per link
/// (`page,url,verdict,status,error_kind,line,col`); text as the page, then its links indented.
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
    /// Where in its file a link of a file is; none for a page's.
    line: Option<u32>,
    col: Option<u32>,
}

impl Row for PageRow {
    fn csv_header() -> String {
        "page,url,verdict,status,error_kind,line,col".into()
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
            link.line.map(|n| n.to_string()).unwrap_or_default().into(),
            link.col.map(|n| n.to_string()).unwrap_or_default().into(),
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
            match (link.line, link.col) {
                (Some(line), Some(col)) => write!(out, " at {line}:{col}")?,
                (Some(line), None) => write!(out, " at line {line}")?,
                _ => {}
            }
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
            let place = InFile::parse(&pair.referrer);
            let page = match place {
                Some(place) => place.file.to_owned(),
                None => strip_userinfo(&pair.referrer).into_owned(),
            };
            if current.as_ref().is_some_and(|c| c.page != page) {
                write_page(&mut rows, current.take().expect("checked"), format)?;
            }
            current
                .get_or_insert_with(|| PageRow {
                    page,
                    links: Vec::new(),
                })
                .links
                .push(link(pair, place));
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

fn link(pair: &DeadOnPage, place: Option<InFile<'_>>) -> DeadLink {
    DeadLink {
        url: strip_userinfo(&pair.url).into_owned(),
        verdict: pair.verdict.clone(),
        status: pair.http_status,
        error_kind: pair.error_kind.clone(),
        line: place.map(|p| p.line),
        col: place.and_then(|p| p.col),
    }
}

/// A page: one row, or in CSV and Markdown one row per link; a file's links in line order
/// (its referrers come in text order, where line 10 is before line 9).
fn write_page<O: Write>(
    rows: &mut Rows<'_, O>,
    mut page: PageRow,
    format: Format,
) -> Result<(), Error> {
    page.links.sort_by_key(|link| (link.line, link.col));
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
                    line: None,
                    col: None,
                },
                DeadLink {
                    url: "http://a.example/y".into(),
                    verdict: "dead".into(),
                    status: Some(410),
                    error_kind: None,
                    line: None,
                    col: None,
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
            "http://a.example/,http://a.example/x,dead,404,,,"
        );
    }

    #[test]
    fn a_file_prints_its_dead_links_with_their_line_and_column() {
        let dead = |referrer: &'static str, url: &str| {
            let pair = DeadOnPage {
                referrer: referrer.into(),
                site_id: 1,
                url: url.into(),
                verdict: "dead".into(),
                http_status: Some(404),
                error_kind: None,
            };
            link(&pair, InFile::parse(referrer))
        };
        let row = PageRow {
            page: "docs/a.md".into(),
            links: vec![
                dead("docs/a.md:10:3", "https://a.example/x"),
                dead("docs/a.md:9:12", "https://a.example/y"),
            ],
        };
        let (mut out, mut text) = (Vec::new(), Vec::new());
        let mut rows = Rows::start::<PageRow>(&mut out, Format::Csv).unwrap();
        write_page(&mut rows, row, Format::Csv).unwrap();
        rows.finish().unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "page,url,verdict,status,error_kind,line,col\n\
             docs/a.md,https://a.example/y,dead,404,,9,12\n\
             docs/a.md,https://a.example/x,dead,404,,10,3\n"
        );
        let row = PageRow {
            page: "docs/a.md".into(),
            links: vec![dead("docs/a.md:9:12", "https://a.example/y")],
        };
        row.write_text(&mut text).unwrap();
        assert_eq!(
            String::from_utf8(text).unwrap(),
            "docs/a.md\n  https://a.example/y 404 dead at 9:12"
        );
    }
}
