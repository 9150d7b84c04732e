//! The IANA IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890, updated by RFC 8190), as
//! data: every block with its name, the RFC that assigned it, and whether the registry calls it
//! globally reachable. A few rows that are not in those registries but are just as unreachable
//! (multicast, the deprecated IPv4-compatible and site-local forms) follow in their own tables.
//! Only data lives here; [`super::address`] decides.
//!
//! Checked against the registries as last updated in 2025 (IPv6: 100:0:0:1::/64, RFC 9780). A new
//! registry row is one line here plus an edge case in `address/tests.rs`.

use std::net::{Ipv4Addr, Ipv6Addr};

/// The registry's "Globally Reachable" column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    /// True: forwardable beyond the administrative domain (an anycast service, say).
    Global,
    /// False.
    Local,
    /// N/A: the registry does not say (a tunnel prefix, or a block it deprecated).
    Unstated,
}

/// Where an IPv6 block carries an IPv4 address that a translator or tunnel will deliver to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Embedded {
    /// None.
    No,
    /// In the last 32 bits (IPv4-mapped and -compatible: RFC 4291 section 2.5.5; NAT64 with the
    /// /96 well-known prefix: RFC 6052 section 2.2).
    Last32,
    /// In bits 16..48 (6to4: RFC 3056 section 2).
    SixToFour,
    /// The server in bits 32..64 and the client, inverted, in bits 96..128 (Teredo: RFC 4380
    /// section 4).
    Teredo,
}

/// One IPv4 block.
#[derive(Debug, Clone, Copy)]
pub(crate) struct V4Block {
    pub(crate) net: Ipv4Addr,
    pub(crate) len: u8,
    pub(crate) name: &'static str,
    pub(crate) rfc: &'static str,
    pub(crate) reach: Reach,
}

/// One IPv6 block.
#[derive(Debug, Clone, Copy)]
pub(crate) struct V6Block {
    pub(crate) net: Ipv6Addr,
    pub(crate) len: u8,
    pub(crate) name: &'static str,
    pub(crate) rfc: &'static str,
    pub(crate) reach: Reach,
    pub(crate) embedded: Embedded,
}

const fn v4(o: [u8; 4], len: u8, name: &'static str, rfc: &'static str, reach: Reach) -> V4Block {
    V4Block {
        net: Ipv4Addr::new(o[0], o[1], o[2], o[3]),
        len,
        name,
        rfc,
        reach,
    }
}

const fn v6(s: [u16; 8], len: u8, name: &'static str, rfc: &'static str, reach: Reach) -> V6Block {
    V6Block {
        net: Ipv6Addr::new(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]),
        len,
        name,
        rfc,
        reach,
        embedded: Embedded::No,
    }
}

impl V6Block {
    const fn embeds(self, embedded: Embedded) -> Self {
        Self { embedded, ..self }
    }
}

use Embedded::{Last32, SixToFour, Teredo};
use Reach::{Global, Local, Unstated};

// One row per line, so that the tables read like the registries they copy.

