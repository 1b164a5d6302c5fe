//! `--archive-lookup`: an archived copy for each dead link, from a Wayback-compatible
//! availability API (`GET API?url=URL&timestamp=YYYYMMDDhhmmss`, answering
//! `{"archived_snapshots": {"closest": {"available": true, "url": …, "timestamp": …,
//! "status": "200"}}}`).
//!
//! It runs beside the checks and never delays a verdict: one process of the fleet at a time
//! (the holder of the `archive` lease, `crawler_queue::archive`) reads the dead sites not looked
//! up yet, a page at a time, asks the archive for the copy closest to when each was last alive,
//! at most `--archive-rate` requests a second and one at a time, and keeps the answer on the
//! site's row, found or not: a URL is asked once. An answer that may pass (no connection, a
//! timeout, 429, 5xx) is retried twice, after 2 s then 4 s (or the Retry-After, up to a
//! minute); if the archive still fails, the pass ends there and the next one tries again. A
//! worker that drains looks up what is left before it exits.

use std::time::Duration;

use crawler_queue::{Archived, Queue, ToArchive};
use tokio::time::Instant;

/// How often the lease holder looks for dead sites to look up.
pub const EVERY: Duration = Duration::from_secs(10);

/// Dead sites read per pass.
const PAGE: u32 = 100;

/// Requests for one URL when the archive's answer may pass.
const ATTEMPTS: u32 = 3;

/// The wait before the second request for a URL; it doubles for the third.
const FIRST_RETRY: Duration = Duration::from_secs(2);

/// The longest Retry-After waited for.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// One request's time limit.
const TIMEOUT: Duration = Duration::from_secs(30);

/// What `--archive-lookup` runs with.
#[derive(Clone, Debug)]
pub struct ArchiveConfig {
    /// The availability API (`--archive-api`).
    pub api: url::Url,
    /// Requests per second at most (`--archive-rate`).
    pub rate: f64,
}

/// The archive answered nothing usable, after its retries.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Failed(String);

/// Looks up archived copies, one request at a time, paced.
pub struct Archiver {
    queue: Queue,
    client: reqwest::Client,
    config: ArchiveConfig,
    /// The last id read: the next page starts after it, and wraps around at the end.
    after: i64,
    /// When the next request may start.
    next_request: Instant,
}

impl Archiver {
    pub fn new(
        queue: Queue,
        config: ArchiveConfig,
        user_agent: &str,
    ) -> Result<Archiver, reqwest::Error> {
        let client = reqwest::Client::builder()
            .user_agent(user_agent)
            .timeout(TIMEOUT)
            .build()?;
        Ok(Archiver {
            queue,
            client,
            config,
            after: 0,
            next_request: Instant::now(),
        })
    }

    /// How long the lease of a pass must last: a page at the rate, and some.
    pub fn lease(&self) -> Duration {
        let page = Duration::from_secs_f64(f64::from(PAGE) / self.config.rate);
        page + 2 * EVERY + MAX_RETRY_AFTER
    }

    /// Looks up a page of dead sites not looked up yet, if `owner` holds the archive lease.
    /// Returns how many were looked up, or `None` when there was nothing to do (another process
    /// holds the lease, or no dead site is left after a full turn).
    pub async fn pass(&mut self, owner: &str) -> Option<u64> {
        match self.queue.archive().lead(owner, self.lease()).await {
            Ok(true) => {}
            Ok(false) => return None,
            Err(error) => {
                tracing::warn!(error = %crawler_queue::error_chain(&error), "cannot take the archive lease");
                return None;
            }
        }
        let page = match self.queue.archive().to_archive(self.after, PAGE).await {
            Ok(page) => page,
            Err(error) => {
                tracing::warn!(error = %crawler_queue::error_chain(&error), "cannot read the dead sites to look up");
                return None;
            }
        };
        if page.len() < PAGE as usize {
            // The end of the table: the next page starts over, for the sites that failed.
            let started_at = self.after;
            self.after = 0;
            if page.is_empty() {
                return (started_at > 0).then_some(0);
            }
        } else if let Some(last) = page.last() {
            self.after = last.id;
        }
        let mut looked_up = 0;
        for site in &page {
            let found = match self.lookup(site).await {
                Ok(found) => found,
                Err(Failed(why)) => {
                    tracing::warn!(url = %site.url, %why, "the archive failed; trying again at the next pass");
                    return Some(looked_up);
                }
            };
            if let Err(error) = self.queue.archive().store(site.id, found.as_ref()).await {
                tracing::warn!(error = %crawler_queue::error_chain(&error), "cannot store an archived copy");
                return Some(looked_up);
            }
            looked_up += 1;
        }
        Some(looked_up)
    }

    /// Looks up what is left, a pass after another, until none is (a draining worker's last
    /// duty), or the archive fails.
    pub async fn finish(&mut self, owner: &str) {
        let mut total = 0;
        while let Some(n) = self.pass(owner).await {
            total += n;
            if n == 0 && self.after == 0 {
                break;
            }
        }
        if total > 0 {
            tracing::info!(sites = total, "looked up archived copies of dead sites");
        }
        let _ = self.queue.archive().resign(owner).await;
    }

