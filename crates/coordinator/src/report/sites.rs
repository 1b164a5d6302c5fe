//! The site report: checked sites with the verdicts asked for, one row each.

use std::borrow::Cow;
use std::io::Write;

use crawler_queue::{After, Checked, Fragment, Only, Reports, Scope, Verdict};
use serde::Serialize;

use super::fail_on::FailOn;
use super::format::Format;
use super::github::Finding;
use super::rows::{Case, Failure, Row, Rows, Tally};
use super::timestamp::rfc3339;
use crate::error::Error;
use crate::redact::strip_userinfo;

/// Rows fetched per query.
const PAGE: u32 = 5000;

/// The columns in order: the CSV header's, the JSON keys. New columns go at the end, so that
/// scripts reading CSV by position keep working.
const COLUMNS: [&str; 23] = [
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
    "dead_since",
    "confirmed_at",
    "archived_url",
    "archived_at",
    "fragment",
    "changed_at",
    "previous_verdict",
    "moved_to",
    "moved_at",
];

/// What a report's rows say besides their columns.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Listing {
    /// It lists changes (`--changed-since`): text says what each replaced.
    pub changes: bool,
    /// It lists moved links (`--moved`): each is a JUnit failure of type `moved`.
    pub moved: bool,
}

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
    /// The pages (or `FILE:LINE:COL`s, sitemaps) the link was found on, the first
    /// `crawler_queue::referrers::KEPT` in the order found; CSV and text print the first.
    found_on: Vec<Cow<'a, str>>,
    /// How many pages it was found on, kept or not.
    found_count: i32,
    /// RFC 3339: when its current streak of dead results began; none unless it is dead.
    dead_since: Option<String>,
    /// RFC 3339: when `crawler-worker --confirm`'s policy confirmed it dead.
    confirmed_at: Option<String>,
    /// The closest archived copy (`crawler-worker --archive-lookup`).
    archived_url: Option<&'a str>,
    /// RFC 3339: the archived copy's time.
    archived_at: Option<String>,
    /// For a link to a section (`page#section`): `found` or `missing` in its alive page.
    fragment: Option<&'static str>,
    /// RFC 3339: when its current verdict began (its first, or a change).
    changed_at: String,
    /// The verdict the current one replaced; none for a site's first verdict.
    previous_verdict: Option<Verdict>,
    /// Where a permanent redirect sends it: the URL to write instead.
    moved_to: Option<Cow<'a, str>>,
    /// RFC 3339: when it began to answer through that redirect.
    moved_at: Option<String>,
    #[serde(skip)]
    listing: Listing,
    /// The JUnit test case's class.
    #[serde(skip)]
    host: &'a str,
}

