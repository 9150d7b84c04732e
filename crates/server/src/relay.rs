//! Relaying what a backend sends during a request (progress, log messages, server-to-client
//! requests) to the client, and the client's answers back. Used for a request's own SSE response
//! stream and for the session's GET stream alike.

use std::sync::{Arc, Weak};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use vmcp_backend::CallEvent;
use vmcp_proto::{ErrorObject, codes, jsonrpc, meta::strip_reserved};

use crate::resumable::Resumable;
use crate::session::Session;

/// Where relayed messages go.
pub(crate) enum Out {
    /// The resumable SSE response stream of one POST.
    Stream(Arc<Resumable>),
    /// The session's GET stream.
    Standalone,
}

impl Out {
    fn send(&self, session: &Session, json: Vec<u8>) -> bool {
        match self {
            Out::Stream(stream) => stream.push_message(&json),
            Out::Standalone => session.push(&json),
        }
    }
}

/// Relays one event. Requests are checked against the client's declared capabilities, sent, and
/// answered asynchronously (bounded by `timeout`), so the relay never blocks on the client.
pub(crate) fn relay(session: &Arc<Session>, event: CallEvent, out: &Out, timeout: Duration) {
    match event {
        CallEvent::Notification { method, mut params } => {
            if method == "notifications/message" && !session.wants_log(params.as_ref()) {
                return;
            }
            if let Some(p) = params.as_mut() {
                strip_reserved(p);
            }
            out.send(
                session,
                jsonrpc::notification_bytes(&method, params.as_ref()),
            );
        }
        CallEvent::Request {
            method,
            mut params,
            reply,
        } => {
            if let Err(e) = allowed(&session.client_capabilities, &method, params.as_ref()) {
                let _ = reply.send(Err(e));
                return;
            }
            if let Some(p) = params.as_mut() {
                strip_reserved(p);
            }
            let (tx, rx) = oneshot::channel();
            let id = session.expect_answer(tx);
            if !out.send(
                session,
                jsonrpc::request_bytes(&Value::String(id.clone()), &method, params.as_ref()),
            ) {
                session.forget_request(&id);
                let _ = reply.send(Err(ErrorObject::new(
                    codes::INTERNAL_ERROR,
                    format!("vmcp cannot deliver {method}: the client has no open stream for it"),
                )));
                return;
            }
            let session = session.clone();
            tokio::spawn(async move {
                let outcome = match tokio::time::timeout(timeout, rx).await {
                    Ok(Ok(answer)) => answer,
                    Ok(Err(_)) => Err(ErrorObject::new(
                        codes::INTERNAL_ERROR,
                        "the client session ended before it answered",
                    )),
                    Err(_) => {
                        session.forget_request(&id);
                        Err(ErrorObject::new(
                            codes::INTERNAL_ERROR,
                            format!(
                                "the client did not answer {method} within {}s",
                                timeout.as_secs()
                            ),
                        ))
                    }
                };
                let _ = reply.send(outcome);
            });
        }
        // How the backend's stream carries the answer is the response stream's business.
        CallEvent::StreamOpened | CallEvent::StreamPaused { .. } => {}
    }
}

/// Feeds a session's unattributed backend messages to its GET stream until the session ends.
pub(crate) async fn pump(
    session: Weak<Session>,
    mut events: mpsc::Receiver<CallEvent>,
    timeout: Duration,
) {
    while let Some(event) = events.recv().await {
        let Some(session) = session.upgrade() else {
            break;
        };
        relay(&session, event, &Out::Standalone, timeout);
    }
}

/// A server-to-client request is only sent to a client that declared the matching capability.
fn allowed(caps: &Value, method: &str, params: Option<&Value>) -> Result<(), ErrorObject> {
    let need = |cap: &str| -> Result<(), ErrorObject> {
        if caps.get(cap).is_some_and(|c| !c.is_null()) {
            Ok(())
        } else {
            Err(ErrorObject::new(
                codes::METHOD_NOT_FOUND,
                format!(
                    "the client did not declare the {cap} capability, so vmcp cannot forward {method}"
                ),
            ))
        }
    };
    match method {
        "sampling/createMessage" => need("sampling"),
        "roots/list" => need("roots"),
        "elicitation/create" => {
            need("elicitation")?;
            let mode = params
                .and_then(|p| p.get("mode"))
                .and_then(Value::as_str)
                .unwrap_or("form");
            let elicitation = &caps["elicitation"];
            // An empty elicitation capability means form mode only (2025-06-18 clients).
            let declared = elicitation.get(mode).is_some()
                || (mode == "form" && elicitation.as_object().is_some_and(|o| o.is_empty()));
            if declared {
                Ok(())
            } else {
                Err(ErrorObject::new(
                    codes::METHOD_NOT_FOUND,
                    format!("the client did not declare elicitation mode {mode:?}"),
                ))
            }
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn requests_need_the_matching_capability() {
        let none = json!({});
        assert!(allowed(&none, "sampling/createMessage", None).is_err());
        assert!(allowed(&none, "roots/list", None).is_err());
        assert!(allowed(&none, "elicitation/create", None).is_err());
        let all = json!({"sampling": {}, "roots": {"listChanged": true}, "elicitation": {}});
        assert!(allowed(&all, "sampling/createMessage", None).is_ok());
        assert!(allowed(&all, "roots/list", None).is_ok());
        assert!(allowed(&all, "elicitation/create", Some(&json!({"message": "m"}))).is_ok());
        assert!(allowed(&all, "elicitation/create", Some(&json!({"mode": "url"}))).is_err());
        let url = json!({"elicitation": {"url": {}}});
        assert!(allowed(&url, "elicitation/create", Some(&json!({"mode": "url"}))).is_ok());
        assert!(allowed(&url, "elicitation/create", Some(&json!({"mode": "form"}))).is_err());
    }
}
