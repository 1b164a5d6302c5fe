//! The hosts report: per host, its sites by verdict, those waiting for a check, the worker
//! holding its partition, what the fleet learned when it throttled or failed, and the server
//! address it was last asked at; one row a host, in host order. And the addresses report
//! (`--addresses`): per server address held by live workers, its holders, the requests waiting
//! for it and on the wire to it, and its host names, those with the most waiting first (the
//! addresses that bound the drain).
//!
//! Text is aligned columns under a header (the CSV column names, upper case). The widths are
//! fixed, so that the report streams: a longer value shifts the rest of its own line only. A
//! missing value is `-` in text, empty in CSV, `null` in JSON and NDJSON.

use std::borrow::Cow;
use std::io::Write;

use std::collections::HashMap;
use std::time::Duration;

use crawler_queue::{AddressView, Addresses, HostRow, Reports, Verdict};
use serde::Serialize;

use super::format::Format;
use super::rows::{Row, Rows};
use super::timestamp::rfc3339;
use crate::error::Error;

/// Hosts fetched per query: fewer than the site report's rows, as each one sums all its sites.
const PAGE: u32 = 1000;

/// The columns in order: name (the CSV header's, the JSON key), width in text, and whether
/// text aligns it right (the counts).
const COLUMNS: [(&str, usize, bool); 21] = [
    ("host", 32, false),
    ("state", 11, false),
    ("rate", 6, true),
    ("cause", 7, false),
    ("unreachable_since", 24, false),
    ("sites", 7, true),
    ("alive", 7, true),
    ("dead", 7, true),
    ("blocked", 7, true),
    ("unreachable", 11, true),
    ("error", 7, true),
    ("excluded", 8, true),
    ("pending", 7, true),
    ("owner", 20, false),
    ("backoff_until", 24, false),
    ("last_throttled_at", 24, false),
    ("last_status", 11, false),
    ("recent_checks", 13, true),
    ("recent_errors", 13, true),
    ("address", 15, false),
    ("detail", 0, false),
];

/// One host as the machine-readable formats print it (a contract: scripts depend on the keys,
/// the names in [`COLUMNS`]).
#[derive(Serialize)]
struct HostRecord<'a> {
    host: &'a str,
    /// `ok`, `throttled`, `deferred` or `unreachable`.
    state: &'a str,
    /// Requests per second while throttled.
    rate: Option<f64>,
    /// The error kind of an unreachable host's URLs.
    cause: Option<&'a str>,
    /// RFC 3339.
    unreachable_since: Option<String>,
    sites: i64,
    alive: u64,
    dead: u64,
    blocked: u64,
    unreachable: u64,
    error: u64,
    excluded: u64,
    pending: i64,
    owner: Option<&'a str>,
    /// RFC 3339; none when the host has no backoff, or it has passed.
    backoff_until: Option<String>,
    /// RFC 3339.
    last_throttled_at: Option<String>,
    last_status: Option<i32>,
    /// Its recent checks, and those that got no answer.
    recent_checks: i64,
    recent_errors: i64,
    /// The server address it was last asked at.
    address: Option<&'a str>,
    /// What was seen, for an unreachable host.
    detail: Option<&'a str>,
}

impl<'a> HostRecord<'a> {
    #[cfg(test)]
    fn new(row: &'a HostRow) -> HostRecord<'a> {
        Self::at(row, None)
    }

    fn at(row: &'a HostRow, address: Option<&'a str>) -> HostRecord<'a> {
        HostRecord {
            address,
            host: &row.host,
            state: &row.state,
            rate: row.rate.map(|r| (r * 100.0).round() / 100.0),
            cause: row.cause.as_deref(),
            unreachable_since: row.unreachable_since.map(rfc3339),
            detail: row.detail.as_deref(),
            sites: row.sites,
            alive: row.verdicts.get(Verdict::Alive),
            dead: row.verdicts.get(Verdict::Dead),
            blocked: row.verdicts.get(Verdict::Blocked),
            unreachable: row.verdicts.get(Verdict::Unreachable),
            error: row.verdicts.get(Verdict::Error),
            excluded: row.verdicts.get(Verdict::Excluded),
            pending: row.pending,
            owner: row.owner.as_deref(),
            backoff_until: row.backoff_until.map(rfc3339),
            last_throttled_at: row.last_throttled_at.map(rfc3339),
            last_status: row.last_status,
            recent_checks: row.recent_checks,
            recent_errors: row.recent_errors,
        }
    }

