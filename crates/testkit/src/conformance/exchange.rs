//! Talking back to the client while a request runs, the same calls in both eras: log and
//! progress notifications, and questions (sampling, elicitation, roots). 2025-11-25 sends
//! everything on the POST's SSE stream and matches the client's answers (POSTed back
//! separately) to the waiting request; 2026-07-28 streams notifications on the request's own
//! response and turns questions into `input_required` results (see `mrtr`).
//!
//! Owns the ids and the waiting of server-to-client requests; not which tool asks what.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc, oneshot};

use super::era::Era;
use super::mrtr::{Input, Interrupt, Question, missing_capability};
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

/// What a tool may do with its client while it runs, in either era.
pub(crate) struct Exchange<'a> {
    link: Link<'a>,
    /// The client's capabilities: declared at `initialize` (2025-11-25, `null` if unknown) or
    /// in this request's `_meta` (2026-07-28).
    client_capabilities: Value,
    /// Index into [`LOG_LEVELS`] of the least severe level the client wants; `None`: no logs.
    min_log_level: Option<usize>,
    /// `params._meta.progressToken` of the request, if any.
    progress_token: Option<Value>,
}

/// How a request talks back to its client.
enum Link<'a> {
    /// 2025-11-25: notifications and server-to-client requests on the POST's SSE stream.
    Legacy { call: &'a Call, peer: &'a Peer },
    /// 2026-07-28: notifications on the request's own response stream; questions are answered
    /// by the client retrying the request with `input` (MRTR).
    Modern {
        notes: mpsc::UnboundedSender<Value>,
        input: Input,
        changes: broadcast::Sender<Change>,
    },
}

/// A change announced to `subscriptions/listen` streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    Tools,
    Prompts,
}

impl<'a> Exchange<'a> {
    /// The exchange of a 2025-11-25 request with `params` arriving as `call`.
    pub(crate) fn legacy(
        call: &'a Call,
        peer: &'a Peer,
        params: &Value,
        client_capabilities: Value,
        min_log_level: usize,
    ) -> Self {
        Self {
            link: Link::Legacy { call, peer },
            client_capabilities,
            min_log_level: Some(min_log_level),
            progress_token: progress_token(params),
        }
    }

