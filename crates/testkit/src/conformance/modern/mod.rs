//! The 2026-07-28 ("Modern") edge: stateless MCP over Streamable HTTP. One POST is one
//! request, read top to bottom in [`serve`]: parse → `check` (`_meta`, protocol version,
//! `Mcp-Method`/`Mcp-Name`/`Mcp-Param-*` headers, MRTR `inputResponses`/`requestState`) →
//! route (`server/discover` here, `subscriptions/listen` in `listen`, everything else the
//! shared `catalogue`) → `envelope` (`resultType`, `serverInfo`, caching hints, error status)
//! → `reply` (JSON, or an SSE stream once a notification comes first).
//!
//! Owns no sessions and no per-client state: the only state is the key sealing
//! `requestState` and the bus announcing list changes to listen streams.

mod check;
mod envelope;
mod listen;
mod reply;

use std::sync::Arc;

use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc};

use super::catalogue;
use super::era::MODERN_VERSION;
use super::exchange::{Change, Exchange};
use super::mrtr::StateKey;
use crate::protocol::PROTOCOL_VERSIONS;
use crate::protocol::rpc::{Incoming, RpcError, classify};

/// How many list changes a slow listen stream may fall behind before it skips some.
const CHANGE_BACKLOG: usize = 64;

/// What the Modern edge keeps between requests.
pub(crate) struct Modern {
    /// Seals and opens `requestState`.
    key: StateKey,
    /// List changes announced by the trigger tools, heard by `subscriptions/listen` streams.
    changes: broadcast::Sender<Change>,
}

impl Default for Modern {
    fn default() -> Self {
        Self {
            key: StateKey::default(),
            changes: broadcast::channel(CHANGE_BACKLOG).0,
        }
    }
}

/// Serves one 2026-07-28 POST whose body parsed as `message` (`None`: not JSON).
pub(crate) async fn serve(
    modern: Arc<Modern>,
    headers: &HeaderMap,
    message: Option<Value>,
) -> Response {
    let Some(message) = message else {
        let error = RpcError::parse("the body is not JSON");
        return envelope::error(None, StatusCode::BAD_REQUEST, error);
    };
    let (id, method, params) = match classify(&message) {
        Incoming::Request { id, method, params } => (id, method.to_owned(), params.clone()),
        // 2026-07-28 defines no client notifications over HTTP; accept and ignore them.
        Incoming::Notification => return StatusCode::ACCEPTED.into_response(),
        Incoming::Response | Incoming::Invalid(_) => {
            let error = RpcError::invalid_request("expected a JSON-RPC request");
            return envelope::error(message.get("id"), StatusCode::BAD_REQUEST, error);
        }
    };
    let request = match check::request(headers, &method, &params, &modern.key) {
        Ok(request) => request,
        Err(rejection) => return envelope::error(Some(&id), rejection.status, rejection.error),
    };
    if method == "subscriptions/listen" {
        return listen::open(&modern.changes, id, &params);
    }
    let (notes, noted) = mpsc::unbounded_channel();
    let work = async move {
        let exchange = Exchange::modern(
            &params,
            request.capabilities,
            request.log_level,
            request.input,
            notes,
            modern.changes.clone(),
        );
        let outcome = match method.as_str() {
            "server/discover" => Ok(discover()),
            _ => catalogue::call(&method, &params, &exchange).await,
        };
        envelope::finish(&modern.key, &id, &method, &params, outcome)
    };
    reply::lazily(work, noted).await
}

/// Every protocol version the fixture speaks: this revision, then the Legacy ones (served
/// after an `initialize`).
fn supported_versions() -> Vec<&'static str> {
    let mut versions = vec![MODERN_VERSION];
    versions.extend(PROTOCOL_VERSIONS);
    versions
}

/// `server/discover`.
fn discover() -> Value {
    json!({
        "supportedVersions": supported_versions(),
        "capabilities": {
            "tools": { "listChanged": true },
            "resources": { "subscribe": true, "listChanged": false },
            "prompts": { "listChanged": true },
            "logging": {},
            "completions": {}
        },
        "instructions": "Fixture for the MCP conformance suite's server scenarios."
    })
}

/// What a `requestState` is bound to: the method and the tool, prompt or resource it names.
fn binding(method: &str, params: &Value) -> String {
    let name = params
        .get("name")
        .or_else(|| params.get("uri"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    format!("{method} {name}")
}
