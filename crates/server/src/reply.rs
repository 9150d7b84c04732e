//! Building HTTP responses that carry JSON-RPC messages, as JSON or as a one-event SSE stream.

use axum::body::Body;
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, HeaderValue, StatusCode, header};
use serde::Serialize;
use serde_json::Value;
use vmcp_proto::{ErrorObject, jsonrpc, sse};

use crate::{audit, errors::Failure, state::AppState};

/// How the client wants answers to its POSTs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Json,
    EventStream,
}

impl Format {
    /// Whether the client accepts an SSE answer (so a request can relay mid-call messages).
    pub(crate) fn accepts_stream(headers: &HeaderMap) -> bool {
        let accept = headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        accept.contains("text/event-stream") || accept.contains("*/*")
    }

    /// JSON unless the client accepts only an event stream.
    pub(crate) fn from_accept(headers: &HeaderMap) -> Format {
        let accept = headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let json = accept.is_empty()
            || accept.contains("application/json")
            || accept.contains("*/*")
            || accept.contains("application/*");
        if !json && accept.contains("text/event-stream") {
            Format::EventStream
        } else {
            Format::Json
        }
    }
}

/// The form of an answer the gateway gives itself (a list page, `ping`): `format`, except that a
/// client accepting SSE gets a one-event SSE stream while a backend answers its own requests with
/// streams, so that it sees the form it would get connected to that backend directly.
pub(crate) fn mirrored(state: &AppState, headers: &HeaderMap, format: Format) -> Format {
    if format == Format::Json
        && Format::accepts_stream(headers)
        && state.gateway.backends().iter().any(|b| b.streams_answers())
    {
        Format::EventStream
    } else {
        format
    }
}

/// A response carrying one serialised JSON-RPC message.
pub(crate) fn message(status: StatusCode, format: Format, bytes: Vec<u8>) -> Response {
    let (ctype, body) = match format {
        Format::Json => ("application/json", bytes),
        Format::EventStream => ("text/event-stream", sse::message_event(&bytes, None)),
    };
    let mut resp = (status, body).into_response();
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(ctype));
    resp
}

/// A success response for request `id`.
pub(crate) fn result(format: Format, id: &Value, result: &(impl Serialize + ?Sized)) -> Response {
    message(StatusCode::OK, format, jsonrpc::response_bytes(id, result))
}

/// An error response for request `id` (with `Retry-After` when it is a rate limit's).
pub(crate) fn failure(format: Format, id: &Value, failure: &Failure) -> Response {
    let mut resp = error(failure.status, format, id, &failure.error);
    if let Some(secs) = crate::errors::retry_after_secs(failure) {
        resp.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    resp
}

/// An error response for request `id` with HTTP `status`.
pub(crate) fn error(
    status: StatusCode,
    format: Format,
    id: &Value,
    error: &ErrorObject,
) -> Response {
    audit::error(error.code, &error.message);
    message(status, format, jsonrpc::error_bytes(id, error))
}

/// An HTTP-level refusal (bad session, bad header, too large...) with a JSON-RPC error body.
pub(crate) fn refuse(status: StatusCode, code: i64, message: impl Into<String>) -> Response {
    let err = ErrorObject::new(code, message);
    audit::error(err.code, &err.message);
    let mut resp = Response::new(Body::from(jsonrpc::error_bytes(&Value::Null, &err)));
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}

/// 202 Accepted, no body: the answer to notifications and responses.
pub(crate) fn accepted() -> Response {
    StatusCode::ACCEPTED.into_response()
}

/// An empty response with `status`.
pub(crate) fn accepted_with(status: StatusCode) -> Response {
    status.into_response()
}
