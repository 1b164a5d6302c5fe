//! `--host HOST[:PORT]` as the user types it, to the [`HostFilter`] the queue matches: the host
//! normalized as the seed normalizes the hosts it stores (lower case, punycode, no trailing dot,
//! an IPv6 address in brackets), the port kept apart.

use std::net::Ipv6Addr;

use crawler_queue::HostFilter;

use crate::input::normalize;

/// Parses `--host`: `example.com`, `Example.COM:8080`, `[::1]:8443`, `::1`. A URL, a path or
/// credentials are refused.
pub fn parse_host(text: &str) -> Result<HostFilter, String> {
    const EXPECTED: &str = "expected HOST or HOST:PORT, e.g. example.com:8080";
    if text.contains(['/', '\\', '@', '?', '#']) {
        return Err(format!("{EXPECTED}, not a url or a path"));
    }
    let (host, port) = split_port(text)?;
    let host = match host.parse::<Ipv6Addr>() {
        Ok(_) => format!("[{host}]"),
        Err(_) => host.to_owned(),
    };
    match normalize(&host) {
        Ok(seed) if seed.url == format!("https://{}/", seed.host) => {
            Ok(HostFilter::new(seed.host, port))
        }
        Ok(_) => Err(EXPECTED.into()),
        Err(rejection) => Err(format!("{EXPECTED} ({rejection})")),
    }
}

/// `text` as host and port: `example.com:8080`, `[::1]:8080`; a bare IPv6 address has none.
fn split_port(text: &str) -> Result<(&str, Option<u16>), String> {
    match text.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') || host.ends_with(']') => {
            match port.parse::<u16>() {
                Ok(port) if port > 0 => Ok((host, Some(port))),
                _ => Err(format!("{port:?} is not a port (1 to 65535)")),
            }
        }
        _ => Ok((text, None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> (String, Option<u16>) {
        let filter = parse_host(text).unwrap();
        (filter.host().to_owned(), filter.port())
    }

    #[test]
    fn hosts_are_normalized_as_the_seed_stores_them() {
        assert_eq!(parsed("Example.COM"), ("example.com".into(), None));
        assert_eq!(parsed("example.com."), ("example.com".into(), None));
        assert_eq!(
            parsed("Bücher.example:8080"),
            ("xn--bcher-kva.example".into(), Some(8080))
        );
        assert_eq!(parsed("192.168.0.1:80"), ("192.168.0.1".into(), Some(80)));
    }

    #[test]
    fn ipv6_addresses_come_in_brackets_with_or_without_a_port() {
        assert_eq!(parsed("[::1]:8443"), ("[::1]".into(), Some(8443)));
        assert_eq!(parsed("[0:0::1]"), ("[::1]".into(), None));
        assert_eq!(parsed("::1"), ("[::1]".into(), None));
    }

    #[test]
    fn urls_paths_credentials_and_bad_ports_are_refused() {
        for text in [
            "https://example.com",
            "example.com/page",
            "user@example.com",
            "example.com:0",
            "example.com:65536",
            "example.com:http",
            "example.com:",
            "bad host",
            "",
        ] {
            assert!(parse_host(text).is_err(), "{text:?}");
        }
    }
}
