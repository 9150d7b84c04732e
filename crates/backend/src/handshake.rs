//! The MCP initialize handshake as the gateway performs it towards a backend.

use serde_json::{Value, json};

use crate::error::BackendError;

/// What a backend told us about itself in its `InitializeResult`.
#[derive(Debug, Clone, Default)]
pub struct ServerInfo {
    /// The negotiated protocol revision.
    pub protocol_version: String,
    /// The backend's declared capabilities object.
    pub capabilities: Value,
    /// The backend's `serverInfo` (name, version, ...).
    pub implementation: Value,
    /// The backend's `instructions`, if any.
    pub instructions: Option<String>,
}

impl ServerInfo {
    /// Whether the backend declared capability `name` (e.g. "tools").
    pub fn has(&self, name: &str) -> bool {
        self.capabilities.get(name).is_some_and(|v| !v.is_null())
    }
}

/// The `initialize` params the gateway sends: it introduces itself as `vmcp`, and declares the
/// client capabilities it can relay (each request is then only relayed to a client that declared
/// it, and refused with an error otherwise).
pub(crate) fn initialize_params(protocol_version: &str) -> Value {
    json!({
        "protocolVersion": protocol_version,
        "capabilities": {
            "roots": {},
            "sampling": {},
            "elicitation": {"form": {}, "url": {}}
        },
        "clientInfo": {"name": "vmcp", "version": env!("CARGO_PKG_VERSION")}
    })
}

/// Reads an `InitializeResult`.
pub(crate) fn parse_initialize_result(result: Value) -> Result<ServerInfo, BackendError> {
    let protocol_version = result
        .get("protocolVersion")
        .and_then(Value::as_str)
        .ok_or_else(|| BackendError::Protocol("initialize result has no protocolVersion".into()))?
        .to_string();
    Ok(ServerInfo {
        protocol_version,
        capabilities: result
            .get("capabilities")
            .cloned()
            .unwrap_or_else(|| json!({})),
        implementation: result.get("serverInfo").cloned().unwrap_or(Value::Null),
        instructions: result
            .get("instructions")
            .and_then(Value::as_str)
            .map(str::to_string),
    })
}