    /// The archive's closest copy of `site`, or none; retries what may pass.
    async fn lookup(&mut self, site: &ToArchive) -> Result<Option<Archived>, Failed> {
        let mut url = self.config.api.clone();
        url.query_pairs_mut()
            .append_pair("url", &site.url)
            .append_pair("timestamp", &wayback_timestamp(site.wanted_at));
        let mut wait = FIRST_RETRY;
        for attempt in 1..=ATTEMPTS {
            tokio::time::sleep_until(self.next_request).await;
            self.next_request = Instant::now() + Duration::from_secs_f64(1.0 / self.config.rate);
            let answer = self.client.get(url.clone()).send().await;
            let (why, retry_after) = match answer {
                Ok(response) if response.status().is_success() => {
                    let body = response.bytes().await.map_err(|e| Failed(e.to_string()))?;
                    return closest(&body).map_err(Failed);
                }
                // The archive says this request is wrong: no copy to find.
                Ok(response) if matches!(response.status().as_u16(), 400 | 414 | 422) => {
                    return Ok(None);
                }
                Ok(response)
                    if response.status().as_u16() == 429 || response.status().is_server_error() =>
                {
                    let after = retry_after(&response);
                    (format!("the archive answered {}", response.status()), after)
                }
                Ok(response) => {
                    return Err(Failed(format!(
                        "the archive answered {} (is --archive-api right?)",
                        response.status()
                    )))
                }
                Err(error) => (crawler_queue::error_chain(&error), None),
            };
            if attempt == ATTEMPTS {
                return Err(Failed(why));
            }
            tokio::time::sleep(retry_after.unwrap_or(wait).min(MAX_RETRY_AFTER)).await;
            wait *= 2;
        }
        unreachable!("the last attempt returns")
    }
}

/// A Retry-After in seconds, if the response has one.
fn retry_after(response: &reqwest::Response) -> Option<Duration> {
    let value = response.headers().get(reqwest::header::RETRY_AFTER)?;
    value
        .to_str()
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()
        .map(Duration::from_secs)
}

/// The closest available copy in an availability API's answer.
fn closest(body: &[u8]) -> Result<Option<Archived>, String> {
    let answer: serde_json::Value = serde_json::from_slice(body)
        .map_err(|e| format!("the archive's answer is not JSON: {e}"))?;
    let Some(closest) = answer.pointer("/archived_snapshots/closest") else {
        return Ok(None);
    };
    let available = closest.get("available").and_then(|a| a.as_bool()) == Some(true);
    // A copy of an error page is no copy; a missing status is taken as the API's default, 200.
    let status_ok = closest
        .get("status")
        .and_then(|s| s.as_str())
        .is_none_or(|s| s.starts_with('2'));
    let url = closest.get("url").and_then(|u| u.as_str());
    match url {
        Some(url) if available && status_ok && !url.is_empty() => Ok(Some(Archived {
            url: url.to_owned(),
            at: closest
                .get("timestamp")
                .and_then(|t| t.as_str())
                .and_then(parse_wayback_timestamp),
        })),
        _ => Ok(None),
    }
}

/// Unix milliseconds as the Wayback Machine's `YYYYMMDDhhmmss` (UTC).
fn wayback_timestamp(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}{m:02}{d:02}{:02}{:02}{:02}",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// `YYYYMMDDhhmmss` (or a prefix of it, down to the year) as Unix milliseconds.
fn parse_wayback_timestamp(text: &str) -> Option<i64> {
    if text.len() < 4 || text.len() > 14 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let field = |at: usize, default: i64| -> i64 {
        text.get(at..at + 2)
            .and_then(|f| f.parse().ok())
            .unwrap_or(default)
    };
    let year: i64 = text[..4].parse().ok()?;
    let (month, day) = (field(4, 1), field(6, 1));
    let (hour, minute, second) = (field(8, 0), field(10, 0), field(12, 0));
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    let days = days_from_civil(year, month, day);
    Some((days * 86_400 + hour * 3600 + minute * 60 + second.min(60)) * 1000)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day since 1970-01-01 (the inverse of [`days_from_civil`]).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_go_both_ways_in_utc() {
        // 2026-11-18T11:06:40Z
        assert_eq!(wayback_timestamp(1_795_000_000_123), "20261118110640");
        assert_eq!(
            parse_wayback_timestamp("20261118110640"),
            Some(1_795_000_000_000)
        );
        assert_eq!(wayback_timestamp(0), "19700101000000");
        assert_eq!(parse_wayback_timestamp("2000"), Some(946_684_800_000));
        assert_eq!(parse_wayback_timestamp("20001301000000"), None);
        assert_eq!(parse_wayback_timestamp("2026x118"), None);
        for ms in [951_782_400_000_i64, 4_107_542_399_000] {
            assert_eq!(parse_wayback_timestamp(&wayback_timestamp(ms)), Some(ms));
        }
    }

    #[test]
    fn the_closest_available_copy_of_a_page_is_taken() {
        let answer = br#"{"url":"example.com/gone","archived_snapshots":{"closest":{
            "status":"200","available":true,
            "url":"http://web.archive.org/web/20130919044612/http://example.com/gone",
            "timestamp":"20130919044612"}}}"#;
        assert_eq!(
            closest(answer).unwrap(),
            Some(Archived {
                url: "http://web.archive.org/web/20130919044612/http://example.com/gone".into(),
                at: parse_wayback_timestamp("20130919044612"),
            })
        );
    }

    #[test]
    fn no_copy_a_copy_of_an_error_or_an_unavailable_one_is_none() {
        for answer in [
            &br#"{"url":"x","archived_snapshots":{}}"#[..],
            br#"{"archived_snapshots":{"closest":{"status":"404","available":true,"url":"http://w/x","timestamp":"2013"}}}"#,
            br#"{"archived_snapshots":{"closest":{"status":"200","available":false,"url":"http://w/x","timestamp":"2013"}}}"#,
        ] {
            assert_eq!(closest(answer).unwrap(), None, "{}", String::from_utf8_lossy(answer));
        }
        assert!(closest(b"<html>").unwrap_err().contains("not JSON"));
    }
}
