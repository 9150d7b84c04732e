//! JSON-RPC 2.0 envelopes as MCP uses them: parsing one message off the wire and writing one back.
//!
//! Parsing decodes the envelope only; `params`, `result` and `error.data` stay opaque JSON so the
//! gateway is lossless for fields it does not know.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::codes;

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code.
    pub code: i64,
    /// A short description.
    pub message: String,
    /// Optional structured detail.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error with `code` and `message` and no data.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Adds structured detail.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }
}

/// One JSON-RPC message.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A request: expects exactly one response with the same id.
    Request {
        /// The id (a string or an integer).
        id: Value,
        /// The method name.
        method: String,
        /// The parameters, if any.
        params: Option<Value>,
    },
    /// A notification: no id, no response.
    Notification {
        /// The method name.
        method: String,
        /// The parameters, if any.
        params: Option<Value>,
    },
    /// A successful response.
    Response {
        /// The id of the request answered.
        id: Value,
        /// The result.
        result: Value,
    },
    /// An error response.
    Error {
        /// The id of the request answered (null when it could not be determined).
        id: Value,
        /// The error.
        error: ErrorObject,
    },
}

/// Why bytes could not be read as one JSON-RPC message.
#[derive(Debug, Clone, PartialEq)]
pub enum ParseError {
    /// Not JSON at all (-32700).
    Json(String),
    /// JSON, but an array: a batch. The elements are returned for revisions that accept batches.
    Batch(Vec<Value>),
    /// JSON, but not a valid JSON-RPC message (-32600). Carries the id when one could be read.
    Invalid {
        /// The id of the offending message, if it had a usable one.
        id: Option<Value>,
        /// What is wrong.
        reason: String,
    },
}

impl ParseError {
    /// The JSON-RPC error (and id to answer with) this parse failure maps to.
    pub fn to_error(&self) -> (Value, ErrorObject) {
        match self {
            ParseError::Json(e) => (
                Value::Null,
                ErrorObject::new(codes::PARSE_ERROR, format!("parse error: {e}")),
            ),
            ParseError::Batch(_) => (
                Value::Null,
                ErrorObject::new(
                    codes::INVALID_REQUEST,
                    "JSON-RPC batches are not supported by this protocol revision",
                ),
            ),
            ParseError::Invalid { id, reason } => (
                id.clone().unwrap_or(Value::Null),
                ErrorObject::new(codes::INVALID_REQUEST, format!("invalid request: {reason}")),
            ),
        }
    }
}

impl Message {
    /// Parses one message from bytes.
    ///
    /// # Errors
    /// [`ParseError`] when the bytes are not JSON, are a batch, or are not a JSON-RPC 2.0 message.
    ///
    /// ```
    /// use vmcp_proto::Message;
    /// let m = Message::parse(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).unwrap();
    /// assert!(matches!(m, Message::Request { ref method, .. } if method == "ping"));
    /// ```
    pub fn parse(bytes: &[u8]) -> Result<Message, ParseError> {
        // Well-formed messages (nearly all of them) decode straight into the envelope's fields;
        // anything unusual takes the general path, which owns every error message. Found by
        // fuzzing (fuzz/fuzz_targets/jsonrpc_envelope.rs), the fast path must see only text (serde
        // skips an unknown field's string without checking its UTF-8) and only objects (a derived
        // struct also reads a JSON array positionally, so `["2.0",1,"ping"]` was a request).
        if let Ok(text) = std::str::from_utf8(bytes)
            && text.trim_start().starts_with('{')
            && let Some(message) = serde_json::from_str::<Envelope<'_>>(text)
                .ok()
                .and_then(Envelope::into_message)
        {
            return Ok(message);
        }
        let value: Value =
            serde_json::from_slice(bytes).map_err(|e| ParseError::Json(e.to_string()))?;
        Self::from_value(value)
    }

    /// Interprets an already-parsed JSON value as one message.
    ///
    /// # Errors
    /// [`ParseError::Batch`] for arrays, [`ParseError::Invalid`] for anything not JSON-RPC 2.0.
    pub fn from_value(value: Value) -> Result<Message, ParseError> {
        let mut obj = match value {
            Value::Object(o) => o,
            Value::Array(items) => return Err(ParseError::Batch(items)),
            _ => return Err(invalid(None, "a JSON-RPC message must be an object")),
        };
        let id = obj.remove("id");
        let usable_id = id.as_ref().filter(|v| is_valid_id(v)).cloned();
        if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Err(invalid(usable_id, "\"jsonrpc\" must be \"2.0\""));
        }
        match obj.remove("method") {
            Some(Value::String(method)) => {
                let params = take_params(&mut obj, &usable_id)?;
                match id {
                    None => Ok(Message::Notification { method, params }),
                    Some(id) if is_valid_id(&id) => Ok(Message::Request { id, method, params }),
                    Some(_) => Err(invalid(None, "\"id\" must be a string or an integer")),
                }
            }
            Some(_) => Err(invalid(usable_id, "\"method\" must be a string")),
            None => response_from(obj, id),
        }
    }

    /// Serialises the message to JSON bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        // Serialising a Value-based envelope cannot fail.
        serde_json::to_vec(&self.to_value()).unwrap_or_default()
    }

    /// The message as a JSON value.
    pub fn to_value(&self) -> Value {
        let mut o = Map::with_capacity(4);
        o.insert("jsonrpc".into(), Value::from("2.0"));
        match self {
            Message::Request { id, method, params } => {
                o.insert("id".into(), id.clone());
                o.insert("method".into(), Value::from(method.as_str()));
                if let Some(p) = params {
                    o.insert("params".into(), p.clone());
                }
            }
            Message::Notification { method, params } => {
                o.insert("method".into(), Value::from(method.as_str()));
                if let Some(p) = params {
                    o.insert("params".into(), p.clone());
                }
            }
            Message::Response { id, result } => {
                o.insert("id".into(), id.clone());
                o.insert("result".into(), result.clone());
            }
            Message::Error { id, error } => {
                o.insert("id".into(), id.clone());
                o.insert(
                    "error".into(),
                    serde_json::to_value(error).unwrap_or(Value::Null),
                );
            }
        }
        Value::Object(o)
    }
}

