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

/// IPv6 prefixes inside 2000::/3 that are not global (the rest of the
/// IANA IPv6 special-purpose registry lies outside 2000::/3).
const NON_GLOBAL_V6_IN_2000: &[(u16, u16, u32)] = &[
    (0x2001, 0x0000, 23), // IETF protocol assignments: Teredo, ORCHID, benchmarking, AMT, …
    (0x2001, 0x0db8, 32), // documentation
    (0x3fff, 0x0000, 20), // documentation (RFC 9637)
];

fn in_v6_head(seg: &[u16; 8], (high, low, prefix): (u16, u16, u32)) -> bool {
    let head = (u32::from(seg[0]) << 16) | u32::from(seg[1]);
    let net = (u32::from(high) << 16) | u32::from(low);
    let mask = u32::MAX << (32 - prefix);
    head & mask == net & mask
}

/// Judged by what the address reaches: the forms that carry an IPv4
/// address by that address; the local-use translation prefix
/// 64:ff9b:1::/48 (RFC 8215) reaches whatever a local translator serves, so
/// it is never global; outside 2000::/3 nothing is global unicast (the
/// registry's loopback, unspecified, discard, ULA, link-local, site-local,
/// multicast, SRv6 SIDs … all live there); inside it, the registry's
/// non-global blocks are refused.
fn is_global_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = embedded_v4_of(ip) {
        return is_global_v4(v4);
    }
    let seg = ip.segments();
    if seg[0] == 0x64 && seg[1] == 0xff9b && seg[2] == 1 {
        return false;
    }
    (seg[0] & 0xe000) == 0x2000
        && !NON_GLOBAL_V6_IN_2000
            .iter()
            .any(|&block| in_v6_head(&seg, block))
}

