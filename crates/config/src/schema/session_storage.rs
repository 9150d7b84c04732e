//! `sessionStorage`: ToolHive's keys (`provider`, `address`, `db`, `keyPrefix`; the password from
//! `THV_SESSION_REDIS_PASSWORD`) plus ours for managed Redis services: `address` may be a
//! `redis://` or `rediss://` URL (`rediss` = TLS), `username` names an ACL user, and `tls`
//! gives a private CA, a client certificate and the name to verify. Sessions, rate limits and
//! the bus between replicas all use these settings.
//!
//! [`SessionStorageConfig::endpoint`] reads `address`, `username`, `db` and `tls` together into
//! one [`RedisEndpoint`]; validation reports its problems and `serve` connects to its result, so
//! the two cannot disagree.

use yaml_serde::Value;

use crate::error::{Issues, KeyPath};
use crate::reader::{Choice, Fields};

/// Redis's port when a URL names none.
pub const DEFAULT_REDIS_PORT: u16 = 6379;

/// `sessionStorage.provider`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum SessionProvider {
    /// In-process (`memory`).
    #[default]
    Memory,
    /// Redis (`redis`): sessions and rate-limit buckets shared by replicas.
    Redis,
}

impl Choice for SessionProvider {
    const NAMES: &'static [(&'static str, Self)] =
        &[("memory", Self::Memory), ("redis", Self::Redis)];
}

/// `sessionStorage`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionStorageConfig {
    /// `provider` (default memory).
    pub provider: SessionProvider,
    /// `address` of Redis (required for redis): `host:port`, `redis://...` or `rediss://...`.
    pub address: Option<String>,
    /// `db`: Redis database number (default 0).
    pub db: u32,
    /// `keyPrefix` for Redis keys.
    pub key_prefix: Option<String>,
    /// `username`: the Redis ACL user (vmcp's key; Redis's `default` user without it).
    pub username: Option<String>,
    /// `tls` (vmcp's key): present, even empty, means TLS.
    pub tls: Option<RedisTlsConfig>,
}

/// `sessionStorage.tls`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RedisTlsConfig {
    /// `caFile`: PEM certificates to trust instead of the system's roots.
    pub ca_file: Option<String>,
    /// `certFile`: a PEM client certificate (Redis's `tls-auth-clients`), with `keyFile`.
    pub cert_file: Option<String>,
    /// `keyFile`: its PEM private key.
    pub key_file: Option<String>,
    /// `serverName`: the name the server's certificate must carry, when the address's host is
    /// not it (an IP address, a tunnel).
    pub server_name: Option<String>,
}

/// Where and how to reach Redis: `address`, `username`, `db` and `tls` read together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisEndpoint {
    /// `host:port` (an IPv6 host in brackets).
    pub address: String,
    /// Whether to speak TLS (`rediss://`, or a `tls` block).
    pub tls: bool,
    /// The ACL user (`username`, or the URL's).
    pub username: Option<String>,
    /// The database (`db`, or the URL's path).
    pub db: u32,
}

