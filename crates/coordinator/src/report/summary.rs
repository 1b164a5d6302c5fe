//! The summary: where the crawl stands, who works on it, and where the dead sites are.
//!
//! Text is for people. CSV, JSON and NDJSON hold it as one row, framed as the other reports are
//! (JSON an array of one object), for scripts and dashboards: the counts per state and verdict,
//! then the workers (in CSV, their number) and, in JSON and NDJSON, the hosts with the most dead
//! sites (for every host, `--hosts`).

use std::borrow::Cow;
use std::io::Write;

use crawler_queue::{Only, Reports, Scope, Verdict, VerdictCounts, WorkerRow};
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use super::format::Format;
use super::rows::{Row, Rows};
use super::timestamp::rfc3339;
use crate::error::Error;

/// The hosts with the most dead sites that the summary names.
const TOP_DEAD_HOSTS: u32 = 10;

/// The counts, in order: the CSV columns and the first JSON keys (then `workers`, a number in
/// CSV and the list in JSON, and `top_dead_hosts`).
const COUNTS: [&str; 9] = [
    "pending",
    "claimed",
    "done",
    "alive",
    "dead",
    "blocked",
    "unreachable",
    "error",
    "excluded",
];

/// The summary as the machine-readable formats print it (a contract: scripts depend on the
/// keys).
#[derive(Serialize)]
struct Summary {
    pending: i64,
    claimed: i64,
    done: i64,
    /// Sites per verdict, a key each (`excluded`: sites the workers' `--include`/`--exclude`
    /// left out, never asked).
    #[serde(flatten)]
    verdicts: PerVerdict,
    /// The registered workers, most recently heard first.
    workers: Vec<Worker>,
    top_dead_hosts: Vec<DeadHost>,
    /// Links to a section (`page#section`) that their alive page lacks (counted among the
    /// alive: their page is).
    missing_fragments: u64,
    /// The database's clock, for the text's "last heard".
    #[serde(skip)]
    now: i64,
}

/// The counts per verdict, written as one key per verdict in [`Verdict::ALL`]'s order.
struct PerVerdict(VerdictCounts);

impl Serialize for PerVerdict {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(Verdict::ALL.len()))?;
        for (verdict, n) in self.0.iter() {
            map.serialize_entry(verdict.as_str(), &n)?;
        }
        map.end()
    }
}

/// A worker as the summary and the dashboard show it.
#[derive(Serialize)]
pub(crate) struct Worker {
    id: String,
    /// The machine it runs on.
    host: String,
    pid: i64,
    /// Sites it checked since it started.
    checked: i64,
    /// `checked` over the time from its start to its last heartbeat.
    per_second: f64,
    /// RFC 3339.
    started_at: String,
    /// RFC 3339: when it was last heard.
    heartbeat_at: String,
    #[serde(skip)]
    heartbeat_ms: i64,
}

#[derive(Serialize)]
struct DeadHost {
    host: String,
    dead: i64,
}

impl Worker {
    pub(crate) fn new(w: WorkerRow) -> Worker {
        let secs = ((w.heartbeat_at - w.started_at) as f64 / 1000.0).max(0.001);
        Worker {
            per_second: w.checked as f64 / secs,
            started_at: rfc3339(w.started_at),
            heartbeat_at: rfc3339(w.heartbeat_at),
            heartbeat_ms: w.heartbeat_at,
            id: w.id,
            host: w.host,
            pid: w.pid,
            checked: w.checked,
        }
    }
}

impl Summary {
    async fn read(reports: Reports<'_>) -> Result<Summary, Error> {
        let states = reports.state_counts().await?;
        let verdicts = reports.verdict_counts().await?;
        let top_dead_hosts = reports.top_dead_hosts(TOP_DEAD_HOSTS).await?;
        let missing_fragments = reports
            .checked_count(
                &[Verdict::Alive],
                Scope {
                    only: Only::MissingFragments,
                    ..Scope::default()
                },
            )
            .await?;
        Ok(Summary {
            pending: states.pending,
            claimed: states.claimed,
            done: states.done,
            verdicts: PerVerdict(verdicts),
            workers: reports
                .workers()
                .await?
                .into_iter()
                .map(Worker::new)
                .collect(),
            top_dead_hosts: top_dead_hosts
                .into_iter()
                .map(|(host, dead)| DeadHost { host, dead })
                .collect(),
            missing_fragments,
            now: reports.now().await?,
        })
    }

    /// The counts per verdict, in [`Verdict::ALL`]'s order.
    fn verdicts(&self) -> impl Iterator<Item = (Verdict, u64)> + '_ {
        self.verdicts.0.iter()
    }
}

impl Row for Summary {
    fn csv_header() -> String {
        format!("{},workers,missing_fragments", COUNTS.join(","))
    }

    fn markdown_table() -> bool {
        false
    }

    /// A short list: the verdicts checked, what is left, and where the dead sites are.
    fn write_markdown(&self, out: &mut impl Write) -> std::io::Result<()> {
        // An excluded site has a verdict, but was never asked.
        let checked: u64 = self
            .verdicts()
            .filter(|(v, _)| *v != Verdict::Excluded)
            .map(|(_, n)| n)
            .sum();
        write!(out, "**{checked} sites checked**")?;
        let left = self.pending + self.claimed;
        if left > 0 {
            write!(out, ", {left} still to check")?;
        }
        writeln!(out)?;
        writeln!(out)?;
        for (v, n) in self.verdicts() {
            writeln!(out, "- {v}: {n}")?;
        }
        if self.missing_fragments > 0 {
            writeln!(out, "- missing fragments: {}", self.missing_fragments)?;
        }
        if !self.top_dead_hosts.is_empty() {
            let hosts: Vec<String> = self
                .top_dead_hosts
                .iter()
                .map(|h| format!("{} ({})", super::rows::markdown_cell(&h.host), h.dead))
                .collect();
            write!(
                out,
                "- hosts with the most dead sites: {}",
                hosts.join(", ")
            )?;
        }
        Ok(())
    }

