//! What option values the binaries accept, checked by clap while it parses: a value out of its
//! range is a usage error naming the option, before any database connection, rather than a
//! panic (a zero interval), an overflow (`99999999999h`) or a database error (a long id) later.

use std::fmt;
use std::time::Duration;

/// The longest duration most options accept. Longer ones are mistakes, and much longer ones
/// overflow the arithmetic on instants and milliseconds.
pub const MAX_DURATION: Duration = Duration::from_secs(30 * DAY);

/// The range of a worker's periodic jobs (`--heartbeat`, `--reap-every`) and of
/// `crawler-reap --every`: faster would only load the database.
pub const INTERVAL: DurationRange = DurationRange::at_least(Duration::from_millis(100));

/// The range of `--dead-after`: more than one missed heartbeat at the fastest [`INTERVAL`].
pub const DEAD_AFTER: DurationRange = DurationRange::at_least(Duration::from_millis(200));

/// The longest worker or reaper id: `workers.id`, `sites.owner` and `leases.owner` are
/// `VARCHAR(255)`, which MySQL counts in characters (SQLite has no limit).
pub const MAX_ID_CHARS: usize = 255;

const DAY: u64 = 86_400;

/// The durations an option accepts, `min..=max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DurationRange {
    pub min: Duration,
    pub max: Duration,
}

impl DurationRange {
    pub const fn new(min: Duration, max: Duration) -> Self {
        DurationRange { min, max }
    }

    /// From `min` to [`MAX_DURATION`].
    pub const fn at_least(min: Duration) -> Self {
        Self::new(min, MAX_DURATION)
    }

    /// Up to `max` days.
    pub const fn up_to_days(self, max: u64) -> Self {
        Self::new(self.min, Duration::from_secs(max * DAY))
    }

    /// Parses a humantime duration (`30s`, `2m`, `1h 30m`) and checks it is in range.
    pub fn parse(&self, text: &str) -> Result<Duration, String> {
        let duration = humantime::parse_duration(text).map_err(|e| e.to_string())?;
        if duration < self.min || duration > self.max {
            return Err(format!("must be {self}"));
        }
        Ok(duration)
    }

    /// [`DurationRange::parse`] as a clap value parser: `value_parser = LEASE.parser()`.
    pub fn parser(self) -> impl Fn(&str) -> Result<Duration, String> + Clone + Send + Sync {
        move |text| self.parse(text)
    }
}

/// `between 1s and 30d`, or `at most 30d` when zero is allowed.
impl fmt::Display for DurationRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let max = Short(self.max);
        if self.min.is_zero() {
            write!(f, "at most {max}")
        } else {
            write!(f, "between {} and {max}", Short(self.min))
        }
    }
}

/// A duration in the largest unit that divides it (`30d`, `100ms`), which humantime parses.
struct Short(Duration);

impl fmt::Display for Short {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.0.as_millis();
        let units = [
            (DAY * 1000, "d"),
            (3_600_000, "h"),
            (60_000, "m"),
            (1000, "s"),
        ];
        match units
            .iter()
            .find(|(size, _)| ms > 0 && ms.is_multiple_of(u128::from(*size)))
        {
            Some((size, unit)) => write!(f, "{}{unit}", ms / u128::from(*size)),
            None => write!(f, "{ms}ms"),
        }
    }
}

/// A duration as an option's `default_value`, from the constant that a `Default` implementation
/// uses too, so the default is written once:
/// `default_value = crawler_cli::duration_default!(DEFAULT_RETRY_DELAY)`. `--help` shows it as
/// humantime writes it (`20s`, `1m`), which the option's parser reads back. The text is made
/// once per use of the macro, so give it a constant.
#[macro_export]
macro_rules! duration_default {
    ($duration:expr) => {{
        static TEXT: ::std::sync::OnceLock<::std::string::String> = ::std::sync::OnceLock::new();
        TEXT.get_or_init(|| $crate::bounds::duration_text($duration))
            .as_str()
    }};
}

/// `duration` as [`duration_default!`] shows it.
pub fn duration_text(duration: Duration) -> String {
    humantime::format_duration(duration).to_string()
}

/// Parses a worker's or reaper's id: 1 to [`MAX_ID_CHARS`] characters, none of them control
/// characters (an id is printed in logs and reports, one a line).
pub fn parse_id(text: &str) -> Result<String, String> {
    let chars = text.chars().count();
    if chars == 0 || chars > MAX_ID_CHARS {
        return Err(format!(
            "must be 1 to {MAX_ID_CHARS} characters, not {chars}"
        ));
    }
    if text.chars().any(char::is_control) {
        return Err("must not contain control characters".into());
    }
    Ok(text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    #[test]
    fn a_duration_in_range_is_parsed() {
        let range = DurationRange::at_least(SECOND);
        assert_eq!(range.parse("1s"), Ok(SECOND));
        assert_eq!(range.parse("2m 30s"), Ok(Duration::from_secs(150)));
        assert_eq!(range.parse("30d"), Ok(MAX_DURATION));
    }

    #[test]
    fn a_duration_out_of_range_names_the_range() {
        let range = DurationRange::at_least(SECOND);
        let error = "must be between 1s and 30d".to_owned();
        assert_eq!(range.parse("0s"), Err(error.clone()));
        assert_eq!(range.parse("999ms"), Err(error.clone()));
        assert_eq!(range.parse("30d 1ms"), Err(error.clone()));
        assert_eq!(range.parse("99999999999h"), Err(error));
        assert!(range.parse("soon").is_err());
        assert!(range.parse("99999999999999999999h").is_err());
    }

    #[test]
    fn a_range_from_zero_says_only_its_maximum() {
        let range = DurationRange::at_least(Duration::ZERO).up_to_days(3650);
        assert_eq!(range.to_string(), "at most 3650d");
        assert_eq!(range.parse("0s"), Ok(Duration::ZERO));
    }

    #[test]
    fn range_ends_print_in_their_largest_exact_unit() {
        for (duration, text) in [
            (Duration::from_millis(100), "100ms"),
            (Duration::from_millis(1500), "1500ms"),
            (Duration::from_secs(90), "90s"),
            (Duration::from_secs(7200), "2h"),
            (Duration::ZERO, "0ms"),
        ] {
            assert_eq!(Short(duration).to_string(), text);
            assert_eq!(humantime::parse_duration(text), Ok(duration));
        }
    }

    #[test]
    fn a_default_shows_in_its_largest_unit_and_parses_back() {
        for (duration, text) in [
            (Duration::from_secs(5), "5s"),
            (Duration::from_secs(60), "1m"),
            (Duration::from_secs(120), "2m"),
            (Duration::from_millis(1500), "1s 500ms"),
        ] {
            assert_eq!(duration_text(duration), text);
            assert_eq!(humantime::parse_duration(text), Ok(duration));
        }
        const LEASE: Duration = Duration::from_secs(120);
        assert_eq!(duration_default!(LEASE), "2m");
    }

    #[test]
    fn an_id_is_counted_in_characters() {
        assert!(parse_id(&"é".repeat(MAX_ID_CHARS)).is_ok());
        assert_eq!(
            parse_id(&"é".repeat(MAX_ID_CHARS + 1)),
            Err("must be 1 to 255 characters, not 256".into())
        );
        assert!(parse_id("").is_err());
        assert!(parse_id("host:42").is_ok());
    }

    #[test]
    fn an_id_with_a_control_character_is_refused() {
        for id in ["a\nb", "a\tb", "\u{7f}", "a\u{1b}[31mb"] {
            assert!(parse_id(id).is_err(), "{id:?}");
        }
    }
}
