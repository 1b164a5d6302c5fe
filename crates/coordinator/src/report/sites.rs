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
const COLUMNS: [&str; 14] = [
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
    "found_on",
    "found_count",
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
    /// The pages (or `FILE:LINE`s, sitemaps) the link was found on, the first
    /// `crawler_queue::referrers::KEPT` in the order found; CSV and text print the first.
    found_on: Vec<Cow<'a, str>>,
    /// How many pages it was found on, kept or not.
    found_count: i32,
}

impl<'a> Record<'a> {
    fn new(site: &'a Checked, found_on: &'a [String]) -> Record<'a> {
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
            found_on: found_on.iter().map(|r| strip_userinfo(r)).collect(),
            found_count: site.found_count,
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
            self.found_on.first().map_or("", |r| r.as_ref()).into(),
            self.found_count.to_string().into(),
        ]
    }

    /// `URL STATUS-OR-ERROR_KIND VERDICT`, then `(DETAIL)` when there is one, then `found on
    /// PAGE` (`and N more`) when it was found somewhere.
    fn write_text(&self, out: &mut impl Write) -> std::io::Result<()> {
        let code = match (self.status, self.error_kind) {
            (_, Some(kind)) => kind.to_string(),
            (Some(status), None) => status.to_string(),
            (None, None) => "-".into(),
        };
        write!(out, "{} {code} {}", self.url, self.verdict)?;
        if let Some(detail) = self.detail {
            write!(out, " ({detail})")?;
        }
        if let Some(first) = self.found_on.first() {
            write!(out, " found on {first}")?;
            if self.found_count > 1 {
                write!(out, " and {} more", self.found_count - 1)?;
            }
        }
        Ok(())
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
            let found: Vec<i64> = page
                .iter()
                .filter(|s| s.found_count > 0)
                .map(|s| s.id)
                .collect();
            let referrers = queue.referrers_of(&found).await?;
            for site in &page {
                let found_on = referrers.get(&site.id).map_or(&[][..], Vec::as_slice);
                rows.write(&Record::new(site, found_on))?;
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
            found_count: 0,
        }
    }

    #[test]
    fn json_keys_are_the_csv_columns_in_order() {
        let site = moved();
        assert_json_keys(&Record::new(&site, &[]), &COLUMNS);
        assert_eq!(Record::csv_header(), COLUMNS.join(","));
    }

    #[test]
    fn every_column_prints_in_csv_and_missing_ones_are_empty() {
        let site = moved();
        assert_eq!(
            Record::new(&site, &[]).csv_fields().join("|"),
            "https://a.example/old|dead|404||https://a.example/new,page|2026-11-18T11:06:40.123Z|\
             1|35|2|2026-11-18T11:06:40Z|3|||0"
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
        let record = Record::new(&never, &[]);
        assert_eq!(
            record.csv_fields().join("|"),
            "https://a.example/old|unreachable||dns||2026-11-18T11:06:40.123Z|1||||3|||0"
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
        let record = Record::new(&soft, &[]);
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

    #[test]
    fn referrers_print_as_a_list_in_json_and_the_first_with_the_count_elsewhere() {
        let site = Checked {
            found_count: 3,
            ..moved()
        };
        let pages = [
            "https://a.example/a".to_owned(),
            "https://a.example/b".to_owned(),
        ];
        let record = Record::new(&site, &pages);
        let json = serde_json::to_value(&record).unwrap();
        assert_eq!(json["found_on"], serde_json::json!(pages));
        assert_eq!(json["found_count"], 3);
        let fields = record.csv_fields();
        assert_eq!(
            (fields[12].as_ref(), fields[13].as_ref()),
            ("https://a.example/a", "3")
        );
        let mut text = Vec::new();
        record.write_text(&mut text).unwrap();
        assert_eq!(
            String::from_utf8(text).unwrap(),
            "https://a.example/old 404 dead found on https://a.example/a and 2 more"
        );
    }
}
