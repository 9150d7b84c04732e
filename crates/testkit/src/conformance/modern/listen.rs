//! `subscriptions/listen`: a long-lived SSE response that first acknowledges the subset of
//! the requested notifications the fixture honours, then carries every announced list change
//! the client asked for, each tagged with the subscription id (the listen request's id),
//! with keep-alive comments in between, until the client closes it.
//!
//! Honoured: `toolsListChanged` and `promptsListChanged` (announced by the trigger tools) and
//! `resourceSubscriptions` for resources that exist (which never change). Not honoured:
//! `resourcesListChanged` (the resource list is fixed).

use std::convert::Infallible;

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Map, Value, json};
use tokio::sync::broadcast::{self, error::RecvError};

use super::super::exchange::Change;
use super::super::resources;
use super::{envelope, reply};
use crate::events::{KEEPALIVE, KEEPALIVE_INTERVAL, event};
use crate::protocol::rpc::RpcError;

const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// Opens the listen stream for request `id` with `params`, hearing `changes`.
pub(super) fn open(changes: &broadcast::Sender<Change>, id: Value, params: &Value) -> Response {
    let Some(filter) = params.get("notifications").and_then(Value::as_object) else {
        let error = RpcError::invalid_params("subscriptions/listen needs a `notifications` object");
        return envelope::error(Some(&id), StatusCode::BAD_REQUEST, error);
    };
    let honoured = honoured(filter);
    let ack = notification(
        "notifications/subscriptions/acknowledged",
        json!({ "notifications": honoured }),
        &id,
    );
    let listener = Listener {
        ack: Some(ack),
        heard: changes.subscribe(),
        honoured,
        id,
    };
    reply::sse_response(futures_util::stream::unfold(listener, Listener::next))
}

/// One open listen stream.
struct Listener {
    /// The acknowledgement, until sent.
    ack: Option<Value>,
    heard: broadcast::Receiver<Change>,
    honoured: Map<String, Value>,
    /// The listen request's id, which tags every notification.
    id: Value,
}

impl Listener {
    async fn next(mut self) -> Option<(Result<String, Infallible>, Self)> {
        if let Some(ack) = self.ack.take() {
            return Some((Ok(event("message", &ack.to_string())), self));
        }
        loop {
            tokio::select! {
                heard = self.heard.recv() => {
                    let change = match heard {
                        Ok(change) => change,
                        Err(RecvError::Lagged(_)) => continue,
                        Err(RecvError::Closed) => return None,
                    };
                    let (wanted, method) = match change {
                        Change::Tools => ("toolsListChanged", "notifications/tools/list_changed"),
                        Change::Prompts => ("promptsListChanged", "notifications/prompts/list_changed"),
                    };
                    if self.honoured.get(wanted) == Some(&Value::Bool(true)) {
                        let note = notification(method, json!({}), &self.id);
                        return Some((Ok(event("message", &note.to_string())), self));
                    }
                }
                () = tokio::time::sleep(KEEPALIVE_INTERVAL) => {
                    return Some((Ok(KEEPALIVE.to_owned()), self));
                }
            }
        }
    }
}

/// The part of `filter` the fixture honours.
fn honoured(filter: &Map<String, Value>) -> Map<String, Value> {
    let mut honoured = Map::new();
    for flag in ["toolsListChanged", "promptsListChanged"] {
        if filter.get(flag) == Some(&Value::Bool(true)) {
            honoured.insert(flag.to_owned(), Value::Bool(true));
        }
    }
    if let Some(uris) = filter
        .get("resourceSubscriptions")
        .and_then(Value::as_array)
    {
        let known: Vec<Value> = uris
            .iter()
            .filter(|uri| {
                uri.as_str()
                    .is_some_and(|u| resources::check_exists(u).is_ok())
            })
            .cloned()
            .collect();
        honoured.insert("resourceSubscriptions".to_owned(), Value::Array(known));
    }
    honoured
}

/// A notification `method` with `params`, tagged as belonging to subscription `id`.
fn notification(method: &str, mut params: Value, id: &Value) -> Value {
    params["_meta"] = json!({ SUBSCRIPTION_ID: id });
    json!({ "jsonrpc": "2.0", "method": method, "params": params })
}
