//! Entry points for the fuzz targets in `fuzz/` (feature `fuzzing`, off in every normal build):
//! every decoder the HTTP edge runs on a request's headers, on one header map, with no gateway
//! behind them.

use http::HeaderMap;
use serde_json::Value;
use vmcp_proto::era::{self, Era, Rejection};

use crate::guard::{OriginPolicy, Refusal};
use crate::{audit, conn_limits, legacy, reply, status_page};

/// What the edge made of a request's headers.
#[derive(Debug)]
pub struct EdgeHeaders {
    /// The Host/Origin guard of `/mcp` (loopback listener, one extra host and origin allowed).
    pub guard_ok: bool,
    /// The same guard on the operational routes.
    pub operational_ok: bool,
    /// Why the guard refused, as the client is told.
    pub refusal: Option<String>,
    /// The session id `Mcp-Session-Id` names, when it is usable.
    pub session: Option<String>,
    /// Whether `MCP-Protocol-Version` is one a Legacy request may carry.
    pub legacy_version_ok: bool,
    /// The request's era, or why a Modern request is refused.
    pub era: Result<Era, Rejection>,
    /// The declared body length.
    pub content_length: Option<u64>,
    /// Whether the client gets its answers as an event stream (Accept).
    pub event_stream: bool,
    /// Whether the status page would answer HTML.
    pub wants_html: bool,
    /// Whether `Content-Type` is JSON.
    pub json: bool,
}

/// Runs every header decoder of the edge on `headers`, for a request with `method` and `params`.
pub fn edge_headers(headers: &HeaderMap, method: &str, params: Option<&Value>) -> EdgeHeaders {
    let policy = OriginPolicy {
        allowed_origins: vec!["https://app.example".into()],
        allowed_hosts: vec!["gw.example:8443".into()],
        bound_to_loopback: true,
    };
    let guard = policy.check(headers);
    let refusal = guard.as_ref().err().map(Refusal::message);
    let _ = audit::header_text(headers, "user-agent");
    let _ = reply::Format::accepts_stream(headers);
    EdgeHeaders {
        guard_ok: guard.is_ok(),
        operational_ok: policy.check_operational(headers).is_ok(),
        refusal,
        session: legacy::session_header(headers).ok().map(str::to_string),
        legacy_version_ok: legacy::check_version(headers).is_ok(),
        era: era::classify(&legacy::view(headers, method, params)),
        content_length: conn_limits::content_length(headers),
        event_stream: reply::Format::from_accept(headers) == reply::Format::EventStream,
        wants_html: status_page::wants_html(headers),
        json: legacy::is_json(headers),
    }
}
