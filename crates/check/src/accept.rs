//! Which final statuses count as alive (`--accept`, `--accept-host`), in lychee's syntax:
//! codes and ranges separated by commas, `200..=299,403` (`A..B` leaves `B` out, `..=B` starts
//! at 100).

use std::collections::HashMap;
use std::fmt;
use std::ops::RangeInclusive;
use std::str::FromStr;

/// The statuses a server can send, as lychee and the verdict table count them.
const CODES: RangeInclusive<u16> = 100..=999;

/// A set of status codes.
#[derive(Clone, PartialEq, Eq)]
pub struct StatusSet(Vec<RangeInclusive<u16>>);

impl StatusSet {
    /// 2xx: what the verdict table calls alive by default.
    pub fn success() -> Self {
        StatusSet(vec![200..=299])
    }

    pub fn contains(&self, status: u16) -> bool {
        self.0.iter().any(|range| range.contains(&status))
    }
}

impl Default for StatusSet {
    fn default() -> Self {
        Self::success()
    }
}

impl FromStr for StatusSet {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let ranges = text.split(',').map(|part| parse_range(part.trim()));
        let ranges = ranges.collect::<Result<Vec<_>, _>>()?;
        Ok(StatusSet(ranges))
    }
}

/// One code (`403`) or range (`200..=299`, `200..300`, `..=299`).
fn parse_range(text: &str) -> Result<RangeInclusive<u16>, String> {
    let Some((start, end)) = text.split_once("..") else {
        let code = parse_code(text)?;
        return Ok(code..=code);
    };
    let start = match start {
        "" => *CODES.start(),
        start => parse_code(start)?,
    };
    let end = match end.strip_prefix('=') {
        Some(end) => parse_code(end)?,
        None => parse_code(end)?.saturating_sub(1),
    };
    if start > end {
        return Err(format!("{text:?} is an empty range"));
    }
    Ok(start..=end)
}

fn parse_code(text: &str) -> Result<u16, String> {
    match text.parse() {
        Ok(code) if CODES.contains(&code) => Ok(code),
        _ => Err(format!(
            "{text:?} is not a status code from 100 to 999 (expected codes and ranges like \
             200..=299,403)"
        )),
    }
}

/// `200..=299,403`, which [`StatusSet::from_str`] reads back.
impl fmt::Display for StatusSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, range) in self.0.iter().enumerate() {
            let comma = if i == 0 { "" } else { "," };
            match (range.start(), range.end()) {
                (start, end) if start == end => write!(f, "{comma}{start}")?,
                (start, end) => write!(f, "{comma}{start}..={end}")?,
            }
        }
        Ok(())
    }
}

impl fmt::Debug for StatusSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StatusSet({self})")
    }
}

/// Whether `status` from `host` (the server that gave the final answer) counts as alive: in
/// `accept` (`--accept`), or in that host's set of `by_host` (`--accept-host`).
pub(crate) fn accepts(
    accept: &StatusSet,
    by_host: &HashMap<String, StatusSet>,
    host: &str,
    status: u16,
) -> bool {
    accept.contains(status)
        || by_host
            .get(host)
            .is_some_and(|statuses| statuses.contains(status))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(text: &str) -> StatusSet {
        text.parse().unwrap()
    }

    #[test]
    fn codes_and_ranges_are_read_in_lychees_syntax() {
        let accepted = set("200..=204, 403,500..502");
        for (status, yes) in [(200, true), (204, true), (205, false), (403, true)] {
            assert_eq!(accepted.contains(status), yes, "{status}");
        }
        assert!(accepted.contains(501) && !accepted.contains(502));
        assert!(set("..=199").contains(100) && !set("..=199").contains(200));
        assert_eq!(accepted.to_string(), "200..=204,403,500..=501");
        assert_eq!(StatusSet::default().to_string(), "200..=299");
    }

    #[test]
    fn a_bad_list_is_refused_with_the_bad_part() {
        for (text, says) in [
            ("", "\"\" is not a status code"),
            ("200,,403", "\"\" is not a status code"),
            ("42", "\"42\" is not a status code"),
            ("1000", "\"1000\" is not"),
            ("2xx", "\"2xx\" is not"),
            ("200..", "\"\" is not"),
            ("300..=200", "\"300..=200\" is an empty range"),
            ("200..200", "empty range"),
        ] {
            let error = text.parse::<StatusSet>().unwrap_err();
            assert!(error.contains(says), "{text:?}: {error}");
        }
    }

    #[test]
    fn a_host_adds_its_own_statuses_to_the_global_ones() {
        let by_host = HashMap::from([("intranet.example".to_owned(), set("403"))]);
        let accepts = |host, status| accepts(&StatusSet::success(), &by_host, host, status);
        assert!(accepts("intranet.example", 403));
        assert!(accepts("intranet.example", 200));
        assert!(!accepts("other.example", 403));
    }
}