    /// The values in column order, empty where missing.
    fn cells(&self) -> [Cow<'_, str>; COLUMNS.len()] {
        let count = |n: i64| Cow::Owned(n.to_string());
        let sites = |n: u64| Cow::Owned(n.to_string());
        let text = |s: Option<&'a str>| Cow::Borrowed(s.unwrap_or(""));
        [
            self.host.into(),
            self.state.into(),
            self.rate.map(|r| r.to_string()).unwrap_or_default().into(),
            text(self.cause),
            self.unreachable_since.as_deref().unwrap_or("").into(),
            count(self.sites),
            sites(self.alive),
            sites(self.dead),
            sites(self.blocked),
            sites(self.unreachable),
            sites(self.error),
            sites(self.excluded),
            count(self.pending),
            text(self.owner),
            self.backoff_until.as_deref().unwrap_or("").into(),
            self.last_throttled_at.as_deref().unwrap_or("").into(),
            self.last_status
                .map(|s| s.to_string())
                .unwrap_or_default()
                .into(),
            count(self.recent_checks),
            count(self.recent_errors),
            text(self.address),
            text(self.detail),
        ]
    }
}

impl Row for HostRecord<'_> {
    fn csv_header() -> String {
        COLUMNS.map(|(name, ..)| name).join(",")
    }

    fn text_header() -> Option<String> {
        Some(text_line(&COLUMNS.map(|(name, ..)| name.to_uppercase())))
    }

    fn csv_fields(&self) -> Vec<Cow<'_, str>> {
        self.cells().into()
    }

    fn write_text(&self, out: &mut impl Write) -> std::io::Result<()> {
        out.write_all(text_line(&self.cells()).as_bytes())
    }
}

/// `cells` padded to their columns' widths, `-` for an empty one, with no trailing space.
fn text_line(cells: &[impl AsRef<str>; COLUMNS.len()]) -> String {
    padded(&COLUMNS, cells)
}

/// `cells` padded to the widths of `columns` (name, width, right-aligned), `-` for an empty
/// one, with no trailing space: a line of the text table of hosts or of addresses.
fn padded(columns: &[(&str, usize, bool)], cells: &[impl AsRef<str>]) -> String {
    let padded: Vec<String> = columns
        .iter()
        .zip(cells)
        .map(|(&(_, width, right), cell)| {
            let cell = match cell.as_ref() {
                "" => "-",
                cell => cell,
            };
            if right {
                format!("{cell:>width$}")
            } else {
                format!("{cell:<width$}")
            }
        })
        .collect();
    padded.join(" ").trim_end().to_owned()
}

/// Writes every host (only `host`, if given) to `out`, in host order, each with the address
/// `addresses` last saw it at; returns the count.
pub async fn write_hosts(
    reports: Reports<'_>,
    addresses: Addresses<'_>,
    host: Option<&str>,
    format: Format,
    out: &mut impl Write,
) -> Result<u64, Error> {
    let mut rows = Rows::start::<HostRecord>(out, format)?;
    let mut after = String::new();
    loop {
        let page = reports.hosts_page(host, &after, PAGE).await?;
        let names: Vec<String> = page.iter().map(|h| h.host.clone()).collect();
        let at: HashMap<String, String> = addresses.of_hosts(&names).await?.into_iter().collect();
        for host in &page {
            rows.write(&HostRecord::at(
                host,
                at.get(&host.host).map(String::as_str),
            ))?;
        }
        match page.last() {
            Some(last) if page.len() == PAGE as usize => after.clone_from(&last.host),
            _ => break,
        }
    }
    rows.finish()
}

/// The columns of the addresses report, as [`COLUMNS`] are the hosts report's.
const ADDRESS_COLUMNS: [(&str, usize, bool); 5] = [
    ("address", 39, false),
    ("holders", 7, true),
    ("waiting", 7, true),
    ("in_flight", 9, true),
    ("hosts", 0, true),
];

/// One server address as the machine-readable formats print it (the names in
/// [`ADDRESS_COLUMNS`]).
#[derive(Serialize)]
struct AddressRecord<'a> {
    address: &'a str,
    /// Live workers holding a share of its budget.
    holders: i64,
    /// Requests waiting for it, and on the wire to it, over its holders.
    waiting: i64,
    in_flight: i64,
    /// Host names last asked at it.
    hosts: i64,
}

impl AddressRecord<'_> {
    fn cells(&self) -> [String; 5] {
        [
            self.address.to_owned(),
            self.holders.to_string(),
            self.waiting.to_string(),
            self.in_flight.to_string(),
            self.hosts.to_string(),
        ]
    }
}

impl Row for AddressRecord<'_> {
    fn csv_header() -> String {
        ADDRESS_COLUMNS.map(|(name, ..)| name).join(",")
    }

    fn text_header() -> Option<String> {
        Some(address_line(
            &ADDRESS_COLUMNS.map(|(name, ..)| name.to_uppercase()),
        ))
    }

    fn csv_fields(&self) -> Vec<Cow<'_, str>> {
        self.cells().into_iter().map(Cow::Owned).collect()
    }

    fn write_text(&self, out: &mut impl Write) -> std::io::Result<()> {
        out.write_all(address_line(&self.cells()).as_bytes())
    }
}

