//! Which requests are for this dashboard, asked by its own pages.
//!
//! **The host.** After a DNS rebinding, a page of `attacker.example` whose name now resolves
//! to the dashboard's address is same-origin with it: it could read the crawl and press its
//! buttons. Its requests still name `attacker.example` in `Host`, so the dashboard answers only
//! a `Host` that no DNS answer decides: an IP address (a browser that shows a page of
//! `http://192.0.2.7:8080` connected to that address), `localhost` (which browsers resolve to
//! loopback themselves), or a name the operator gave (`--allowed-host`). Any port: Docker's
//! port mapping, NAT and SSH tunnels (`ssh -L 9000:localhost:8080`) reach the dashboard on a
//! port other than its own, and a rebinding changes a name, never a port.
//!
//! **The origin.** A request that changes something (any method but GET and HEAD) must come
//! from the dashboard's own pages when a browser says where it comes from: `Sec-Fetch-Site`
//! `same-origin` (or `none`, the user's own navigation), or else an `Origin` whose host is the
//! request's `Host`. A request with neither comes from no browser (`curl`, a script): the
//! token, and the control header, guard those. The same rule as Go's `CrossOriginProtection`.

use std::net::IpAddr;

use hyper::header::{HeaderMap, HOST, ORIGIN};
use hyper::http::uri::Authority;
use hyper::{Method, Request};

/// A name the operator allows in `Host` (`--allowed-host NAME` or `NAME:PORT`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostName {
    /// Lowercase, without a final dot; an IPv6 address in brackets.
    name: String,
    /// `None`: any port.
    port: Option<u16>,
}

impl std::str::FromStr for HostName {
    type Err = String;

    /// `NAME` or `NAME:PORT`, as a browser writes `Host`: `dash.example.com`,
    /// `dash.example.com:8443`, `[2001:db8::1]:8080`.
    fn from_str(text: &str) -> Result<HostName, String> {
        let authority = authority(text).ok_or_else(|| {
            format!("{text:?} is not a host name, NAME or NAME:PORT (dash.example.com:8080)")
        })?;
        Ok(HostName {
            name: plain(authority.host()),
            port: authority.port_u16(),
        })
    }
}

/// The hosts a request may name.
#[derive(Clone, Debug, Default)]
pub struct AllowedHosts(Vec<HostName>);

impl AllowedHosts {
    pub fn new(names: Vec<HostName>) -> AllowedHosts {
        AllowedHosts(names)
    }

    /// Whether `host` (a `Host` header, or a URI's authority) names this dashboard.
    pub fn allows(&self, host: &str) -> bool {
        let Some(authority) = authority(host) else {
            return false;
        };
        let name = plain(authority.host());
        let port = authority.port_u16();
        let literal = name.trim_start_matches('[').trim_end_matches(']');
        name == "localhost"
            || literal.parse::<IpAddr>().is_ok()
            || self
                .0
                .iter()
                .any(|allowed| allowed.name == name && allowed.port.is_none_or(|p| Some(p) == port))
    }

    /// The host `req` names, if it is this dashboard's: its `Host`, and its URI's authority
    /// when it has one (absolute form), both allowed.
    pub fn host_of<'r, B>(&self, req: &'r Request<B>) -> Option<&'r str> {
        let host = req.headers().get(HOST)?.to_str().ok()?;
        let in_uri = req.uri().authority().map(Authority::as_str);
        let allowed = self.allows(host) && in_uri.is_none_or(|a| self.allows(a));
        allowed.then_some(host)
    }
}

/// Whether a request that changes something, with `headers`, for `host`, comes from the
/// dashboard's own pages or from no browser at all.
pub fn same_origin(method: &Method, headers: &HeaderMap, host: &str) -> bool {
    if method == Method::GET || method == Method::HEAD {
        return true;
    }
    if let Some(site) = headers.get("sec-fetch-site") {
        return site == "same-origin" || site == "none";
    }
    let Some(origin) = headers.get(ORIGIN) else {
        return true;
    };
    let origin = origin.to_str().unwrap_or("");
    origin.split_once("://").is_some_and(|(scheme, rest)| {
        matches!(scheme, "http" | "https") && rest.eq_ignore_ascii_case(host)
    })
}

/// `text` as a bare authority: a host and perhaps a port, no user name, no path.
fn authority(text: &str) -> Option<Authority> {
    let authority: Authority = text.parse().ok()?;
    (!text.contains('@') && !authority.host().is_empty()).then_some(authority)
}

/// A host name as compared: lowercase, without the final dot of a fully qualified name.
fn plain(host: &str) -> String {
    host.trim_end_matches('.').to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    fn hosts(names: &[&str]) -> AllowedHosts {
        AllowedHosts::new(names.iter().map(|n| n.parse().unwrap()).collect())
    }

    #[test]
    fn an_address_and_localhost_are_allowed_on_any_port_other_names_not() {
        let none = hosts(&[]);
        for allowed in [
            "127.0.0.1:8080",
            "127.0.0.1",
            "192.0.2.7:9000",
            "[::1]:8080",
        ] {
            assert!(none.allows(allowed), "{allowed}");
        }
        for allowed in ["localhost:8080", "LocalHost.:9000", "localhost"] {
            assert!(none.allows(allowed), "{allowed}");
        }
        for refused in [
            "rebind.attacker.example:8080",
            "127.0.0.1.nip.io:8080",
            "localhost.attacker.example",
            "user@127.0.0.1:8080",
            "",
            "[::1",
        ] {
            assert!(!none.allows(refused), "{refused}");
        }
    }

    #[test]
    fn an_allowed_name_matches_any_port_unless_it_names_one() {
        let some = hosts(&["Dash.Example.com", "ops.example:8443"]);
        assert!(some.allows("dash.example.com"));
        assert!(some.allows("dash.example.com:443"));
        assert!(some.allows("ops.example:8443"));
        assert!(!some.allows("ops.example"));
        assert!(!some.allows("evil.dash.example.com"));
        assert!("not a name".parse::<HostName>().is_err());
        assert!("user@host".parse::<HostName>().is_err());
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    #[test]
    fn a_change_needs_its_own_origin_when_a_browser_names_one() {
        let post = &Method::POST;
        let host = "127.0.0.1:8080";
        assert!(same_origin(post, &headers(&[]), host));
        let own = headers(&[("origin", "http://127.0.0.1:8080")]);
        assert!(same_origin(post, &own, host));
        let tls = headers(&[("origin", "https://127.0.0.1:8080")]);
        assert!(same_origin(post, &tls, host));
        for other in ["http://evil.example", "http://127.0.0.1:8081", "null"] {
            assert!(!same_origin(post, &headers(&[("origin", other)]), host));
        }
        let fetched = headers(&[("sec-fetch-site", "same-origin"), ("origin", "http://x")]);
        assert!(same_origin(post, &fetched, host));
        for site in ["cross-site", "same-site"] {
            let with = headers(&[
                ("sec-fetch-site", site),
                ("origin", "http://127.0.0.1:8080"),
            ]);
            assert!(!same_origin(post, &with, host), "{site}");
        }
        let foreign = headers(&[("origin", "http://evil.example")]);
        assert!(same_origin(&Method::GET, &foreign, host));
    }
}
