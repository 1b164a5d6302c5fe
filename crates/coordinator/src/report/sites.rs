//! The site report: checked sites with the verdicts asked for, one row each.

use std::borrow::Cow;
use std::io::Write;

use crawler_queue::{Checked, Queue, Verdict};
use serde::Serialize;

use super::rows::{Row, Rows};
use super::{rfc3339, Format};
use crate::redact::strip_userinfo;
use crate::Error;

/// Rows fetched per query.
const PAGE: u32 = 5000;

/// One site as the machine-readable formats print it (a contract: scripts depend on the keys).
/// URLs are printed without credentials, whatever the database holds.
#[derive(Serialize)]
struct Record<'a> {
    url: Cow<'a, str>,
    verdict: Verdict,
    status: Option<u16>,
    error_kind: Option<&'a str>,
    final_url: Option<Cow<'a, str>>,
    checked_at: String,
    attempts: i32,
}

impl<'a> Record<'a> {
    fn new(site: &'a Checked) -> Record<'a> {
        Record {
            url: strip_userinfo(&site.url),
            verdict: site.verdict,
            status: site.status,
            error_kind: site.error_kind.map(|k| k.as_str()),
            final_url: site.final_url.as_deref().map(strip_userinfo),
            checked_at: rfc3339(site.checked_at),
            attempts: site.attempts,
        }
    }
}

impl Row for Record<'_> {
    fn csv_header() -> String {
        "url,verdict,status,error_kind,final_url,checked_at,attempts".into()
    }

    fn csv_fields(&self) -> Vec<Cow<'_, str>> {
        vec![
            Cow::Borrowed(self.url.as_ref()),
            self.verdict.as_str().into(),
            self.status
                .map(|s| s.to_string())
                .unwrap_or_default()
                .into(),
            self.error_kind.unwrap_or("").into(),
            self.final_url.as_deref().unwrap_or("").into(),
            Cow::Borrowed(self.checked_at.as_str()),
            self.attempts.to_string().into(),
        ]
    }

    /// `URL STATUS-OR-ERROR_KIND VERDICT`.
    fn write_text(&self, out: &mut impl Write) -> std::io::Result<()> {
        let detail = match (self.status, self.error_kind) {
            (_, Some(kind)) => kind.to_string(),
            (Some(status), None) => status.to_string(),
            (None, None) => "-".into(),
        };
        write!(out, "{} {detail} {}", self.url, self.verdict)
    }
}

/// Writes every checked site with one of `verdicts` (and `host`) to `out`; returns the count.
pub async fn write_sites(
    queue: &Queue,
    verdicts: &[Verdict],
    host: Option<&str>,
    format: Format,
    out: &mut impl Write,
) -> Result<u64, Error> {
    let mut rows = Rows::start::<Record>(out, format)?;
    for &verdict in verdicts {
        let mut after = 0;
        loop {
            let page = queue.checked_page(verdict, host, after, PAGE).await?;
            for site in &page {
                rows.write(&Record::new(site))?;
            }
            match page.last() {
                Some(last) if page.len() == PAGE as usize => after = last.id,
                _ => break,
            }
        }
    }
    rows.finish()
}