    /// The exchange of a 2026-07-28 request with `params`, whose `_meta` declared
    /// `client_capabilities` and `log_level`: notifications go to `notes`, answers come from
    /// `input`, list changes go to `changes`.
    pub(crate) fn modern(
        params: &Value,
        client_capabilities: Value,
        log_level: Option<usize>,
        input: Input,
        notes: mpsc::UnboundedSender<Value>,
        changes: broadcast::Sender<Change>,
    ) -> Exchange<'static> {
        Exchange {
            link: Link::Modern {
                notes,
                input,
                changes,
            },
            client_capabilities,
            min_log_level: log_level,
            progress_token: progress_token(params),
        }
    }

    /// The era the request speaks.
    pub(crate) fn era(&self) -> Era {
        match self.link {
            Link::Legacy { .. } => Era::Legacy,
            Link::Modern { .. } => Era::Modern,
        }
    }

    /// Whether the client declared `capability` (e.g. `sampling`).
    pub(crate) fn client_supports(&self, capability: &str) -> bool {
        self.client_capabilities.get(capability).is_some()
    }

    /// Sends a `notifications/message` at `level`, unless the client asked for less (or, in
    /// 2026-07-28, for no logs at all by leaving out `io.modelcontextprotocol/logLevel`).
    pub(crate) fn log(&self, level: &str, data: &str) {
        let severity = LOG_LEVELS.iter().position(|l| *l == level).unwrap_or(0);
        if self.min_log_level.is_some_and(|min| severity >= min) {
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
    /// (SEP-1699, 2025-11-25 only); the answer reaches it on the resumed stream. Returns false
    /// if the answer does not stream.
    pub(crate) fn pause_stream(&self, retry: Duration) -> bool {
        match &self.link {
            Link::Legacy { call, .. } => call.pause(retry),
            Link::Modern { .. } => false,
        }
    }

    /// Tells every `subscriptions/listen` stream that asked for it that `change` happened
    /// (2026-07-28; a 2025-11-25 request has nobody to tell).
    pub(crate) fn announce(&self, change: Change) {
        if let Link::Modern { changes, .. } = &self.link {
            // Nobody listening is fine.
            let _ = changes.send(change);
        }
    }

    /// The data the verified `requestState` of this 2026-07-28 retry carries, if any.
    pub(crate) fn state(&self) -> Option<&Value> {
        match &self.link {
            Link::Modern { input, .. } => input.state.as_ref(),
            Link::Legacy { .. } => None,
        }
    }

    /// -32021 (2026-07-28) or an unanswered question (2025-11-25) unless the client declared
    /// `capability`.
    ///
    /// # Errors
    ///
    /// As above.
    pub(crate) fn require(&self, capability: &str) -> Result<(), Interrupt> {
        if self.client_supports(capability) {
            return Ok(());
        }
        Err(match self.link {
            Link::Legacy { .. } => Interrupt::Unanswered(format!(
                "the client did not declare the {capability} capability"
            )),
            Link::Modern { .. } => Interrupt::Rpc(missing_capability(capability)),
        })
    }

    /// Asks the client `question` and returns its answer; see [`Exchange::ask_all`].
    ///
    /// # Errors
    ///
    /// As [`Exchange::ask_all`].
    pub(crate) async fn ask(&self, question: Question) -> Result<Value, Interrupt> {
        let mut answers = self.ask_all(vec![question]).await?;
        Ok(answers.remove(0))
    }

    /// Asks the client every question and returns the answers in order. 2025-11-25: one
    /// server-to-client request after another on the POST's stream. 2026-07-28: the answers the
    /// retry brought, or, if any is missing, an `input_required` interrupt asking for the
    /// missing ones (carrying this retry's state forward).
    ///
    /// # Errors
    ///
    /// A capability the client did not declare ([`Exchange::require`]); 2025-11-25: an unanswered
    /// question; 2026-07-28: [`Interrupt::InputRequired`].
    pub(crate) async fn ask_all(&self, questions: Vec<Question>) -> Result<Vec<Value>, Interrupt> {
        match &self.link {
            Link::Legacy { call, peer } => {
                let mut answers = Vec::with_capacity(questions.len());
                for question in questions {
                    self.require(question.capability())?;
                    let answer = send_request(call, peer, question.method, question.params).await;
                    answers.push(answer.map_err(|e| Interrupt::Unanswered(e.message))?);
                }
                Ok(answers)
            }
            Link::Modern { input, .. } => {
                let mut answers = Vec::with_capacity(questions.len());
                let mut missing = Vec::new();
                for question in questions {
                    match input.responses.get(question.key) {
                        Some(answer) => answers.push(answer.clone()),
                        None => {
                            self.require(question.capability())?;
                            missing.push(question);
                        }
                    }
                }
                if missing.is_empty() {
                    return Ok(answers);
                }
                let keep = input.state.clone().unwrap_or(Value::Null);
                Err(Interrupt::asking(&missing, keep))
            }
        }
    }

    fn notify(&self, method: &str, params: Value) {
        let note = json!({ "jsonrpc": "2.0", "method": method, "params": params });
        match &self.link {
            Link::Legacy { call, .. } => {
                call.send(&note);
            }
            Link::Modern { notes, .. } => {
                // The client may have gone; then nobody hears it.
                let _ = notes.send(note);
            }
        }
    }
}

fn progress_token(params: &Value) -> Option<Value> {
    params
        .get("_meta")
        .and_then(|meta| meta.get("progressToken"))
        .cloned()
}

/// Sends the request `method` to the client on `call`'s stream and waits for its answer.
///
/// # Errors
///
/// The client's error, or -32603 if the request could not be sent or was not answered
/// within [`ANSWER_TIMEOUT`].
async fn send_request(
    call: &Call,
    peer: &Peer,
    method: &str,
    params: Value,
) -> Result<Value, RpcError> {
    let id = peer.next_id.fetch_add(1, Ordering::Relaxed) + 1;
    let (sender, answer) = oneshot::channel();
    peer.waiting().insert(id, sender);
    let request = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
    if !call.send(&request) {
        peer.waiting().remove(&id);
        return Err(RpcError::internal(format!(
            "cannot send {method}: the request's stream is gone"
        )));
    }
    match tokio::time::timeout(ANSWER_TIMEOUT, answer).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(_)) | Err(_) => {
            peer.waiting().remove(&id);
            Err(RpcError::internal(format!(
                "the client did not answer {method} within {}s",
                ANSWER_TIMEOUT.as_secs()
            )))
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
