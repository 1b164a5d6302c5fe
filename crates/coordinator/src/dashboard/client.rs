//! Who a request comes from, for the limits per client and the log: the peer address of its
//! connection. Behind a reverse proxy every peer is the proxy, so for a peer the operator
//! names with `--trusted-proxy` (and only then: anyone can write the header) the client is the
//! address that proxy appended to `X-Forwarded-For`, its last entry that is not itself a
//! trusted proxy.
//!
//! A client is limited by its [`ClientKey`]: an IPv4 address, or an IPv6 address's /64, since
//! one machine commonly has a whole /64 to pick addresses from.

use std::net::{IpAddr, Ipv6Addr};

use hyper::header::HeaderMap;

/// The header a proxy appends the address it got a request from to.
const FORWARDED_FOR: &str = "x-forwarded-for";

/// What the limits per client count by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClientKey(IpAddr);

impl ClientKey {
    pub fn of(ip: IpAddr) -> ClientKey {
        match ip.to_canonical() {
            IpAddr::V6(v6) => {
                let prefix = u128::from(v6) & !((1u128 << 64) - 1);
                ClientKey(IpAddr::V6(Ipv6Addr::from(prefix)))
            }
            v4 => ClientKey(v4),
        }
    }
}

/// The proxies whose `X-Forwarded-For` is believed (`--trusted-proxy`); none by default.
#[derive(Clone, Debug, Default)]
pub struct Proxies(Vec<IpAddr>);

impl Proxies {
    pub fn new(addresses: impl IntoIterator<Item = IpAddr>) -> Proxies {
        Proxies(addresses.into_iter().map(|ip| ip.to_canonical()).collect())
    }

    pub fn trusts(&self, peer: IpAddr) -> bool {
        self.0.contains(&peer.to_canonical())
    }

    /// The client of a request with `headers` on a connection from `peer`: the peer, unless it
    /// is a trusted proxy that says whom it forwards.
    pub fn client(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let peer = peer.to_canonical();
        if !self.trusts(peer) {
            return peer;
        }
        // Each proxy appends; read from the right, past the trusted ones. An entry that is not
        // an address ends the chain: what lies left of it is not known to come from a proxy.
        let entries: Vec<&str> = headers
            .get_all(FORWARDED_FOR)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .collect();
        let mut client = peer;
        for entry in entries.iter().rev() {
            match entry.trim().parse::<IpAddr>() {
                Ok(ip) if self.trusts(ip) => client = ip.to_canonical(),
                Ok(ip) => return ip.to_canonical(),
                Err(_) => break,
            }
        }
        client
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    fn forwarded(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(FORWARDED_FOR, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    #[test]
    fn forwarded_for_is_believed_only_from_a_trusted_proxy() {
        let proxies = Proxies::new([ip("127.0.0.1"), ip("10.0.0.2")]);
        let headers = forwarded(&["198.51.100.1, 203.0.113.9", "10.0.0.2"]);
        assert_eq!(proxies.client(ip("127.0.0.1"), &headers), ip("203.0.113.9"));
        assert_eq!(proxies.client(ip("192.0.2.7"), &headers), ip("192.0.2.7"));
        assert_eq!(
            Proxies::default().client(ip("127.0.0.1"), &headers),
            ip("127.0.0.1")
        );
        let spoofed = forwarded(&["203.0.113.9, not-an-address"]);
        assert_eq!(proxies.client(ip("127.0.0.1"), &spoofed), ip("127.0.0.1"));
        assert_eq!(
            proxies.client(ip("::ffff:127.0.0.1"), &forwarded(&["2001:db8::1"])),
            ip("2001:db8::1")
        );
    }

    #[test]
    fn an_ipv6_client_is_its_slash_64() {
        assert_eq!(
            ClientKey::of(ip("2001:db8:1:2:aaaa::1")),
            ClientKey::of(ip("2001:db8:1:2:bbbb::9"))
        );
        assert_ne!(
            ClientKey::of(ip("2001:db8:1:2::1")),
            ClientKey::of(ip("2001:db8:1:3::1"))
        );
        assert_eq!(
            ClientKey::of(ip("::ffff:192.0.2.1")),
            ClientKey::of(ip("192.0.2.1"))
        );
        assert_ne!(
            ClientKey::of(ip("192.0.2.1")),
            ClientKey::of(ip("192.0.2.2"))
        );
    }
}
