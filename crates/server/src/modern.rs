//! The Modern client edge (MCP 2026-07-28): stateless, one POST per request, every request
//! carrying its own version, capabilities and log level in `_meta`. Requests were already
//! classified and their headers validated ([`vmcp_proto::era`]); this module answers them by
//! calling the same core as the Legacy edge, and wraps results in the Modern envelope.

use std::sync::Arc;

use axum::response::Response;
use http::{HeaderMap, StatusCode};
use serde_json::{Map, Value, json};
use vmcp_core::Identity;
use vmcp_proto::era::Era;
use vmcp_proto::{ErrorObject, codes, era, param_headers, revision};

use crate::{
    dispatch::{self, Ctx, Reply},
    envelope,
    errors::Failure,
    listen, observe,
    reply::{self, Format},
    state::AppState,
    stream::{self, Audience, ModernAudience},
};

/// Answers one classified Modern message.
pub(crate) async fn serve(
    state: Arc<AppState>,
    headers: &HeaderMap,
    identity: Identity,
    id: Option<Value>,
    method: String,
    params: Option<Value>,
) -> Response {
    // Notifications need no answer (this revision defines none from client to server over HTTP).
    let Some(id) = id else {
        return reply::accepted();
    };
    let params = params.unwrap_or_else(|| Value::Object(Map::new()));
    if method == "tools/call"
        && let Err(f) = check_param_headers(&state, &identity, headers, &params).await
    {
        return reply::failure(Format::Json, &id, &f);
    }
    if stream::is_forwarded(&method) {
        let meta = params.get("_meta");
        let capabilities = meta
            .and_then(|m| m.get(era::META_CLIENT_CAPABILITIES))
            .cloned();
        let audience = ModernAudience::new(
            Arc::new(capabilities.unwrap_or_else(|| json!({}))),
            meta.and_then(|m| m.get(era::META_LOG_LEVEL))
                .and_then(Value::as_str),
        );
        let audience = Arc::new(Audience::Modern(audience));
        let forwarded = state.options.forwarded(headers);
        return stream::serve(
            state,
            audience,
            identity,
            forwarded,
            id,
            method,
            Some(params),
        )
        .await;
    }
    // Before the catalog is fetched, so a caller out of tokens costs nothing (dispatch::meter).
    if let Err(f) = dispatch::meter(&state.gateway, &identity, &method).await {
        return reply::failure(Format::Json, &id, &modern_failure(f));
    }
    let outcome = match method.as_str() {
        "server/discover" => {
            let request = vmcp_telemetry::ServerRequest::start(
                &method,
                Some(&params),
                Some(&id),
                None,
                Some(revision::MODERN),
            );
            request
                .run(discover(&state, &identity), observe::plain)
                .await
        }
        "tools/list" | "resources/list" | "resources/templates/list" | "prompts/list" => {
            let format = reply::mirrored(&state, headers, Format::Json);
            return list(&state, &identity, &id, &method, params, format).await;
        }
        "subscriptions/listen" => return listen::serve(state, identity, id, params).await,
        // Everything else, including the methods 2026-07-28 removed (initialize, ping,
        // logging/setLevel, resources/subscribe, ...): -32601 at 404, as the spec requires.
        _ => Err(Failure::rpc(
            codes::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )),
    };
    respond(&state, &id, &method, outcome)
}

/// `Mcp-Param-*` headers must agree with the arguments the advertised tool annotates with
/// `x-mcp-header` (present exactly when the body has a value, equal after decoding).
async fn check_param_headers(
    state: &AppState,
    identity: &Identity,
    headers: &HeaderMap,
    params: &Value,
) -> Result<(), Failure> {
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return Ok(());
    };
    let catalog = state.gateway.catalog(identity).await?;
    let Some(found) = catalog
        .advertised_tool(name)
        .and_then(|t| t.get("inputSchema"))
        .and_then(param_headers::annotations)
    else {
        return Ok(());
    };
    for (header, path) in found {
        let key = format!("mcp-param-{header}");
        let received = headers.get(key.as_str()).map(|v| v.as_bytes());
        let body = param_headers::value_at(params.get("arguments"), &path);
        if let Err(why) = param_headers::check(received, body.as_deref()) {
            let what = match why {
                param_headers::Mismatch::Missing => "is missing (required for this request)",
                param_headers::Mismatch::Unexpected => "is present but the argument has no value",
                param_headers::Mismatch::Malformed => "is malformed",
                param_headers::Mismatch::Differs => "does not match the request body",
            };
            let error = ErrorObject::new(
                codes::HEADER_MISMATCH,
                format!("Mcp-Param-{header} header {what}"),
            )
            .with_data(json!({"header": format!("Mcp-Param-{header}"), "bodyValue": body}));
            return Err(Failure {
                status: StatusCode::BAD_REQUEST,
                error,
            });
        }
    }
    Ok(())
}

