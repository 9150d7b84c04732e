//! `subscriptions/listen` (MCP 2026-07-28): a long-lived SSE response that first acknowledges the
//! notification types the gateway will honor, then carries exactly those (list changes and updates
//! of the subscribed resources), each tagged with the subscription id (the request's id), until the
//! client closes it.

use std::sync::Arc;

use axum::response::Response;
use bytes::Bytes;
use serde_json::{Map, Value, json};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc;
use vmcp_core::{Caller, GatewayNotice, Identity};
use vmcp_proto::era::{Era, META_SUBSCRIPTION_ID};
use vmcp_proto::{codes, jsonrpc, sse};

use crate::{
    errors::Failure, modern::modern_failure, reply, state::AppState, stream::event_stream,
};

/// Opens the stream.
pub(crate) async fn serve(
    state: Arc<AppState>,
    identity: Identity,
    id: Value,
    params: Value,
) -> Response {
    let Some(filter) = params
        .get("notifications")
        .and_then(Value::as_object)
        .cloned()
    else {
        let f = Failure::rpc(
            codes::INVALID_PARAMS,
            "subscriptions/listen needs params.notifications (an object)",
        );
        return reply::failure(reply::Format::Json, &id, &modern_failure(f));
    };
    let catalog = match state.gateway.catalog(&identity).await {
        Ok(c) => c,
        Err(e) => return reply::failure(reply::Format::Json, &id, &modern_failure(e.into())),
    };
    let flag = |k: &str| filter.get(k).and_then(Value::as_bool) == Some(true);
    let mut honored = Map::new();
    for key in [
        "toolsListChanged",
        "promptsListChanged",
        "resourcesListChanged",
    ] {
        if flag(key) {
            honored.insert(key.into(), json!(true));
        }
    }
    // Resource subscriptions are honored for URIs a backend serves and lets us subscribe to.
    let subscription = format!("listen-{}", jsonrpc_key(&id));
    let caller = Caller {
        identity: &identity,
        session: Some(&subscription),
        sink: None,
        era: Some(Era::Modern),
        headers: None,
    };
    let mut uris = Vec::new();
    for uri in filter
        .get("resourceSubscriptions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(uri) = uri.as_str() else { continue };
        if catalog.supports_subscribe()
            && state
                .gateway
                .subscribe(&caller, &catalog, uri)
                .await
                .is_ok()
        {
            uris.push(uri.to_string());
        }
    }
    if !uris.is_empty() {
        honored.insert("resourceSubscriptions".into(), json!(uris));
    }

    let (tx, rx) = mpsc::channel::<Bytes>(64);
    let tag = json!({ META_SUBSCRIPTION_ID: id });
    let ack = json!({"notifications": honored, "_meta": tag});
    let _ = tx.try_send(event(&jsonrpc::notification_bytes(
        "notifications/subscriptions/acknowledged",
        Some(&ack),
    )));
    let mut notices = state.gateway.notices();
    let keepalive = state.options.sse_keepalive;
    // What this subscriber sees, to tell it only about changes to that.
    let mut seen = catalog.clone();
    tokio::spawn(async move {
        loop {
            let notice = tokio::select! {
                n = notices.recv() => n,
                _ = tx.closed() => break,
            };
            let outgoing = match notice {
                Ok(GatewayNotice::ListChanged(kinds)) => {
                    let Ok(fresh) = state.gateway.catalog(&identity).await else {
                        continue;
                    };
                    let gw = &state.gateway;
                    let changed: Vec<_> = kinds
                        .iter()
                        .filter(|k| honored.contains_key(&format!("{k}ListChanged")))
                        .filter(|k| {
                            gw.visible_fingerprint(&identity, &seen, k)
                                != gw.visible_fingerprint(&identity, &fresh, k)
                        })
                        .map(|k| {
                            (
                                format!("notifications/{k}/list_changed"),
                                json!({"_meta": tag}),
                            )
                        })
                        .collect();
                    seen = fresh;
                    changed
                }
                Ok(GatewayNotice::ResourceUpdated(params)) => {
                    let uri = params
                        .get("uri")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    if uris.iter().any(|u| u == uri) {
                        let mut p = params.clone();
                        p["_meta"] = tag.clone();
                        vec![("notifications/resources/updated".to_string(), p)]
                    } else {
                        Vec::new()
                    }
                }
                Err(RecvError::Lagged(_)) => Vec::new(),
                Err(RecvError::Closed) => break,
            };
            for (method, params) in outgoing {
                if tx
                    .send(event(&jsonrpc::notification_bytes(&method, Some(&params))))
                    .await
                    .is_err()
                {
                    break;
                }
            }
        }
        // The client went away (or the gateway stopped): release the resource subscriptions.
        let caller = Caller {
            identity: &identity,
            session: Some(&subscription),
            sink: None,
            era: Some(Era::Modern),
            headers: None,
        };
        if let Some(catalog) = state.gateway.cached_catalog() {
            for uri in &uris {
                let _ = state.gateway.unsubscribe(&caller, &catalog, uri).await;
            }
        }
    });
    event_stream(rx, keepalive)
}

fn jsonrpc_key(id: &Value) -> String {
    let mut bytes = [0u8; 8];
    let _ = getrandom::fill(&mut bytes);
    format!("{id}-{}", u64::from_le_bytes(bytes))
}

fn event(json: &[u8]) -> Bytes {
    Bytes::from(sse::message_event(json, None))
}