/// The IANA IPv4 Special-Purpose Address Registry, row for row. Nested rows (192.0.0.0/24 and the
/// blocks inside it) are all listed: the most specific match decides.
#[rustfmt::skip]
pub(crate) const IPV4_SPECIAL: &[V4Block] = &[
    v4([0, 0, 0, 0],         8,  "This network",                              "RFC 791",  Local),
    v4([0, 0, 0, 0],         32, "This host on this network",                 "RFC 1122", Local),
    v4([10, 0, 0, 0],        8,  "Private-Use",                               "RFC 1918", Local),
    v4([100, 64, 0, 0],      10, "Shared Address Space",                      "RFC 6598", Local),
    v4([127, 0, 0, 0],       8,  "Loopback",                                  "RFC 1122", Local),
    v4([169, 254, 0, 0],     16, "Link Local",                                "RFC 3927", Local),
    v4([172, 16, 0, 0],      12, "Private-Use",                               "RFC 1918", Local),
    v4([192, 0, 0, 0],       24, "IETF Protocol Assignments",                 "RFC 6890", Local),
    v4([192, 0, 0, 0],       29, "IPv4 Service Continuity Prefix",            "RFC 7335", Local),
    v4([192, 0, 0, 8],       32, "IPv4 dummy address",                        "RFC 7600", Local),
    v4([192, 0, 0, 9],       32, "Port Control Protocol Anycast",             "RFC 7723", Global),
    v4([192, 0, 0, 10],      32, "Traversal Using Relays around NAT Anycast", "RFC 8155", Global),
    v4([192, 0, 0, 170],     32, "NAT64/DNS64 Discovery",                     "RFC 8880", Local),
    v4([192, 0, 0, 171],     32, "NAT64/DNS64 Discovery",                     "RFC 8880", Local),
    v4([192, 0, 2, 0],       24, "Documentation (TEST-NET-1)",                "RFC 5737", Local),
    v4([192, 31, 196, 0],    24, "AS112-v4",                                  "RFC 7535", Global),
    v4([192, 52, 193, 0],    24, "AMT",                                       "RFC 7450", Global),
    // Deprecated, with a termination date; nobody should answer there any more.
    v4([192, 88, 99, 0],     24, "Deprecated (6to4 Relay Anycast)",           "RFC 7526", Unstated),
    v4([192, 168, 0, 0],     16, "Private-Use",                               "RFC 1918", Local),
    v4([192, 175, 48, 0],    24, "Direct Delegation AS112 Service",           "RFC 7534", Global),
    v4([198, 18, 0, 0],      15, "Benchmarking",                              "RFC 2544", Local),
    v4([198, 51, 100, 0],    24, "Documentation (TEST-NET-2)",                "RFC 5737", Local),
    v4([203, 0, 113, 0],     24, "Documentation (TEST-NET-3)",                "RFC 5737", Local),
    v4([240, 0, 0, 0],       4,  "Reserved",                                  "RFC 1112", Local),
    v4([255, 255, 255, 255], 32, "Limited Broadcast",                         "RFC 919",  Local),
];

/// IPv4 space outside the special-purpose registry that no HTTP server answers from.
#[rustfmt::skip]
pub(crate) const IPV4_OTHER: &[V4Block] = &[
    // The IPv4 Multicast Address Space registry: a group, not a host; TCP cannot connect to it.
    v4([224, 0, 0, 0], 4, "Multicast", "RFC 5771", Local),
];