/// A problem with the settings: the key under `sessionStorage` at fault, and what is wrong.
pub type EndpointProblem = (&'static str, String);

impl SessionStorageConfig {
    /// The endpoint these settings name.
    ///
    /// # Errors
    /// Every problem found, each with the key it concerns.
    pub fn endpoint(&self) -> Result<RedisEndpoint, Vec<EndpointProblem>> {
        let mut problems = Vec::new();
        let Some(text) = self.address.as_deref().filter(|a| !a.trim().is_empty()) else {
            return Err(vec![(
                "address",
                "is required when provider is redis".into(),
            )]);
        };
        let parsed = match parse_address(text) {
            Ok(p) => p,
            Err(message) => return Err(vec![("address", message)]),
        };
        let username = match (self.username.clone(), parsed.username) {
            (Some(key), Some(url)) if key != url => {
                problems.push((
                    "username",
                    format!("{key:?} differs from the address's user {url:?}: give it once"),
                ));
                None
            }
            (Some(u), _) | (None, Some(u)) => Some(u),
            (None, None) => None,
        };
        if username.as_deref() == Some("") {
            problems.push(("username", "must not be empty".into()));
        }
        let db = match parsed.db {
            Some(url) if self.db != 0 && self.db != url => {
                problems.push((
                    "db",
                    format!(
                        "{} differs from the address's database /{url}: give it once",
                        self.db
                    ),
                ));
                self.db
            }
            Some(url) => url,
            None => self.db,
        };
        let tls = match parsed.scheme {
            Scheme::Rediss => true,
            Scheme::Bare => self.tls.is_some(),
            Scheme::Redis if self.tls.is_some() => {
                problems.push((
                    "tls",
                    "is set but the address says redis:// (plain TCP): use rediss:// or host:port"
                        .into(),
                ));
                true
            }
            Scheme::Redis => false,
        };
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(RedisEndpoint {
            address: parsed.address,
            tls,
            username,
            db,
        })
    }
}

pub(crate) fn decode_session_storage(
    v: &Value,
    path: &KeyPath,
    issues: &Issues,
) -> SessionStorageConfig {
    let mut s = Fields::open(v, path, issues);
    // ToolHive: an empty provider means memory.
    let provider = s.choice("provider").unwrap_or(SessionProvider::Memory);
    let cfg = SessionStorageConfig {
        provider,
        address: s.string("address"),
        db: s.uint("db").unwrap_or(0),
        key_prefix: s.string("keyPrefix"),
        username: s.string("username"),
        tls: s.value("tls").map(|(v, p)| {
            let mut t = Fields::open(v, &p, issues);
            let tls = RedisTlsConfig {
                ca_file: t.string("caFile"),
                cert_file: t.string("certFile"),
                key_file: t.string("keyFile"),
                server_name: t.string("serverName"),
            };
            t.finish();
            tls
        }),
    };
    s.finish();
    cfg
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scheme {
    /// ToolHive's `host:port`.
    Bare,
    Redis,
    Rediss,
}

#[derive(Debug)]
struct ParsedAddress {
    scheme: Scheme,
    address: String,
    username: Option<String>,
    db: Option<u32>,
}

/// Reads ToolHive's `host:port` or a URL `redis[s]://[user@]host[:port][/db]`.
fn parse_address(text: &str) -> Result<ParsedAddress, String> {
    if text.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!("{text:?} must not contain spaces"));
    }
    let (scheme, rest) = if let Some(rest) = text.strip_prefix("rediss://") {
        (Scheme::Rediss, rest)
    } else if let Some(rest) = text.strip_prefix("redis://") {
        (Scheme::Redis, rest)
    } else if let Some((other, _)) = text.split_once("://") {
        return Err(format!(
            "{other}:// is not supported: use host:port, redis:// or rediss://"
        ));
    } else {
        (Scheme::Bare, text)
    };
    if scheme == Scheme::Bare {
        let (host, port) = host_port(text, None).map_err(|_| {
            format!("{text:?} is not host:port (e.g. redis:6379) or a redis:// or rediss:// URL")
        })?;
        return Ok(ParsedAddress {
            scheme,
            address: join(&host, port),
            username: None,
            db: None,
        });
    }
    if rest.contains('#') {
        return Err(
            "a URL fragment (such as #insecure) is not supported: certificates are always checked; for a private CA set tls.caFile".into(),
        );
    }
    if rest.contains('?') {
        return Err("URL query parameters are not supported".into());
    }
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let (userinfo, hostport) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    let username = match userinfo {
        Some(u) if u.contains(':') => {
            return Err(
                "a password in the address is not accepted (it would sit in the config file and in logs): set THV_SESSION_REDIS_PASSWORD".into(),
            );
        }
        Some(u) => Some(percent_decode(u).ok_or("the user name is not valid percent-encoding")?)
            .filter(|u| !u.is_empty()),
        None => None,
    };
    let (host, port) =
        host_port(hostport, Some(DEFAULT_REDIS_PORT)).map_err(|why| format!("{text:?}: {why}"))?;
    let db = match path {
        "" => None,
        n => Some(
            n.parse::<u32>()
                .map_err(|_| format!("{text:?}: the path must be a database number, e.g. /0"))?,
        ),
    };
    Ok(ParsedAddress {
        scheme,
        address: join(&host, port),
        username,
        db,
    })
}

