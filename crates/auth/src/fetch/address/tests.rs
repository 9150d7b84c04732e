//! Table-driven: for every special-purpose block, the first and last address inside it and the
//! neighbours just outside; for every form that carries an IPv4 address, one that carries a public
//! address and several that carry a forbidden one.

use std::net::IpAddr;

use super::super::registry::{IPV4_OTHER, IPV4_SPECIAL, IPV6_OTHER, IPV6_SPECIAL};
use super::*;

fn check(allowed: &[&str], forbidden: &[&str]) {
    for a in allowed {
        let ip: IpAddr = a.parse().unwrap();
        assert_eq!(refusal(ip), None, "{a} should be allowed");
    }
    for f in forbidden {
        let ip: IpAddr = f.parse().unwrap();
        assert!(refusal(ip).is_some(), "{f} should be forbidden");
    }
}

#[test]
fn rows_are_well_formed() {
    for b in IPV4_SPECIAL.iter().chain(IPV4_OTHER) {
        assert!(b.len <= 32, "{b:?}");
        let host = u32::from(b.net).checked_shl(u32::from(b.len)).unwrap_or(0);
        assert_eq!(host, 0, "{b:?} has host bits set");
        assert!(b.rfc.starts_with("RFC "), "{b:?}");
    }
    for b in IPV6_SPECIAL.iter().chain(IPV6_OTHER) {
        assert!(b.len <= 128, "{b:?}");
        let host = u128::from(b.net).checked_shl(u32::from(b.len)).unwrap_or(0);
        assert_eq!(host, 0, "{b:?} has host bits set");
        assert!(b.rfc.starts_with("RFC "), "{b:?}");
    }
}

#[test]
fn ipv4_private_loopback_link_local_and_shared() {
    check(
        &[
            "1.0.0.0",
            "9.255.255.255",
            "11.0.0.0",
            "100.63.255.255",
            "100.128.0.0",
            "126.255.255.255",
            "128.0.0.0",
            "169.253.255.255",
            "169.255.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "192.167.255.255",
            "192.169.0.0",
            "8.8.8.8",
        ],
        &[
            "0.0.0.0",
            "0.255.255.255",
            "10.0.0.0",
            "10.255.255.255",
            "100.64.0.0",
            "100.127.255.255",
            "127.0.0.1",
            "127.255.255.255",
            "169.254.0.0",
            "169.254.169.254",
            "169.254.255.255",
            "172.16.0.0",
            "172.31.255.255",
            "192.168.0.0",
            "192.168.255.255",
        ],
    );
}

#[test]
fn ipv4_reserved_class_e_and_broadcast() {
    check(
        &["223.255.255.255"],
        &[
            "240.0.0.0",
            "240.0.0.1",
            "250.1.2.3",
            "255.255.255.254",
            "255.255.255.255",
        ],
    );
}

#[test]
fn ipv4_multicast() {
    check(&[], &["224.0.0.0", "224.0.0.1", "239.255.255.255"]);
}

#[test]
fn ipv4_benchmarking() {
    check(
        &["198.17.255.255", "198.20.0.0"],
        &["198.18.0.0", "198.18.0.1", "198.19.255.255"],
    );
}

#[test]
fn ipv4_ietf_protocol_assignments_and_their_global_anycast() {
    check(
        // The registry's globally reachable anycast services inside 192.0.0.0/24.
        &["191.255.255.255", "192.0.0.9", "192.0.0.10", "192.0.1.0"],
        &[
            "192.0.0.0",
            "192.0.0.7",
            "192.0.0.8",
            "192.0.0.11",
            "192.0.0.170",
            "192.0.0.171",
            "192.0.0.255",
        ],
    );
}

#[test]
fn ipv4_documentation_and_deprecated_relay() {
    check(
        &["192.0.1.255", "192.0.3.0", "198.51.99.255", "203.0.114.0"],
        &[
            "192.0.2.0",
            "192.0.2.255",
            "198.51.100.1",
            "203.0.113.255",
            "192.88.99.0",
            "192.88.99.255",
        ],
    );
}

#[test]
fn ipv4_registry_rows_that_are_globally_reachable() {
    check(&["192.31.196.1", "192.52.193.1", "192.175.48.6"], &[]);
}

#[test]
fn ipv6_loopback_unspecified_and_outside_global_unicast() {
    check(
        &[
            "2000::",
            "2606:4700::1111",
            "3fff:1000::",
            "3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
        ],
        &[
            "::",
            "::1",
            "::2",
            "1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            "4000::",
            "8000::1",
        ],
    );
}

#[test]
fn ipv6_local_scopes_and_multicast() {
    check(
        &[],
        &[
            "fc00::",
            "fd12:3456::1",
            "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            "fe80::",
            "fe80::1",
            "febf:ffff::1",
            "fec0::1",
            "ff02::1",
            "ff0e::1",
        ],
    );
}

