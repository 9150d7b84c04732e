//! The one place core errors become JSON-RPC errors and HTTP statuses.

use http::StatusCode;
use serde_json::{Value, json};
use vmcp_backend::BackendError;
use vmcp_core::CoreError;
use vmcp_proto::{ErrorObject, codes};

/// A failed request: the JSON-RPC error, and the HTTP status to send it with.
#[derive(Debug, Clone)]
pub(crate) struct Failure {
    pub(crate) status: StatusCode,
    pub(crate) error: ErrorObject,
}

impl Failure {
    pub(crate) fn new(status: StatusCode, code: i64, message: impl Into<String>) -> Self {
        Self {
            status,
            error: ErrorObject::new(code, message),
        }
    }

    /// A JSON-RPC error answered with HTTP 200 (the request itself was fine at the HTTP level).
    pub(crate) fn rpc(code: i64, message: impl Into<String>) -> Self {
        Self::new(StatusCode::OK, code, message)
    }
}

impl From<CoreError> for Failure {
    fn from(err: CoreError) -> Self {
        let message = err.to_string();
        match err {
            CoreError::UnknownTool(_)
            | CoreError::UnknownPrompt(_)
            | CoreError::InvalidParams(_) => Failure::rpc(codes::INVALID_PARAMS, message),
            CoreError::UnknownResource(uri) => Failure {
                status: StatusCode::OK,
                error: ErrorObject::new(codes::RESOURCE_NOT_FOUND, "Resource not found")
                    .with_data(json!({"uri": uri})),
            },
            CoreError::Denied(_) => Failure::new(StatusCode::FORBIDDEN, codes::DENIED, message),
            CoreError::Backend { backend, error } => backend_failure(&backend, error),
            CoreError::DiscoveryTimeout(_) => {
                Failure::new(StatusCode::GATEWAY_TIMEOUT, codes::INTERNAL_ERROR, message)
            }
            CoreError::DiscoveryFailed(_) => Failure::new(
                StatusCode::SERVICE_UNAVAILABLE,
                codes::INTERNAL_ERROR,
                message,
            ),
            // HTTP 200 on both edges: MCP clients read a JSON-RPC error from a 200, while many
            // treat a 429 status as a transport failure and never show the body. The
            // `Retry-After` header (reply.rs) carries the wait for HTTP-level tooling.
            // Like a backend's failure to answer (-32603 naming it), with when to retry.
            CoreError::ToolUnavailable {
                backend,
                health,
                since,
                retry_after,
                ..
            } => Failure {
                status: StatusCode::OK,
                error: ErrorObject::new(codes::INTERNAL_ERROR, message).with_data(json!({
                    "backend": backend,
                    "kind": "unavailable",
                    "health": health,
                    "unavailableSince": since,
                    "retryAfterSeconds": retry_after.as_secs(),
                })),
            },
            CoreError::RateLimited { retry_after } => Failure {
                status: StatusCode::OK,
                error: ErrorObject::new(codes::RATE_LIMITED, message)
                    .with_data(json!({"retryAfterSeconds": retry_after.as_secs()})),
            },
        }
    }
}

/// The seconds a failure asks the client to wait (a rate limit's, an unavailable tool's), if any.
pub(crate) fn retry_after_secs(f: &Failure) -> Option<u64> {
    f.error.data.as_ref()?.get("retryAfterSeconds")?.as_u64()
}

/// What a 2025-11-25 client gets for a rate-limited `tools/call`: ToolHive's tool result with
/// `isError`, the JSON-RPC error object as `structuredContent`, so the model sees the refusal
/// as a tool outcome rather than a protocol failure.
pub(crate) fn rate_limited_tool_result(retry_after: std::time::Duration) -> Value {
    let message = CoreError::RateLimited { retry_after }.to_string();
    json!({
        "isError": true,
        "content": [{"type": "text", "text": message}],
        "structuredContent": {
            "code": codes::RATE_LIMITED,
            "message": message,
            "data": {"retryAfterSeconds": retry_after.as_secs()},
        },
    })
}

/// A backend's own JSON-RPC error is relayed with its code, message and data (plus the backend's
/// name when data leaves room); a failure to get an answer becomes -32603 naming the backend.
fn backend_failure(backend: &str, error: BackendError) -> Failure {
    match error {
        BackendError::Rpc(mut e) => {
            match &mut e.data {
                None => e.data = Some(json!({"backend": backend})),
                Some(Value::Object(o)) if !o.contains_key("backend") => {
                    o.insert("backend".into(), Value::String(backend.to_string()));
                }
                Some(_) => {}
            }
            Failure {
                status: StatusCode::OK,
                error: e,
            }
        }
        other => {
            let kind = match &other {
                BackendError::Timeout(_) => "timeout",
                BackendError::Unavailable(_) => "unavailable",
                BackendError::Protocol(_) => "protocol",
                BackendError::Exited(_) => "exited",
                BackendError::Cancelled => "cancelled",
                BackendError::Auth(_) => "unauthorized",
                // The client may retry: its token was not refused, the exchange did not happen.
                BackendError::Credential(_) => "unavailable",
                BackendError::Rpc(_) => "rpc",
            };
            Failure {
                status: StatusCode::OK,
                error: ErrorObject::new(
                    codes::INTERNAL_ERROR,
                    format!("backend {backend}: {other}"),
                )
                .with_data(json!({"backend": backend, "kind": kind})),
            }
        }
    }
}
