//! Header decoders: every decoder the HTTP edge runs on a request's headers
//! (`vmcp_server::fuzzing::edge_headers`: Host/Origin guard, `Mcp-Session-Id`,
//! `MCP-Protocol-Version`, `Accept`, `Content-Type`, `Content-Length`, the era classifier), the
//! `=?base64?...?=` sentinel of `Mcp-Name` and `Mcp-Param-*` (`mcp_name`), and the
//! `x-mcp-header` rules (`param_headers`: annotations, values, checks).
//!
//! Invariants: the operational guard admits whatever the `/mcp` guard admits; a session id is
//! visible ASCII; a Modern request carries the Modern version header; every text survives
//! `encode` then `decode` and encodes to a valid header value; a header written by `encode` for
//! an argument always passes `check` against that argument.
#![no_main]

#[path = "common/request.rs"]
mod request;

use libfuzzer_sys::fuzz_target;
use vmcp_proto::era::Era;
use vmcp_proto::{mcp_name, param_headers, revision};

fn round_trips(text: &str) {
    let encoded = mcp_name::encode(text);
    assert!(
        !encoded.is_empty() && encoded.bytes().all(|b| (0x21..=0x7e).contains(&b)),
        "{encoded:?} is not a plain header value"
    );
    assert_eq!(mcp_name::decode(&encoded).as_deref(), Some(text));
    assert!(http::HeaderValue::from_str(&encoded).is_ok());
}

fuzz_target!(|data: &[u8]| {
    let req = request::Request::read(data);
    let (method, params) = req.call().unwrap_or_default();
    let edge = vmcp_server::fuzzing::edge_headers(&req.headers, &method, params.as_ref());
    if edge.guard_ok {
        assert!(edge.operational_ok, "/status refuses what /mcp admits");
    }
    if let Some(id) = &edge.session {
        assert!(!id.is_empty() && id.bytes().all(|b| (0x21..=0x7e).contains(&b)));
    }
    if matches!(edge.era, Ok(Era::Modern)) {
        assert_eq!(
            req.header("mcp-protocol-version")
                .map(|v| v.trim_matches([' ', '\t'])),
            Some(revision::MODERN)
        );
    }

    // Every header value and body string as a sentinel-encoded header value, and back.
    for (name, value) in &req.headers {
        if let Some(decoded) = mcp_name::decode(&String::from_utf8_lossy(value.as_bytes())) {
            round_trips(&decoded);
        }
        if name.as_str().starts_with("mcp-param-") {
            let _ = param_headers::check(Some(value.as_bytes()), None);
        }
    }
    round_trips(&String::from_utf8_lossy(req.body));
    round_trips(&method);

    // `x-mcp-header`: the body's `params.inputSchema` (a seed convenience: the tool's schema
    // comes from a backend) annotates `params.arguments`.
    let Some(params) = params else { return };
    let Some(found) = params
        .get("inputSchema")
        .and_then(param_headers::annotations)
    else {
        return;
    };
    for (header, path) in found {
        let key = format!("mcp-param-{header}");
        assert!(
            http::HeaderName::from_bytes(key.as_bytes()).is_ok(),
            "{key:?}"
        );
        let body = param_headers::value_at(params.get("arguments"), &path);
        let received = req.headers.get(key.as_str()).map(|v| v.as_bytes());
        let verdict = param_headers::check(received, body.as_deref());
        if let (Some(raw), Ok(())) = (received, &verdict) {
            let text = std::str::from_utf8(raw).expect("a passing header is text");
            assert_eq!(mcp_name::decode(text).as_deref(), body.as_deref());
        }
        if let Some(value) = &body {
            let written = param_headers::encode(value);
            assert_eq!(
                param_headers::check(Some(written.as_bytes()), Some(value)),
                Ok(()),
                "what the gateway writes for {value:?} fails its own check"
            );
        }
    }
});
