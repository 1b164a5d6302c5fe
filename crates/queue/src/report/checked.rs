//! One checked site as a report reads it ([`Checked`]), and the columns and row it is read
//! from, which every page of sites shares.

use crate::error::Error;
use crate::verdict::{ErrorKind, Fragment, Verdict};

/// One checked site, as the report prints it.
#[derive(Clone, Debug, PartialEq)]
pub struct Checked {
    pub id: i64,
    pub url: String,
    pub host: String,
    pub verdict: Verdict,
    pub status: Option<u16>,
    pub error_kind: Option<ErrorKind>,
    pub final_url: Option<String>,
    /// Unix milliseconds.
    pub checked_at: i64,
    pub attempts: i32,
    /// How long the last check took, redirects included.
    pub latency_ms: Option<i32>,
    /// Redirects the last check followed.
    pub redirects: Option<i32>,
    /// Unix milliseconds of the last check that found the site alive, in any round.
    pub last_alive_at: Option<i64>,
    /// Checks in a row, over rounds, that did not find the site alive (0 once it is).
    pub consecutive_failures: i32,
    /// Why the verdict is what it is when the status does not say (a soft 404: what matched).
    pub detail: Option<String>,
    /// Pages (or files) the link was found on (`referrers.rs`); 0 for a seeded URL.
    pub found_count: i32,
    /// Unix milliseconds: when its current streak of dead results began (`confirm.rs`); none
    /// unless it is dead.
    pub dead_since: Option<i64>,
    /// Unix milliseconds: when `--confirm`'s policy confirmed it dead.
    pub confirmed_at: Option<i64>,
    /// The closest archived copy found for it (`--archive-lookup`, `archive.rs`).
    pub archived_url: Option<String>,
    /// Unix milliseconds: the archived copy's time.
    pub archived_at: Option<i64>,
    /// For a fragment's site (`page#section`): whether its page has the section.
    pub fragment: Option<Fragment>,
    /// Unix milliseconds: when its current verdict began (the check that found it), its first
    /// or a change.
    pub changed_at: i64,
    /// The verdict the current one replaced; none for a site's first verdict.
    pub previous_verdict: Option<Verdict>,
    /// Where a permanent redirect sends it: the URL to write instead.
    pub moved_to: Option<String>,
    /// Unix milliseconds: when it began to answer through that redirect.
    pub moved_at: Option<i64>,
}

/// The columns a [`CheckedRow`] reads.
pub(crate) const CHECKED_COLUMNS: &str =
    "id, url, host, verdict, http_status, error_kind, final_url, \
     checked_at, attempts, latency_ms, redirects, last_alive_at, consecutive_failures, detail, found_count, \
     dead_since, confirmed_at, archived_url, archived_at, fragment, verdict_since, previous_verdict, moved_to, \
     moved_at";

#[derive(sqlx::FromRow)]
pub(crate) struct CheckedRow {
    id: i64,
    url: String,
    host: String,
    verdict: String,
    http_status: Option<i32>,
    error_kind: Option<String>,
    final_url: Option<String>,
    checked_at: Option<i64>,
    attempts: i32,
    latency_ms: Option<i32>,
    redirects: Option<i32>,
    last_alive_at: Option<i64>,
    consecutive_failures: i32,
    detail: Option<String>,
    found_count: i32,
    dead_since: Option<i64>,
    confirmed_at: Option<i64>,
    archived_url: Option<String>,
    archived_at: Option<i64>,
    fragment: Option<String>,
    verdict_since: Option<i64>,
    previous_verdict: Option<String>,
    moved_to: Option<String>,
    moved_at: Option<i64>,
}

impl TryFrom<CheckedRow> for Checked {
    type Error = Error;
    fn try_from(row: CheckedRow) -> Result<Checked, Error> {
        Ok(Checked {
            id: row.id,
            url: row.url,
            host: row.host,
            verdict: row.verdict.parse()?,
            status: row.http_status.and_then(|s| u16::try_from(s).ok()),
            error_kind: row.error_kind.as_deref().map(str::parse).transpose()?,
            final_url: row.final_url,
            checked_at: row.checked_at.unwrap_or(0),
            attempts: row.attempts,
            latency_ms: row.latency_ms,
            redirects: row.redirects,
            last_alive_at: row.last_alive_at,
            consecutive_failures: row.consecutive_failures,
            detail: row.detail,
            found_count: row.found_count,
            dead_since: row.dead_since,
            confirmed_at: row.confirmed_at,
            archived_url: row.archived_url,
            archived_at: row.archived_at,
            fragment: row.fragment.as_deref().map(str::parse).transpose()?,
            changed_at: row.verdict_since.or(row.checked_at).unwrap_or(0),
            previous_verdict: row
                .previous_verdict
                .as_deref()
                .map(str::parse)
                .transpose()?,
            moved_to: row.moved_to,
            moved_at: row.moved_at,
        })
    }
}
