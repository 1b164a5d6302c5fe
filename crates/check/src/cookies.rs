//! `--cookie-jar`: cookies from a Netscape cookies.txt, as curl (`-c`), wget and browser
//! extensions write it, sent to the hosts and paths they match. A line is seven fields
//! separated by tabs:
//!
//! ```text
//! # DOMAIN      SUBDOMAINS  PATH  SECURE  EXPIRES (Unix s, 0: session)  NAME     VALUE
//! .example.com  TRUE        /     TRUE    1893456000                    session  abc123
//! ```
//!
//! `#HttpOnly_` before a domain is curl's mark of an HttpOnly cookie; other `#` lines and
//! blank lines are skipped. Expired cookies are dropped.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::cookie::{CookieStore, Jar};
use reqwest::header::HeaderValue;
use url::Url;

/// The last second an HTTP date can name (9999-12-31T23:59:59Z).
const LAST_HTTP_DATE: u64 = 253_402_300_799;

/// Cookies loaded at start, read only: cookies a site sets are not kept (over a long list
/// that would be a cookie per host ever seen, and a site's verdict would depend on which
/// sites this process checked before it), and the file is never written back (every worker
/// of a fleet reads the same one).
#[derive(Clone, Default)]
pub struct CookieJar {
    jar: Arc<Jar>,
    count: usize,
}

impl CookieJar {
    /// Reads the text of a cookies.txt; an error carries the line number, and never a
    /// cookie's value.
    pub fn parse(text: &str, now: SystemTime) -> Result<CookieJar, (usize, String)> {
        let now = now.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
        let mut jar = CookieJar::default();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim_end_matches('\r');
            let (line, http_only) = match line.strip_prefix("#HttpOnly_") {
                Some(rest) => (rest, true),
                None if line.trim().is_empty() || line.starts_with('#') => continue,
                None => (line, false),
            };
            if let Some((cookie, url)) = parse_line(line, http_only, now).map_err(|e| (i + 1, e))? {
                jar.jar.add_cookie_str(&cookie, &url);
                jar.count += 1;
            }
        }
        Ok(jar)
    }

    /// The cookies loaded (expired ones not counted).
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

/// Cookie values are secrets (sessions): only their number prints.
impl fmt::Debug for CookieJar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CookieJar({} cookies)", self.count)
    }
}

impl CookieStore for CookieJar {
    fn set_cookies(&self, _: &mut dyn Iterator<Item = &HeaderValue>, _: &Url) {}

    fn cookies(&self, url: &Url) -> Option<HeaderValue> {
        self.jar.cookies(url)
    }
}

/// One cookie line as a `Set-Cookie` value and the URL that sets it; `None` when expired.
fn parse_line(line: &str, http_only: bool, now: u64) -> Result<Option<(String, Url)>, String> {
    let fields: Vec<&str> = line.split('\t').collect();
    // curl writes an empty value as nothing after the last tab; some tools drop that tab.
    let (domain, subdomains, path, secure, expires, name, value) = match fields[..] {
        [d, s, p, x, e, n, v] => (d, s, p, x, e, n, v),
        [d, s, p, x, e, n] => (d, s, p, x, e, n, ""),
        _ => {
            return Err(format!(
                "expected 7 fields separated by tabs (DOMAIN SUBDOMAINS PATH SECURE EXPIRES \
                 NAME VALUE), found {}",
                fields.len()
            ))
        }
    };
    let domain = domain
        .strip_prefix('.')
        .unwrap_or(domain)
        .to_ascii_lowercase();
    if !path.starts_with('/') {
        return Err(format!("the path {path:?} does not start with /"));
    }
    let url = Url::parse(&format!("https://{domain}{path}"))
        .ok()
        .filter(|url| url.host_str() == Some(domain.as_str()))
        .ok_or_else(|| format!("{domain:?} is not a host name"))?;
    let expires: u64 = expires
        .parse()
        .map_err(|_| format!("EXPIRES {expires:?} is not a number of seconds"))?;
    if expires != 0 && expires <= now {
        return Ok(None);
    }
    if name.is_empty() || name.contains(|c: char| c.is_control() || " ;=,".contains(c)) {
        return Err(format!("the cookie name {name:?} is not a token"));
    }
    if value.contains(|c: char| c.is_control() || c == ';') {
        return Err(format!(
            "the value of cookie {name} holds a ; or a control character"
        ));
    }
    let mut cookie = format!("{name}={value}; Path={path}");
    if flag(subdomains, "SUBDOMAINS")? {
        cookie.push_str(&format!("; Domain={domain}"));
    }
    if flag(secure, "SECURE")? {
        cookie.push_str("; Secure");
    }
    if http_only {
        cookie.push_str("; HttpOnly");
    }
    if expires != 0 {
        let at = UNIX_EPOCH + Duration::from_secs(expires.min(LAST_HTTP_DATE));
        cookie.push_str(&format!("; Expires={}", httpdate::fmt_http_date(at)));
    }
    Ok(Some((cookie, url)))
}

