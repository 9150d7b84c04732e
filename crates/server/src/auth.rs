//! Incoming authentication at the HTTP edge: every MCP request of both revisions is authenticated
//! before anything else reads it; a refusal is 401 (403 for missing scopes, 503 when the identity
//! provider cannot be reached) with the RFC 6750 challenge that points MCP clients at the RFC 9728
//! metadata, served here at `/.well-known/oauth-protected-resource[/...]`.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::response::Response;
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use serde_json::json;
use vmcp_auth::{AuthError, Identity};

use crate::state::AppState;

/// Who may read `/status` (it names every backend).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum StatusAccess {
    /// Anyone who can reach the gateway.
    #[default]
    Public,
    /// Callers the configured incoming authentication accepts.
    Authenticated,
    /// Nobody: 404.
    Disabled,
}

/// Authenticates a request, or answers the refusal.
pub(crate) async fn authenticate(
    state: &AppState,
    headers: &HeaderMap,
) -> Result<Identity, Response> {
    let authorization = headers
        .get(header::AUTHORIZATION)
        .map(HeaderValue::as_bytes);
    match state.options.auth.authenticate(authorization).await {
        Ok(identity) => {
            crate::audit::identity(&identity);
            Ok(identity)
        }
        Err(e) => {
            tracing::debug!(code = e.code(), reason = %e, "request not authenticated");
            Err(refusal(state, &e))
        }
    }
}

/// The answer to a refused request: status, challenge and an OAuth-style JSON body.
pub(crate) fn refusal(state: &AppState, error: &AuthError) -> Response {
    let body = json!({"error": error.code(), "error_description": error.to_string()});
    let mut resp = Response::new(Body::from(body.to_string()));
    *resp.status_mut() = StatusCode::from_u16(error.status()).unwrap_or(StatusCode::UNAUTHORIZED);
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if let Some(challenge) = state
        .options
        .auth
        .challenge(error)
        .and_then(|c| HeaderValue::from_str(&c).ok())
    {
        h.insert(header::WWW_AUTHENTICATE, challenge);
    }
    if error.status() == 503 {
        h.insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    }
    resp
}

/// `/.well-known/*`: the protected resource metadata (any path under
/// `/.well-known/oauth-protected-resource`), CORS-enabled so browser clients can read it; anything
/// else 404.
pub(crate) async fn well_known(
    State(state): State<Arc<AppState>>,
    method: Method,
    uri: http::Uri,
    headers: HeaderMap,
) -> Response {
    let metadata = state.options.auth.protected_resource_metadata();
    let path = uri.path();
    let ours = path == "/.well-known/oauth-protected-resource"
        || path.starts_with("/.well-known/oauth-protected-resource/");
    let (status, body) = match (ours, metadata) {
        (true, _) if method == Method::OPTIONS => (StatusCode::NO_CONTENT, String::new()),
        (true, Some(doc)) => (StatusCode::OK, doc.to_string()),
        _ => (
            StatusCode::NOT_FOUND,
            json!({"error": "not_found"}).to_string(),
        ),
    };
    let mut resp = Response::new(Body::from(body));
    *resp.status_mut() = status;
    let h = resp.headers_mut();
    if status != StatusCode::NO_CONTENT {
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
    }
    if ours {
        let origin = headers
            .get(header::ORIGIN)
            .cloned()
            .unwrap_or(HeaderValue::from_static("*"));
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        h.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static("GET, OPTIONS"),
        );
        h.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static("mcp-protocol-version, Content-Type, Authorization"),
        );
        h.insert(
            header::ACCESS_CONTROL_MAX_AGE,
            HeaderValue::from_static("86400"),
        );
        h.insert(header::VARY, HeaderValue::from_static("Origin"));
    }
    resp
}
