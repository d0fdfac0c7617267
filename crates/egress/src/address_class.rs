//! Which addresses are "global": everything else (loopback, RFC 1918,
//! link-local, CGNAT, ULA, multicast, documentation, reserved, and the IPv6
//! forms that embed such an IPv4 address) is refused unless the destination
//! sets `allowPrivateAddresses`. A name that resolves to one of these is the
//! DNS-rebinding case.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// True when `ip` is a publicly routable unicast address.
pub fn is_global(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_global_v4(v4),
        IpAddr::V6(v6) => is_global_v6(v6),
    }
}

fn in_v4(ip: Ipv4Addr, net: [u8; 4], prefix: u32) -> bool {
    let mask = if prefix == 0 {
        0
    } else {
        u32::MAX << (32 - prefix)
    };
    (u32::from(ip) & mask) == (u32::from(Ipv4Addr::from(net)) & mask)
}

/// IPv4 ranges that are not global (IANA special-purpose registry).
const NON_GLOBAL_V4: &[([u8; 4], u32)] = &[
    ([0, 0, 0, 0], 8),       // "this network"
    ([10, 0, 0, 0], 8),      // RFC 1918
    ([100, 64, 0, 0], 10),   // CGNAT
    ([127, 0, 0, 0], 8),     // loopback
    ([169, 254, 0, 0], 16),  // link-local (cloud metadata lives here)
    ([172, 16, 0, 0], 12),   // RFC 1918
    ([192, 0, 0, 0], 24),    // IETF protocol assignments
    ([192, 0, 2, 0], 24),    // TEST-NET-1
    ([192, 88, 99, 0], 24),  // 6to4 relay anycast (deprecated)
    ([192, 168, 0, 0], 16),  // RFC 1918
    ([198, 18, 0, 0], 15),   // benchmarking
    ([198, 51, 100, 0], 24), // TEST-NET-2
    ([203, 0, 113, 0], 24),  // TEST-NET-3
    ([224, 0, 0, 0], 4),     // multicast
    ([240, 0, 0, 0], 4),     // reserved + broadcast
];

fn is_global_v4(ip: Ipv4Addr) -> bool {
    !NON_GLOBAL_V4
        .iter()
        .any(|&(net, prefix)| in_v4(ip, net, prefix))
}

fn is_global_v6(ip: Ipv6Addr) -> bool {
    let seg = ip.segments();
    // Forms that carry an IPv4 address are judged by that address:
    // v4-mapped ::ffff:a.b.c.d, NAT64 64:ff9b::a.b.c.d, 6to4 2002:AABB:CCDD::.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_global_v4(v4);
    }
    if seg[0] == 0x64 && seg[1] == 0xff9b && seg[2..6] == [0, 0, 0, 0] {
        return is_global_v4(embedded_v4(seg[6], seg[7]));
    }
    if seg[0] == 0x2002 {
        return is_global_v4(embedded_v4(seg[1], seg[2]));
    }
    let non_global = seg[0..6] == [0; 6] // ::, ::1, deprecated v4-compatible ::a.b.c.d
        || (seg[0] & 0xfe00) == 0xfc00 // ULA fc00::/7
        || (seg[0] & 0xffc0) == 0xfe80 // link-local fe80::/10
        || (seg[0] & 0xffc0) == 0xfec0 // site-local fec0::/10 (deprecated)
        || (seg[0] & 0xff00) == 0xff00 // multicast
        || (seg[0] == 0x2001 && seg[1] == 0x0db8) // documentation
        || (seg[0] == 0x2001 && seg[1] < 0x0200) // IETF protocol assignments (Teredo, ORCHID…)
        || seg[0] == 0x0100 && seg[1..4] == [0, 0, 0]; // discard-only 100::/64
    !non_global
}

fn embedded_v4(high: u16, low: u16) -> Ipv4Addr {
    let [a, b] = high.to_be_bytes();
    let [c, d] = low.to_be_bytes();
    Ipv4Addr::new(a, b, c, d)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn global(text: &str) -> bool {
        is_global(text.parse().unwrap())
    }

    #[test]
    fn private_loopback_link_local_cgnat_and_multicast_v4_are_not_global() {
        for a in [
            "127.0.0.1",
            "127.255.0.9",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.255",
            "0.0.0.0",
            "224.0.0.1",
            "239.255.255.250",
            "255.255.255.255",
            "240.0.0.1",
            "192.0.2.5",
            "198.18.0.1",
        ] {
            assert!(!global(a), "{a} is global?");
        }
    }

    #[test]
    fn public_v4_addresses_are_global() {
        for a in [
            "8.8.8.8",
            "1.1.1.1",
            "172.32.0.1",
            "100.128.0.1",
            "172.15.255.255",
            "93.184.216.34",
        ] {
            assert!(global(a), "{a} not global?");
        }
    }

    #[test]
    fn v6_loopback_ula_link_local_multicast_and_embedded_private_v4_are_not_global() {
        for a in [
            "::",
            "::1",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "ff02::1",
            "2001:db8::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a00:1",
            "2002:c0a8:0101::1",
            "::127.0.0.1",
            "fec0::1",
        ] {
            assert!(!global(a), "{a} is global?");
        }
    }

    #[test]
    fn public_v6_and_v4_mapped_public_are_global() {
        for a in [
            "2606:4700:4700::1111",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:0808:0808::1",
        ] {
            assert!(global(a), "{a} not global?");
        }
    }
}