/// `host:port`, `[v6]:port`, or (with a default port) a host alone.
fn host_port(text: &str, default_port: Option<u16>) -> Result<(String, u16), String> {
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or("an IPv6 host lacks its ']'")?;
        match after.strip_prefix(':') {
            Some(port) => (host, Some(port)),
            None if after.is_empty() => (host, None),
            None => return Err("unexpected text after the IPv6 host".into()),
        }
    } else {
        match text.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (text, None),
        }
    };
    if host.is_empty() {
        return Err("the host is missing".into());
    }
    let port = match (port, default_port) {
        (Some(p), _) => p
            .parse::<u16>()
            .ok()
            .filter(|p| *p != 0)
            .ok_or_else(|| format!("{p:?} is not a port"))?,
        (None, Some(d)) => d,
        (None, None) => return Err("the port is missing".into()),
    };
    Ok((host.to_owned(), port))
}

fn join(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn storage(address: &str) -> SessionStorageConfig {
        SessionStorageConfig {
            provider: SessionProvider::Redis,
            address: Some(address.into()),
            ..SessionStorageConfig::default()
        }
    }

    fn endpoint(address: &str) -> RedisEndpoint {
        storage(address).endpoint().unwrap()
    }

    fn problem(s: SessionStorageConfig) -> EndpointProblem {
        let mut p = s.endpoint().unwrap_err();
        assert_eq!(p.len(), 1, "{p:?}");
        p.remove(0)
    }

    #[test]
    fn toolhive_host_port_and_urls_name_the_same_endpoint() {
        let plain = RedisEndpoint {
            address: "redis.ns.svc:6379".into(),
            tls: false,
            username: None,
            db: 0,
        };
        assert_eq!(endpoint("redis.ns.svc:6379"), plain);
        assert_eq!(endpoint("redis://redis.ns.svc"), plain);
        assert_eq!(endpoint("redis://redis.ns.svc:6379/"), plain);
        assert_eq!(
            endpoint("rediss://app%40team@cache.example.com:6380/2"),
            RedisEndpoint {
                address: "cache.example.com:6380".into(),
                tls: true,
                username: Some("app@team".into()),
                db: 2,
            }
        );
        assert_eq!(endpoint("rediss://[::1]").address, "[::1]:6379");
        assert_eq!(endpoint("[::1]:7000").address, "[::1]:7000");
        // A tls block turns TLS on for host:port.
        let with_tls = SessionStorageConfig {
            tls: Some(RedisTlsConfig::default()),
            ..storage("10.0.0.5:6380")
        };
        assert!(with_tls.endpoint().unwrap().tls);
    }

    #[test]
    fn what_an_address_may_not_say() {
        for (address, says) in [
            ("redis", "is not host:port"),
            ("redis:0", "is not host:port"),
            ("http://r:6379", "http:// is not supported"),
            ("rediss://u:pw@r:6379", "THV_SESSION_REDIS_PASSWORD"),
            (
                "rediss://r:6379/#insecure",
                "certificates are always checked",
            ),
            ("redis://r:6379?protocol=resp3", "query parameters"),
            ("redis://r:6379/x", "database number"),
            ("redis://:6379", "the host is missing"),
            ("redis://r:99999", "is not a port"),
        ] {
            let (key, message) = problem(storage(address));
            assert_eq!(key, "address", "{address}");
            assert!(message.contains(says), "{address}: {message}");
        }
    }

    #[test]
    fn keys_and_url_parts_that_disagree_are_named() {
        let both = SessionStorageConfig {
            username: Some("alice".into()),
            db: 3,
            ..storage("redis://bob@r:6379/4")
        };
        let mut p = both.endpoint().unwrap_err();
        p.sort();
        assert_eq!(p[0].0, "db");
        assert_eq!(p[1].0, "username");
        // Saying the same thing twice is fine.
        let same = SessionStorageConfig {
            username: Some("alice".into()),
            db: 4,
            ..storage("redis://alice@r:6379/4")
        };
        assert_eq!(same.endpoint().unwrap().db, 4);
        let plain_with_tls = SessionStorageConfig {
            tls: Some(RedisTlsConfig::default()),
            ..storage("redis://r:6379")
        };
        assert_eq!(problem(plain_with_tls).0, "tls");
    }
}