impl<'a> Record<'a> {
    fn new(site: &'a Checked, found_on: &'a [String], listing: Listing) -> Record<'a> {
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
            dead_since: site.dead_since.map(rfc3339),
            confirmed_at: site.confirmed_at.map(rfc3339),
            archived_url: site.archived_url.as_deref(),
            archived_at: site.archived_at.map(rfc3339),
            fragment: site.fragment.map(|f| f.as_str()),
            changed_at: rfc3339(site.changed_at),
            previous_verdict: site.previous_verdict,
            moved_to: site.moved_to.as_deref().map(strip_userinfo),
            moved_at: site.moved_at.map(rfc3339),
            listing,
            host: &site.host,
        }
    }

    /// Why the verdict, in a few words: what matched (a soft 404), the error kind, or the
    /// status; for a moved link, where to.
    fn reason(&self) -> String {
        if let Some(to) = self.moved() {
            return format!("moved permanently to {to}");
        }
        match (self.detail, self.error_kind, self.status) {
            (Some(detail), Some(kind), _) => format!("{kind}: {detail}"),
            (Some(detail), None, _) => detail.to_owned(),
            (None, Some(kind), _) => kind.to_owned(),
            (None, None, Some(status)) => format!("HTTP {status}"),
            (None, None, None) => String::new(),
        }
    }

    /// Where it has moved, if it is alive through a permanent redirect.
    fn moved(&self) -> Option<&str> {
        self.moved_to
            .as_deref()
            .filter(|_| self.verdict == Verdict::Alive)
    }

    /// Whether it links to a section its page lacks.
    fn missing_fragment(&self) -> bool {
        self.fragment == Some(Fragment::Missing.as_str())
    }

    /// When its verdict began, for a person: the day, and what it replaced.
    fn since_cell(&self) -> String {
        let day = &self.changed_at[..10.min(self.changed_at.len())];
        match self.previous_verdict {
            Some(previous) => format!("{day} (was {previous})"),
            None => format!("{day} (new)"),
        }
    }

    /// Where it was found, for a person: the first page, and how many more.
    fn found_on_line(&self) -> Option<String> {
        let first = self.found_on.first()?;
        Some(match self.found_count {
            n if n > 1 => format!("{first} (and {} more)", n - 1),
            _ => first.to_string(),
        })
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
            self.dead_since.as_deref().unwrap_or("").into(),
            self.confirmed_at.as_deref().unwrap_or("").into(),
            self.archived_url.unwrap_or("").into(),
            self.archived_at.as_deref().unwrap_or("").into(),
            self.fragment.unwrap_or("").into(),
            Cow::Borrowed(self.changed_at.as_str()),
            self.previous_verdict.map_or("", Verdict::as_str).into(),
            self.moved_to.as_deref().unwrap_or("").into(),
            self.moved_at.as_deref().unwrap_or("").into(),
        ]
    }

    fn markdown_header() -> Vec<String> {
        [
            "URL",
            "Verdict",
            "Status",
            "Reason",
            "Found on",
            "Archived copy",
            "Fragment",
            "Since",
        ]
        .map(str::to_owned)
        .to_vec()
    }

    /// The archived copy is a link named by its date.
    fn write_markdown(&self, out: &mut impl Write) -> std::io::Result<()> {
        let verdict = match &self.confirmed_at {
            Some(_) => format!("{} (confirmed)", self.verdict),
            None => self.verdict.to_string(),
        };
        let archived = self.archived_url.map(|url| {
            let date = self
                .archived_at
                .as_deref()
                .map_or("copy", |at| &at[..10.min(at.len())]);
            format!(
                "[{}]({})",
                super::rows::markdown_cell(date),
                url.replace('(', "%28")
                    .replace(')', "%29")
                    .replace(' ', "%20")
            )
        });
        write!(out, "|")?;
        for cell in [
            super::rows::markdown_cell(&self.url).into_owned(),
            verdict,
            self.status.map(|s| s.to_string()).unwrap_or_default(),
            super::rows::markdown_cell(&self.reason()).into_owned(),
            super::rows::markdown_cell(&self.found_on_line().unwrap_or_default()).into_owned(),
            archived.map(|a| a.replace('|', "%7C")).unwrap_or_default(),
            self.fragment.unwrap_or_default().to_owned(),
            self.since_cell(),
        ] {
            write!(out, " {cell} |")?;
        }
        Ok(())
    }

    /// A failure for every verdict but alive and excluded (skipped: never asked): the verdict
    /// as its type, status and reason as its message, and the details in its body. A missing
    /// fragment of an alive page is a failure of its own type, `fragment`, and so is a moved
    /// link in a report of them (`--moved`), `moved`.
    fn junit(&self) -> Option<Case<'_>> {
        let skipped = (self.verdict == Verdict::Excluded).then_some("excluded: not checked");
        let missing = self.missing_fragment();
        let moved = self.moved().filter(|_| self.listing.moved);
        let failing = !matches!(self.verdict, Verdict::Alive | Verdict::Excluded)
            || missing
            || moved.is_some();
        let failure = failing.then(|| {
            let status = self.status.map(|s| s.to_string());
            let code = status.as_deref().or(self.error_kind).unwrap_or("-");
            let mut body = format!("{}\nverdict: {}", self.url, self.verdict);
            if let Some(status) = self.status {
                body += &format!("\nstatus: {status}");
            }
            let reason = self.reason();
            if !reason.is_empty() {
                body += &format!("\nreason: {reason}");
            }
            if let Some(final_url) = &self.final_url {
                body += &format!("\nfinal URL: {final_url}");
            }
            if let Some(found) = self.found_on_line() {
                body += &format!("\nfound on: {found}");
            }
            if let Some(since) = &self.dead_since {
                body += &format!("\ndead since: {since}");
            }
            if let Some(at) = &self.confirmed_at {
                body += &format!("\nconfirmed dead: {at}");
            }
            body += &format!("\n{} since: {}", self.verdict, self.changed_at);
            if let Some(previous) = self.previous_verdict {
                body += &format!("\nprevious verdict: {previous}");
            }
            if let Some(url) = self.archived_url {
                body += &format!("\narchived copy: {url}");
            }
            if missing {
                body += "\nfragment: missing";
                return Failure {
                    kind: "fragment".to_owned(),
                    message: format!("{code} {}: fragment missing", self.verdict),
                    body,
                };
            }
            if let Some(to) = moved {
                return Failure {
                    kind: "moved".to_owned(),
                    message: format!("{code} {}: moved permanently to {to}", self.verdict),
                    body,
                };
            }
            Failure {
                kind: self.verdict.to_string(),
                message: match reason.is_empty() {
                    true => format!("{code} {}", self.verdict),
                    false => format!("{code} {}: {reason}", self.verdict),
                },
                body,
            }
        });
        Some(Case {
            classname: self.host,
            name: &self.url,
            time: self.latency_ms.map(|ms| f64::from(ms) / 1000.0),
            failure,
            skipped,
        })
    }

    fn finding(&self) -> Option<Finding<'_>> {
        Some(Finding {
            url: &self.url,
            verdict: self.verdict,
            status: self.status,
            reason: self.reason(),
            missing_fragment: self.missing_fragment(),
            moved: self.moved().is_some(),
            confirmed: self.confirmed_at.is_some(),
            found_on: &self.found_on,
            found_count: self.found_count,
        })
    }

    /// `URL STATUS-OR-ERROR_KIND VERDICT`, then `(DETAIL)` when there is one, `fragment
    /// missing` (or `found`) for a link to a section, then `found on PAGE` (`and N more`) when
    /// it was found somewhere.
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
        if let Some(fragment) = self.fragment {
            write!(out, " fragment {fragment}")?;
        }
        if let Some(first) = self.found_on.first() {
            write!(out, " found on {first}")?;
            if self.found_count > 1 {
                write!(out, " and {} more", self.found_count - 1)?;
            }
        }
        if self.confirmed_at.is_some() {
            write!(out, " confirmed")?;
        }
        if let Some(url) = self.archived_url {
            write!(out, " archived {url}")?;
        }
        if let Some(to) = self.moved() {
            write!(out, " moved to {to}")?;
        }
        if self.listing.changes {
            match self.previous_verdict {
                Some(previous) => write!(out, " was {previous}")?,
                None => write!(out, " new")?,
            }
            write!(out, " since {}", self.changed_at)?;
        }
        Ok(())
    }
}

