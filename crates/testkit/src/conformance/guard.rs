//! Checks every request makes before it reaches the transport: the `Host` and `Origin`
//! headers must name this machine (DNS-rebinding protection, 403 otherwise, both eras), and a
//! 2025-11-25 request's `MCP-Protocol-Version` header must name a version the fixture speaks
//! (400 otherwise; 2026-07-28 requests check theirs in `modern::check`).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header::{HOST, ORIGIN};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Json, Response};
use serde_json::json;

use super::era::PROTOCOL_VERSION_HEADER;
use crate::protocol::PROTOCOL_VERSIONS;

/// Host names (without port) that requests may address.
#[derive(Debug, Clone)]
pub(crate) struct AllowedHosts(Vec<String>);

impl AllowedHosts {
    /// `localhost`, `127.0.0.1` and `[::1]`, plus `extra` (e.g. the bound host).
    pub(crate) fn local_and(extra: impl IntoIterator<Item = String>) -> Self {
        let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "[::1]"]
            .into_iter()
            .map(str::to_owned)
            .collect();
        hosts.extend(
            extra
                .into_iter()
                .map(|host| bracket_ipv6(&host.to_ascii_lowercase())),
        );
        Self(hosts)
    }

    /// Whether the authority `host[:port]` names an allowed host.
    fn allows(&self, authority: &str) -> bool {
        let authority = authority.to_ascii_lowercase();
        let host = host_of(&authority);
        self.0.iter().any(|allowed| allowed == host)
    }
}

/// Middleware: refuses requests whose `Host` or `Origin` is not allowed.
pub(crate) async fn check(
    State(allowed): State<Arc<AllowedHosts>>,
    request: Request,
    next: Next,
) -> Response {
    if let Some(refusal) = refusal(&allowed, request.headers()) {
        return refusal;
    }
    next.run(request).await
}

fn refusal(allowed: &AllowedHosts, headers: &HeaderMap) -> Option<Response> {
    let header = |name: &str| headers.get(name).map(|v| v.to_str().unwrap_or("\u{0}"));
    if let Some(host) = header(HOST.as_str())
        && !allowed.allows(host)
    {
        return Some(refuse(
            StatusCode::FORBIDDEN,
            &format!("Host {host} is not allowed"),
        ));
    }
    if let Some(origin) = header(ORIGIN.as_str()) {
        let authority = origin.split_once("://").map_or("", |(_, rest)| rest);
        if !allowed.allows(authority) {
            return Some(refuse(
                StatusCode::FORBIDDEN,
                &format!("Origin {origin} is not allowed"),
            ));
        }
    }
    None
}

/// 400 if a 2025-11-25 request's `MCP-Protocol-Version` names a version the fixture does not
/// speak.
pub(crate) fn legacy_version_refusal(headers: &HeaderMap) -> Option<Response> {
    let version = headers.get(PROTOCOL_VERSION_HEADER)?;
    let version = version.to_str().unwrap_or("\u{0}");
    (!PROTOCOL_VERSIONS.contains(&version)).then(|| {
        refuse(
            StatusCode::BAD_REQUEST,
            &format!("Unsupported MCP-Protocol-Version {version}"),
        )
    })
}

fn refuse(status: StatusCode, message: &str) -> Response {
    let body = json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {
            "code": -32000,
            "message": format!("{}: {message}", status.canonical_reason().unwrap_or("Refused"))
        }
    });
    (status, Json(body)).into_response()
}

/// The host of `host[:port]` (IPv6 hosts keep their brackets).
fn host_of(authority: &str) -> &str {
    if authority.starts_with('[') {
        return authority
            .find(']')
            .map_or(authority, |end| &authority[..=end]);
    }
    authority
        .split_once(':')
        .map_or(authority, |(host, _)| host)
}

/// `::1` as `[::1]`: how an IPv6 address appears in a `Host` header.
fn bracket_ipv6(host: &str) -> String {
    if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]")
    } else {
        host.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_hosts_with_or_without_port_are_allowed() {
        let allowed = AllowedHosts::local_and([]);
        for ok in [
            "localhost",
            "LOCALHOST:80",
            "127.0.0.1:4490",
            "[::1]:8080",
            "[::1]",
        ] {
            assert!(allowed.allows(ok), "{ok}");
        }
        for bad in [
            "evil.example.com",
            "evil.example.com:4490",
            "127.0.0.2",
            "localhost.evil",
        ] {
            assert!(!allowed.allows(bad), "{bad}");
        }
    }

    #[test]
    fn extra_hosts_are_allowed() {
        let allowed = AllowedHosts::local_and(["Fixture.Internal".to_owned(), "::2".to_owned()]);
        assert!(allowed.allows("fixture.internal:9000"));
        assert!(allowed.allows("[::2]:9000"));
    }
}
