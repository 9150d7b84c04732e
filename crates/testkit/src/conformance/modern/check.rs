//! Everything a 2026-07-28 request must get right before it is served: the required `_meta`
//! fields (-32602), the protocol version (header and `_meta` agree, -32020; and are spoken,
//! -32022), the standard and custom request headers mirroring the body (-32020), and the
//! shape of an MRTR retry (`inputResponses`, a `requestState` that verifies; -32602). Every
//! rejection is HTTP 400.

use axum::http::{HeaderMap, StatusCode};
use serde_json::{Map, Value, json};

use super::super::era::{
    Era, META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, MODERN_VERSION, PROTOCOL_VERSION_HEADER,
    header,
};
use super::super::mrtr::{Input, StateKey};
use super::super::sentinel;
use super::super::tools;
use super::{binding, supported_versions};
use crate::protocol::LOG_LEVELS;
use crate::protocol::rpc::RpcError;

const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// Methods that may answer `input_required`, and so take `inputResponses`/`requestState`.
const MRTR_METHODS: [&str; 3] = ["tools/call", "prompts/get", "resources/read"];

/// What a well-formed request declared.
pub(super) struct Checked {
    /// `_meta` `clientCapabilities`.
    pub(super) capabilities: Value,
    /// Index into [`LOG_LEVELS`] of `_meta` `logLevel`; `None`: send no logs.
    pub(super) log_level: Option<usize>,
    /// The answers and verified state of an MRTR retry.
    pub(super) input: Input,
}

/// Why a request is refused before it is served.
#[derive(Debug)]
pub(super) struct Rejection {
    pub(super) status: StatusCode,
    pub(super) error: RpcError,
}

impl Rejection {
    fn new(code: i64, message: String) -> Self {
        Self::with(RpcError {
            code,
            message,
            data: None,
        })
    }

    fn with(error: RpcError) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            error,
        }
    }
}

/// -32020 HeaderMismatch.
fn mismatch(message: String) -> Rejection {
    Rejection::new(-32020, message)
}

/// Checks request `method` with `params` arriving with `headers`.
///
/// # Errors
///
/// The first rule broken, in the order of the module docs.
pub(super) fn request(
    headers: &HeaderMap,
    method: &str,
    params: &Value,
    key: &StateKey,
) -> Result<Checked, Rejection> {
    let Some(version) = text_header(headers, PROTOCOL_VERSION_HEADER)? else {
        return Err(mismatch("MCP-Protocol-Version header is required".into()));
    };
    let empty = Map::new();
    let meta = params
        .get("_meta")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let missing: Vec<&str> = [META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES]
        .into_iter()
        .filter(|k| !meta.contains_key(*k))
        .collect();
    if !missing.is_empty() {
        let message = format!("Invalid params: missing _meta keys: {}", missing.join(", "));
        return Err(Rejection::new(-32602, message));
    }
    let Some(requested) = meta[META_PROTOCOL_VERSION].as_str() else {
        return Err(Rejection::new(
            -32602,
            format!("{META_PROTOCOL_VERSION} must be a string"),
        ));
    };
    if requested != version {
        return Err(mismatch(format!(
            "MCP-Protocol-Version header {version:?} does not match _meta protocol version {requested:?}"
        )));
    }
    if requested != MODERN_VERSION {
        return Err(Rejection::with(RpcError {
            code: -32022,
            message: format!("Unsupported protocol version: {requested}"),
            data: Some(json!({ "supported": supported_versions(), "requested": requested })),
        }));
    }
    let capabilities = meta[META_CLIENT_CAPABILITIES].clone();
    if !capabilities.is_object() {
        let message = format!("{META_CLIENT_CAPABILITIES} must be an object");
        return Err(Rejection::new(-32602, message));
    }
    let log_level = match meta.get(META_LOG_LEVEL) {
        None => None,
        Some(level) => Some(
            level
                .as_str()
                .and_then(|level| LOG_LEVELS.iter().position(|l| *l == level))
                .ok_or_else(|| Rejection::new(-32602, format!("unknown log level {level}")))?,
        ),
    };
    standard_headers(headers, method, params)?;
    if method == "tools/call" {
        param_headers(headers, params)?;
    }
    Ok(Checked {
        capabilities,
        log_level,
        input: input(method, params, key)?,
    })
}

