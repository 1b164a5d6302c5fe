//! The plots' data: the whole crawl, or its last part, from `checked_at` in the database
//! (`Reports::verdicts_over_time`, `checks_over_time`): verdicts and each worker's checks per
//! bucket of time. A dashboard opened at any time, or restarted, shows what happened before it.
//!
//! A window is cut in about [`BUCKETS`] buckets of a round length ([`bucket_for`]), aligned on
//! the epoch, so the same window asked twice has the same buckets. Each query reads the sites
//! checked in the window: for a large fleet and a long window, millions of index entries. So
//! one query runs at a time whoever asks (a tokio mutex held across it), and its answer is
//! kept [`FRESH_FOR`] for the same window: a page polls every 10 s, and any number of pages
//! cost the database one query per window and interval.

use std::collections::BTreeMap;
use std::collections::HashMap;
use std::time::{Duration, Instant};

use bytes::Bytes;
use crawler_queue::{Queue, Verdict};
use serde::Serialize;
use tokio::sync::Mutex;

use crate::error::Error;

/// The buckets a window is cut in, about.
pub const BUCKETS: i64 = 120;

/// How long an answer is served again for the same window.
pub const FRESH_FOR: Duration = Duration::from_secs(5);

/// The longest window asked for (30 days); 0 asks for the whole crawl.
pub const MAX_RANGE_SECS: i64 = 30 * 86_400;

/// The bucket lengths, in seconds: the shortest that cuts a window in [`BUCKETS`] or fewer.
const STEPS: [i64; 18] = [
    5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10_800, 21_600, 43_200, 86_400,
    172_800, 604_800,
];

/// What the page plots.
#[derive(Debug, PartialEq, Serialize)]
pub struct Plot {
    /// Unix milliseconds of the first bucket's start, and of the database's now.
    pub from: i64,
    pub to: i64,
    pub bucket_ms: i64,
    /// Sites per bucket, by verdict (every verdict, in `Verdict::ALL`'s order).
    pub verdicts: Vec<Series>,
    /// Sites per bucket, by the worker that checked them, by name; `(decided for a host)` for
    /// the sites a host's decision gave a verdict without a check.
    pub workers: Vec<Series>,
}

#[derive(Debug, PartialEq, Serialize)]
pub struct Series {
    pub name: String,
    pub counts: Vec<i64>,
}

/// The name of the sites no worker checked.
const DECIDED: &str = "(decided for a host)";

/// The bucket length for a window of `span_ms`, in milliseconds.
pub fn bucket_for(span_ms: i64) -> i64 {
    let wanted = (span_ms.max(0) + BUCKETS - 1) / BUCKETS;
    let step = STEPS.iter().find(|s| **s * 1000 >= wanted);
    step.unwrap_or(&STEPS[STEPS.len() - 1]) * 1000
}