/// Writes every checked site of `passes` (each a verdict and which of its sites), in `scope`
/// (its host and time; its `only` is each pass's), to `out`, pass after pass; returns the
/// count. In the annotation formats, what `fail_on` counts is an error.
pub async fn write_sites(
    reports: Reports<'_>,
    passes: &[(Verdict, Only)],
    scope: Scope<'_>,
    format: Format,
    fail_on: &[FailOn],
    out: &mut impl Write,
) -> Result<u64, Error> {
    let tally = match format {
        Format::Junit => Some(tally(reports, passes, scope).await?),
        _ => None,
    };
    let changes = scope.changed_since.is_some();
    let mut rows = Rows::start_tallied::<Record>(out, format, tally)?.failing_on(fail_on);
    for &(verdict, only) in passes {
        let scope = Scope { only, ..scope };
        let listing = Listing {
            changes,
            moved: only == Only::Moved,
        };
        let mut after = After::START;
        loop {
            let page = reports.checked_page(verdict, scope, after, PAGE).await?;
            let found: Vec<i64> = page
                .iter()
                .filter(|s| s.found_count > 0)
                .map(|s| s.id)
                .collect();
            let referrers = reports.referrers_of(&found).await?;
            for site in &page {
                let found_on = referrers.get(&site.id).map_or(&[][..], Vec::as_slice);
                rows.write(&Record::new(site, found_on, listing))?;
            }
            match page.last() {
                Some(last) if page.len() == PAGE as usize => after = After::site(last, only),
                _ => break,
            }
        }
    }
    rows.finish()
}

