//! Which MCP era a request speaks, decided once per request, and the front door that sends
//! it to its edge: 2025-11-25 (Legacy: `initialize`, sessions, server-to-client requests) to
//! the session-based `crate::http` transport, 2026-07-28 (Modern: stateless, per-request
//! `_meta`) to `modern`. One process serves both on the same `/mcp`.
//!
//! Rules, in order: a session id without the Modern version header, a Legacy version in
//! `MCP-Protocol-Version`, or `initialize` without the Modern header → Legacy; the Modern
//! version header, or any `io.modelcontextprotocol/` version, client-info or capabilities key
//! in `params._meta` → Modern; anything else → Legacy.

use std::sync::Arc;

use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::header::ALLOW;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::guard;
use super::modern::{self, Modern};
use crate::protocol::PROTOCOL_VERSIONS;

/// The one Modern protocol revision the fixture speaks.
pub(crate) const MODERN_VERSION: &str = "2026-07-28";

/// `_meta` keys whose presence marks a request as Modern.
pub(crate) const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub(crate) const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
pub(crate) const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

pub(crate) const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";
const SESSION_HEADER: &str = "mcp-session-id";

/// Largest request body read (the same limit axum's `Bytes` extractor applies to Legacy).
const BODY_LIMIT: usize = 2 * 1024 * 1024;

/// The two eras of MCP a request can speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Era {
    /// 2025-11-25 and earlier: `initialize` and sessions.
    Legacy,
    /// 2026-07-28: stateless, version and capabilities in every request's `_meta`.
    Modern,
}

/// The era of a POST with `headers` and body `message` (`None`: not JSON).
pub(crate) fn classify(headers: &HeaderMap, message: Option<&Value>) -> Era {
    let version = header(headers, PROTOCOL_VERSION_HEADER);
    if version == Some(MODERN_VERSION) {
        return Era::Modern;
    }
    let legacy_version = version.is_some_and(|v| PROTOCOL_VERSIONS.contains(&v));
    let method = message
        .and_then(|m| m.get("method"))
        .and_then(Value::as_str);
    if legacy_version || headers.contains_key(SESSION_HEADER) || method == Some("initialize") {
        return Era::Legacy;
    }
    let meta = message
        .and_then(|m| m.get("params"))
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object);
    let signalled = meta.is_some_and(|meta| {
        [
            META_PROTOCOL_VERSION,
            META_CLIENT_INFO,
            META_CLIENT_CAPABILITIES,
        ]
        .iter()
        .any(|key| meta.contains_key(*key))
    });
    if signalled { Era::Modern } else { Era::Legacy }
}

/// Middleware: classifies each request and serves Modern ones itself; Legacy ones go on to
/// the session-based transport (after the Legacy `MCP-Protocol-Version` check).
pub(crate) async fn route(
    State(modern): State<Arc<Modern>>,
    request: Request,
    next: Next,
) -> Response {
    let headers = request.headers();
    let modern_header = header(headers, PROTOCOL_VERSION_HEADER) == Some(MODERN_VERSION);
    if request.method() != Method::POST || request.uri().path() != "/mcp" {
        if modern_header && request.uri().path() == "/mcp" {
            // 2026-07-28 has no GET stream and no sessions to DELETE.
            return (StatusCode::METHOD_NOT_ALLOWED, [(ALLOW, "POST")]).into_response();
        }
        return legacy(request, next).await;
    }
    if !modern_header && headers.contains_key(SESSION_HEADER) {
        return legacy(request, next).await;
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = to_bytes(body, BODY_LIMIT).await else {
        return StatusCode::PAYLOAD_TOO_LARGE.into_response();
    };
    let message: Option<Value> = serde_json::from_slice(&bytes).ok();
    match classify(&parts.headers, message.as_ref()) {
        Era::Modern => modern::serve(modern, &parts.headers, message).await,
        Era::Legacy => legacy(Request::from_parts(parts, Body::from(bytes)), next).await,
    }
}

/// Middleware: serves `request` as 2025-11-25 (after its `MCP-Protocol-Version` check).
pub(crate) async fn legacy(request: Request, next: Next) -> Response {
    if let Some(refusal) = guard::legacy_version_refusal(request.headers()) {
        return refusal;
    }
    next.run(request).await
}

/// Header `name` as text, without surrounding whitespace; `None` if absent or not visible
/// ASCII.
pub(crate) fn header<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim_matches([' ', '\t']))
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;
    use serde_json::json;

    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.insert(*name, HeaderValue::from_static(value));
        }
        headers
    }

    #[test]
    fn era_follows_header_session_initialize_then_meta() {
        let modern_meta = json!({ "method": "tools/list", "params": { "_meta": {
            "io.modelcontextprotocol/clientCapabilities": {} } } });
        let plain = json!({ "method": "tools/list" });
        let init = json!({ "method": "initialize", "params": { "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28" } } });
        let cases = [
            (
                headers(&[("mcp-protocol-version", "2026-07-28")]),
                &plain,
                Era::Modern,
            ),
            (
                headers(&[("mcp-protocol-version", "2026-07-28")]),
                &init,
                Era::Modern,
            ),
            (headers(&[]), &init, Era::Legacy),
            (headers(&[]), &modern_meta, Era::Modern),
            (
                headers(&[("mcp-protocol-version", "v999")]),
                &modern_meta,
                Era::Modern,
            ),
            (
                headers(&[("mcp-protocol-version", "2025-11-25")]),
                &modern_meta,
                Era::Legacy,
            ),
            (
                headers(&[("mcp-session-id", "s")]),
                &modern_meta,
                Era::Legacy,
            ),
            (headers(&[]), &plain, Era::Legacy),
        ];
        for (headers, message, era) in cases {
            assert_eq!(
                classify(&headers, Some(message)),
                era,
                "{headers:?} {message}"
            );
        }
        assert_eq!(classify(&HeaderMap::new(), None), Era::Legacy);
    }
}
