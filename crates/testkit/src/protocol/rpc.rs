//! JSON-RPC 2.0 envelopes and the error codes the fixture answers with.
//!
//! Owns only the wire shape of responses; which method fails how is decided by the
//! method modules.

use serde_json::{Value, json};

/// A JSON-RPC error object, before it is wrapped in a response envelope.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RpcError {
    pub(crate) code: i64,
    pub(crate) message: String,
    pub(crate) data: Option<Value>,
}

impl RpcError {
    fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// -32700: the input was not JSON.
    pub(crate) fn parse(detail: impl std::fmt::Display) -> Self {
        Self::new(-32700, format!("Parse error: {detail}"))
    }

    /// -32600: JSON, but not a JSON-RPC message.
    pub(crate) fn invalid_request(detail: &str) -> Self {
        Self::new(-32600, format!("Invalid Request: {detail}"))
    }

    /// -32601: the method is unknown (or its capability is switched off).
    pub(crate) fn method_not_found(method: &str) -> Self {
        Self::new(-32601, format!("Method not found: {method}"))
    }

    /// -32602: unknown tool/prompt, missing or mistyped params.
    pub(crate) fn invalid_params(detail: impl Into<String>) -> Self {
        Self::new(-32602, detail)
    }

    /// -32603: an internal error.
    pub(crate) fn internal(detail: impl Into<String>) -> Self {
        Self::new(-32603, detail)
    }

    /// -32002: the resource URI is unknown.
    pub(crate) fn resource_not_found(uri: &str) -> Self {
        Self {
            data: Some(json!({ "uri": uri })),
            ..Self::new(-32002, "Resource not found")
        }
    }
}

/// One incoming JSON-RPC message, sorted by kind.
pub(crate) enum Incoming<'a> {
    /// A request: answer it.
    Request {
        id: Value,
        method: &'a str,
        /// `params`, or `null` when absent.
        params: &'a Value,
    },
    /// A notification: never answered.
    Notification,
    /// A response to a request this server sent.
    Response,
    /// Not a JSON-RPC message: send this error response.
    Invalid(Value),
}

/// Sorts `message` into request, notification, response or invalid (with the -32600 answer).
pub(crate) fn classify(message: &Value) -> Incoming<'_> {
    static NULL: Value = Value::Null;
    let Some(object) = message.as_object() else {
        let error = RpcError::invalid_request("expected a JSON object");
        return Incoming::Invalid(failure(Value::Null, error));
    };
    let id = object.get("id").cloned();
    let Some(method) = object.get("method").and_then(Value::as_str) else {
        if object.contains_key("result") || object.contains_key("error") {
            return Incoming::Response;
        }
        let error = RpcError::invalid_request("missing method");
        return Incoming::Invalid(failure(id.unwrap_or(Value::Null), error));
    };
    match id {
        None => Incoming::Notification,
        Some(id) => Incoming::Request {
            id,
            method,
            params: object.get("params").unwrap_or(&NULL),
        },
    }
}

/// A success response for request `id`.
pub(crate) fn success(id: Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

/// An error response for request `id` (`null` when the id could not be read).
pub(crate) fn failure(id: Value, error: RpcError) -> Value {
    let mut body = json!({ "code": error.code, "message": error.message });
    if let Some(data) = error.data {
        body["data"] = data;
    }
    json!({ "jsonrpc": "2.0", "id": id, "error": body })
}

/// The string param `key` of `params`, or -32602.
pub(crate) fn str_param<'a>(params: &'a Value, key: &str) -> Result<&'a str, RpcError> {
    params
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params(format!("missing string param `{key}`")))
}