/// The IANA IPv6 Special-Purpose Address Registry, row for row. 2001::/23 holds globally
/// reachable blocks inside a block that is not: the most specific match decides.
#[rustfmt::skip]
pub(crate) const IPV6_SPECIAL: &[V6Block] = &[
    v6([0, 0, 0, 0, 0, 0, 0, 1],              128, "Loopback Address",                                   "RFC 4291", Local),
    v6([0, 0, 0, 0, 0, 0, 0, 0],              128, "Unspecified Address",                                "RFC 4291", Local),
    // False on the wire, where it never appears; a socket connecting to one reaches the IPv4
    // address inside, so `address` judges it as that address.
    v6([0, 0, 0, 0, 0, 0xffff, 0, 0],         96,  "IPv4-mapped Address",                                "RFC 4291", Local).embeds(Last32),
    // Globally reachable, and RFC 6052 section 3.1 forbids it for non-global IPv4 addresses: a
    // NAT64 would deliver 64:ff9b::10.0.0.1 to 10.0.0.1 inside the operator's network.
    v6([0x64, 0xff9b, 0, 0, 0, 0, 0, 0],      96,  "IPv4-IPv6 Translat.",                                "RFC 6052", Global).embeds(Last32),
    v6([0x64, 0xff9b, 1, 0, 0, 0, 0, 0],      48,  "IPv4-IPv6 Translat.",                                "RFC 8215", Local),
    v6([0x100, 0, 0, 0, 0, 0, 0, 0],          64,  "Discard-Only Address Block",                         "RFC 6666", Local),
    v6([0x100, 0, 0, 1, 0, 0, 0, 0],          64,  "Dummy IPv6 Prefix",                                  "RFC 9780", Local),
    v6([0x2001, 0, 0, 0, 0, 0, 0, 0],         23,  "IETF Protocol Assignments",                          "RFC 2928", Local),
    v6([0x2001, 0, 0, 0, 0, 0, 0, 0],         32,  "TEREDO",                                             "RFC 4380", Unstated).embeds(Teredo),
    v6([0x2001, 1, 0, 0, 0, 0, 0, 1],         128, "Port Control Protocol Anycast",                      "RFC 7723", Global),
    v6([0x2001, 1, 0, 0, 0, 0, 0, 2],         128, "Traversal Using Relays around NAT Anycast",          "RFC 8155", Global),
    v6([0x2001, 1, 0, 0, 0, 0, 0, 3],         128, "DNS-SD Service Registration Protocol Anycast",       "RFC 9665", Global),
    v6([0x2001, 2, 0, 0, 0, 0, 0, 0],         48,  "Benchmarking",                                       "RFC 5180", Local),
    v6([0x2001, 3, 0, 0, 0, 0, 0, 0],         32,  "AMT",                                                "RFC 7450", Global),
    v6([0x2001, 4, 0x112, 0, 0, 0, 0, 0],     48,  "AS112-v6",                                           "RFC 7535", Global),
    // Returned to IANA in 2014 (RFC 7343 section 6).
    v6([0x2001, 0x10, 0, 0, 0, 0, 0, 0],      28,  "Deprecated (previously ORCHID)",                     "RFC 4843", Unstated),
    v6([0x2001, 0x20, 0, 0, 0, 0, 0, 0],      28,  "ORCHIDv2",                                           "RFC 7343", Global),
    v6([0x2001, 0x30, 0, 0, 0, 0, 0, 0],      28,  "Drone Remote ID Protocol Entity Tags (DETs) Prefix", "RFC 9374", Global),
    v6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0],     32,  "Documentation",                                      "RFC 3849", Local),
    v6([0x2002, 0, 0, 0, 0, 0, 0, 0],         16,  "6to4",                                               "RFC 3056", Unstated).embeds(SixToFour),
    v6([0x2620, 0x4f, 0x8000, 0, 0, 0, 0, 0], 48,  "Direct Delegation AS112 Service",                    "RFC 7534", Global),
    v6([0x3fff, 0, 0, 0, 0, 0, 0, 0],         20,  "Documentation",                                      "RFC 9637", Local),
    v6([0x5f00, 0, 0, 0, 0, 0, 0, 0],         16,  "Segment Routing (SRv6) SIDs",                        "RFC 9602", Local),
    v6([0xfc00, 0, 0, 0, 0, 0, 0, 0],         7,   "Unique-Local",                                       "RFC 4193", Local),
    v6([0xfe80, 0, 0, 0, 0, 0, 0, 0],         10,  "Link-Local Unicast",                                 "RFC 4291", Local),
];

/// IPv6 space outside the special-purpose registry worth naming in a refusal. Everything outside
/// 2000::/3 is refused anyway (`address::in_global_unicast`); these rows only give the reason.
#[rustfmt::skip]
pub(crate) const IPV6_OTHER: &[V6Block] = &[
    // Deprecated (RFC 4291 section 2.5.5.1) and never routed; refused whatever it embeds.
    v6([0, 0, 0, 0, 0, 0, 0, 0],      96, "IPv4-compatible Address (deprecated)", "RFC 4291", Local).embeds(Last32),
    v6([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10, "Site-Local Unicast (deprecated)",      "RFC 3879", Local),
    v6([0xff00, 0, 0, 0, 0, 0, 0, 0], 8,  "Multicast",                            "RFC 4291", Local),
];
