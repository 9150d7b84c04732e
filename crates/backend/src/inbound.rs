//! What to do with a message a backend sends us on a multiplexed stream: answers go to the waiting
//! caller; the backend's own requests get an answer; notifications are logged.

use serde_json::{Value, json};
use vmcp_proto::{ErrorObject, Message, codes};

use crate::{error::BackendError, pending::Pending};

/// Routes one message read from a backend; returns a reply to send back when the backend asked us
/// something.
pub(crate) fn route(backend: &str, msg: Message, pending: &Pending) -> Option<Message> {
    match msg {
        Message::Response { id, result } => {
            deliver(backend, &id, Ok(result), pending);
            None
        }
        Message::Error { id, error } => {
            deliver(backend, &id, Err(BackendError::Rpc(error)), pending);
            None
        }
        Message::Request { id, method, .. } => Some(answer_server_request(id, &method)),
        Message::Notification { method, .. } => {
            tracing::debug!(backend, %method, "backend notification");
            None
        }
    }
}

/// The gateway's answer to a request the backend sent outside any forwarding context.
pub(crate) fn answer_server_request(id: Value, method: &str) -> Message {
    if method == "ping" {
        return Message::Response {
            id,
            result: json!({}),
        };
    }
    Message::Error {
        id,
        error: ErrorObject::new(
            codes::METHOD_NOT_FOUND,
            format!("vmcp cannot forward {method} outside a client request"),
        ),
    }
}

fn deliver(backend: &str, id: &Value, reply: Result<Value, BackendError>, pending: &Pending) {
    let delivered = crate::pending::id_of(id).is_some_and(|id| pending.resolve(id, reply));
    if !delivered {
        tracing::debug!(backend, %id, "answer for a request nobody waits for (late or unknown id)");
    }
}
