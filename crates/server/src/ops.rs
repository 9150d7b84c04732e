//! Operational endpoints: liveness, readiness and a status read-model of every backend.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, HeaderValue, StatusCode, header};
use serde_json::{Value, json};

use crate::auth::{self, StatusAccess};
use crate::state::AppState;
use crate::status_page;

/// `/health` and `/ping`: the process is up.
pub(crate) async fn health() -> Json<Value> {
    Json(json!({"status": "ok"}))
}

/// `/readyz`: ready once the first aggregation succeeded.
pub(crate) async fn readyz(State(state): State<Arc<AppState>>) -> Response {
    if state.gateway.is_ready() {
        (StatusCode::OK, Json(json!({"status": "ready"}))).into_response()
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({"status": "not ready"})),
        )
            .into_response()
    }
}

/// `/status`: each backend's name, transport, health, MCP revisions and advertised tool count,
/// to whoever `status_access` lets in: JSON, or an HTML page when the client prefers
/// `text/html` (a browser; see `status_page`).
pub(crate) async fn status(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    match state.options.status_access {
        StatusAccess::Public => {}
        StatusAccess::Disabled => {
            return (StatusCode::NOT_FOUND, Json(json!({"error": "not_found"}))).into_response();
        }
        StatusAccess::Authenticated => {
            if let Err(refused) = auth::authenticate(&state, &headers).await {
                return refused;
            }
        }
    }
    let body = status_value(&state);
    let mut response = if status_page::wants_html(&headers) {
        status_page::response(&body)
    } else {
        Json(body).into_response()
    };
    // The same URL answers in two forms: caches must key on Accept.
    response
        .headers_mut()
        .insert(header::VARY, HeaderValue::from_static("accept"));
    response
}

/// The status read-model both forms of `/status` show.
fn status_value(state: &AppState) -> Value {
    let catalog = state.gateway.cached_catalog();
    let backends: Vec<Value> = state
        .gateway
        .backends()
        .iter()
        .map(|b| {
            let mut v = serde_json::to_value(b.status()).unwrap_or(Value::Null);
            if let (Some(obj), Some(cat)) = (v.as_object_mut(), &catalog) {
                obj.insert("toolCount".into(), json!(cat.tool_count(b.id())));
                // The health machine's last error first; else why discovery failed.
                let no_error = obj.get("lastError").is_none_or(Value::is_null);
                if let Some((_, why)) = cat.failed().iter().find(|(id, _)| id == b.id())
                    && no_error
                {
                    obj.insert("lastError".into(), json!(why));
                }
            }
            v
        })
        .collect();
    let mut body = json!({
        "name": state.options.name,
        "version": env!("CARGO_PKG_VERSION"),
        "ready": state.gateway.is_ready(),
        "sessions": state.sessions.len(),
        // Sessions with a GET stream open: where notifications can be delivered right now.
        "streams": state.sessions.all().iter().filter(|s| s.has_stream()).count(),
        "backends": backends,
    });
    if let Some(a) = &state.options.audit {
        body["audit"] = a.status();
    }
    if let Some(p) = state.gateway.pinning() {
        body["toolPinning"] = json!({
            "mode": if p.enforces() { "enforce" } else { "warn" },
            "store": p.store().describe(),
            "pending": vmcp_core::pins::pending_report(&p.book()),
        });
    }
    // Which replica answered, and whether it reaches the sessions it shares with the others.
    if let Some(shared) = &state.shared {
        body["sessionStorage"] = json!({
            "provider": "redis",
            "replica": shared.replica(),
            "connected": shared.is_up(),
        });
    }
    body
}