/// The JUnit counts of `passes`: every site a test, failing unless alive (with its fragment, if
/// any, found) or excluded (skipped).
async fn tally(
    reports: Reports<'_>,
    passes: &[(Verdict, Only)],
    scope: Scope<'_>,
) -> Result<Tally, Error> {
    let mut tally = Tally::default();
    for &(verdict, only) in passes {
        let n = reports
            .checked_count(&[verdict], Scope { only, ..scope })
            .await?;
        tally.tests += n;
        match verdict {
            Verdict::Excluded => tally.skipped += n,
            Verdict::Alive if only == Only::MissingFragments => tally.failures += n,
            Verdict::Alive => {
                let missing = Scope {
                    only: Only::MissingFragments,
                    ..scope
                };
                tally.failures += reports.checked_count(&[verdict], missing).await?;
            }
            _ => tally.failures += n,
        }
    }
    Ok(tally)
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
            dead_since: Some(1_795_000_000_000),
            confirmed_at: None,
            archived_url: None,
            archived_at: None,
            fragment: None,
            changed_at: 1_795_000_000_000,
            previous_verdict: Some(Verdict::Alive),
            moved_to: None,
            moved_at: None,
        }
    }

    #[test]
    fn a_missing_fragment_is_a_column_a_text_word_and_a_junit_failure_of_its_own() {
        let site = Checked {
            url: "https://a.example/guide#install".into(),
            verdict: Verdict::Alive,
            status: Some(200),
            redirects: Some(0),
            dead_since: None,
            fragment: Some(crawler_queue::Fragment::Missing),
            ..moved()
        };
        let found_on = ["https://a.example/".to_owned()];
        let record = Record::new(&site, &found_on, Listing::default());
        assert_eq!(record.csv_fields()[18], "missing");
        let mut text = Vec::new();
        record.write_text(&mut text).unwrap();
        assert_eq!(
            String::from_utf8(text).unwrap(),
            "https://a.example/guide#install 200 alive fragment missing found on https://a.example/"
        );
        let failure = record.junit().unwrap().failure.unwrap();
        assert_eq!(failure.kind, "fragment");
        assert_eq!(failure.message, "200 alive: fragment missing");
        let json = serde_json::to_value(&record).unwrap();
        assert_eq!(json["fragment"], "missing");
        let found = Checked {
            fragment: Some(crawler_queue::Fragment::Found),
            ..site
        };
        assert!(Record::new(&found, &[], Listing::default())
            .junit()
            .unwrap()
            .failure
            .is_none());
    }

    #[test]
    fn json_keys_are_the_csv_columns_in_order() {
        let site = moved();
        assert_json_keys(&Record::new(&site, &[], Listing::default()), &COLUMNS);
        assert_eq!(Record::csv_header(), COLUMNS.join(","));
    }

    #[test]
    fn every_column_prints_in_csv_and_missing_ones_are_empty() {
        let site = moved();
        assert_eq!(
            Record::new(&site, &[], Listing::default())
                .csv_fields()
                .join("|"),
            "https://a.example/old|dead|404||https://a.example/new,page|2026-11-18T11:06:40.123Z|\
             1|35|2|2026-11-18T11:06:40Z|3|||0|2026-11-18T11:06:40Z|||||\
             2026-11-18T11:06:40Z|alive||"
        );
        let never = Checked {
            verdict: Verdict::Unreachable,
            status: None,
            error_kind: Some(ErrorKind::Dns),
            final_url: None,
            latency_ms: None,
            redirects: None,
            last_alive_at: None,
            dead_since: None,
            ..moved()
        };
        let record = Record::new(&never, &[], Listing::default());
        assert_eq!(
            record.csv_fields().join("|"),
            "https://a.example/old|unreachable||dns||2026-11-18T11:06:40.123Z|1||||3|||0||||||2026-11-18T11:06:40Z|alive||"
        );
        let mut text = Vec::new();
        record.write_text(&mut text).unwrap();
        assert_eq!(text, b"https://a.example/old dns unreachable");
    }

    #[test]
    fn a_moved_link_says_where_to_in_every_format_and_fails_in_a_report_of_them() {
        let site = Checked {
            verdict: Verdict::Alive,
            status: Some(200),
            moved_to: Some("https://user:pw@a.example/new".into()),
            moved_at: Some(1_795_000_000_000),
            ..moved()
        };
        let record = Record::new(&site, &[], Listing::default());
        let fields = record.csv_fields();
        assert_eq!(
            fields[21..].join("|"),
            "https://a.example/new|2026-11-18T11:06:40Z"
        );
        let json = serde_json::to_value(&record).unwrap();
        assert_eq!(json["moved_to"], "https://a.example/new");
        let mut text = Vec::new();
        record.write_text(&mut text).unwrap();
        assert_eq!(
            String::from_utf8(text).unwrap(),
            "https://a.example/old 200 alive moved to https://a.example/new"
        );
        assert_eq!(
            record.reason(),
            "moved permanently to https://a.example/new"
        );
        assert!(
            record.junit().unwrap().failure.is_none(),
            "alive, outside --moved"
        );
        let listed = Listing {
            moved: true,
            ..Listing::default()
        };
        let failure = Record::new(&site, &[], listed)
            .junit()
            .unwrap()
            .failure
            .unwrap();
        assert_eq!(failure.kind, "moved");
        assert_eq!(
            failure.message,
            "200 alive: moved permanently to https://a.example/new"
        );
        let dead = Checked {
            verdict: Verdict::Dead,
            status: Some(404),
            ..site
        };
        let record = Record::new(&dead, &[], listed);
        assert_eq!(record.reason(), "HTTP 404", "a dead link is dead first");
    }

    #[test]
    fn a_soft_404_prints_its_kind_and_what_it_matched_in_every_format() {
        let soft = Checked {
            status: Some(200),
            error_kind: Some(ErrorKind::Soft404),
            detail: Some("same final URL as probe /x.html: https://a.example/login".into()),
            ..moved()
        };
        let record = Record::new(&soft, &[], Listing::default());
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
        let record = Record::new(&site, &pages, Listing::default());
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

    /// Confirmed dead, found on two pages, with an archived copy.
    fn confirmed_and_archived() -> Checked {
        Checked {
            found_count: 2,
            confirmed_at: Some(1_795_259_200_000),
            archived_url: Some(
                "http://web.archive.org/web/20130919044612/http://a.example/old".into(),
            ),
            archived_at: Some(1_379_565_972_000),
            ..moved()
        }
    }

    #[test]
    fn confirmation_and_archived_copy_print_in_every_format() {
        let site = confirmed_and_archived();
        let pages = ["https://a.example/a|b".to_owned()];
        let record = Record::new(&site, &pages, Listing::default());
        let fields = record.csv_fields();
        assert_eq!(
            fields[14..18].join("|"),
            "2026-11-18T11:06:40Z|2026-11-21T11:06:40Z|\
             http://web.archive.org/web/20130919044612/http://a.example/old|2013-09-19T04:46:12Z"
        );
        let json = serde_json::to_value(&record).unwrap();
        assert_eq!(json["archived_url"], fields[16].as_ref());
        assert_eq!(json["confirmed_at"], "2026-11-21T11:06:40Z");
        let mut text = Vec::new();
        record.write_text(&mut text).unwrap();
        assert!(String::from_utf8(text).unwrap().ends_with(
            " confirmed archived http://web.archive.org/web/20130919044612/http://a.example/old"
        ));
        let mut markdown = Vec::new();
        record.write_markdown(&mut markdown).unwrap();
        assert_eq!(
            String::from_utf8(markdown).unwrap(),
            "| https://a.example/old | dead (confirmed) | 404 | HTTP 404 | \
             https://a.example/a\\|b (and 1 more) | \
             [2013-09-19](http://web.archive.org/web/20130919044612/http://a.example/old) |  | \
             2026-11-18 (was alive) |"
        );
    }

    #[test]
    fn a_site_that_is_not_alive_is_a_failing_test_case_and_an_alive_one_passes() {
        let site = confirmed_and_archived();
        let record = Record::new(&site, &[], Listing::default());
        let case = record.junit().unwrap();
        assert_eq!(
            (case.classname, case.name),
            ("a.example", "https://a.example/old")
        );
        assert_eq!(case.time, Some(0.035));
        let failure = case.failure.unwrap();
        assert_eq!(
            (failure.kind.as_str(), failure.message.as_str()),
            ("dead", "404 dead: HTTP 404")
        );
        for line in [
            "verdict: dead",
            "status: 404",
            "reason: HTTP 404",
            "final URL: https://a.example/new,page",
            "confirmed dead: 2026-11-21T11:06:40Z",
            "archived copy: http://web.archive.org/web/20130919044612/http://a.example/old",
        ] {
            assert!(
                failure.body.lines().any(|l| l == line),
                "{line} in {}",
                failure.body
            );
        }
        let alive = Checked {
            verdict: Verdict::Alive,
            status: Some(200),
            ..moved()
        };
        assert!(Record::new(&alive, &[], Listing::default())
            .junit()
            .unwrap()
            .failure
            .is_none());
        let excluded = Checked {
            verdict: Verdict::Excluded,
            status: None,
            ..moved()
        };
        let record = Record::new(&excluded, &[], Listing::default());
        let case = record.junit().unwrap();
        assert!(case.failure.is_none());
        assert_eq!(case.skipped, Some("excluded: not checked"));
    }
}