/// Serialises a success response without cloning the result.
pub fn response_bytes<T: Serialize + ?Sized>(id: &Value, result: &T) -> Vec<u8> {
    #[derive(Serialize)]
    struct R<'a, T: ?Sized> {
        jsonrpc: &'static str,
        id: &'a Value,
        result: &'a T,
    }
    serde_json::to_vec(&R {
        jsonrpc: "2.0",
        id,
        result,
    })
    .unwrap_or_default()
}

/// Serialises an error response.
pub fn error_bytes(id: &Value, error: &ErrorObject) -> Vec<u8> {
    #[derive(Serialize)]
    struct E<'a> {
        jsonrpc: &'static str,
        id: &'a Value,
        error: &'a ErrorObject,
    }
    serde_json::to_vec(&E {
        jsonrpc: "2.0",
        id,
        error,
    })
    .unwrap_or_default()
}

/// Serialises a request without cloning its params.
pub fn request_bytes(id: &Value, method: &str, params: Option<&Value>) -> Vec<u8> {
    #[derive(Serialize)]
    struct Q<'a> {
        jsonrpc: &'static str,
        id: &'a Value,
        method: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        params: Option<&'a Value>,
    }
    serde_json::to_vec(&Q {
        jsonrpc: "2.0",
        id,
        method,
        params,
    })
    .unwrap_or_default()
}

/// Serialises a notification without cloning its params.
pub fn notification_bytes(method: &str, params: Option<&Value>) -> Vec<u8> {
    #[derive(Serialize)]
    struct N<'a> {
        jsonrpc: &'static str,
        method: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        params: Option<&'a Value>,
    }
    serde_json::to_vec(&N {
        jsonrpc: "2.0",
        method,
        params,
    })
    .unwrap_or_default()
}

/// MCP ids are strings or integers; null, fractions, booleans and structures are not ids.
/// The envelope of a well-formed message, decoded without building a map for it. Present-but-null
/// fields stay `Some(Value::Null)`, as the general path sees them. Any other field sends the
/// message down the general path: serde skips an unknown field's string without checking its
/// escapes (a lone surrogate `\ud8db` passed), where parsing it as a value refuses it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    jsonrpc: Option<&'a str>,
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    method: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    params: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    result: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    error: Option<Value>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

impl Envelope<'_> {
    /// The message, when it is valid; `None` sends it down the general path.
    fn into_message(self) -> Option<Message> {
        if self.jsonrpc != Some("2.0") {
            return None;
        }
        match (self.method, self.id) {
            (Some(Value::String(method)), id) => {
                let params = match self.params {
                    None => None,
                    Some(p @ Value::Object(_)) => Some(p),
                    Some(_) => return None,
                };
                match id {
                    None => Some(Message::Notification { method, params }),
                    Some(id) if is_valid_id(&id) => Some(Message::Request { id, method, params }),
                    Some(_) => None,
                }
            }
            (None, Some(id)) if is_valid_id(&id) || id.is_null() => {
                match (self.result, self.error) {
                    (Some(result), None) => Some(Message::Response { id, result }),
                    (None, Some(error)) => serde_json::from_value(error)
                        .ok()
                        .map(|error| Message::Error { id, error }),
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

fn is_valid_id(v: &Value) -> bool {
    match v {
        Value::String(_) => true,
        Value::Number(n) => n.is_i64() || n.is_u64(),
        _ => false,
    }
}

fn invalid(id: Option<Value>, reason: &str) -> ParseError {
    ParseError::Invalid {
        id,
        reason: reason.to_string(),
    }
}

fn take_params(
    obj: &mut Map<String, Value>,
    id: &Option<Value>,
) -> Result<Option<Value>, ParseError> {
    match obj.remove("params") {
        None => Ok(None),
        Some(p @ Value::Object(_)) => Ok(Some(p)),
        // JSON-RPC allows positional params; MCP never uses them.
        Some(_) => Err(invalid(id.clone(), "\"params\" must be an object")),
    }
}

fn response_from(mut obj: Map<String, Value>, id: Option<Value>) -> Result<Message, ParseError> {
    let id = match id {
        Some(id) if is_valid_id(&id) || id.is_null() => id,
        _ => {
            return Err(invalid(
                None,
                "a message needs \"method\" or a valid \"id\"",
            ));
        }
    };
    match (obj.remove("result"), obj.remove("error")) {
        (Some(result), None) => Ok(Message::Response { id, result }),
        (None, Some(error)) => match serde_json::from_value::<ErrorObject>(error) {
            Ok(error) => Ok(Message::Error { id, error }),
            Err(e) => Err(invalid(Some(id), &format!("malformed \"error\": {e}"))),
        },
        _ => Err(invalid(
            Some(id),
            "a response needs exactly one of \"result\" or \"error\"",
        )),
    }
}

#[cfg(test)]
mod tests;