/// The Modern status for an error, as the spec's HTTP transport sets it: -32601 is 404; -32602 and
/// the protocol errors -32020/-32021/-32022 are 400 (whoever raised them: the gateway, or a backend
/// whose error is passed on); a denial 403; the rest 200.
fn status_of(code: i64) -> StatusCode {
    match code {
        codes::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        codes::INVALID_PARAMS
        | codes::HEADER_MISMATCH
        | codes::MISSING_CLIENT_CAPABILITY
        | codes::UNSUPPORTED_PROTOCOL_VERSION => StatusCode::BAD_REQUEST,
        codes::DENIED => StatusCode::FORBIDDEN,
        _ => StatusCode::OK,
    }
}

/// A Modern error: the code's status, and -32002 (2025-11-25's resource-not-found) as -32602.
pub(crate) fn modern_failure(mut f: Failure) -> Failure {
    if f.error.code == codes::RESOURCE_NOT_FOUND {
        f.error.code = codes::INVALID_PARAMS;
    }
    f.status = status_of(f.error.code);
    f
}

fn respond(
    state: &AppState,
    id: &Value,
    method: &str,
    outcome: Result<Value, Failure>,
) -> Response {
    match outcome {
        Ok(result) => reply::result(
            Format::Json,
            id,
            &envelope::stamp(method, result, &state.options.name),
        ),
        Err(f) => reply::failure(Format::Json, id, &modern_failure(f)),
    }
}

/// A list page, stamped with the envelope and written straight from the catalog, as `format`.
async fn list(
    state: &AppState,
    identity: &Identity,
    id: &Value,
    method: &str,
    params: Value,
    format: Format,
) -> Response {
    let catalog = match state.gateway.catalog(identity).await {
        Ok(c) => c,
        Err(e) => return reply::failure(Format::Json, id, &modern_failure(e.into())),
    };
    let ctx = Ctx {
        identity,
        catalog: &catalog,
        session: None,
        page_size: state.options.page_size,
        sink: None,
        era: Era::Modern,
        forwarded: None,
    };
    let request = vmcp_telemetry::ServerRequest::start(
        method,
        Some(&params),
        Some(id),
        None,
        Some(revision::MODERN),
    );
    // One expression: a `let` would keep a second copy of the dispatch in this future's state.
    match observe::run(
        request,
        dispatch::dispatch(&state.gateway, &ctx, method, Some(params)),
    )
    .await
    {
        Ok(Reply::Page(page)) => {
            let envelope = match envelope::stamp(method, json!({}), &state.options.name) {
                Value::Object(fields) => fields,
                _ => Map::new(),
            };
            reply::result(format, id, &page.with_envelope(envelope))
        }
        Ok(Reply::Value(result)) => respond(state, id, method, Ok(result)),
        Err(f) => respond(state, id, method, Err(f)),
    }
}

/// `server/discover`: versions, and capability flags computed after admission (a kind is
/// advertised only when the caller may see something of it).
async fn discover(state: &AppState, identity: &Identity) -> Result<Value, Failure> {
    let catalog = state.gateway.catalog(identity).await?;
    let gw = &state.gateway;
    let mut caps = Map::new();
    if !gw.list_tools(identity, &catalog).is_empty() {
        caps.insert("tools".into(), json!({"listChanged": true}));
    }
    if !gw.list_resources(identity, &catalog).is_empty()
        || !gw.list_templates(identity, &catalog).is_empty()
    {
        caps.insert(
            "resources".into(),
            json!({"listChanged": true, "subscribe": catalog.supports_subscribe()}),
        );
    }
    if !gw.list_prompts(identity, &catalog).is_empty() {
        caps.insert("prompts".into(), json!({"listChanged": true}));
    }
    caps.insert("completions".into(), json!({}));
    Ok(json!({"supportedVersions": revision::ALL_VERSIONS, "capabilities": caps}))
}

/// What a Modern request gets when the Modern edge is switched off: `server/discover` lists only
/// the Legacy revisions (so Modern-first clients negotiate down), anything else -32022.
pub(crate) fn disabled(state: &AppState, id: Option<Value>, method: &str) -> Response {
    let Some(id) = id else {
        return reply::accepted();
    };
    if method == "server/discover" {
        let result = json!({"supportedVersions": revision::LEGACY_VERSIONS, "capabilities": {}});
        return reply::result(
            Format::Json,
            &id,
            &envelope::stamp(method, result, &state.options.name),
        );
    }
    let rej = era::unsupported_version(revision::MODERN, &revision::LEGACY_VERSIONS);
    let mut error = vmcp_proto::ErrorObject::new(rej.code, rej.message);
    error.data = rej.data;
    reply::error(StatusCode::BAD_REQUEST, Format::Json, &id, &error)
}