/// `Mcp-Method` must equal the body's method; `Mcp-Name` the name or URI it acts on.
fn standard_headers(headers: &HeaderMap, method: &str, params: &Value) -> Result<(), Rejection> {
    match text_header(headers, "mcp-method")? {
        None => return Err(mismatch("Mcp-Method header is required".into())),
        Some(value) if value != method => {
            return Err(mismatch(format!(
                "Mcp-Method header {value:?} does not match body method {method:?}"
            )));
        }
        Some(_) => {}
    }
    let source = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        _ => return Ok(()),
    };
    let Some(body) = params.get(source).and_then(Value::as_str) else {
        return Ok(()); // the method itself refuses a missing name
    };
    let Some(raw) = text_header(headers, "mcp-name")? else {
        return Err(mismatch(format!(
            "Mcp-Name header is required for {method}"
        )));
    };
    let decoded = sentinel::header_value(raw)
        .map_err(|()| mismatch(format!("Mcp-Name header {raw:?} is malformed")))?;
    if decoded != body.as_bytes() {
        return Err(mismatch(format!(
            "Mcp-Name header {raw:?} does not match body params.{source} {body:?}"
        )));
    }
    Ok(())
}

/// Each argument the tool marks with `x-mcp-header` must be mirrored in its
/// `Mcp-Param-{Name}` header, and only then.
fn param_headers(headers: &HeaderMap, params: &Value) -> Result<(), Rejection> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let listed = tools::list(Era::Modern);
    let Some(tool) = listed["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|t| t["name"] == name))
    else {
        return Ok(());
    };
    let Some(properties) = tool["inputSchema"]["properties"].as_object() else {
        return Ok(());
    };
    let arguments = params.get("arguments").unwrap_or(&Value::Null);
    for (property, schema) in properties {
        let Some(suffix) = schema["x-mcp-header"].as_str() else {
            continue;
        };
        let header_name = format!("mcp-param-{}", suffix.to_ascii_lowercase());
        let display = format!("Mcp-Param-{suffix}");
        let body = arguments.get(property).filter(|v| !v.is_null());
        match (text_header(headers, &header_name)?, body) {
            (None, None) => {}
            (None, Some(_)) => return Err(mismatch(format!("{display} header is required"))),
            (Some(_), None) => {
                return Err(mismatch(format!("{display} header has no body value")));
            }
            (Some(raw), Some(body)) => {
                let decoded = sentinel::header_value(raw)
                    .map_err(|()| mismatch(format!("{display} header {raw:?} is malformed")))?;
                if !same_value(&decoded, body) {
                    return Err(mismatch(format!(
                        "{display} header {raw:?} does not match arguments.{property} {body}"
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Whether a header's (decoded) bytes carry the body value: strings byte for byte, numbers
/// numerically, booleans as `true`/`false`.
fn same_value(header: &[u8], body: &Value) -> bool {
    let Ok(header) = std::str::from_utf8(header) else {
        return false;
    };
    match body {
        Value::String(body) => header == body,
        Value::Bool(body) => header == body.to_string(),
        Value::Number(body) => header
            .parse::<f64>()
            .is_ok_and(|h| body.as_f64().is_some_and(|b| h == b)),
        _ => false,
    }
}

/// The MRTR retry fields of `method`'s `params`: `inputResponses` (an object of objects) and
/// a `requestState` this server sealed for the same request.
fn input(method: &str, params: &Value, key: &StateKey) -> Result<Input, Rejection> {
    if !MRTR_METHODS.contains(&method) {
        return Ok(Input::default());
    }
    let responses = match params.get("inputResponses") {
        None => Map::new(),
        Some(Value::Object(responses)) => {
            if let Some((bad, _)) = responses.iter().find(|(_, r)| !r.is_object()) {
                let message = format!("inputResponses.{bad} must be an object");
                return Err(Rejection::new(-32602, message));
            }
            responses.clone()
        }
        Some(_) => {
            return Err(Rejection::new(
                -32602,
                "inputResponses must be an object".into(),
            ));
        }
    };
    let state = match params.get("requestState") {
        None => None,
        Some(Value::String(token)) => Some(
            key.open(&binding(method, params), token)
                .map_err(Rejection::with)?,
        ),
        Some(_) => {
            return Err(Rejection::new(
                -32602,
                "requestState must be a string".into(),
            ));
        }
    };
    Ok(Input { responses, state })
}

/// Header `name` trimmed, `None` if absent.
///
/// # Errors
///
/// -32020 if its value holds characters outside visible ASCII, space and tab.
fn text_header<'h>(headers: &'h HeaderMap, name: &str) -> Result<Option<&'h str>, Rejection> {
    if !headers.contains_key(name) {
        return Ok(None);
    }
    match header(headers, name) {
        Some(value) => Ok(Some(value)),
        None => Err(mismatch(format!("{name} header holds invalid characters"))),
    }
}
