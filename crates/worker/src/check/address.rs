//! Which addresses `--public-only` lets the checker connect to.
//!
//! A crawler fed untrusted lists must not become a way to reach the operator's own network
//! (cloud metadata at 169.254.169.254, admin pages on 10/8, services on loopback), so every
//! address that is not globally routable is refused: on resolved names, on IP literals, on
//! every redirect hop.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Decides whether the checker may connect to an address; `fn` so it is `Copy` and free to call.
pub(crate) type AddressPolicy = fn(IpAddr) -> bool;

/// Every address is allowed: the policy when `public_only` is off.
pub(crate) fn any_address(_: IpAddr) -> bool {
    true
}

/// True for a globally routable unicast address.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    let special = a == 0 // "this network", including 0.0.0.0
        || a == 10
        || a == 127
        || (a == 100 && (64..128).contains(&b)) // carrier-grade NAT, 100.64/10
        || (a == 169 && b == 254)
        || (a == 172 && (16..32).contains(&b))
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 192 && b == 0 && c == 2) // documentation
        || (a == 192 && b == 168)
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || (a == 198 && b == 51 && c == 100) // documentation
        || (a == 203 && b == 0 && c == 113) // documentation
        || a >= 224; // multicast, reserved, broadcast
    !special
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = embedded_v4(ip) {
        return is_public_v4(v4);
    }
    let s = ip.segments();
    let special = ip.is_unspecified()
        || ip.is_loopback()
        || (s[0] & 0xfe00) == 0xfc00 // unique local, fc00::/7
        || (s[0] & 0xffc0) == 0xfe80 // link-local, fe80::/10
        || (s[0] & 0xffc0) == 0xfec0 // site-local (deprecated), fec0::/10
        || (s[0] & 0xff00) == 0xff00 // multicast
        || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
        || (s[0] == 0x0100 && s[1..4] == [0, 0, 0]) // discard-only, 100::/64
        || s[0] == 0; // remaining reserved ::/16 (IPv4-compatible and the like)
    !special
}

/// The IPv4 address carried inside an IPv4-mapped (`::ffff:a.b.c.d`) or NAT64
/// (`64:ff9b::a.b.c.d`) address: connecting to one of those reaches the IPv4 address.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let tail = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    let mapped = s[..5] == [0, 0, 0, 0, 0] && s[5] == 0xffff;
    let nat64 = s[..6] == [0x64, 0xff9b, 0, 0, 0, 0];
    (mapped || nat64).then_some(tail)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn public(s: &str) -> bool {
        is_public(s.parse().unwrap())
    }

    #[test]
    fn global_unicast_addresses_are_public() {
        for s in [
            "8.8.8.8",
            "1.1.1.1",
            "93.184.216.34",
            "2606:4700::1111",
            "2a00:1450::1",
        ] {
            assert!(public(s), "{s} should be public");
        }
    }

    #[test]
    fn private_loopback_and_link_local_v4_are_refused() {
        let refused = [
            "127.0.0.1",
            "127.8.9.10",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "224.0.0.1",
            "255.255.255.255",
            "240.0.0.1",
            "192.0.2.1",
            "198.18.0.1",
        ];
        for s in refused {
            assert!(!public(s), "{s} should be refused");
        }
    }

    #[test]
    fn neighbours_of_private_ranges_stay_public() {
        for s in [
            "172.15.255.255",
            "172.32.0.1",
            "100.128.0.1",
            "11.0.0.1",
            "169.253.0.1",
        ] {
            assert!(public(s), "{s} should be public");
        }
    }

    #[test]
    fn non_global_v6_addresses_are_refused() {
        for s in [
            "::1",
            "::",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "ff02::1",
            "2001:db8::1",
        ] {
            assert!(!public(s), "{s} should be refused");
        }
    }

    #[test]
    fn v4_inside_v6_is_judged_as_v4() {
        assert!(!public("::ffff:127.0.0.1"));
        assert!(!public("::ffff:10.0.0.1"));
        assert!(!public("64:ff9b::192.168.0.1"));
        assert!(public("::ffff:8.8.8.8"));
    }
}
