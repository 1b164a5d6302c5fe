//! What the page shows, as JSON: the totals (the sampler's latest counts), the workers, the
//! hosts in backoff, whether the fleet is paused; and the latest dead sites. The plots are
//! `history.rs`.
//!
//! Each request reads the small tables (workers, hosts, the fleet's switch) and the clock; the
//! counts over the sites table come from the sampler only (`counts.rs`), so a page polling
//! every second costs the database a few small queries.

use std::collections::BTreeMap;

use crawler_queue::{Backoff, Checked, Queue, Reports, Verdict};
use serde::Serialize;

use super::counts::{Counts, Sample};
use crate::error::Error;
use crate::redact::strip_userinfo;
use crate::report::{summary::Worker, timestamp::rfc3339};

/// The hosts in backoff the page lists at most.
const BACKOFFS: u32 = 50;

/// The dead sites the page lists at most, whatever it asks.
pub const MAX_DEAD: u32 = 500;

#[derive(Serialize)]
pub struct Snapshot {
    /// The database's clock, Unix milliseconds: heartbeat ages are measured on it.
    now: i64,
    paused: bool,
    /// Unix milliseconds of the last pause or resume; 0 if never.
    paused_changed_at: i64,
    /// Whether the page may show the Pause and Resume buttons (`--allow-control`).
    allow_control: bool,
    /// Whether the dashboard asks for a token: the page shows a Log out button.
    token_required: bool,
    /// pending, claimed, done, and each verdict; empty until the first sample.
    totals: BTreeMap<&'static str, i64>,
    /// Unix milliseconds of those counts.
    counted_at: Option<u64>,
    workers: Vec<WorkerView>,
    backoffs: Vec<BackoffView>,
}

#[derive(Serialize)]
struct WorkerView {
    #[serde(flatten)]
    worker: Worker,
    /// Milliseconds since its last heartbeat, on the database's clock.
    heartbeat_age_ms: i64,
}

#[derive(Serialize)]
struct BackoffView {
    host: String,
    /// `deferred`, `unreachable` or `throttled`, and an unreachable host's cause.
    state: String,
    cause: Option<String>,
    owner: Option<String>,
    backoff_until: Option<String>,
    last_throttled_at: Option<String>,
    last_status: Option<i32>,
    throttled: i64,
}

/// A dead site as the page lists it: its URL without credentials.
#[derive(Serialize)]
pub struct DeadView {
    url: String,
    status: Option<u16>,
    error_kind: Option<&'static str>,
    verdict: Verdict,
    checked_at: String,
}

impl Snapshot {
    pub async fn read(
        queue: &Queue,
        counts: &Counts,
        allow_control: bool,
        token_required: bool,
    ) -> Result<Snapshot, Error> {
        let fleet = queue.control().fleet_state().await?;
        let reports = queue.reports();
        let now = reports.now().await?;
        let workers = reports.workers().await?;
        let latest = counts.latest();
        Ok(Snapshot {
            now,
            paused: fleet.paused,
            paused_changed_at: fleet.changed_at,
            allow_control,
            token_required,
            totals: latest.map(|s| totals(&s)).unwrap_or_default(),
            counted_at: latest.map(|s| s.at),
            workers: workers
                .into_iter()
                .map(|w| WorkerView {
                    heartbeat_age_ms: (now - w.heartbeat_at).max(0),
                    worker: Worker::new(w),
                })
                .collect(),
            backoffs: reports
                .backoffs(BACKOFFS)
                .await?
                .into_iter()
                .map(BackoffView::from)
                .collect(),
        })
    }
}

fn totals(sample: &Sample) -> BTreeMap<&'static str, i64> {
    let s = sample.states;
    let mut totals = BTreeMap::from([
        ("pending", s.pending),
        ("claimed", s.claimed),
        ("done", s.done),
    ]);
    for verdict in Verdict::ALL {
        let n = i64::try_from(sample.verdicts.get(verdict)).unwrap_or(i64::MAX);
        totals.insert(verdict.as_str(), n);
    }
    totals
}

impl From<Backoff> for BackoffView {
    fn from(b: Backoff) -> BackoffView {
        BackoffView {
            host: b.host,
            state: b.state,
            cause: b.cause,
            owner: b.owner,
            backoff_until: b.backoff_until.map(rfc3339),
            last_throttled_at: b.last_throttled_at.map(rfc3339),
            last_status: b.last_status,
            throttled: b.throttled,
        }
    }
}

/// Up to `limit` (at most [`MAX_DEAD`]) dead sites, the latest first, whose URL contains `text`.
pub async fn latest_dead(
    reports: Reports<'_>,
    text: &str,
    limit: u32,
) -> Result<Vec<DeadView>, Error> {
    let sites = reports.latest_dead(text, limit.min(MAX_DEAD)).await?;
    Ok(sites.into_iter().map(DeadView::from).collect())
}

impl From<Checked> for DeadView {
    fn from(c: Checked) -> DeadView {
        DeadView {
            url: strip_userinfo(&c.url).into_owned(),
            status: c.status,
            error_kind: c.error_kind.map(|k| k.as_str()),
            verdict: c.verdict,
            checked_at: rfc3339(c.checked_at),
        }
    }
}
