//! The site report: checked sites with the verdicts asked for, one row each.

use std::borrow::Cow;
use std::io::Write;

use crawler_queue::{Checked, HostFilter, Queue, Verdict};
use serde::Serialize;

use super::rows::{Row, Rows};
use super::{rfc3339, Format};
use crate::redact::strip_userinfo;
use crate::Error;

/// Rows fetched per query.
const PAGE: u32 = 5000;

/// The columns in order: the CSV header's, the JSON keys. New columns go at the end, so that
/// scripts reading CSV by position keep working.
const COLUMNS: [&str; 12] = [
    "url",
    "verdict",
    "status",
    "error_kind",
    "final_url",
    "checked_at",
    "attempts",
    "latency_ms",
    "redirects",
    "last_alive_at",
    "consecutive_failures",
    "detail",
];

/// One site as the machine-readable formats print it (a contract: scripts depend on the keys,
/// the names in [`COLUMNS`]). URLs are printed without credentials, whatever the database holds.
#[derive(Serialize)]
struct Record<'a> {
    url: Cow<'a, str>,
    verdict: Verdict,
    status: Option<u16>,
    error_kind: Option<&'a str>,
    final_url: Option<Cow<'a, str>>,
    checked_at: String,
    attempts: i32,
    /// The last check's time, redirects included.
    latency_ms: Option<i32>,
    /// Redirects the last check followed.
    redirects: Option<i32>,
    /// RFC 3339: the last check that found the site alive, in any round; none if none did.
    last_alive_at: Option<String>,
    /// Checks in a row, over rounds, that did not find it alive.
    consecutive_failures: i32,
    /// Why the verdict, when the status does not say: what a soft 404 matched.
    detail: Option<&'a str>,
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
            latency_ms: site.latency_ms,
            redirects: site.redirects,
            last_alive_at: site.last_alive_at.map(rfc3339),
            consecutive_failures: site.consecutive_failures,
            detail: site.detail.as_deref(),
        }
    }
}

/// A number, or an empty field.
fn number(n: Option<impl ToString>) -> Cow<'static, str> {
    n.map(|n| n.to_string()).unwrap_or_default().into()
}

impl Row for Record<'_> {
    fn csv_header() -> String {
        COLUMNS.join(",")
    }

    fn csv_fields(&self) -> Vec<Cow<'_, str>> {
        vec![
            Cow::Borrowed(self.url.as_ref()),
            self.verdict.as_str().into(),
            number(self.status),
            self.error_kind.unwrap_or("").into(),
            self.final_url.as_deref().unwrap_or("").into(),
            Cow::Borrowed(self.checked_at.as_str()),
            self.attempts.to_string().into(),
            number(self.latency_ms),
            number(self.redirects),
            self.last_alive_at.as_deref().unwrap_or("").into(),
            self.consecutive_failures.to_string().into(),
            self.detail.unwrap_or("").into(),
        ]
    }

    /// `URL STATUS-OR-ERROR_KIND VERDICT`, then `(DETAIL)` when there is one.
    fn write_text(&self, out: &mut impl Write) -> std::io::Result<()> {
        let code = match (self.status, self.error_kind) {
            (_, Some(kind)) => kind.to_string(),
            (Some(status), None) => status.to_string(),
            (None, None) => "-".into(),
        };
        write!(out, "{} {code} {}", self.url, self.verdict)?;
        match self.detail {
            Some(detail) => write!(out, " ({detail})"),
            None => Ok(()),
        }
    }
}

/// Writes every checked site with one of `verdicts` (and of `host`) to `out`; returns the count.
pub async fn write_sites(
    queue: &Queue,
    verdicts: &[Verdict],
    host: Option<&HostFilter>,
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

#[cfg(test)]
mod tests {
    use super::super::rows::assert_json_keys;
    use super::*;
    use crawler_queue::ErrorKind;

    /// Dead after two redirects, alive once before.
    fn moved() -> Checked {
        Checked {
            id: 7,
            url: "https://user:pw@a.example/old".into(),
            host: "a.example".into(),
            verdict: Verdict::Dead,
            status: Some(404),
            error_kind: None,
            final_url: Some("https://a.example/new,page".into()),
            checked_at: 1_795_000_000_123,
            attempts: 1,
            latency_ms: Some(35),
            redirects: Some(2),
            last_alive_at: Some(1_795_000_000_000),
            consecutive_failures: 3,
            detail: None,
        }
    }

    #[test]
    fn json_keys_are_the_csv_columns_in_order() {
        let site = moved();
        assert_json_keys(&Record::new(&site), &COLUMNS);
        assert_eq!(Record::csv_header(), COLUMNS.join(","));
    }

    #[test]
    fn every_column_prints_in_csv_and_missing_ones_are_empty() {
        let site = moved();
        assert_eq!(
            Record::new(&site).csv_fields().join("|"),
            "https://a.example/old|dead|404||https://a.example/new,page|2026-11-18T11:06:40.123Z|\
             1|35|2|2026-11-18T11:06:40Z|3|"
        );
        let never = Checked {
            verdict: Verdict::Unreachable,
            status: None,
            error_kind: Some(ErrorKind::Dns),
            final_url: None,
            latency_ms: None,
            redirects: None,
            last_alive_at: None,
            ..moved()
        };
        let record = Record::new(&never);
        assert_eq!(
            record.csv_fields().join("|"),
            "https://a.example/old|unreachable||dns||2026-11-18T11:06:40.123Z|1||||3|"
        );
        let mut text = Vec::new();
        record.write_text(&mut text).unwrap();
        assert_eq!(text, b"https://a.example/old dns unreachable");
    }

    #[test]
    fn a_soft_404_prints_its_kind_and_what_it_matched_in_every_format() {
        let soft = Checked {
            status: Some(200),
            error_kind: Some(ErrorKind::Soft404),
            detail: Some("same final URL as probe /x.html: https://a.example/login".into()),
            ..moved()
        };
        let record = Record::new(&soft);
        let mut text = Vec::new();
        record.write_text(&mut text).unwrap();
        assert_eq!(
            String::from_utf8(text).unwrap(),
            "https://a.example/old soft_404 dead (same final URL as probe /x.html: \
             https://a.example/login)"
        );
        let fields = record.csv_fields();
        assert_eq!(fields[3], "soft_404");
        assert_eq!(
            fields[11],
            "same final URL as probe /x.html: https://a.example/login"
        );
        let json = serde_json::to_value(&record).unwrap();
        assert_eq!(json["error_kind"], "soft_404");
        assert_eq!(json["detail"], fields[11].as_ref());
    }
}
