//! Talking back to the client while a request runs: log and progress notifications and
//! server-to-client requests (sampling, elicitation), all on the POST's SSE stream, with the
//! client's answers (POSTed back separately) matched to the waiting request.
//!
//! Owns the ids and the waiting of server-to-client requests; not which tool asks what.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::http::Call;
use crate::protocol::LOG_LEVELS;
use crate::protocol::rpc::RpcError;

/// How long a server-to-client request waits for the client's answer.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(60);

/// `logger` of every log notification the fixture sends.
const LOGGER: &str = "conformance-fixture";

/// Server-to-client requests waiting for their answers, across all sessions.
#[derive(Default)]
pub(crate) struct Peer {
    next_id: AtomicU64,
    waiting: Mutex<HashMap<u64, oneshot::Sender<Result<Value, RpcError>>>>,
}

impl Peer {
    fn waiting(&self) -> MutexGuard<'_, HashMap<u64, oneshot::Sender<Result<Value, RpcError>>>> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Hands a client's response to the request waiting for it; ignores unknown ids.
    pub(crate) fn resolve(&self, response: &Value) {
        let Some(id) = response.get("id").and_then(Value::as_u64) else {
            return;
        };
        let Some(waiter) = self.waiting().remove(&id) else {
            return;
        };
        let answer = match (response.get("result"), response.get("error")) {
            (Some(result), _) => Ok(result.clone()),
            (None, error) => Err(client_error(error.unwrap_or(&Value::Null))),
        };
        // The tool may have given up waiting meanwhile.
        let _ = waiter.send(answer);
    }
}

/// What a tool may do with its client while it runs.
pub(crate) struct Exchange<'a> {
    call: &'a Call,
    peer: &'a Peer,
    /// `capabilities` the client declared at `initialize` (`null` if unknown).
    client_capabilities: Value,
    /// Index into [`LOG_LEVELS`] of the least severe level the client wants.
    min_log_level: usize,
    /// `params._meta.progressToken` of the request, if any.
    progress_token: Option<Value>,
}

impl<'a> Exchange<'a> {
    /// The exchange of the request with `params` arriving as `call`.
    pub(crate) fn new(
        call: &'a Call,
        peer: &'a Peer,
        params: &Value,
        client_capabilities: Value,
        min_log_level: usize,
    ) -> Self {
        let progress_token = params
            .get("_meta")
            .and_then(|meta| meta.get("progressToken"))
            .cloned();
        Self {
            call,
            peer,
            client_capabilities,
            min_log_level,
            progress_token,
        }
    }

    /// Whether the client declared `capability` (e.g. `sampling`) at `initialize`.
    pub(crate) fn client_supports(&self, capability: &str) -> bool {
        self.client_capabilities.get(capability).is_some()
    }

    /// Sends a `notifications/message` at `level`, unless the client asked for less.
    pub(crate) fn log(&self, level: &str, data: &str) {
        let severity = LOG_LEVELS.iter().position(|l| *l == level).unwrap_or(0);
        if severity >= self.min_log_level {
            self.notify(
                "notifications/message",
                json!({ "level": level, "logger": LOGGER, "data": data }),
            );
        }
    }

    /// Sends a `notifications/progress`, if the request carried a progress token.
    pub(crate) fn progress(&self, progress: u64, total: u64, message: &str) {
        if let Some(token) = &self.progress_token {
            self.notify(
                "notifications/progress",
                json!({
                    "progressToken": token,
                    "progress": progress,
                    "total": total,
                    "message": message
                }),
            );
        }
    }

    /// Closes the request's SSE stream now, telling the client to reconnect after `retry`
    /// (SEP-1699); the answer reaches it on the resumed stream. Returns false if the answer
    /// does not stream.
    pub(crate) fn pause_stream(&self, retry: Duration) -> bool {
        self.call.pause(retry)
    }

    fn notify(&self, method: &str, params: Value) {
        self.call
            .send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// Sends the request `method` to the client and waits for its answer.
    ///
    /// # Errors
    ///
    /// The client's error, or -32603 if the request could not be sent or was not answered
    /// within [`ANSWER_TIMEOUT`].
    pub(crate) async fn ask(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        let id = self.peer.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let (sender, answer) = oneshot::channel();
        self.peer.waiting().insert(id, sender);
        let request = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        if !self.call.send(&request) {
            self.peer.waiting().remove(&id);
            return Err(RpcError::internal(format!(
                "cannot send {method}: the request's stream is gone"
            )));
        }
        match tokio::time::timeout(ANSWER_TIMEOUT, answer).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) | Err(_) => {
                self.peer.waiting().remove(&id);
                Err(RpcError::internal(format!(
                    "the client did not answer {method} within {}s",
                    ANSWER_TIMEOUT.as_secs()
                )))
            }
        }
    }
}

/// The client's JSON-RPC `error` object as an [`RpcError`].
fn client_error(error: &Value) -> RpcError {
    RpcError {
        code: error.get("code").and_then(Value::as_i64).unwrap_or(-32603),
        message: error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("malformed error from the client")
            .to_owned(),
        data: error.get("data").cloned(),
    }
}
