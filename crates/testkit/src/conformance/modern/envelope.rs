//! The 2026-07-28 wire envelope: `resultType`, the server's identity in every result's
//! `_meta`, caching hints on cacheable results, `input_required` results with a sealed
//! `requestState`, and the one mapping from JSON-RPC error codes to HTTP statuses.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Json, Response};
use serde_json::{Map, Value, json};

use super::super::SERVER_NAME;
use super::super::mrtr::{Interrupt, StateKey};
use super::binding;
use crate::protocol::rpc::{RpcError, failure, success};

/// Results the revision lets clients cache, which must carry `ttlMs` and `cacheScope`.
const CACHEABLE: [&str; 6] = [
    "server/discover",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
];

/// How long a cacheable result stays fresh: the catalogue is fixed, but a trigger tool may
/// announce a change, so not for long.
const TTL_MS: u64 = 60_000;

/// The JSON-RPC response to request `id` of `method` (with `params`), and its HTTP status.
pub(super) fn finish(
    key: &StateKey,
    id: &Value,
    method: &str,
    params: &Value,
    outcome: Result<Value, Interrupt>,
) -> (StatusCode, Value) {
    match outcome {
        Ok(result) => (
            StatusCode::OK,
            success(id.clone(), complete(method, result)),
        ),
        Err(Interrupt::InputRequired { requests, keep }) => {
            let state = key.seal(&binding(method, params), &keep);
            let result = json!({
                "resultType": "input_required",
                "inputRequests": requests,
                "requestState": state,
                "_meta": server_meta()
            });
            (StatusCode::OK, success(id.clone(), result))
        }
        Err(Interrupt::Rpc(error)) => (status(&error), failure(id.clone(), error)),
        Err(Interrupt::Unanswered(why)) => {
            let error = RpcError::internal(why);
            (status(&error), failure(id.clone(), error))
        }
    }
}

/// A JSON error response with `status`; no `id` member when `id` is unknown (never `null`).
pub(super) fn error(id: Option<&Value>, status: StatusCode, error: RpcError) -> Response {
    let mut body = failure(id.cloned().unwrap_or(Value::Null), error);
    if body["id"].is_null()
        && let Some(body) = body.as_object_mut()
    {
        body.remove("id");
    }
    (status, Json(body)).into_response()
}

/// The HTTP status of a response carrying `error`: 404 for an unknown method, 400 for the
/// revision's header, capability and version errors and malformed requests, 200 otherwise
/// (the error is the request's outcome, not the transport's).
pub(super) fn status(error: &RpcError) -> StatusCode {
    match error.code {
        -32601 => StatusCode::NOT_FOUND,
        -32700 | -32600 | -32020 | -32021 | -32022 => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

/// `result` as a complete result of `method`.
fn complete(method: &str, result: Value) -> Value {
    // Every catalogue result is an object.
    let mut result = match result {
        Value::Object(result) => result,
        _ => Map::new(),
    };
    result.insert("resultType".to_owned(), json!("complete"));
    if CACHEABLE.contains(&method) {
        result.insert("ttlMs".to_owned(), json!(TTL_MS));
        result.insert("cacheScope".to_owned(), json!("public"));
    }
    let meta = result
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if let (Some(meta), Value::Object(info)) = (meta.as_object_mut(), server_meta()) {
        meta.extend(info);
    }
    Value::Object(result)
}

/// `_meta` naming this server.
fn server_meta() -> Value {
    json!({
        "io.modelcontextprotocol/serverInfo": {
            "name": SERVER_NAME,
            "version": env!("CARGO_PKG_VERSION")
        }
    })
}
