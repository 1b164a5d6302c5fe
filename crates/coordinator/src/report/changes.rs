//! The summary of changes (`--summary --changed-since WHEN`, or `--changed-since` alone): how
//! many sites went from each verdict to each other since WHEN, a row per pair, first verdicts
//! (new links) as a previous verdict of `new`.

use std::borrow::Cow;
use std::io::Write;

use crawler_queue::{ChangeCount, HostFilter, Reports, Verdict};
use serde::Serialize;

use super::format::Format;
use super::rows::{Row, Rows};
use super::timestamp::rfc3339;
use crate::error::Error;

/// The columns in order: the CSV header's, the JSON keys.
const COLUMNS: [&str; 4] = ["since", "previous_verdict", "verdict", "changes"];

/// One pair of verdicts and how many sites went from the first to the second.
#[derive(Serialize)]
struct Changed {
    /// RFC 3339: the window's start.
    since: String,
    /// None: the sites' first verdict.
    previous_verdict: Option<Verdict>,
    verdict: Verdict,
    changes: i64,
}

impl Changed {
    fn previous(&self) -> &'static str {
        self.previous_verdict.map_or("new", Verdict::as_str)
    }
}

impl Row for Changed {
    fn csv_header() -> String {
        COLUMNS.join(",")
    }

    fn text_header() -> Option<String> {
        Some(format!(
            "{:<12} {:<12} {:>9}",
            "previous", "verdict", "changes"
        ))
    }

    fn csv_fields(&self) -> Vec<Cow<'_, str>> {
        vec![
            Cow::Borrowed(self.since.as_str()),
            self.previous_verdict.map_or("", Verdict::as_str).into(),
            self.verdict.as_str().into(),
            self.changes.to_string().into(),
        ]
    }

    fn markdown_header() -> Vec<String> {
        ["Was", "Now", "Sites"].map(str::to_owned).to_vec()
    }

    fn write_markdown(&self, out: &mut impl Write) -> std::io::Result<()> {
        super::rows::table_row(
            out,
            &[
                self.previous(),
                self.verdict.as_str(),
                &self.changes.to_string(),
            ],
        )
    }

    fn write_text(&self, out: &mut impl Write) -> std::io::Result<()> {
        write!(
            out,
            "{:<12} {:<12} {:>9}",
            self.previous(),
            self.verdict.as_str(),
            self.changes
        )
    }
}

/// Writes the changes of verdict (of `host`, if given) since `since` (Unix milliseconds), a
/// row per pair of verdicts; returns how many sites changed.
pub async fn write_change_summary(
    reports: Reports<'_>,
    since: i64,
    host: Option<&HostFilter>,
    format: Format,
    out: &mut impl Write,
) -> Result<i64, Error> {
    let counts = reports.change_counts(since, host).await?;
    let mut rows = Rows::start::<Changed>(out, format)?;
    let since = rfc3339(since);
    for ChangeCount {
        previous,
        verdict,
        count,
    } in &counts
    {
        rows.write(&Changed {
            since: since.clone(),
            previous_verdict: *previous,
            verdict: *verdict,
            changes: *count,
        })?;
    }
    rows.finish()?;
    Ok(counts.iter().map(|c| c.count).sum())
}

#[cfg(test)]
mod tests {
    use super::super::rows::assert_json_keys;
    use super::*;

    fn recovered() -> Changed {
        Changed {
            since: rfc3339(1_796_378_400_000),
            previous_verdict: Some(Verdict::Dead),
            verdict: Verdict::Alive,
            changes: 3,
        }
    }

    #[test]
    fn json_keys_are_the_csv_columns_in_order() {
        assert_json_keys(&recovered(), &COLUMNS);
        assert_eq!(Changed::csv_header(), COLUMNS.join(","));
    }

    #[test]
    fn a_pair_prints_in_every_format_and_a_first_verdict_is_new() {
        let row = recovered();
        assert_eq!(
            row.csv_fields().join(","),
            "2026-12-04T10:00:00Z,dead,alive,3"
        );
        let mut text = Vec::new();
        row.write_text(&mut text).unwrap();
        assert_eq!(
            String::from_utf8(text).unwrap(),
            "dead         alive                3"
        );
        let new = Changed {
            previous_verdict: None,
            verdict: Verdict::Dead,
            ..recovered()
        };
        assert_eq!(new.csv_fields()[1], "");
        let mut markdown = Vec::new();
        new.write_markdown(&mut markdown).unwrap();
        assert_eq!(String::from_utf8(markdown).unwrap(), "| new | dead | 3 |");
        assert_eq!(
            serde_json::to_value(&new).unwrap()["previous_verdict"],
            serde_json::Value::Null
        );
    }
}
