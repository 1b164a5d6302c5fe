//! Reporting: checked sites as text, CSV, JSON or NDJSON, streamed page by page so that millions
//! of rows need no more memory than one page; and the summary.

use std::borrow::Cow;
use std::io::Write;

use crawler_queue::{Checked, Queue, Verdict};
use serde::Serialize;

use crate::redact::strip_userinfo;
use crate::Error;

/// Rows fetched per query.
const PAGE: u32 = 5000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One site per line: URL, then status code or error kind, then verdict.
    Text,
    Csv,
    /// One array of objects.
    Json,
    /// One object per line.
    Ndjson,
}

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

const CSV_HEADER: &str = "url,verdict,status,error_kind,final_url,checked_at,attempts";

/// Writes every checked site with one of `verdicts` (and `host`) to `out`; returns the count.
pub async fn write_sites(
    queue: &Queue,
    verdicts: &[Verdict],
    host: Option<&str>,
    format: Format,
    out: &mut impl Write,
) -> Result<u64, Error> {
    let mut written = 0u64;
    match format {
        Format::Csv => writeln!(out, "{CSV_HEADER}")?,
        Format::Json => write!(out, "[")?,
        _ => {}
    }
    for &verdict in verdicts {
        let mut after = 0;
        loop {
            let page = queue.checked_page(verdict, host, after, PAGE).await?;
            for site in &page {
                if format == Format::Json && written > 0 {
                    write!(out, ",")?;
                }
                write_one(site, format, out)?;
                written += 1;
            }
            match page.last() {
                Some(last) if page.len() == PAGE as usize => after = last.id,
                _ => break,
            }
        }
    }
    if format == Format::Json {
        writeln!(out, "]")?;
    }
    out.flush()?;
    Ok(written)
}

fn write_one(site: &Checked, format: Format, out: &mut impl Write) -> Result<(), Error> {
    let record = Record {
        url: strip_userinfo(&site.url),
        verdict: site.verdict,
        status: site.status,
        error_kind: site.error_kind.map(|k| k.as_str()),
        final_url: site.final_url.as_deref().map(strip_userinfo),
        checked_at: rfc3339(site.checked_at),
        attempts: site.attempts,
    };
    match format {
        Format::Text => {
            let detail = match (record.status, record.error_kind) {
                (_, Some(kind)) => kind.to_string(),
                (Some(status), None) => status.to_string(),
                (None, None) => "-".into(),
            };
            writeln!(out, "{} {detail} {}", record.url, record.verdict)?;
        }
        Format::Json => {
            writeln!(out)?;
            serde_json::to_writer(&mut *out, &record)?;
        }
        Format::Ndjson => {
            serde_json::to_writer(&mut *out, &record)?;
            writeln!(out)?;
        }
        Format::Csv => {
            let status = record.status.map(|s| s.to_string()).unwrap_or_default();
            let fields = [
                &record.url,
                record.verdict.as_str(),
                &status,
                record.error_kind.unwrap_or(""),
                record.final_url.as_deref().unwrap_or(""),
                &record.checked_at,
                &record.attempts.to_string(),
            ];
            let line: Vec<_> = fields.iter().map(|f| csv_field(f)).collect();
            writeln!(out, "{}", line.join(","))?;
        }
    }
    Ok(())
}

/// Quotes a CSV field when it holds a comma, a quote or a line break (RFC 4180).
fn csv_field(field: &str) -> std::borrow::Cow<'_, str> {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\"")).into()
    } else {
        field.into()
    }
}

/// Unix milliseconds as RFC 3339 in UTC, e.g. `2026-11-22T14:03:07.123Z`.
pub fn rfc3339(ms: i64) -> String {
    let nanos = i128::from(ms) * 1_000_000;
    time::OffsetDateTime::from_unix_timestamp_nanos(nanos)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default()
}

/// Counts per verdict and per state, the live workers and their rates, and the hosts with the
/// most dead sites.
pub async fn write_summary(queue: &Queue, out: &mut impl Write) -> Result<(), Error> {
    let states = queue.state_counts().await?;
    let verdicts = queue.verdict_counts().await?;
    let now = queue.now().await?;
    writeln!(
        out,
        "sites: {} pending, {} claimed, {} done",
        states.pending, states.claimed, states.done
    )?;
    for v in Verdict::ALL {
        let n = verdicts
            .iter()
            .find(|(x, _)| *x == v)
            .map_or(0, |(_, n)| *n);
        writeln!(out, "{:<12} {n}", format!("{v}:"))?;
    }
    let workers = queue.workers().await?;
    writeln!(out, "workers: {}", workers.len())?;
    for w in workers {
        let secs = ((w.heartbeat_at - w.started_at) as f64 / 1000.0).max(0.001);
        let seen = (now - w.heartbeat_at) as f64 / 1000.0;
        writeln!(
            out,
            "  {} on {}: {} checked, {:.1}/s, last heard {seen:.0}s ago",
            w.id,
            w.host,
            w.checked,
            w.checked as f64 / secs
        )?;
    }
    let hosts = queue.top_dead_hosts(10).await?;
    if !hosts.is_empty() {
        writeln!(out, "hosts with the most dead sites:")?;
        for (host, n) in hosts {
            writeln!(out, "  {n:>8} {host}")?;
        }
    }
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_with_commas_and_quotes_are_quoted() {
        assert_eq!(
            csv_field("https://a.example/?x=1,2"),
            "\"https://a.example/?x=1,2\""
        );
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("plain"), "plain");
    }

    #[test]
    fn milliseconds_print_as_rfc3339_utc() {
        assert_eq!(rfc3339(1_795_000_000_123), "2026-11-18T11:06:40.123Z");
    }
}
