//! Whether to ask again, and when: exponential backoff with jitter, or the server's
//! `Retry-After` up to a cap.

use std::time::{Duration, SystemTime};

use crawler_verdict::{Backoff, MAX_DELAY};

use crate::config::CheckConfig;
use crate::reply::{Attempt, End, Failure};

/// The first backoff; it doubles with each attempt (1 s, 2 s, 4 s... as lychee).
const BACKOFF_BASE: Duration = Duration::from_secs(1);
const BACKOFF_MAX: Duration = Duration::from_secs(30);
/// The wait after the `attempt`-th failure: half fixed, half random ("equal jitter"), so a
/// crowd of checks failing together does not come back together.
const BACKOFF: Backoff = Backoff::new(BACKOFF_BASE, BACKOFF_MAX).with_jitter(50, 100);

/// What to do after an attempt.
#[derive(Debug, PartialEq)]
pub(crate) enum Step {
    /// Wait this long, then try again.
    Retry(Duration),
    /// Stop here; `retry_after` when the server asked for more than the cap.
    Stop { retry_after: Option<Duration> },
}

/// Timeouts retried in-process at most: one more, so a hung page costs two timeouts per
/// check, not `1 + --retries` (a hung host is decided for the host meanwhile, `health.rs`).
const TIMEOUT_RETRIES: u32 = 1;

/// Decides after the `attempts`-th attempt. Only transient attempts (timeouts, resets, 408,
/// 429, 5xx) are retried, a timeout once at most; a `Retry-After` beyond the cap ends the
/// check at once, so the queue can make the URL due after it instead of a task sleeping.
pub(crate) fn next_step(attempt: &Attempt, attempts: u32, config: &CheckConfig) -> Step {
    if !attempt.is_transient() {
        return Step::Stop { retry_after: None };
    }
    let timed_out = matches!(
        attempt.end,
        End::Failed {
            failure: Failure::Timeout,
            ..
        }
    );
    if timed_out && attempts > TIMEOUT_RETRIES.min(config.retries) {
        return Step::Stop { retry_after: None };
    }
    let asked = attempt.retry_after();
    if let Some(wait) = asked.filter(|d| *d > config.retry_after_cap) {
        return Step::Stop {
            retry_after: Some(wait),
        };
    }
    if attempts > config.retries {
        return Step::Stop { retry_after: None };
    }
    Step::Retry(asked.unwrap_or_else(|| BACKOFF.delay(attempts)))
}

/// Parses `Retry-After`: delay-seconds or an HTTP date (a date in the past means now), capped
/// at [`MAX_DELAY`] so that no server can ask for a time nothing downstream can hold.
pub(crate) fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    let asked = if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        // Too many digits to fit is still "a very long time".
        Duration::from_secs(value.parse().unwrap_or(u64::MAX))
    } else {
        let date = httpdate::parse_http_date(value).ok()?;
        date.duration_since(now).unwrap_or(Duration::ZERO)
    };
    Some(asked.min(MAX_DELAY))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_in_seconds_is_parsed() {
        let now = SystemTime::now();
        assert_eq!(
            parse_retry_after("120", now),
            Some(Duration::from_secs(120))
        );
        assert_eq!(parse_retry_after(" 0 ", now), Some(Duration::ZERO));
    }

    #[test]
    fn absurd_retry_after_is_capped_at_the_maximum_delay() {
        let now = SystemTime::now();
        for absurd in [
            "100000000000000000000000",
            "18446744073709551615",
            "Fri, 31 Dec 9999 23:59:59 GMT",
        ] {
            assert_eq!(parse_retry_after(absurd, now), Some(MAX_DELAY), "{absurd}");
        }
    }

    #[test]
    fn retry_after_as_an_http_date_counts_from_now() {
        let now = httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        let later = "Sun, 06 Nov 1994 08:50:07 GMT";
        assert_eq!(parse_retry_after(later, now), Some(Duration::from_secs(30)));
        let past = "Sun, 06 Nov 1994 08:00:00 GMT";
        assert_eq!(parse_retry_after(past, now), Some(Duration::ZERO));
    }

    #[test]
    fn garbage_retry_after_is_ignored() {
        let now = SystemTime::now();
        for bad in ["", "soon", "-5", "1.5", "12 s"] {
            assert_eq!(parse_retry_after(bad, now), None, "{bad:?}");
        }
    }

    #[test]
    fn backoff_doubles_with_jitter_and_is_capped() {
        for attempt in 1..=3 {
            let full = BACKOFF_BASE * (1 << (attempt - 1));
            let wait = BACKOFF.delay(attempt);
            assert!(
                wait >= full / 2 && wait <= full,
                "attempt {attempt}: {wait:?}"
            );
        }
        assert!(BACKOFF.delay(40) <= BACKOFF_MAX);
    }
}
