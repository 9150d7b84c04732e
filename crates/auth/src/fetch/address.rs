//! Which addresses the gateway's own requests may connect to: only globally reachable unicast
//! ones, judged by the IANA special-purpose registries in [`super::registry`]. An IPv6 address that
//! a translator or tunnel delivers to an IPv4 address (IPv4-mapped, NAT64's well-known prefix,
//! 6to4, Teredo) is judged by that IPv4 address too, so 64:ff9b::10.0.0.1 is as private as
//! 10.0.0.1.
//!
//! Not seen from here: a NAT64 network-specific prefix (RFC 6052 section 2.2) the operator chose;
//! its addresses look like any global IPv6 address.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::registry::{
    Embedded, IPV4_OTHER, IPV4_SPECIAL, IPV6_OTHER, IPV6_SPECIAL, Reach, V4Block, V6Block,
};

/// Why `ip` may not be connected to, or `None` when it may: a registry row's name and RFC, or,
/// for an address that carries an IPv4 address, the form and that address's reason.
pub(crate) fn refusal(ip: IpAddr) -> Option<String> {
    match ip {
        IpAddr::V4(v4) => refusal_v4(v4),
        IpAddr::V6(v6) => refusal_v6(v6),
    }
}

fn refusal_v4(ip: Ipv4Addr) -> Option<String> {
    let bits = u32::from(ip);
    let block = IPV4_SPECIAL
        .iter()
        .chain(IPV4_OTHER)
        .filter(|b| prefix_match(bits.into(), u32::from(b.net).into(), b.len, 32))
        .max_by_key(|b| b.len)?;
    (block.reach != Reach::Global).then(|| describe_v4(block))
}

fn refusal_v6(ip: Ipv6Addr) -> Option<String> {
    // A dual-stack socket connecting to ::ffff:a.b.c.d connects to a.b.c.d over IPv4.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return refusal_v4(v4).map(|why| format!("IPv4-mapped {v4}: {why}"));
    }
    let bits = u128::from(ip);
    let Some(block) = IPV6_SPECIAL
        .iter()
        .chain(IPV6_OTHER)
        .filter(|b| prefix_match(bits, u128::from(b.net), b.len, 128))
        .max_by_key(|b| b.len)
    else {
        return (!in_global_unicast(ip)).then(|| {
            "outside 2000::/3, the only IPv6 space IANA allocates for unicast (RFC 4291)".into()
        });
    };
    for v4 in embedded(ip, block.embedded) {
        if let Some(why) = refusal_v4(v4) {
            return Some(format!("{} carrying {v4}: {why}", describe_v6(block)));
        }
    }
    match block.reach {
        Reach::Global => None,
        // 6to4 and Teredo: the registry leaves it to the IPv4 addresses inside, checked above.
        Reach::Unstated if block.embedded != Embedded::No => None,
        Reach::Local | Reach::Unstated => Some(describe_v6(block)),
    }
}

/// The IPv4 addresses that `form` puts inside `ip`.
fn embedded(ip: Ipv6Addr, form: Embedded) -> Vec<Ipv4Addr> {
    let s = ip.segments();
    let join = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    match form {
        Embedded::No => Vec::new(),
        Embedded::Last32 => vec![join(s[6], s[7])],
        Embedded::SixToFour => vec![join(s[1], s[2])],
        // The client's address is sent inverted so that NATs leave it alone (RFC 4380 section 4).
        Embedded::Teredo => vec![join(s[2], s[3]), join(!s[6], !s[7])],
    }
}

/// 2000::/3, the IPv6 Address Space registry's Global Unicast block (RFC 4291 section 2.4); the
/// rest of the space is reserved, unique-local, link-local or multicast.
fn in_global_unicast(ip: Ipv6Addr) -> bool {
    ip.segments()[0] & 0xe000 == 0x2000
}

fn prefix_match(addr: u128, net: u128, len: u8, width: u8) -> bool {
    let len = u32::from(len.min(width));
    let host_bits = u32::from(width) - len;
    addr.checked_shr(host_bits).unwrap_or(0) == net.checked_shr(host_bits).unwrap_or(0)
}

fn describe_v4(b: &V4Block) -> String {
    format!("{}/{} {}, {}", b.net, b.len, b.name, b.rfc)
}

fn describe_v6(b: &V6Block) -> String {
    format!("{}/{} {}, {}", b.net, b.len, b.name, b.rfc)
}

#[cfg(test)]
mod tests;
