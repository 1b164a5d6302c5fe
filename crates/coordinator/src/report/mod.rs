//! Reporting: checked sites, or hosts, as text, CSV, JSON or NDJSON, streamed page by page so
//! that millions of rows need no more memory than one page; and the summary.
//!
//! # Layout
//! - `sites`: checked sites by verdict ([`write_sites`]), with the pages they were found on.
//! - `by_page`: dead links grouped by the page that carries them ([`write_by_page`]).
//! - `changes`: how many sites went from each verdict to each other since a time
//!   ([`write_change_summary`]); `since`: that time, as `--changed-since` takes it
//!   ([`parse_since`]).
//! - `hosts`: per host, its sites, the worker holding it, its throttling, its address
//!   ([`write_hosts`]); per server address, its holders and what waits ([`write_addresses`]).
//! - `summary`: counts, workers, the hosts with the most dead sites ([`write_summary`]).
//! - `rows`: what the reports share: each format's framing, CSV quoting.
//! - `github`: GitHub Actions workflow commands (annotations) of failing links, and the model
//!   of a failing link that it shares with `sarif`; `sarif`: SARIF 2.1.0 for code scanning.
//! - `host`: `--host HOST[:PORT]` as typed, to the queue's filter ([`parse_host`]).
//! - `output`: stdout, or a file written whole or not at all ([`Output`]).

mod by_page;
mod changes;
mod github;
mod host;
mod hosts;
mod output;
mod rows;
mod sarif;
mod since;
mod sites;
pub(crate) mod summary;

pub use by_page::write_by_page;
pub use changes::write_change_summary;
pub use host::parse_host;
pub use hosts::{write_addresses, write_hosts};
pub use output::Output;
pub use since::{parse_since, Since};
pub use sites::write_sites;
pub use summary::write_summary;

use crawler_queue::{Only, Verdict};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Sites: one a line, URL, then status code or error kind, then verdict. Hosts: aligned
    /// columns under a header.
    Text,
    Csv,
    /// One array of objects.
    Json,
    /// One object per line.
    Ndjson,
    /// Sites: a table (URL, verdict, status, reason, found on, archived copy), to paste into
    /// an issue or a pull request; the summary: a short list. Hosts and pages: a table of the
    /// CSV columns.
    Markdown,
    /// JUnit XML for CI test reporters: a test case per site (classname its host), failing
    /// when it is not alive. Sites only.
    Junit,
    /// GitHub Actions workflow commands: an annotation per failing link and place in a file
    /// (`::error file=…,line=…,col=…`), an error if --fail-on counts it (by default dead links
    /// and missing fragments), else a warning. Sites only.
    Github,
    /// SARIF 2.1.0 for code scanning (GitHub's upload-sarif): a rule per kind of failure, a
    /// result per failing link and place, with its line and column in a file. Sites only.
    Sarif,
}

/// What makes a report exit 4 (`--fail-on`): a site in the report's scope (every site, or
/// `--host`'s) whose verdict this names, whatever the report lists. A site not checked yet has
/// no verdict, and counts for neither.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    /// A dead site: 404, 410, another 4xx.
    Dead,
    /// A site that is not alive: dead, blocked, unreachable or error. Not an excluded one,
    /// which was left out on purpose and never asked.
    NotAlive,
    /// A dead site that `crawler-worker --confirm`'s policy confirmed.
    ConfirmedDead,
    /// A link to a section (`page#section`) that its page, alive, does not have.
    MissingFragment,
    /// An alive link through a permanent redirect (301, 308) to another page (`--moved`).
    Moved,
}

impl FailOn {
    /// The verdicts that fail.
    pub fn verdicts(self) -> &'static [Verdict] {
        match self {
            FailOn::Dead | FailOn::ConfirmedDead => &[Verdict::Dead],
            FailOn::MissingFragment | FailOn::Moved => &[Verdict::Alive],
            FailOn::NotAlive => &[
                Verdict::Dead,
                Verdict::Blocked,
                Verdict::Unreachable,
                Verdict::Error,
            ],
        }
    }
}

impl FailOn {
    /// Which sites of [`FailOn::verdicts`] fail.
    pub fn only(self) -> Only {
        match self {
            FailOn::ConfirmedDead => Only::Confirmed,
            FailOn::MissingFragment => Only::MissingFragments,
            FailOn::Moved => Only::Moved,
            FailOn::Dead | FailOn::NotAlive => Only::All,
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_alive_fails_on_every_verdict_but_alive_and_excluded() {
        let mut verdicts = FailOn::NotAlive.verdicts().to_vec();
        verdicts.extend([Verdict::Alive, Verdict::Excluded]);
        verdicts.sort_by_key(|v| v.as_str());
        let mut all = Verdict::ALL.to_vec();
        all.sort_by_key(|v| v.as_str());
        assert_eq!(verdicts, all);
        assert_eq!(FailOn::Dead.verdicts(), [Verdict::Dead]);
    }

    #[test]
    fn milliseconds_print_as_rfc3339_utc() {
        assert_eq!(rfc3339(1_795_000_000_123), "2026-11-18T11:06:40.123Z");
    }
}