    fn csv_fields(&self) -> Vec<Cow<'_, str>> {
        let states = [self.pending, self.claimed, self.done].map(|n| n.to_string());
        let verdicts = self.verdicts().map(|(_, n)| n.to_string());
        let rest = [self.workers.len() as u64, self.missing_fragments].map(|n| n.to_string());
        states
            .into_iter()
            .chain(verdicts)
            .chain(rest)
            .map(Cow::Owned)
            .collect()
    }

    fn write_text(&self, out: &mut impl Write) -> std::io::Result<()> {
        write!(
            out,
            "sites: {} pending, {} claimed, {} done",
            self.pending, self.claimed, self.done
        )?;
        for (v, n) in self.verdicts() {
            write!(out, "\n{:<12} {n}", format!("{v}:"))?;
        }
        if self.missing_fragments > 0 {
            write!(out, "\nmissing fragments: {}", self.missing_fragments)?;
        }
        write!(out, "\nworkers: {}", self.workers.len())?;
        for w in &self.workers {
            let seen = (self.now - w.heartbeat_ms) as f64 / 1000.0;
            write!(
                out,
                "\n  {} on {}: {} checked, {:.1}/s, last heard {seen:.0}s ago",
                w.id, w.host, w.checked, w.per_second
            )?;
        }
        if !self.top_dead_hosts.is_empty() {
            write!(out, "\nhosts with the most dead sites:")?;
            for h in &self.top_dead_hosts {
                write!(out, "\n  {:>8} {}", h.dead, h.host)?;
            }
        }
        Ok(())
    }
}

/// Counts per verdict and per state, the live workers and their rates, and the hosts with the
/// most dead sites, in `format`.
pub async fn write_summary(
    reports: Reports<'_>,
    format: Format,
    out: &mut impl Write,
) -> Result<(), Error> {
    let summary = Summary::read(reports).await?;
    let mut rows = Rows::start::<Summary>(out, format)?;
    rows.write(&summary)?;
    rows.finish().map(drop)
}

#[cfg(test)]
mod tests {
    use super::super::rows::assert_json_keys;
    use super::*;

    fn summary() -> Summary {
        Summary {
            pending: 1,
            claimed: 2,
            done: 10,
            verdicts: PerVerdict(VerdictCounts::from_iter(
                [
                    [Verdict::Alive; 6].as_slice(),
                    &[Verdict::Dead; 3],
                    &[Verdict::Blocked],
                    &[Verdict::Excluded; 2],
                ]
                .concat(),
            )),
            workers: vec![Worker::new(WorkerRow {
                id: "w1".into(),
                host: "box".into(),
                pid: 42,
                started_at: 1_795_000_000_000,
                heartbeat_at: 1_795_000_010_000,
                checked: 50,
            })],
            top_dead_hosts: vec![DeadHost {
                host: "a.example".into(),
                dead: 3,
            }],
            missing_fragments: 0,
            now: 1_795_000_012_000,
        }
    }

    fn written(format: Format) -> String {
        let mut out = Vec::new();
        let mut rows = Rows::start::<Summary>(&mut out, format).unwrap();
        rows.write(&summary()).unwrap();
        rows.finish().unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn csv_is_a_header_and_one_row_of_counts() {
        assert_eq!(
            written(Format::Csv),
            "pending,claimed,done,alive,dead,blocked,unreachable,error,excluded,workers,\
             missing_fragments\n1,2,10,6,3,1,0,0,2,1,0\n"
        );
    }

    #[test]
    fn json_holds_the_counts_then_the_workers_and_dead_hosts() {
        let keys = [
            &COUNTS[..],
            &["workers", "top_dead_hosts", "missing_fragments"],
        ]
        .concat();
        assert_json_keys(&summary(), &keys);
        let json: serde_json::Value = serde_json::from_str(&written(Format::Json)).unwrap();
        assert_eq!(json[0]["workers"][0]["per_second"], 5.0);
        assert_eq!(
            json[0]["workers"][0]["heartbeat_at"],
            "2026-11-18T11:06:50Z"
        );
        assert_eq!(json[0]["top_dead_hosts"][0]["dead"], 3);
        let ndjson = written(Format::Ndjson);
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&ndjson).unwrap(),
            json[0]
        );
    }

    #[test]
    fn text_reads_as_it_always_did() {
        assert_eq!(
            written(Format::Text),
            "sites: 1 pending, 2 claimed, 10 done\n\
             alive:       6\n\
             dead:        3\n\
             blocked:     1\n\
             unreachable: 0\n\
             error:       0\n\
             excluded:    2\n\
             workers: 1\n  \
             w1 on box: 50 checked, 5.0/s, last heard 2s ago\n\
             hosts with the most dead sites:\n         \
             3 a.example\n"
        );
    }

    #[test]
    fn markdown_is_a_short_list() {
        assert_eq!(
            written(Format::Markdown),
            "**10 sites checked**, 3 still to check\n\n\
             - alive: 6\n- dead: 3\n- blocked: 1\n- unreachable: 0\n- error: 0\n- excluded: 2\n\
             - hosts with the most dead sites: a.example (3)\n"
        );
    }
}
