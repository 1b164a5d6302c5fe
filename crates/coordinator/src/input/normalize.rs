//! One line of text to the normalized URL the queue stores.
//!
//! The `url` crate (WHATWG rules) does most of the work: scheme and host lower-cased, IDN to
//! punycode, default port dropped, empty path as `/`, dot segments resolved. This module adds
//! what a seed list needs on top: lines without a scheme, http and https only, no credentials,
//! no fragment, host names DNS could resolve, one spelling per host.

use std::borrow::Cow;

use url::{Host, ParseError, Url};

use super::invisible::is_invisible;
use super::seed_url::{Rejection, SeedUrl, MAX_LINE};

/// Normalizes one URL; `text` is a non-empty, non-comment line.
pub fn normalize(text: &str) -> Result<SeedUrl, Rejection> {
    normalize_with(text, false)
}

/// [`normalize`]; with `keep_fragment`, a fragment that names an anchor stays (`page#section`,
/// checked against the page's anchors: `crawler-seed --fragments`), other fragments (`#top`,
/// a text fragment) are dropped.
pub fn normalize_with(text: &str, keep_fragment: bool) -> Result<SeedUrl, Rejection> {
    let text = text.trim_matches(is_invisible);
    if text.len() > MAX_LINE {
        return Err(Rejection::TooLong {
            len: text.len() as u64,
        });
    }
    // The url crate silently drops tabs and newlines inside a URL, and a space usually means two
    // fields on one line (`URL comment`): refuse both rather than check the wrong URL.
    if text.is_empty() {
        return Err(invalid("empty line"));
    }
    if text.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(invalid("contains whitespace or a control character"));
    }
    let text = with_scheme(text)?;
    let mut url = Url::parse(&text).map_err(rejection_from)?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Rejection::Credentials);
    }
    let named = url.fragment().and_then(crawler_links::fragment::anchor_of);
    if !keep_fragment || named.is_none() {
        url.set_fragment(None);
    }
    let host = canonical_host(&mut url)?;
    // Percent-encoding can triple a line's length; keep the bound the database relies on.
    if url.as_str().len() > MAX_LINE {
        return Err(invalid(&format!(
            "normalized url is longer than {MAX_LINE} bytes"
        )));
    }
    Ok(SeedUrl {
        url: url.into(),
        host,
    })
}

/// `text` with an explicit http or https scheme: `https://` added when it has none.
fn with_scheme(text: &str) -> Result<Cow<'_, str>, Rejection> {
    let text = match scheme(text) {
        Some(scheme) if is_http(scheme) => Cow::Borrowed(text),
        Some(scheme) => return Err(Rejection::Scheme(scheme.to_ascii_lowercase())),
        None if text.starts_with("//") => Cow::Owned(format!("https:{text}")),
        // `\u{2061}https://x` or `(https://x)`: with `https://` put before it, junk and all
        // would become a host, and the URL `https://https//x` be stored.
        None if !before_scheme(text).is_empty() => {
            return Err(invalid(&format!(
                "{:?} before \"://\" is not a scheme",
                before_scheme(text)
            )))
        }
        None => Cow::Owned(format!("https://{text}")),
    };
    // WHATWG skips any number of slashes after a special scheme, so `https:///x` would be
    // read as host `x`; more than two slashes mean the host is empty.
    let after = text.split_once(':').map_or("", |(_, after)| after);
    if after
        .bytes()
        .take_while(|b| matches!(b, b'/' | b'\\'))
        .count()
        > 2
    {
        return Err(Rejection::Host("empty host".into()));
    }
    Ok(text)
}

/// The scheme `text` starts with, if any: RFC 3986 scheme characters before the first `:`,
/// unless a port follows (`localhost:8080/`), which makes it a host without a scheme.
fn scheme(text: &str) -> Option<&str> {
    let (scheme, rest) = text.split_once(':')?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    let valid = first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !valid || (!is_http(scheme) && starts_with_port(rest)) {
        return None;
    }
    Some(scheme)
}

/// What comes before a `://` that is not in a path, query or fragment, if any.
fn before_scheme(text: &str) -> &str {
    match text.find("://") {
        Some(i) if !text[..i].contains(['/', '\\', '?', '#']) => &text[..i],
        _ => "",
    }
}

fn is_http(scheme: &str) -> bool {
    scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")
}

/// Whether `rest` is 1 to 5 digits, then the end or the start of a path, query or fragment.
fn starts_with_port(rest: &str) -> bool {
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let after = rest.as_bytes().get(digits);
    (1..=5).contains(&digits) && matches!(after, None | Some(b'/' | b'?' | b'#'))
}

