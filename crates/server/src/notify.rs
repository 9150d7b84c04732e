//! Telling live sessions what changed: after the core re-derives a kind, each session gets the new
//! catalog and a `notifications/<kind>/list_changed` on its GET stream if what it sees changed;
//! resource updates go to the sessions subscribed to that URI.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::broadcast::error::RecvError;
use vmcp_core::GatewayNotice;
use vmcp_proto::jsonrpc;

use crate::state::AppState;

/// Runs until the gateway's notice channel closes.
pub(crate) async fn fan_out(state: Arc<AppState>) {
    let mut rx = state.gateway.notices();
    loop {
        match rx.recv().await {
            Ok(GatewayNotice::ListChanged(kinds)) => list_changed(&state, &kinds).await,
            Ok(GatewayNotice::ResourceUpdated(params)) => resource_updated(&state, &params),
            // Missed notices: assume everything may have changed.
            Err(RecvError::Lagged(_)) => {
                list_changed(&state, &["tools", "resources", "prompts"]).await
            }
            Err(RecvError::Closed) => break,
        }
    }
}

async fn list_changed(state: &AppState, kinds: &[&'static str]) {
    for session in state.sessions.all() {
        let Ok(fresh) = state.gateway.catalog(&session.identity).await else {
            continue;
        };
        let old = session.replace_catalog(fresh.clone());
        // A session is told only about changes to what it may see.
        let gw = &state.gateway;
        for kind in kinds {
            if gw.visible_fingerprint(&session.identity, &old, kind)
                != gw.visible_fingerprint(&session.identity, &fresh, kind)
            {
                let method = format!("notifications/{kind}/list_changed");
                session.push(&jsonrpc::notification_bytes(&method, None));
            }
        }
    }
}

fn resource_updated(state: &AppState, params: &Value) {
    let Some(uri) = params.get("uri").and_then(Value::as_str) else {
        return;
    };
    let json = jsonrpc::notification_bytes("notifications/resources/updated", Some(params));
    for session in state.sessions.all() {
        if session.is_subscribed(uri) {
            session.push(&json);
        }
    }
}
