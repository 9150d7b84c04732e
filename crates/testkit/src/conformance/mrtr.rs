//! What a request may need from its client before it can finish, in either era: the
//! [`Question`]s a tool asks and the [`Interrupt`]s that stop it early. Under 2026-07-28 a
//! question is answered by the client retrying the request (Multi Round-Trip Requests, SEP-2322):
//! this module also owns that retry's [`Input`] and the integrity-protected `requestState`
//! ([`StateKey`]).
//!
//! Not here: how a 2025-11-25 question travels (`exchange`), or the wire envelope of an
//! `input_required` result (`modern::envelope`).

use std::hash::{BuildHasher, RandomState};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value, json};

use super::sentinel;
use crate::protocol::rpc::RpcError;

/// How long a `requestState` stays valid.
const STATE_TTL: Duration = Duration::from_secs(600);

/// One thing a request asks its client: a `sampling/createMessage`, `elicitation/create` or
/// `roots/list`, under a key unique within the request.
#[derive(Debug, Clone)]
pub(crate) struct Question {
    pub(crate) key: &'static str,
    pub(crate) method: &'static str,
    pub(crate) params: Value,
}

impl Question {
    /// An `elicitation/create` with `params` (a message and a requested schema).
    pub(crate) fn elicit(key: &'static str, params: Value) -> Self {
        Self {
            key,
            method: "elicitation/create",
            params,
        }
    }

    /// A `sampling/createMessage` with `params`.
    pub(crate) fn sample(key: &'static str, params: Value) -> Self {
        Self {
            key,
            method: "sampling/createMessage",
            params,
        }
    }

    /// A `roots/list`.
    pub(crate) fn roots(key: &'static str) -> Self {
        Self {
            key,
            method: "roots/list",
            params: json!({}),
        }
    }

    /// The client capability answering this question needs.
    pub(crate) fn capability(&self) -> &'static str {
        match self.method {
            "sampling/createMessage" => "sampling",
            "elicitation/create" => "elicitation",
            _ => "roots",
        }
    }
}

/// Why a request stopped before its result.
#[derive(Debug)]
pub(crate) enum Interrupt {
    /// 2026-07-28: the client must answer `requests` (key → `{method, params}`) and retry;
    /// `keep` is what the retry's `requestState` will carry back.
    InputRequired {
        requests: Map<String, Value>,
        keep: Value,
    },
    /// The whole request fails with this JSON-RPC error.
    Rpc(RpcError),
    /// 2025-11-25: the client could not or would not answer; tools report it as `isError`.
    Unanswered(String),
}

impl Interrupt {
    /// 2026-07-28: ask `questions` (again), the retry carrying `keep` in its state.
    pub(crate) fn asking(questions: &[Question], keep: Value) -> Self {
        let requests = questions
            .iter()
            .map(|q| {
                let request = json!({ "method": q.method, "params": q.params });
                (q.key.to_owned(), request)
            })
            .collect();
        Self::InputRequired { requests, keep }
    }

    /// The same interrupt, but an `InputRequired` retry will carry `data` in its state.
    pub(crate) fn keeping(self, data: Value) -> Self {
        match self {
            Self::InputRequired { requests, .. } => Self::InputRequired {
                requests,
                keep: data,
            },
            other => other,
        }
    }
}

impl From<RpcError> for Interrupt {
    fn from(error: RpcError) -> Self {
        Self::Rpc(error)
    }
}

/// -32021: answering needs `capability`, which the request did not declare.
pub(crate) fn missing_capability(capability: &str) -> RpcError {
    RpcError {
        code: -32021,
        message: format!("Missing required client capability: {capability}"),
        data: Some(json!({ "requiredCapabilities": { capability: {} } })),
    }
}

/// What a 2026-07-28 retry brings: the client's answers and the verified data of its state.
#[derive(Debug, Clone, Default)]
pub(crate) struct Input {
    /// `inputResponses`, by question key.
    pub(crate) responses: Map<String, Value>,
    /// The data sealed into the `requestState` the retry echoed, once verified.
    pub(crate) state: Option<Value>,
}

/// Seals and opens `requestState`: JSON naming the request it belongs to, an expiry and the
/// carried data, with a 64-bit SipHash tag under a key drawn at start-up. Strong enough for a
/// test fixture (tampering is detected, state from another tool or an old one is refused); a
/// real server would use an HMAC or AEAD.
pub(crate) struct StateKey(RandomState);

impl Default for StateKey {
    fn default() -> Self {
        Self(RandomState::new())
    }
}

impl StateKey {
    /// A `requestState` for the request `binding` (method and tool/prompt/resource name)
    /// carrying `data`.
    pub(crate) fn seal(&self, binding: &str, data: &Value) -> String {
        let expires = now_ms().saturating_add(STATE_TTL.as_millis());
        let payload = json!({ "for": binding, "exp": expires.to_string(), "data": data });
        let payload = sentinel::encode(payload.to_string().as_bytes());
        format!("{payload}.{:016x}", self.0.hash_one(&payload))
    }

    /// The data sealed into `token`.
    ///
    /// # Errors
    ///
    /// -32602 if the tag does not verify, the state was sealed for another request, or it
    /// has expired.
    pub(crate) fn open(&self, binding: &str, token: &str) -> Result<Value, RpcError> {
        let invalid = |why: &str| RpcError::invalid_params(format!("Invalid requestState: {why}"));
        let (payload, tag) = token.rsplit_once('.').ok_or_else(|| invalid("malformed"))?;
        if format!("{:016x}", self.0.hash_one(payload)) != tag {
            return Err(invalid("integrity check failed"));
        }
        let payload: Value = sentinel::decode(payload)
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .ok_or_else(|| invalid("malformed"))?;
        if payload["for"] != binding {
            return Err(invalid("issued for another request"));
        }
        let expires = payload["exp"].as_str().and_then(|e| e.parse::<u128>().ok());
        if expires.is_none_or(|expires| expires < now_ms()) {
            return Err(invalid("expired"));
        }
        Ok(payload["data"].clone())
    }
}

fn now_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_millis())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_opens_only_untouched_and_for_its_request() {
        let key = StateKey::default();
        let token = key.seal("tools/call test_x", &json!({ "name": "Alice" }));
        assert_eq!(
            key.open("tools/call test_x", &token).unwrap(),
            json!({ "name": "Alice" })
        );
        assert!(key.open("tools/call test_y", &token).is_err());
        assert!(
            key.open("tools/call test_x", &format!("{token}-TAMPERED"))
                .is_err()
        );
        assert!(
            StateKey::default()
                .open("tools/call test_x", &token)
                .is_err()
        );
    }
}
