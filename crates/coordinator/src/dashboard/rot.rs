//! The link rot panel's data: how many links broke (a dead verdict began: a new link that is
//! dead, or a link that died) and how many recovered (an alive verdict replaced another) per
//! hour, or per day for a window longer than two days, and the latest changes. Read from the
//! history (`Reports::changes_over_time`, `latest_changes`: every verdict that began in the
//! window, the current ones and those replaced since), kept as the plots are (`history::Cache`).

use crawler_queue::{ChangesIn, Queue, Verdict};
use serde::Serialize;

use super::history::{add, buckets, series, window, Series};
use crate::error::Error;
use crate::redact::strip_userinfo;
use crate::report::timestamp::rfc3339;

const HOUR_MS: i64 = 3_600_000;
const DAY_MS: i64 = 24 * HOUR_MS;

/// The latest changes the panel lists.
const LATEST: u32 = 20;

/// What the panel shows.
#[derive(Debug, PartialEq, Serialize)]
pub struct Rot {
    /// Unix milliseconds of the first bucket's start, and of the database's now.
    pub from: i64,
    pub to: i64,
    pub bucket_ms: i64,
    /// `newly dead`, then `recovered`: links per bucket.
    pub series: Vec<Series>,
    pub latest: Vec<Latest>,
}

/// A change, as the panel lists it.
#[derive(Debug, PartialEq, Serialize)]
pub struct Latest {
    pub url: String,
    pub verdict: Verdict,
    /// None for a new link's first verdict.
    pub previous_verdict: Option<Verdict>,
    /// RFC 3339.
    pub changed_at: String,
    pub status: Option<u16>,
    pub error_kind: Option<&'static str>,
}

/// The bucket of a window of `span_ms`: an hour, or a day beyond two.
fn bucket_for(span_ms: i64) -> i64 {
    match span_ms > 2 * DAY_MS {
        true => DAY_MS,
        false => HOUR_MS,
    }
}

/// Whether a verdict that began counts as newly dead (0) or recovered (1).
fn kind(change: &ChangesIn) -> Option<usize> {
    match (change.verdict, change.previous) {
        (Verdict::Dead, _) => Some(0),
        (Verdict::Alive, Some(previous)) if previous != Verdict::Alive => Some(1),
        _ => None,
    }
}

/// Reads the panel of the last `range_secs` (0: the whole crawl).
pub async fn read(queue: &Queue, range_secs: i64) -> Result<Rot, Error> {
    let reports = queue.reports();
    let (start, to) = window(queue, range_secs).await?;
    // The whole crawl's changes reach back to its first verdict, rechecked since or not.
    let start = match range_secs {
        0 => reports.first_change_at().await?.unwrap_or(start).min(start),
        _ => start,
    };
    let bucket_ms = bucket_for(to - start);
    let (from, n) = buckets(start, to, bucket_ms);
    let mut counts = [vec![0; n], vec![0; n]];
    let verdicts = [Verdict::Dead, Verdict::Alive];
    for change in reports
        .changes_over_time(&verdicts, from, bucket_ms)
        .await?
    {
        if let Some(k) = kind(&change) {
            add(&mut counts[k], change.bucket, change.sites);
        }
    }
    let [dead, recovered] = counts;
    let latest = reports.latest_changes(LATEST).await?;
    Ok(Rot {
        from,
        to,
        bucket_ms,
        series: vec![
            series("newly dead".into(), dead),
            series("recovered".into(), recovered),
        ],
        latest: latest
            .into_iter()
            .map(|c| Latest {
                url: strip_userinfo(&c.url).into_owned(),
                verdict: c.verdict,
                previous_verdict: c.previous,
                changed_at: rfc3339(c.changed_at),
                status: c.status,
                error_kind: c.error_kind.map(|k| k.as_str()),
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(verdict: Verdict, previous: Option<Verdict>) -> ChangesIn {
        ChangesIn {
            bucket: 0,
            previous,
            verdict,
            sites: 1,
        }
    }

    #[test]
    fn a_dead_verdict_is_newly_dead_and_an_alive_one_after_another_recovered() {
        assert_eq!(
            kind(&change(Verdict::Dead, None)),
            Some(0),
            "a new link, dead"
        );
        assert_eq!(kind(&change(Verdict::Dead, Some(Verdict::Alive))), Some(0));
        let recovered = change(Verdict::Alive, Some(Verdict::Unreachable));
        assert_eq!(kind(&recovered), Some(1));
        assert_eq!(
            kind(&change(Verdict::Alive, None)),
            None,
            "a new link, alive"
        );
        assert_eq!(kind(&change(Verdict::Blocked, Some(Verdict::Alive))), None);
    }

    #[test]
    fn a_window_is_in_hours_up_to_two_days_then_in_days() {
        assert_eq!(bucket_for(15 * 60_000), HOUR_MS);
        assert_eq!(bucket_for(2 * DAY_MS), HOUR_MS);
        assert_eq!(bucket_for(7 * DAY_MS), DAY_MS);
    }
}
