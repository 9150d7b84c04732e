//! Rules for our `server` section: a bindable host, positive limits and durations,
//! and well-formed Origin and Host allow-list entries.

use std::time::Duration;

use crate::error::{Issues, KeyPath};
use crate::schema::ServerConfig;

pub(super) fn check(s: &ServerConfig, path: &KeyPath, issues: &Issues) {
    if s.host.is_empty() || s.host.contains("://") || s.host.contains(['/', ' ']) {
        issues.push_new(
            &path.key("host"),
            format!(
                "{:?} is not an address to bind (e.g. 127.0.0.1, 0.0.0.0, ::1)",
                s.host
            ),
        );
    }
    let durations = [
        ("sessionTtl", s.session_ttl),
        ("perSessionIdleTimeout", s.per_session_idle_timeout),
        ("discoveryTimeout", s.discovery_timeout),
        ("clientRequestTimeout", s.client_request_timeout),
        ("requestHeaderTimeout", s.request_header_timeout),
        ("requestBodyTimeout", s.request_body_timeout),
        ("idleConnectionTimeout", s.idle_connection_timeout),
        ("sseKeepAlive", s.sse_keep_alive),
        ("shutdownDrain", s.shutdown_drain),
    ];
    for (key, d) in durations {
        if d == Duration::ZERO {
            issues.push_new(&path.key(key), "must be positive");
        }
    }
    let counts = [
        ("maxSessions", s.max_sessions),
        ("maxSessionsPerIdentity", s.max_sessions_per_identity),
        ("maxBodyBytes", s.max_body_bytes),
        ("maxPerSessionProcesses", s.max_per_session_processes),
    ];
    for (key, n) in counts {
        if n == 0 {
            issues.push_new(&path.key(key), "must be at least 1");
        }
    }
    for (i, origin) in s.allowed_origins.iter().enumerate() {
        if let Some(problem) = origin_problem(origin) {
            issues.push_new(&path.key("allowedOrigins").index(i), problem);
        }
    }
    for (i, host) in s.allowed_hosts.iter().enumerate() {
        if !valid_host_port(host) {
            issues.push_new(
                &path.key("allowedHosts").index(i),
                format!("{host:?} is not a Host header value (name or name:port, no scheme)"),
            );
        }
    }
}

/// Why `origin` is not a browser origin (`scheme://host[:port]`), if it is not.
fn origin_problem(origin: &str) -> Option<String> {
    if origin == "*" || origin.contains('*') {
        return Some("wildcards are not allowed; list each origin".to_owned());
    }
    let Some((scheme, rest)) = origin.split_once("://") else {
        return Some(format!(
            "{origin:?} is not an origin (expected e.g. https://app.example.com)"
        ));
    };
    if scheme != "http" && scheme != "https" {
        return Some(format!("{origin:?}: scheme must be http or https"));
    }
    if rest.contains(['/', '?', '#']) {
        return Some(format!(
            "{origin:?}: an origin has no path (drop everything after the host and port)"
        ));
    }
    if !valid_host_port(rest) {
        return Some(format!("{origin:?}: invalid host or port"));
    }
    None
}

/// `name`, `name:port`, `[v6]` or `[v6]:port`.
fn valid_host_port(s: &str) -> bool {
    let (host, port) = if let Some(rest) = s.strip_prefix('[') {
        let Some((v6, after)) = rest.split_once(']') else {
            return false;
        };
        if v6.is_empty()
            || !v6
                .chars()
                .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
        {
            return false;
        }
        match after.strip_prefix(':') {
            Some(p) => ("v6", Some(p)),
            None if after.is_empty() => ("v6", None),
            None => return false,
        }
    } else {
        match s.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (s, None),
        }
    };
    let host_ok = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_');
    let port_ok = port.is_none_or(|p| !p.is_empty() && p.parse::<u16>().is_ok());
    host_ok && port_ok
}