fn rejection_from(error: ParseError) -> Rejection {
    match error {
        ParseError::EmptyHost
        | ParseError::IdnaError
        | ParseError::InvalidIpv4Address
        | ParseError::InvalidIpv6Address
        | ParseError::InvalidDomainCharacter => Rejection::Host(error.to_string()),
        _ => Rejection::Invalid(error.to_string()),
    }
}

/// The host to store, after making `url` use it: a domain loses one trailing dot
/// (`example.com.` is `example.com` to DNS, and politeness must see one host) and must fit DNS.
fn canonical_host(url: &mut Url) -> Result<String, Rejection> {
    let domain = match url.host() {
        Some(Host::Domain(domain)) => domain.to_owned(),
        Some(_) => return Ok(url.host_str().unwrap_or_default().to_owned()),
        None => return Err(Rejection::Host("empty host".into())),
    };
    let Some(stripped) = domain.strip_suffix('.') else {
        check_dns_name(&domain)?;
        return Ok(domain);
    };
    check_dns_name(stripped)?;
    url.set_host(Some(stripped)).map_err(rejection_from)?;
    Ok(stripped.to_owned())
}

/// DNS limits the url crate does not enforce: 253 bytes in all, labels of 1 to 63 bytes.
fn check_dns_name(domain: &str) -> Result<(), Rejection> {
    if domain.len() > 253 {
        return Err(Rejection::Host("host name is longer than 253 bytes".into()));
    }
    if domain
        .split('.')
        .any(|label| label.is_empty() || label.len() > 63)
    {
        return Err(Rejection::Host(
            "host name has an empty label or one over 63 bytes".into(),
        ));
    }
    Ok(())
}

