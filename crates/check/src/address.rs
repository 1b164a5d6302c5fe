//! Which addresses `--public-only` lets the checker connect to, and the guard every hop
//! passes before it is asked ([`guard`]).
//!
//! A crawler fed untrusted lists must not become a way to reach the operator's own network
//! (cloud metadata at 169.254.169.254, admin pages on 10/8, services on loopback), so every
//! address that is not globally routable is refused: on resolved names, on IP literals, on
//! every redirect hop. IPv6 addresses that carry an IPv4 address (mapped, NAT64, 6to4, Teredo,
//! ISATAP) are judged by that address too.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use url::{Host, Url};

use crate::reply::Failure;

/// Decides whether the checker may connect to an address; `fn` so it is `Copy` and free to call.
pub(crate) type AddressPolicy = fn(IpAddr) -> bool;

/// Every address is allowed: the policy when `public_only` is off.
pub(crate) fn any_address(_: IpAddr) -> bool {
    true
}

/// Refuses what must not be asked: schemes other than http(s), and under `public_only`
/// IP literals outside the public range (names are filtered by the resolver instead,
/// since literals never reach it).
pub(crate) fn guard(allow: AddressPolicy, url: &Url) -> Result<(), Failure> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(Failure::Protocol);
    }
    let ip = match url.host() {
        Some(Host::Ipv4(ip)) => ip.into(),
        Some(Host::Ipv6(ip)) => ip.into(),
        Some(Host::Domain(_)) => return Ok(()),
        None => return Err(Failure::Protocol),
    };
    if allow(ip) {
        Ok(())
    } else {
        Err(Failure::Denied)
    }
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

/// Ranges that carry an IPv4 address reach it (or a relay acting on it), so that address is
/// judged too; where it cannot be told from the address, the range is refused.
fn is_public_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    let v4 =
        |high: u16, low: u16| is_public_v4(Ipv4Addr::from(u32::from(high) << 16 | u32::from(low)));
    // ISATAP (RFC 5214): interface id 0:5efe or 200:5efe and an IPv4 address, under any /64.
    if matches!(s[4], 0 | 0x200) && s[5] == 0x5efe && !v4(s[6], s[7]) {
        return false;
    }
    match s {
        [0, 0, 0, 0, 0, 0xffff, high, low] => v4(high, low), // IPv4-mapped, ::ffff:0:0/96
        [0x64, 0xff9b, 0, 0, 0, 0, high, low] => v4(high, low), // NAT64, 64:ff9b::/96
        // NAT64 for local use, 64:ff9b:1::/48: where the IPv4 address sits depends on the
        // prefix length the network chose. Not globally reachable (RFC 8215), so refused,
        // with the unassigned rest of 64:ff9b::/32.
        [0x64, 0xff9b, ..] => false,
        [0x2002, high, low, ..] => v4(high, low), // 6to4, 2002::/16
        // Teredo, 2001::/32: the server's address, then the client's inverted in the last 32 bits.
        [0x2001, 0, server_high, server_low, _, _, high, low] => {
            v4(server_high, server_low) && v4(!high, !low)
        }
        _ => is_public_native_v6(ip),
    }
}

/// The rules for IPv6 addresses that carry no IPv4 address.
fn is_public_native_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    let special = ip.is_unspecified()
        || ip.is_loopback()
        || (s[0] & 0xfe00) == 0xfc00 // unique local, fc00::/7
        || (s[0] & 0xffc0) == 0xfe80 // link-local, fe80::/10
        || (s[0] & 0xffc0) == 0xfec0 // site-local (deprecated), fec0::/10
        || (s[0] & 0xff00) == 0xff00 // multicast
        || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
        || (s[0] == 0x0100 && s[1..4] == [0, 0, 0]) // discard-only, 100::/64
        // The rest of ::/16: IPv4-compatible (::a.b.c.d, deprecated, which some systems
        // still tunnel), IPv4-translated (::ffff:0:a.b.c.d) and other reserved addresses.
        || s[0] == 0;
    !special
}

#[cfg(test)]
mod tests {
    use super::*;

    fn public(s: &str) -> bool {
        is_public(s.parse().unwrap())
    }

    fn assert_public(addresses: &[&str]) {
        for s in addresses {
            assert!(public(s), "{s} should be public");
        }
    }

    fn assert_refused(addresses: &[&str]) {
        for s in addresses {
            assert!(!public(s), "{s} should be refused");
        }
    }

    #[test]
    fn global_unicast_addresses_are_public() {
        assert_public(&[
            "8.8.8.8",
            "1.1.1.1",
            "93.184.216.34",
            "2606:4700::1111",
            "2a00:1450::1",
        ]);
    }

    #[test]
    fn private_loopback_and_link_local_v4_are_refused() {
        assert_refused(&[
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
        ]);
    }

    #[test]
    fn neighbours_of_private_ranges_stay_public() {
        assert_public(&[
            "172.15.255.255",
            "172.32.0.1",
            "100.128.0.1",
            "11.0.0.1",
            "169.253.0.1",
        ]);
    }

    #[test]
    fn non_global_v6_addresses_are_refused() {
        assert_refused(&[
            "::1",
            "::",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "ff02::1",
            "2001:db8::1",
        ]);
    }

    #[test]
    fn v4_inside_v6_is_judged_as_v4() {
        assert!(!public("::ffff:127.0.0.1"));
        assert!(!public("::ffff:10.0.0.1"));
        assert!(!public("64:ff9b::192.168.0.1"));
        assert!(public("::ffff:8.8.8.8"));
    }

    #[test]
    fn v4_inside_6to4_teredo_and_isatap_is_judged_as_v4() {
        assert_refused(&[
            "2002:7f00:1::1",                       // 6to4 of 127.0.0.1
            "2002:a00:1::",                         // 6to4 of 10.0.0.1
            "2002:a9fe:a9fe::1",                    // 6to4 of 169.254.169.254
            "2001:0:4136:e378:8000:63bf:80ff:fffe", // Teredo, client 127.0.0.1
            "2001:0:4136:e378:8000:63bf:f5ff:fffe", // Teredo, client 10.0.0.1
            "2001:0:a00:1:8000:63bf:f7f7:f7f7",     // Teredo, server 10.0.0.1
            "2a00:1450:1:2:0:5efe:a00:1",           // ISATAP of 10.0.0.1
            "2a00:1450:1:2:200:5efe:c0a8:101",      // ISATAP of 192.168.1.1
        ]);
        assert_public(&[
            "2002:808:808::1",                      // 6to4 of 8.8.8.8
            "2001:0:4136:e378:8000:63bf:f7f7:f7f7", // Teredo, client 8.8.8.8
            "2a00:1450:1:2:200:5efe:808:808",       // ISATAP of 8.8.8.8
        ]);
    }

    #[test]
    fn nat64_outside_the_well_known_prefix_is_refused() {
        // 64:ff9b:1::/48 is for local use, and where it carries the IPv4 address depends on
        // the prefix length its network chose.
        assert_refused(&[
            "64:ff9b:1::a00:1",
            "64:ff9b:1::808:808",
            "64:ff9b:1:7f00:1::",
            "64:ff9b:2::808:808",
        ]);
        assert!(!public("64:ff9b::7f00:1"));
        assert!(public("64:ff9b::808:808"));
    }

    #[test]
    fn v4_compatible_and_translated_addresses_are_refused() {
        assert_refused(&[
            "::7f00:1",
            "::a00:1",
            "::808:808",
            "::ffff:0:a00:1",
            "::ffff:0:808:808",
        ]);
    }
}
