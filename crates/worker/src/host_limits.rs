//! `--host-limits FILE`: per-host politeness for the user's own servers, one host a line:
//!
//! ```text
//! # host              in flight   requests/s
//! intranet.example    32          200
//! slow.example        1           0.5
//! ```
//!
//! Hosts are matched as the crawler sees them (lower case, no port: politeness is per host,
//! whatever the port). Blank lines and `#` comments are skipped; a bad line is an error that
//! names the file and the line.

use std::collections::HashMap;

use crawler_check::HostLimit;

/// Reads and parses `path`.
pub fn read(path: &str) -> Result<HashMap<String, HostLimit>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("--host-limits: cannot read {path}: {e}"))?;
    parse(&text).map_err(|(line, why)| format!("--host-limits: {path}:{line}: {why}"))
}

/// Parses the file's text; an error carries the line number.
fn parse(text: &str) -> Result<HashMap<String, HostLimit>, (usize, String)> {
    let mut limits = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        let (host, limit) = parse_line(line).map_err(|why| (i + 1, why))?;
        if limits.insert(host.clone(), limit).is_some() {
            return Err((i + 1, format!("{host} is listed twice")));
        }
    }
    Ok(limits)
}

fn parse_line(line: &str) -> Result<(String, HostLimit), String> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let [host, concurrency, rate] = fields[..] else {
        return Err(format!("expected HOST CONCURRENCY RATE, found {line:?}"));
    };
    let host = crate::options::parse_host(host)?;
    let concurrency: usize = match concurrency.parse() {
        Ok(n) if (1..=100_000).contains(&n) => n,
        _ => {
            return Err(format!(
                "concurrency {concurrency:?} is not a whole number from 1 to 100000"
            ))
        }
    };
    let rate: f64 = match rate.parse() {
        Ok(r) if (0.001..=1e9).contains(&r) => r,
        _ => {
            return Err(format!(
                "rate {rate:?} is not a number of requests per second from 0.001"
            ))
        }
    };
    Ok((host, HostLimit { concurrency, rate }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_comments_and_blank_lines_are_read() {
        let limits =
            parse("# mine\n\nIntranet.Example 32 200\nslow.example 1 0.5 # careful\n").unwrap();
        assert_eq!(limits.len(), 2);
        assert_eq!(
            limits["intranet.example"],
            HostLimit {
                concurrency: 32,
                rate: 200.0
            }
        );
        assert_eq!(limits["slow.example"].rate, 0.5);
    }

    #[test]
    fn a_bad_line_is_named_by_its_number() {
        for (text, line, says) in [
            ("a.example 1\n", 1, "expected HOST CONCURRENCY RATE"),
            ("ok.example 1 1\nb.example 0 1\n", 2, "concurrency"),
            ("c.example 2 fast\n", 1, "rate"),
            ("c.example 2 0\n", 1, "rate"),
            ("https://d.example 2 2\n", 1, "not a host name"),
            ("e.example:8080 2 2\n", 1, "not a host name"),
            ("f.example 1 1\nF.example 2 2\n", 2, "listed twice"),
        ] {
            let (at, why) = parse(text).unwrap_err();
            assert_eq!(at, line, "{text:?}");
            assert!(why.contains(says), "{text:?}: {why}");
        }
    }
}
