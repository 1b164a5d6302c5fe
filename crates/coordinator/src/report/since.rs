//! `--changed-since WHEN`: an RFC 3339 time (`2026-12-04T10:00:00Z`, any offset), a date (its
//! midnight in UTC), or a duration before now (`24h`, `7d`, `1h 30m`). A duration is taken from
//! the database's clock when the report runs, as every time decision is.

use std::time::Duration;

use time::format_description::well_known::Rfc3339;
use time::{Date, OffsetDateTime};

/// When a window of changes begins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Since {
    /// Unix milliseconds.
    At(i64),
    /// This long before the database's now.
    Ago(Duration),
}

impl Since {
    /// Unix milliseconds, given the database's now.
    pub fn millis(self, now: i64) -> i64 {
        match self {
            Since::At(ms) => ms,
            Since::Ago(ago) => {
                now.saturating_sub(i64::try_from(ago.as_millis()).unwrap_or(i64::MAX))
            }
        }
    }
}

/// clap's parser of WHEN.
pub fn parse_since(text: &str) -> Result<Since, String> {
    let text = text.trim();
    if let Ok(at) = OffsetDateTime::parse(text, &Rfc3339) {
        return Ok(Since::At(millis_of(at)));
    }
    let date = time::macros::format_description!("[year]-[month]-[day]");
    if let Ok(day) = Date::parse(text, date) {
        return Ok(Since::At(millis_of(day.midnight().assume_utc())));
    }
    match humantime::parse_duration(text) {
        Ok(ago) => Ok(Since::Ago(ago)),
        Err(_) => Err(format!(
            "`{text}` is neither an RFC 3339 time (2026-12-04T10:00:00Z), a date (2026-12-04) \
             nor a duration before now (24h, 7d)"
        )),
    }
}

fn millis_of(at: OffsetDateTime) -> i64 {
    (at.unix_timestamp_nanos() / 1_000_000) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_a_date_and_a_duration_are_understood() {
        assert_eq!(
            parse_since("2026-12-04T10:00:00Z"),
            Ok(Since::At(1_796_378_400_000))
        );
        assert_eq!(
            parse_since("2026-12-04T11:00:00+01:00"),
            Ok(Since::At(1_796_378_400_000))
        );
        assert_eq!(parse_since("2026-12-04"), Ok(Since::At(1_796_342_400_000)));
        assert_eq!(
            parse_since("24h"),
            Ok(Since::Ago(Duration::from_secs(86_400)))
        );
        assert_eq!(
            parse_since("7d"),
            Ok(Since::Ago(Duration::from_secs(7 * 86_400)))
        );
    }

    #[test]
    fn a_duration_counts_back_from_the_databases_now() {
        let now = 1_796_378_400_000;
        assert_eq!(
            Since::Ago(Duration::from_secs(60)).millis(now),
            now - 60_000
        );
        assert_eq!(Since::At(5).millis(now), 5);
    }

    #[test]
    fn anything_else_is_refused_with_what_is_expected() {
        let error = parse_since("yesterday").unwrap_err();
        assert!(
            error.contains("RFC 3339") && error.contains("24h"),
            "{error}"
        );
    }
}