fn invalid(reason: &str) -> Rejection {
    Rejection::Invalid(reason.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> String {
        normalize(text).unwrap().url
    }

    fn host(text: &str) -> String {
        normalize(text).unwrap().host
    }

    #[test]
    fn scheme_and_host_are_lower_cased() {
        assert_eq!(
            url("HTTPS://WWW.Example.COM/Path"),
            "https://www.example.com/Path"
        );
        assert_eq!(host("HTTPS://WWW.Example.COM/Path"), "www.example.com");
    }

    #[test]
    fn idn_hosts_become_punycode() {
        assert_eq!(
            url("https://Bücher.example/"),
            "https://xn--bcher-kva.example/"
        );
        assert_eq!(host("https://Bücher.example/"), "xn--bcher-kva.example");
    }

    #[test]
    fn default_ports_are_dropped_and_others_kept() {
        assert_eq!(url("http://example.com:80/a"), "http://example.com/a");
        assert_eq!(url("https://example.com:443/a"), "https://example.com/a");
        assert_eq!(url("http://example.com:443/a"), "http://example.com:443/a");
        assert_eq!(
            url("https://example.com:8443/a"),
            "https://example.com:8443/a"
        );
        assert_eq!(host("https://example.com:8443/a"), "example.com");
    }

    #[test]
    fn fragments_naming_an_anchor_are_kept_when_asked() {
        let keep = |t: &str| normalize_with(t, true).map(|s| s.url);
        assert_eq!(
            keep("HTTP://A.example/p#Sec").unwrap(),
            "http://a.example/p#Sec"
        );
        assert_eq!(keep("a.example/p#top").unwrap(), "https://a.example/p");
        assert_eq!(
            keep("a.example/p#:~:text=x").unwrap(),
            "https://a.example/p"
        );
        assert_eq!(
            normalize("a.example/p#Sec").unwrap().url,
            "https://a.example/p"
        );
    }

    #[test]
    fn fragments_are_dropped() {
        assert_eq!(
            url("https://example.com/a?q=1#top"),
            "https://example.com/a?q=1"
        );
        assert_eq!(url("https://example.com#"), "https://example.com/");
    }

    #[test]
    fn an_empty_path_becomes_a_slash() {
        assert_eq!(url("https://example.com"), "https://example.com/");
        assert_eq!(url("https://example.com?q"), "https://example.com/?q");
    }

    #[test]
    fn the_query_is_kept_as_is() {
        let text = "https://example.com/s?b=2&a=1&a=0&c=%41&d=&utm_source=x";
        assert_eq!(url(text), text);
        assert_eq!(url("https://example.com/?"), "https://example.com/?");
    }

    #[test]
    fn a_line_without_a_scheme_is_taken_as_https() {
        assert_eq!(url("example.com/page"), "https://example.com/page");
        assert_eq!(url("Example.com"), "https://example.com/");
        assert_eq!(url("//example.com/x"), "https://example.com/x");
    }

    #[test]
    fn a_host_with_a_port_is_not_mistaken_for_a_scheme() {
        assert_eq!(url("localhost:8080/x"), "https://localhost:8080/x");
        assert_eq!(url("example.com:443"), "https://example.com/");
        assert_eq!(url("[::1]:8080"), "https://[::1]:8080/");
    }

    #[test]
    fn other_schemes_are_rejected() {
        for (text, scheme) in [
            ("ftp://x", "ftp"),
            ("mailto:a@b", "mailto"),
            ("javascript:alert(1)", "javascript"),
            ("FILE:///etc/passwd", "file"),
            ("tel:5551234", "tel"),
        ] {
            assert_eq!(
                normalize(text),
                Err(Rejection::Scheme(scheme.into())),
                "{text}"
            );
        }
    }

    #[test]
    fn invisible_characters_around_the_url_are_dropped() {
        assert_eq!(
            url("\u{feff}https://a.example/\u{200b}"),
            "https://a.example/"
        );
        assert_eq!(url("\u{2060}\u{a0}a.example"), "https://a.example/");
    }

    #[test]
    fn text_glued_before_a_scheme_is_rejected_not_taken_for_a_host() {
        for text in [
            "\u{e000}https://a.example/",
            "(https://a.example/)",
            "x https://a",
        ] {
            assert!(
                matches!(normalize(text), Err(Rejection::Invalid(_))),
                "{text}: {:?}",
                normalize(text)
            );
        }
        assert_eq!(
            normalize("\u{e000}https://a.example/")
                .unwrap_err()
                .to_string(),
            "not a url: \"\\u{e000}https\" before \"://\" is not a scheme"
        );
        assert_eq!(
            url("a.example/go?to=https://b.example/"),
            "https://a.example/go?to=https://b.example/"
        );
    }

    #[test]
    fn duplicates_normalize_equal() {
        assert_eq!(
            normalize("HTTP://Example.COM:80"),
            normalize("http://example.com/")
        );
        assert_eq!(
            normalize("example.com"),
            normalize("https://example.com:443/#x")
        );
    }

    #[test]
    fn one_trailing_dot_is_dropped_from_a_host() {
        assert_eq!(url("https://example.com./a"), "https://example.com/a");
        assert_eq!(host("https://example.com./a"), "example.com");
        assert!(matches!(
            normalize("https://example.com../"),
            Err(Rejection::Host(_))
        ));
    }

    #[test]
    fn ip_literals_are_accepted_and_ipv6_keeps_brackets() {
        assert_eq!(host("http://192.168.0.1:8080/"), "192.168.0.1");
        assert_eq!(url("https://[::1]:443/"), "https://[::1]/");
        assert_eq!(host("https://[0:0::1]/"), "[::1]");
    }

    #[test]
    fn bad_hosts_are_rejected() {
        let long_label = format!("https://{}.com/", "a".repeat(64));
        let long_name = format!("https://{}com/", "a.".repeat(130));
        for text in [
            "https://",
            "https:///path",
            "https://:80/",
            "https://exa<mple.com/",
            "https://a..b/",
            "https://xn--a.com/",
            "https://[::1/",
            &long_label,
            &long_name,
        ] {
            assert!(matches!(normalize(text), Err(Rejection::Host(_))), "{text}");
        }
    }

    #[test]
    fn whitespace_and_control_characters_inside_are_rejected() {
        for text in [
            "https://exa mple.com/",
            "https://example.com/a b",
            "a.com\tb.com",
            "a.com\0b.com",
        ] {
            assert!(
                matches!(normalize(text), Err(Rejection::Invalid(_))),
                "{text}"
            );
        }
    }

    #[test]
    fn credentials_are_rejected() {
        assert_eq!(
            normalize("https://user:pw@example.com/"),
            Err(Rejection::Credentials)
        );
        assert_eq!(
            normalize("http://user@example.com/"),
            Err(Rejection::Credentials)
        );
    }

    #[test]
    fn unparsable_urls_are_rejected() {
        assert!(matches!(
            normalize("https://example.com:99999/"),
            Err(Rejection::Invalid(_))
        ));
        assert!(matches!(normalize(""), Err(Rejection::Invalid(_))));
    }

    #[test]
    fn text_over_the_limit_is_rejected() {
        let text = format!("https://example.com/{}", "a".repeat(MAX_LINE));
        let len = text.len() as u64;
        assert_eq!(normalize(&text), Err(Rejection::TooLong { len }));
    }

    #[test]
    fn a_url_that_grows_past_the_limit_when_encoded_is_rejected() {
        let text = format!("https://example.com/{}", "é".repeat(3000));
        assert!(matches!(normalize(&text), Err(Rejection::Invalid(_))));
    }
}