/// The IPv4 address an IPv6 form carries, where the form reaches it:
/// v4-mapped `::ffff:a.b.c.d`, SIIT v4-translated `::ffff:0:a.b.c.d`, NAT64
/// `64:ff9b::a.b.c.d`, 6to4 `2002:AABB:CCDD::`. (The deprecated
/// v4-compatible `::a.b.c.d` is refused whole, with the rest of ::/8.)
fn embedded_v4_of(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let seg = ip.segments();
    let low = embedded_v4(seg[6], seg[7]);
    match seg {
        [0, 0, 0, 0, 0, 0xffff, _, _] => Some(low),
        [0, 0, 0, 0, 0xffff, 0, _, _] => Some(low),
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => Some(low),
        [0x2002, high, mid, ..] => Some(embedded_v4(high, mid)),
        _ => None,
    }
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

    /// The IANA IPv4 and IPv6 Special-Purpose Address Registries (as of
    /// 2025), one row per entry: its first address, one inside it, and
    /// whether the engine may connect there without allowPrivateAddresses.
    /// Where the registry marks a block inside a refused one "globally
    /// reachable" (PCP/TURN anycast, AMT, ORCHIDv2, DRIP) the engine refuses
    /// it with its enclosing block: refusing is the safe side.
    const REGISTRY: &[(&str, &str, &str, bool)] = &[
        ("0.0.0.0/8", "0.0.0.0", "0.1.2.3", false),
        ("10.0.0.0/8", "10.0.0.0", "10.200.1.1", false),
        ("100.64.0.0/10", "100.64.0.0", "100.100.1.1", false),
        ("127.0.0.0/8", "127.0.0.0", "127.1.2.3", false),
        ("169.254.0.0/16", "169.254.0.0", "169.254.169.254", false),
        ("172.16.0.0/12", "172.16.0.0", "172.20.1.1", false),
        ("192.0.0.0/24", "192.0.0.0", "192.0.0.8", false),
        ("192.0.0.9/32 PCP anycast", "192.0.0.9", "192.0.0.9", false),
        (
            "192.0.0.170/32 NAT64 discovery",
            "192.0.0.170",
            "192.0.0.171",
            false,
        ),
        ("192.0.2.0/24", "192.0.2.0", "192.0.2.77", false),
        (
            "192.31.196.0/24 AS112",
            "192.31.196.0",
            "192.31.196.9",
            true,
        ),
        ("192.52.193.0/24 AMT", "192.52.193.0", "192.52.193.9", true),
        (
            "192.88.99.0/24 6to4 relay",
            "192.88.99.0",
            "192.88.99.1",
            false,
        ),
        ("192.168.0.0/16", "192.168.0.0", "192.168.99.1", false),
        (
            "192.175.48.0/24 AS112",
            "192.175.48.0",
            "192.175.48.9",
            true,
        ),
        ("198.18.0.0/15", "198.18.0.0", "198.19.255.1", false),
        ("198.51.100.0/24", "198.51.100.0", "198.51.100.9", false),
        ("203.0.113.0/24", "203.0.113.0", "203.0.113.9", false),
        ("224.0.0.0/4 multicast", "224.0.0.0", "239.1.1.1", false),
        ("240.0.0.0/4", "240.0.0.0", "250.1.1.1", false),
        (
            "255.255.255.255/32",
            "255.255.255.255",
            "255.255.255.255",
            false,
        ),
        ("::1/128", "::1", "::1", false),
        ("::/128", "::", "::", false),
        (
            "::ffff:0:0/96 mapped, private",
            "::ffff:10.0.0.1",
            "::ffff:127.0.0.1",
            false,
        ),
        (
            "::ffff:0:0/96 mapped, public",
            "::ffff:8.8.8.8",
            "::ffff:1.1.1.1",
            true,
        ),
        (
            "::ffff:0:0:0/96 SIIT, private",
            "::ffff:0:10.0.0.1",
            "::ffff:0:127.0.0.1",
            false,
        ),
        (
            "::ffff:0:0:0/96 SIIT, public",
            "::ffff:0:8.8.8.8",
            "::ffff:0:1.1.1.1",
            true,
        ),
        ("::/96 v4-compatible", "::8.8.8.8", "::127.0.0.1", false),
        (
            "64:ff9b::/96, private",
            "64:ff9b::10.0.0.1",
            "64:ff9b::169.254.169.254",
            false,
        ),
        (
            "64:ff9b::/96, public",
            "64:ff9b::8.8.8.8",
            "64:ff9b::1.1.1.1",
            true,
        ),
        (
            "64:ff9b:1::/48 local-use",
            "64:ff9b:1::",
            "64:ff9b:1:808:8:800::",
            false,
        ),
        ("100::/64 discard", "100::", "100::1", false),
        ("100:0:0:1::/64 dummy", "100:0:0:1::", "100:0:0:1::1", false),
        ("2001::/23 IETF", "2001::", "2001:1ff::1", false),
        (
            "2001::/32 Teredo",
            "2001::",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            false,
        ),
        ("2001:1::1/128 PCP anycast", "2001:1::1", "2001:1::2", false),
        ("2001:2::/48 benchmarking", "2001:2::", "2001:2::1", false),
        ("2001:3::/32 AMT", "2001:3::", "2001:3::1", false),
        ("2001:20::/28 ORCHIDv2", "2001:20::", "2001:2f::1", false),
        ("2001:db8::/32", "2001:db8::", "2001:db8:1::1", false),
        (
            "2002::/16 6to4, private",
            "2002:a00:1::",
            "2002:7f00:1::1",
            false,
        ),
        (
            "2002::/16 6to4, public",
            "2002:808:808::",
            "2002:101:101::1",
            true,
        ),
        (
            "2620:4f:8000::/48 AS112",
            "2620:4f:8000::",
            "2620:4f:8000::1",
            true,
        ),
        ("3fff::/20 documentation", "3fff::", "3fff:fff::1", false),
        ("5f00::/16 SRv6 SIDs", "5f00::", "5f00:1::1", false),
        ("fc00::/7 ULA", "fc00::", "fdff::1", false),
        ("fe80::/10 link-local", "fe80::", "febf::1", false),
        ("fec0::/10 site-local", "fec0::", "feff::1", false),
        ("ff00::/8 multicast", "ff00::", "ff02::1", false),
        (
            "2000::/3 global unicast",
            "2606:4700::1111",
            "2a00:1450::1",
            true,
        ),
    ];

    #[test]
    fn every_special_purpose_registry_entry_is_judged_by_what_it_reaches() {
        for &(entry, first, inside, reachable) in REGISTRY {
            for address in [first, inside] {
                assert_eq!(global(address), reachable, "{entry}: {address}");
            }
        }
    }
}
