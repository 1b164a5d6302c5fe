//! What the page shows, as JSON: the totals (the sampler's latest counts), the workers, the
//! hosts in backoff (each with its server address), the server addresses that requests wait
//! for, whether the fleet is paused; and the latest dead sites. The plots are
//! `history.rs`.
//!
//! Each request reads the small tables (workers, hosts, the fleet's switch) and the clock; the
//! counts over the sites table come from the sampler only (`counts.rs`), so a page polling
//! every second costs the database a few small queries.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use crawler_queue::{Backoff, Checked, Queue, Reports, Verdict};
use serde::Serialize;

use super::counts::{Counts, Sample};
use crate::error::Error;
use crate::redact::strip_userinfo;
use crate::report::{summary::Worker, timestamp::rfc3339};

/// The hosts in backoff the page lists at most.
const BACKOFFS: u32 = 50;

/// The server addresses the page lists at most, those with the most requests waiting first.
const ADDRESSES: usize = 20;

/// A worker is live for the addresses view with a heartbeat this recent: the fleet's default
/// `--dead-after`.
const LIVE: Duration = Duration::from_secs(60);

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
    /// The server addresses held, busiest first (`crawler-report --addresses`).
    addresses: Vec<AddressView>,
}

#[derive(Serialize)]
struct AddressView {
    address: String,
    /// Workers sharing its budget.
    holders: i64,
    /// Requests waiting for it, and on the wire to it.
    waiting: i64,
    in_flight: i64,
    /// Host names last asked at it.
    hosts: i64,
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
    /// The server address it was last asked at.
    address: Option<String>,
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
            backoffs: with_addresses(queue, reports.backoffs(BACKOFFS).await?).await?,
            addresses: queue
                .addresses()
                .view(LIVE)
                .await?
                .into_iter()
                .take(ADDRESSES)
                .map(|a| AddressView {
                    address: a.address,
                    holders: a.holders,
                    waiting: a.waiting,
                    in_flight: a.in_flight,
                    hosts: a.hosts,
                })
                .collect(),
        })
    }
}

/// The hosts in backoff, each with the address it was last asked at.
async fn with_addresses(queue: &Queue, backoffs: Vec<Backoff>) -> Result<Vec<BackoffView>, Error> {
    let hosts: Vec<String> = backoffs.iter().map(|b| b.host.clone()).collect();
    let mut at: HashMap<String, String> = queue
        .addresses()
        .of_hosts(&hosts)
        .await?
        .into_iter()
        .collect();
    Ok(backoffs
        .into_iter()
        .map(|b| {
            let address = at.remove(&b.host);
            BackoffView {
                address,
                ..BackoffView::from(b)
            }
        })
        .collect())
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
            address: None,
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
