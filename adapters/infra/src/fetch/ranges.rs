//! Which addresses a source link may reach: only the public internet. Everything an operator's
//! own network, a tunnel or a translation prefix could lead back to is refused, including IPv6
//! forms that carry an IPv4 address inside them.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Whether an address is on the public internet.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(v4: Ipv4Addr) -> bool {
    let o = v4.octets();
    !(v4.is_private()
        || v4.is_loopback()
        || v4.is_link_local()
        || v4.is_unspecified()
        || v4.is_broadcast()
        || v4.is_multicast()
        || v4.is_documentation()
        || o[0] == 0
        // Shared address space (carrier-grade NAT), 100.64.0.0/10.
        || (o[0] == 100 && (64..128).contains(&o[1]))
        // IETF protocol assignments, 192.0.0.0/24.
        || (o[0] == 192 && o[1] == 0 && o[2] == 0)
        // Benchmarking, 198.18.0.0/15: often routed to lab networks inside.
        || (o[0] == 198 && (o[1] & 0xfe) == 18)
        || o[0] >= 240)
}

fn is_public_v6(v6: Ipv6Addr) -> bool {
    if let Some(v4) = v6.to_ipv4_mapped() {
        return is_public_v4(v4);
    }
    let s = v6.segments();
    // IPv4-compatible `::a.b.c.d` (deprecated; also covers :: and ::1): some stacks route it
    // as the IPv4 address it carries, so none is accepted.
    if s[..6].iter().all(|&x| x == 0) {
        return false;
    }
    // NAT64 well-known prefix 64:ff9b::/96: the gateway connects to the embedded IPv4 address,
    // which must be public itself.
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return is_public_v4(embedded_v4(s[6], s[7]));
    }
    // Local-use NAT64 (64:ff9b:1::/48) translates into the operator's own networks.
    if s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1 {
        return false;
    }
    let first = s[0];
    !(v6.is_multicast()
        // 6to4, 2002::/16: relays reach the embedded IPv4 address; the mechanism is
        // deprecated (RFC 7526), so the whole prefix is refused rather than unpacked.
        || first == 0x2002
        // Teredo (2001::/32) hides an IPv4 address too; documentation (2001:db8::/32).
        || (first == 0x2001 && (s[1] == 0 || s[1] == 0xdb8))
        // Unique local fc00::/7, link-local fe80::/10, site-local fec0::/10 (deprecated).
        || (first & 0xfe00) == 0xfc00
        || (first & 0xffc0) == 0xfe80
        || (first & 0xffc0) == 0xfec0
        // Discard-only 100::/64.
        || (first == 0x100 && s[1..4] == [0, 0, 0]))
}

fn embedded_v4(high: u16, low: u16) -> Ipv4Addr {
    let [a, b] = high.to_be_bytes();
    let [c, d] = low.to_be_bytes();
    Ipv4Addr::new(a, b, c, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn public(ip: &str) -> bool {
        is_public(ip.parse().expect("ip"))
    }

    #[test]
    fn private_and_special_addresses_are_not_public() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
        ] {
            assert!(!public(ip), "{ip}");
        }
        for ip in ["1.1.1.1", "93.184.216.34", "2606:4700::1111"] {
            assert!(public(ip), "{ip}");
        }
    }

    #[test]
    fn ipv4_compatible_addresses_are_refused() {
        for ip in ["::127.0.0.1", "::10.0.0.1", "::1.1.1.1", "::", "::0.0.0.2"] {
            assert!(!public(ip), "{ip}");
        }
    }

    #[test]
    fn nat64_is_judged_by_the_address_inside() {
        for ip in [
            "64:ff9b::127.0.0.1",
            "64:ff9b::10.0.0.1",
            "64:ff9b::169.254.169.254",
            "64:ff9b::192.168.0.1",
            "64:ff9b:1::1.1.1.1",
        ] {
            assert!(!public(ip), "{ip}");
        }
        assert!(public("64:ff9b::1.1.1.1"));
        assert!(public("64:ff9b::93.184.216.34"));
    }

    #[test]
    fn six_to_four_is_refused_whatever_it_carries() {
        // 2002:7f00:0001:: carries 127.0.0.1, 2002:0101:0101:: carries 1.1.1.1.
        for ip in ["2002:7f00:1::", "2002:a00:1::1", "2002:101:101::1"] {
            assert!(!public(ip), "{ip}");
        }
    }

    #[test]
    fn site_local_is_refused() {
        for ip in ["fec0::1", "fec0:1234::1", "feff:ffff::1"] {
            assert!(!public(ip), "{ip}");
        }
        // Just outside fec0::/10 and fe80::/10.
        assert!(public("2a00::1"));
    }

    #[test]
    fn benchmarking_range_is_refused() {
        for ip in ["198.18.0.1", "198.19.255.254", "::ffff:198.18.0.1"] {
            assert!(!public(ip), "{ip}");
        }
        assert!(public("198.17.255.255"));
        assert!(public("198.20.0.1"));
    }

    #[test]
    fn tunnels_documentation_and_discard_are_refused() {
        for ip in ["2001::1", "2001:db8::1", "100::1"] {
            assert!(!public(ip), "{ip}");
        }
    }
}