fn flag(text: &str, field: &str) -> Result<bool, String> {
    match text.to_ascii_uppercase().as_str() {
        "TRUE" => Ok(true),
        "FALSE" => Ok(false),
        _ => Err(format!("{field} {text:?} is neither TRUE nor FALSE")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2023-11-14T22:13:20Z.
    const NOW: u64 = 1_700_000_000;

    fn jar(text: &str) -> Result<CookieJar, (usize, String)> {
        CookieJar::parse(text, UNIX_EPOCH + Duration::from_secs(NOW))
    }

    /// The cookies sent to `url`, in name order (the store has none of its own).
    fn sent(jar: &CookieJar, url: &str) -> Option<String> {
        let value = jar.cookies(&Url::parse(url).unwrap())?;
        let mut cookies: Vec<&str> = value.to_str().unwrap().split("; ").collect();
        cookies.sort();
        Some(cookies.join("; "))
    }

    #[test]
    fn cookies_go_where_their_domain_path_and_scheme_allow() {
        let jar = jar("# Netscape HTTP Cookie File\n\n\
             .example.com\tTRUE\t/\tFALSE\t0\twide\t1\n\
             #HttpOnly_app.example.com\tFALSE\t/admin\tTRUE\t2000000000\tnarrow\t2\n\
             old.example.net\tFALSE\t/\tFALSE\t1\tgone\t3\n")
        .unwrap();
        assert_eq!(jar.len(), 2);
        let admin = "https://app.example.com/admin/x";
        assert_eq!(sent(&jar, admin).as_deref(), Some("narrow=2; wide=1"));
        assert_eq!(
            sent(&jar, "http://app.example.com/admin/x").as_deref(),
            Some("wide=1")
        );
        assert_eq!(
            sent(&jar, "http://sub.example.com:8080/").as_deref(),
            Some("wide=1")
        );
        assert_eq!(sent(&jar, "https://old.example.net/"), None);
        assert_eq!(sent(&jar, "https://example.org/"), None);
    }

    #[test]
    fn a_host_only_cookie_stays_on_its_host() {
        let jar = jar("127.0.0.1\tFALSE\t/\tFALSE\t0\ts\tv\n").unwrap();
        assert_eq!(
            sent(&jar, "http://127.0.0.1:8080/a").as_deref(),
            Some("s=v")
        );
        assert_eq!(sent(&jar, "http://127.0.0.2/"), None);
    }

    #[test]
    fn cookies_set_by_sites_are_not_kept() {
        let jar = CookieJar::default();
        let url = Url::parse("https://a.example/").unwrap();
        let set = HeaderValue::from_static("tracker=1");
        jar.set_cookies(&mut std::iter::once(&set), &url);
        assert_eq!(jar.cookies(&url), None);
    }

    #[test]
    fn a_bad_line_is_named_by_its_number_without_the_value() {
        for (text, line, says) in [
            ("a.example\tTRUE\t/\tFALSE\t0\n", 1, "expected 7 fields"),
            (
                "# c\na.example\tyes\t/\tFALSE\t0\tn\tv\n",
                2,
                "SUBDOMAINS \"yes\"",
            ),
            ("a.example\tTRUE\tx\tFALSE\t0\tn\tv\n", 1, "path \"x\""),
            (
                "a.example\tTRUE\t/\tFALSE\tsoon\tn\tv\n",
                1,
                "EXPIRES \"soon\"",
            ),
            ("a b\tTRUE\t/\tFALSE\t0\tn\tv\n", 1, "not a host name"),
            ("a.example\tTRUE\t/\tFALSE\t0\t\tv\n", 1, "not a token"),
            (
                "a.example\tTRUE\t/\tFALSE\t0\tn\tsec;ret\n",
                1,
                "cookie n holds a ;",
            ),
        ] {
            let (at, why) = jar(text).unwrap_err();
            assert_eq!(at, line, "{text:?}");
            assert!(why.contains(says), "{text:?}: {why}");
            assert!(!why.contains("sec;ret"), "{why}");
        }
    }

    #[test]
    fn the_values_never_print() {
        let jar = jar("a.example\tTRUE\t/\tFALSE\t0\tsession\ts3cret\n").unwrap();
        assert_eq!(format!("{jar:?}"), "CookieJar(1 cookies)");
    }
}