#[test]
fn ipv6_discard_dummy_documentation_and_srv6() {
    check(
        &["2001:db7:ffff::1", "2001:db9::"],
        &[
            "100::",
            "100::ffff:ffff:ffff:ffff",
            "100:0:0:1::",
            "100:0:0:1:ffff:ffff:ffff:ffff",
            "2001:db8::",
            "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff",
            "3fff::",
            "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff",
            "5f00::1",
        ],
    );
}

#[test]
fn ipv6_ietf_protocol_assignments_and_their_global_blocks() {
    check(
        &[
            "2001:1::1",
            "2001:1::2",
            "2001:1::3",
            "2001:3::",
            "2001:3:ffff:ffff:ffff:ffff:ffff:ffff",
            "2001:4:112::1",
            "2001:20::",
            "2001:2f:ffff:ffff:ffff:ffff:ffff:ffff",
            "2001:30::1",
            "2001:200::",
            "2620:4f:8000::1",
        ],
        &[
            "2001:1::",
            "2001:1::4",
            "2001:2::",
            "2001:2:0:ffff:ffff:ffff:ffff:ffff",
            "2001:4::",
            "2001:10::1",
            "2001:1f:ffff:ffff:ffff:ffff:ffff:ffff",
            "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff",
        ],
    );
}

#[test]
fn ipv4_mapped_is_judged_by_its_ipv4_address() {
    check(
        &["::ffff:8.8.8.8", "::ffff:192.0.0.9", "::ffff:1.0.0.0"],
        &[
            "::ffff:0.0.0.0",
            "::ffff:127.0.0.1",
            "::ffff:10.1.2.3",
            "::ffff:169.254.169.254",
            "::ffff:198.18.0.1",
            "::ffff:192.0.0.1",
            "::ffff:240.0.0.1",
            "::ffff:255.255.255.255",
        ],
    );
}

#[test]
fn ipv4_compatible_is_refused_whatever_it_carries() {
    // Deprecated and never routed: even a public address inside does not make it reachable.
    check(
        &[],
        &[
            "::127.0.0.1",
            "::10.0.0.1",
            "::198.18.0.1",
            "::8.8.8.8",
            "::255.255.255.255",
        ],
    );
    let why = refusal("::10.0.0.1".parse().unwrap()).unwrap();
    assert!(
        why.contains("10.0.0.1") && why.contains("Private-Use"),
        "{why}"
    );
}

#[test]
fn nat64_well_known_prefix_is_judged_by_its_ipv4_address() {
    check(
        &["64:ff9b::808:808", "64:ff9b::1.1.1.1", "64:ff9b::c000:9"],
        &[
            "64:ff9b::",
            "64:ff9b::a00:1",
            "64:ff9b::7f00:1",
            "64:ff9b::169.254.169.254",
            "64:ff9b::198.18.0.1",
            "64:ff9b::192.0.0.1",
            "64:ff9b::240.0.0.1",
            "64:ff9b::ffff:ffff",
            // Just outside the /96: not a translation address, and outside 2000::/3.
            "64:ff9b:0:0:1::808:808",
            "64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff",
        ],
    );
    let why = refusal("64:ff9b::a00:1".parse().unwrap()).unwrap();
    assert!(
        why.contains("10.0.0.1") && why.contains("RFC 6052"),
        "{why}"
    );
}

#[test]
fn nat64_local_use_prefix_is_refused() {
    check(
        &[],
        &[
            "64:ff9b:1::",
            "64:ff9b:1::808:808",
            "64:ff9b:1:ffff:ffff:ffff:ffff:ffff",
            "64:ff9b:2::",
        ],
    );
}

#[test]
fn six_to_four_is_judged_by_its_ipv4_address() {
    check(
        &["2002:808:808::1", "2002:101:101:1::"],
        &[
            "2002::",
            "2002:a00:1::1",
            "2002:7f00:1::",
            "2002:a9fe:a9fe::1",
            "2002:c612:1::",
            "2002:c000:1::",
            "2002:f000::1",
            "2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
        ],
    );
    let why = refusal("2002:a9fe:a9fe::1".parse().unwrap()).unwrap();
    assert!(why.contains("169.254.169.254"), "{why}");
}

#[test]
fn teredo_is_judged_by_its_server_and_client_addresses() {
    check(
        // Server 8.8.8.8, client 1.1.1.1 (stored inverted: fefe:fefe).
        &[
            "2001:0:808:808::fefe:fefe",
            "2001:0:808:808:8000:63bf:fefe:fefe",
        ],
        &[
            // RFC 4380's own example: client 192.0.2.45, a documentation address.
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            // Client 127.0.0.1.
            "2001:0:808:808::80ff:fffe",
            // Client 10.0.0.1.
            "2001:0:808:808::f5ff:fffe",
            // Server 10.0.0.1, client 1.1.1.1.
            "2001:0:a00:1::fefe:fefe",
            // Client 0.0.0.0 (all ones inverted).
            "2001:0:808:808::ffff:ffff",
        ],
    );
    let why = refusal("2001:0:808:808::80ff:fffe".parse().unwrap()).unwrap();
    assert!(
        why.contains("127.0.0.1") && why.contains("RFC 4380"),
        "{why}"
    );
}