/// An answer kept: when it was read, and its JSON; by what it answers and its window.
type Kept = HashMap<(&'static str, i64), (Instant, Bytes)>;

/// The answers kept, and the lock one query at a time holds.
#[derive(Debug, Default)]
pub struct Cache(Mutex<Kept>);

impl Cache {
    /// The plot of the last `range_secs` (0: the whole crawl) as JSON, read or kept.
    pub async fn plot(&self, queue: &Queue, range_secs: i64) -> Result<Bytes, Error> {
        self.kept("history", range_secs, || read(queue, range_secs))
            .await
    }

    /// The answer of `what` for the last `range_secs`, as JSON: kept for [`FRESH_FOR`], else
    /// `read`, one read at a time whatever is asked.
    pub async fn kept<T: Serialize>(
        &self,
        what: &'static str,
        range_secs: i64,
        read: impl AsyncFnOnce() -> Result<T, Error>,
    ) -> Result<Bytes, Error> {
        let mut kept = self.0.lock().await;
        if let Some((at, json)) = kept.get(&(what, range_secs)) {
            if at.elapsed() < FRESH_FOR {
                return Ok(json.clone());
            }
        }
        let json = Bytes::from(serde_json::to_vec(&read().await?)?);
        kept.retain(|_, (at, _)| at.elapsed() < FRESH_FOR);
        kept.insert((what, range_secs), (Instant::now(), json.clone()));
        Ok(json)
    }
}

/// The window of the last `range_secs` (0: since the first check): its start and the
/// database's now, Unix milliseconds.
pub async fn window(queue: &Queue, range_secs: i64) -> Result<(i64, i64), Error> {
    let reports = queue.reports();
    let to = reports.now().await?;
    let start = match range_secs {
        0 => reports.first_checked_at().await?.unwrap_or(to).min(to),
        secs => to - secs.clamp(1, MAX_RANGE_SECS) * 1000,
    };
    Ok((start, to))
}

/// The buckets from `start` to `to` of `bucket_ms`: the first's start (aligned on the epoch)
/// and how many.
pub fn buckets(start: i64, to: i64, bucket_ms: i64) -> (i64, usize) {
    let from = start.div_euclid(bucket_ms) * bucket_ms;
    (
        from,
        usize::try_from((to - from) / bucket_ms + 1).unwrap_or(1),
    )
}

/// Reads the plot of the last `range_secs` (0: since the first check) from the database.
async fn read(queue: &Queue, range_secs: i64) -> Result<Plot, Error> {
    let reports = queue.reports();
    let (start, to) = window(queue, range_secs).await?;
    let bucket_ms = bucket_for(to - start);
    let (from, buckets) = buckets(start, to, bucket_ms);
    let mut verdicts: BTreeMap<Verdict, Vec<i64>> = Verdict::ALL
        .iter()
        .map(|v| (*v, vec![0; buckets]))
        .collect();
    for row in reports.verdicts_over_time(from, bucket_ms).await? {
        add(
            verdicts.entry(row.verdict).or_default(),
            row.bucket,
            row.sites,
        );
    }
    let mut workers: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for row in reports.checks_over_time(from, bucket_ms).await? {
        let name = row.worker.unwrap_or_else(|| DECIDED.to_owned());
        let counts = workers.entry(name).or_insert_with(|| vec![0; buckets]);
        add(counts, row.bucket, row.sites);
    }
    Ok(Plot {
        from,
        to,
        bucket_ms,
        verdicts: Verdict::ALL
            .iter()
            .map(|v| {
                series(
                    v.as_str().to_owned(),
                    verdicts.remove(v).unwrap_or_default(),
                )
            })
            .collect(),
        workers: workers.into_iter().map(|(n, c)| series(n, c)).collect(),
    })
}

/// Adds `sites` to `bucket`; a bucket past the end (a check between the clock's read and the
/// query) goes in the last.
pub fn add(counts: &mut [i64], bucket: i64, sites: i64) {
    let last = counts.len().saturating_sub(1);
    if let Some(n) = counts.get_mut(usize::try_from(bucket).unwrap_or(0).min(last)) {
        *n += sites;
    }
}

pub fn series(name: String, counts: Vec<i64>) -> Series {
    Series { name, counts }
}

/// The window a query string asks for, in seconds: `range=SECONDS`, 0 or `all` for the whole
/// crawl (the default).
pub fn range_query(query: &str) -> i64 {
    url::form_urlencoded::parse(query.as_bytes())
        .find(|(key, _)| key == "range")
        .and_then(|(_, value)| value.parse::<i64>().ok())
        .map_or(0, |secs| secs.clamp(0, MAX_RANGE_SECS))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_is_cut_in_at_most_120_round_buckets() {
        assert_eq!(bucket_for(0), 5_000);
        assert_eq!(bucket_for(30_000), 5_000);
        assert_eq!(bucket_for(3_600_000), 30_000);
        assert_eq!(bucket_for(86_400_000), 900_000);
        assert_eq!(bucket_for(MAX_RANGE_SECS * 1000), 21_600_000);
        for span in [1, 59_999, 3_600_001, 7 * 86_400_000] {
            assert!(span / bucket_for(span) <= BUCKETS, "{span}");
        }
    }

    #[test]
    fn a_late_check_goes_in_the_last_bucket() {
        let mut counts = vec![0; 3];
        add(&mut counts, 1, 2);
        add(&mut counts, 7, 1);
        assert_eq!(counts, [0, 2, 1]);
    }

    #[test]
    fn the_range_is_seconds_the_whole_crawl_by_default() {
        assert_eq!(range_query("range=900"), 900);
        assert_eq!(range_query(""), 0);
        assert_eq!(range_query("range=all"), 0);
        assert_eq!(range_query("range=-5"), 0);
        assert_eq!(range_query("range=99999999999"), MAX_RANGE_SECS);
    }
}