fn address_line(cells: &[String; 5]) -> String {
    padded(&ADDRESS_COLUMNS, cells)
}

/// Writes every server address held by live workers (a heartbeat within `dead_after`), those
/// with the most requests waiting first; returns the count.
pub async fn write_addresses(
    addresses: Addresses<'_>,
    dead_after: Duration,
    format: Format,
    out: &mut impl Write,
) -> Result<u64, Error> {
    let mut rows = Rows::start::<AddressRecord>(out, format)?;
    let view: Vec<AddressView> = addresses.view(dead_after).await?;
    for a in &view {
        rows.write(&AddressRecord {
            address: &a.address,
            holders: a.holders,
            waiting: a.waiting,
            in_flight: a.in_flight,
            hosts: a.hosts,
        })?;
    }
    rows.finish()
}

#[cfg(test)]
mod tests {
    use super::super::rows::assert_json_keys;
    use super::*;

    fn throttled() -> HostRow {
        HostRow {
            host: "a.example".into(),
            sites: 12,
            verdicts: [
                (Verdict::Alive, 5),
                (Verdict::Dead, 3),
                (Verdict::Blocked, 1),
                (Verdict::Error, 1),
            ]
            .into_iter()
            .flat_map(|(v, n)| std::iter::repeat_n(v, n))
            .collect(),
            pending: 2,
            owner: Some("worker-1:42".into()),
            backoff_until: Some(1_795_000_000_123),
            last_throttled_at: Some(1_795_000_000_000),
            last_status: Some(429),
            recent_checks: 40,
            recent_errors: 3,
            state: "deferred".into(),
            rate: Some(2.5),
            unreachable_since: None,
            cause: None,
            detail: None,
        }
    }

    fn quiet() -> HostRow {
        HostRow {
            host: "b.example".into(),
            owner: None,
            backoff_until: None,
            last_throttled_at: None,
            last_status: None,
            recent_checks: 0,
            recent_errors: 0,
            state: "ok".into(),
            rate: None,
            ..throttled()
        }
    }

    #[test]
    fn json_keys_are_the_csv_columns_in_order() {
        let row = throttled();
        let names = COLUMNS.map(|(name, ..)| name);
        assert_json_keys(&HostRecord::new(&row), &names);
        assert_eq!(HostRecord::csv_header(), names.join(","));
    }

    #[test]
    fn times_print_as_rfc3339_and_missing_values_as_null_or_empty() {
        let row = throttled();
        let record = HostRecord::new(&row);
        assert_eq!(
            record.csv_fields().join(","),
            "a.example,deferred,2.5,,,12,5,3,1,0,1,0,2,worker-1:42,2026-11-18T11:06:40.123Z,\
             2026-11-18T11:06:40Z,429,40,3,,"
        );
        let row = quiet();
        let record = HostRecord::new(&row);
        assert_eq!(
            record.csv_fields().join(","),
            "b.example,ok,,,,12,5,3,1,0,1,0,2,,,,,0,0,,"
        );
        let json: serde_json::Value = serde_json::to_value(&record).unwrap();
        for key in ["owner", "backoff_until", "last_throttled_at", "last_status"] {
            assert!(json[key].is_null(), "{key} in {json}");
        }
    }

    #[test]
    fn text_columns_line_up_under_the_header_with_dashes_for_missing_values() {
        let header = HostRecord::text_header().unwrap();
        let (a, b) = (throttled(), quiet());
        let lines = [
            header,
            text_line(&HostRecord::new(&a).cells()),
            text_line(&HostRecord::new(&b).cells()),
        ];
        assert!(lines[0].starts_with("HOST "), "{}", lines[0]);
        assert_eq!(
            lines[2].split_whitespace().collect::<Vec<_>>(),
            [
                "b.example",
                "ok",
                "-",
                "-",
                "-",
                "12",
                "5",
                "3",
                "1",
                "0",
                "1",
                "0",
                "2",
                "-",
                "-",
                "-",
                "-",
                "0",
                "0",
                "-",
                "-"
            ]
        );
        // Every column but the last sits where the widths before it put it, on every line:
        // counts flush right, the rest flush left, a space after each.
        let mut start = 0;
        for &(name, width, right) in &COLUMNS[..12] {
            for line in &lines {
                let cell = &line.as_bytes()[start..=start + width];
                let edge = if right { cell[width - 1] } else { cell[0] };
                assert!(edge != b' ' && cell[width] == b' ', "{name} in {line:?}");
            }
            start += width + 1;
        }
        assert!(lines.iter().all(|l| l == l.trim_end()));
    }
}
