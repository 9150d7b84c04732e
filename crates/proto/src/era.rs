//! Which revision a client request speaks, decided per request: Legacy (session-based, up to
//! 2025-11-25) or Modern (2026-07-28, stateless). Also the Modern request's header/body checks.
//!
//! The order of checks and the error each failure gets follow the 2026-07-28 spec and the official
//! conformance suite (where the reference gateway differs, docs/spec-differences.md says how): a
//! Modern signal is `MCP-Protocol-Version: 2026-07-28` or any of the
//! `protocolVersion`/`clientInfo`/`clientCapabilities` reserved `_meta` keys; `initialize` is Legacy
//! unless its `_meta` carries a protocol version (a 2026-07-28 client calling a removed method); a
//! missing required `_meta` field is -32602; the header is compared with the body's version before
//! that version is checked; then the mirrored headers. Every rejection is HTTP 400.

use serde_json::{Map, Value, json};

use crate::{codes, mcp_name, revision};

/// `_meta` key of the request's protocol version.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of the client's identity.
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key of the client's per-request capabilities.
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key of the per-request log level.
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key of the server's identity on results.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key tagging notifications of a `subscriptions/listen` stream.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// The revision family of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Era {
    /// Session-based (initialize, Mcp-Session-Id).
    Legacy,
    /// Stateless 2026-07-28.
    Modern,
}

/// What the classifier looks at.
#[derive(Debug, Clone, Copy, Default)]
pub struct RequestView<'a> {
    /// The JSON-RPC method.
    pub method: &'a str,
    /// `params._meta`, when it is an object.
    pub meta: Option<&'a Map<String, Value>>,
    /// The `MCP-Protocol-Version` header.
    pub version_header: Option<&'a str>,
    /// The `Mcp-Method` header.
    pub mcp_method: Option<&'a str>,
    /// The `Mcp-Name` header (still encoded).
    pub mcp_name: Option<&'a str>,
    /// `params.name` (tools/call, prompts/get) or `params.uri` (resources/read).
    pub name: Option<&'a str>,
}

/// A refused request: a JSON-RPC error sent with HTTP 400.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejection {
    /// The JSON-RPC code.
    pub code: i64,
    /// What is wrong.
    pub message: String,
    /// Structured detail.
    pub data: Option<Value>,
}

fn reject(code: i64, message: impl Into<String>, data: Option<Value>) -> Rejection {
    Rejection {
        code,
        message: message.into(),
        data,
    }
}

/// The -32022 refusal for `requested`, listing what the gateway serves.
pub fn unsupported_version(requested: &str, supported: &[&str]) -> Rejection {
    reject(
        codes::UNSUPPORTED_PROTOCOL_VERSION,
        format!(
            "unsupported MCP protocol version {requested:?} (supported: {})",
            supported.join(", ")
        ),
        Some(json!({"supported": supported, "requested": requested})),
    )
}

/// Methods whose `Mcp-Name` header is required and mirrors `params.name` / `params.uri`.
pub fn names_a_target(method: &str) -> bool {
    matches!(method, "tools/call" | "resources/read" | "prompts/get")
}

/// Classifies a request and, for Modern ones, validates its metadata and mirrored headers.
///
/// ```
/// use vmcp_proto::era::{classify, Era, RequestView};
/// let legacy = RequestView { method: "tools/list", ..Default::default() };
/// assert_eq!(classify(&legacy), Ok(Era::Legacy));
/// ```
///
/// # Errors
/// A [`Rejection`] (HTTP 400) for a malformed Modern request.
pub fn classify(req: &RequestView<'_>) -> Result<Era, Rejection> {
    let has = |k: &str| req.meta.is_some_and(|m| m.contains_key(k));
    if req.method == "initialize" && !has(META_PROTOCOL_VERSION) {
        return Ok(Era::Legacy);
    }
    let header = req.version_header.map(trim_ows).filter(|h| !h.is_empty());
    let signalled = header == Some(revision::MODERN)
        || has(META_PROTOCOL_VERSION)
        || has(META_CLIENT_INFO)
        || has(META_CLIENT_CAPABILITIES);
    if !signalled {
        return Ok(Era::Legacy);
    }
    let body_version = req
        .meta
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
        .and_then(Value::as_str)
        .filter(|v| !v.is_empty());
    let Some(version) = body_version else {
        return match header {
            // An explicit non-Modern header outranks stray reserved keys.
            Some(h) if h != revision::MODERN => Ok(Era::Legacy),
            _ => Err(missing_field(META_PROTOCOL_VERSION, "a string")),
        };
    };
    if let Some(h) = header
        && h != version
    {
        return Err(mismatch_version(h, version));
    }
    if version != revision::MODERN {
        return Err(unsupported_version(version, &revision::ALL_VERSIONS));
    }
    if !req
        .meta
        .and_then(|m| m.get(META_CLIENT_CAPABILITIES))
        .is_some_and(Value::is_object)
    {
        return Err(missing_field(META_CLIENT_CAPABILITIES, "an object"));
    }
    if header.is_none() {
        return Err(reject(
            codes::HEADER_MISMATCH,
            "MCP-Protocol-Version header is required for Modern (2026-07-28) requests",
            Some(json!({"header": "MCP-Protocol-Version"})),
        ));
    }
    check_header(
        "Mcp-Method",
        req.mcp_method.map(trim_ows),
        Some(req.method),
        true,
    )?;
    if names_a_target(req.method) {
        let decoded = match req.mcp_name.map(trim_ows) {
            None | Some("") => None,
            Some(raw) => Some(mcp_name::decode(raw).ok_or_else(|| {
                reject(
                    codes::HEADER_MISMATCH,
                    format!("Mcp-Name header value {raw:?} is malformed"),
                    Some(json!({"header": "Mcp-Name", "headerValue": raw, "bodyValue": req.name})),
                )
            })?),
        };
        check_header("Mcp-Name", decoded.as_deref(), req.name, true)?;
    }
    Ok(Era::Modern)
}

/// A header value without the optional whitespace around it, which HTTP field parsing excludes
/// (RFC 9110 section 5.5).
fn trim_ows(value: &str) -> &str {
    value.trim_matches([' ', '\t'])
}

/// A required per-request `_meta` field is absent or of the wrong type: the request is malformed.
fn missing_field(key: &str, expected: &str) -> Rejection {
    reject(
        codes::INVALID_PARAMS,
        format!("request _meta is missing {key} (required: {expected})"),
        Some(json!({"missing": key})),
    )
}

fn mismatch_version(header: &str, body: &str) -> Rejection {
    reject(
        codes::HEADER_MISMATCH,
        format!(
            "MCP-Protocol-Version header {header:?} does not match _meta protocol version {body:?}"
        ),
        Some(json!({"header": header, "body": body})),
    )
}

fn check_header(
    name: &str,
    header: Option<&str>,
    body: Option<&str>,
    required: bool,
) -> Result<(), Rejection> {
    match header.filter(|h| !h.is_empty()) {
        None if required => Err(reject(
            codes::HEADER_MISMATCH,
            format!("{name} header is missing (required for this request)"),
            Some(json!({"header": name, "headerValue": Value::Null, "bodyValue": body})),
        )),
        None => Ok(()),
        Some(h) if Some(h) == body => Ok(()),
        Some(h) => Err(reject(
            codes::HEADER_MISMATCH,
            format!(
                "{name} header {h:?} does not match request body value {:?}",
                body.unwrap_or("")
            ),
            Some(json!({"header": name, "headerValue": h, "bodyValue": body})),
        )),
    }
}

#[cfg(test)]
mod tests;
