//! The Legacy client edge: MCP Streamable HTTP as of 2025-11-25 (negotiating down to 2025-06-18
//! and 2025-03-26). POST carries messages, GET opens the session's server-to-client stream, DELETE
//! ends the session. Reading top to bottom follows one request: guards, body, parse, session,
//! version header, then the method.

// Refusals are whole HTTP responses built on a cold path; boxing them would only add noise.
#![allow(clippy::result_large_err)]

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::response::Response;
use http::{HeaderMap, HeaderValue, StatusCode, header};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use vmcp_backend::CallSink;
use vmcp_core::{Caller, Identity};
use vmcp_proto::era::{self, Era, RequestView};
use vmcp_proto::{ErrorObject, Message, ParseError, codes, revision};

use crate::{
    audit, auth, conn_limits,
    dispatch::{self, Ctx},
    errors::Failure,
    modern, observe, relay, remote_resume, replicas,
    reply::{self, Format},
    resumable,
    session::{self, LOG_LEVELS, Session, short},
    state::AppState,
    stream,
};

const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";
/// JSON-RPC code for an unknown or expired session (the convention of the reference SDKs).
const SESSION_NOT_FOUND: i64 = -32001;
/// A client resuming an SSE stream names the last event it saw.
const LAST_EVENT_ID_HEADER: &str = "last-event-id";

/// POST /mcp: one JSON-RPC message (or, for 2025-03-26 sessions, a batch).
pub(crate) async fn post(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    // The trace context of the HTTP request is the parent of the request's server span.
    let parent = vmcp_telemetry::remote_parent(&headers);
    vmcp_telemetry::within(parent, post_message(state, headers, body)).await
}

/// [`post`] without axum's extractors, for a connection that calls it without the router.
pub(crate) async fn post_direct(
    state: Arc<AppState>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, std::convert::Infallible> {
    Ok(post(State(state), headers, body).await)
}

/// Branches that are rare (a batch, `initialize`) or that wait on Redis are boxed: each request's
/// future is as large as its largest branch, and it is copied as it is boxed for the router.
async fn post_message(state: Arc<AppState>, headers: HeaderMap, body: Body) -> Response {
    if let Err(r) = guard(&state, &headers) {
        return r;
    }
    let identity = match auth::authenticate(&state, &headers).await {
        Ok(i) => i,
        Err(r) => return r,
    };
    if !is_json(&headers) {
        return reply::refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            codes::INVALID_REQUEST,
            "Content-Type must be application/json",
        );
    }
    let limit = state.options.max_body_bytes;
    let too_large = || {
        reply::refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            codes::INVALID_REQUEST,
            format!("request body larger than {limit} bytes"),
        )
    };
    // A declared length past the limit is refused before a byte of the body is read.
    if conn_limits::content_length(&headers).is_some_and(|n| n > limit as u64) {
        return too_large();
    }
    let body_timeout = state.options.connection_limits.body_timeout;
    let bytes = match tokio::time::timeout(body_timeout, axum::body::to_bytes(body, limit)).await {
        Ok(Ok(b)) => b,
        Ok(Err(_)) => return too_large(),
        Err(_) => {
            return reply::refuse(
                StatusCode::REQUEST_TIMEOUT,
                codes::INVALID_REQUEST,
                format!("request body not received within {body_timeout:?}"),
            );
        }
    };
    audit::body(&bytes);
    let format = Format::from_accept(&headers);
    let msg = match Message::parse(&bytes) {
        Ok(m) => m,
        Err(ParseError::Batch(items)) => {
            return Box::pin(batch(&state, &headers, &identity, items, format)).await;
        }
        Err(e) => {
            let (id, err) = e.to_error();
            return reply::error(StatusCode::BAD_REQUEST, format, &id, &err);
        }
    };
    if let Message::Request { method, params, .. } | Message::Notification { method, params } = &msg
    {
        audit::request(method, params.as_ref());
    }
    // Requests and notifications are classified per request; only Legacy ones continue here.
    if let Some((id, method, params)) = request_parts(&msg) {
        match era::classify(&view(&headers, method, params)) {
            Err(rej) => {
                let mut error = ErrorObject::new(rej.code, rej.message);
                error.data = rej.data;
                let id = id.cloned().unwrap_or(Value::Null);
                return reply::error(StatusCode::BAD_REQUEST, Format::Json, &id, &error);
            }
            Ok(Era::Modern) => {
                let (id, method, params) = into_parts(msg);
                if !state.options.modern_enabled {
                    return modern::disabled(&state, id, &method);
                }
                return modern::serve(state.clone(), &headers, identity, id, method, params).await;
            }
            Ok(Era::Legacy) => {}
        }
    }
    if let Message::Request { id, method, params } = &msg
        && method == "initialize"
    {
        let request =
            vmcp_telemetry::ServerRequest::start(method, params.as_ref(), Some(id), None, None);
        let answer = initialize(&state, id, params.as_ref(), format, identity);
        return Box::pin(request.run(answer, observe::http)).await;
    }
    let session = match session_of(&state, &headers, &identity).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    if let Err(r) = check_version(&headers) {
        return r;
    }
    if let Message::Request { method, .. } = &msg
        && stream::is_forwarded(method)
        && Format::accepts_stream(&headers)
        && let Message::Request { id, method, params } = msg
    {
        let audience = Arc::new(stream::Audience::Legacy(session));
        let forwarded = state.options.forwarded(&headers);
        return stream::serve(
            state.clone(),
            audience,
            identity,
            forwarded,
            id,
            method,
            params,
        )
        .await;
    }
    let forwarded = state.options.forwarded(&headers);
    match handle(&state, &session, &identity, forwarded.as_ref(), msg).await {
        Some(Ok((id, result))) => {
            reply::result(reply::mirrored(&state, &headers, format), &id, &result)
        }
        Some(Err((id, failure))) => reply::failure(format, &id, &failure),
        None => reply::accepted(),
    }
}

/// A request's id and its serialised result, or its id and failure.
type Answer = Result<(Value, Box<RawValue>), (Value, Failure)>;

/// `result` serialised once, so a list page is written from the catalog without being copied.
fn raw(result: &impl serde::Serialize) -> Box<RawValue> {
    serde_json::value::to_raw_value(result).unwrap_or_else(|_| RawValue::NULL.to_owned())
}

/// Handles one message within a session, on behalf of `identity` (the session's caller, perhaps
/// with a refreshed token); None when it needs no answer.
async fn handle(
    state: &AppState,
    session: &Arc<Session>,
    identity: &Identity,
    forwarded: Option<&HeaderMap>,
    msg: Message,
) -> Option<Answer> {
    match msg {
        Message::Request { id, method, params } => {
            tracing::debug!(session = %short(&session.id), %method, "request");
            let traced = || {
                vmcp_telemetry::ServerRequest::start(
                    &method,
                    params.as_ref(),
                    Some(&id),
                    Some(&session.id),
                    Some(session.protocol_version),
                )
            };
            let outcome = match method.as_str() {
                "initialize" => Err(Failure::rpc(
                    codes::INVALID_REQUEST,
                    "initialize is only valid as the first message, without a session",
                )),
                "logging/setLevel" | "resources/subscribe" | "resources/unsubscribe" => {
                    let request = traced();
                    let work = async {
                        let outcome = if method == "logging/setLevel" {
                            set_level(state, session, identity, params.as_ref())
                        } else {
                            subscription(state, session, identity, &method, params.as_ref()).await
                        };
                        if outcome.is_ok() {
                            replicas::persist(state, session).await;
                        }
                        outcome.map(|v| raw(&v))
                    };
                    request.run(work, observe::plain).await
                }
                _ => {
                    let catalog = session.catalog();
                    let ctx = Ctx {
                        identity,
                        catalog: &catalog,
                        session: Some(&session.id),
                        page_size: state.options.page_size,
                        sink: None,
                        era: Era::Legacy,
                        forwarded,
                    };
                    match dispatch::meter(&state.gateway, identity, &method).await {
                        Ok(()) => {
                            let request = traced();
                            // One expression: a `let` would keep a second copy of the dispatch
                            // in this future's state.
                            observe::run(
                                request,
                                dispatch::dispatch(&state.gateway, &ctx, &method, params),
                            )
                            .await
                            .map(|r| raw(&r))
                        }
                        Err(f) => Err(f),
                    }
                }
            };
            Some(outcome.map(|r| (id.clone(), r)).map_err(|f| (id, f)))
        }
        Message::Notification { method, params } => {
            // notifications/initialized needs nothing: requests are served as soon as the session
            // exists, which is what clients that pipeline their first request expect.
            if method == "notifications/cancelled"
                && let Some(id) = params.as_ref().and_then(|p| p.get("requestId"))
            {
                session.cancel(&id.to_string());
            }
            tracing::debug!(session = %short(&session.id), %method, "notification");
            None
        }
        // The client answering a request the gateway relayed from a backend.
        Message::Response { id, result } => {
            answer(state, session, id, Ok(result)).await;
            None
        }
        Message::Error { id, error } => {
            answer(state, session, id, Err(error)).await;
            None
        }
    }
}

/// The client answering a server-to-client request: to the request waiting here, or to the
/// replica that sent it.
async fn answer(
    state: &AppState,
    session: &Session,
    id: Value,
    outcome: Result<Value, ErrorObject>,
) {
    if session.answer(&id, outcome.clone()) {
        return;
    }
    if !replicas::forward_answer(state, &session.id, &id, outcome).await {
        tracing::debug!(session = %short(&session.id), %id, "answer to no pending request");
    }
}

async fn initialize(
    state: &AppState,
    id: &Value,
    params: Option<&Value>,
    format: Format,
    identity: Identity,
) -> Response {
    let Some(requested) = params
        .and_then(|p| p.get("protocolVersion"))
        .and_then(Value::as_str)
    else {
        let f = Failure::rpc(
            codes::INVALID_PARAMS,
            "initialize needs params.protocolVersion (a string)",
        );
        return reply::failure(format, id, &f);
    };
    let version = revision::negotiate(requested);
    let catalog = match state.gateway.catalog(&identity).await {
        Ok(c) => c,
        Err(e) => return reply::failure(format, id, &Failure::from(e)),
    };
    let capabilities = params
        .and_then(|p| p.get("capabilities"))
        .cloned()
        .unwrap_or_else(|| json!({}));
    let subscribe = catalog.supports_subscribe();
    let (session, evicted) = match state
        .sessions
        .create(version, capabilities, identity, catalog)
    {
        Ok(created) => created,
        Err(refused) => return session_refused(format, id, &refused),
    };
    open_session(state, &session, evicted);
    if let Err(refused) = replicas::created(state, &session).await {
        return refused;
    }
    tracing::info!(session = %short(&session.id), %version, "session created");
    let result = json!({
        "protocolVersion": version,
        "capabilities": {
            "tools": {"listChanged": true},
            "resources": {"listChanged": true, "subscribe": subscribe},
            "prompts": {"listChanged": true},
            "completions": {},
            "logging": {}
        },
        "serverInfo": {
            "name": "vmcp",
            "title": state.options.name,
            "version": env!("CARGO_PKG_VERSION")
        }
    });
    let mut resp = reply::result(format, id, &result);
    if let Ok(v) = HeaderValue::from_str(&session.id) {
        resp.headers_mut().insert(SESSION_HEADER, v);
    }
    resp
}

/// The answer to an `initialize` the session caps refuse: 429 when the caller holds too many
/// sessions, 503 when the replica is full of others' sessions, both with `Retry-After`.
fn session_refused(format: Format, id: &Value, refused: &session::Refused) -> Response {
    let status = match refused {
        session::Refused::IdentityFull { .. } => StatusCode::TOO_MANY_REQUESTS,
        session::Refused::StoreFull { .. } => StatusCode::SERVICE_UNAVAILABLE,
    };
    let secs = session::Refused::RETRY_AFTER_SECS;
    let failure = Failure {
        status,
        error: ErrorObject::new(codes::RATE_LIMITED, refused.message())
            .with_data(json!({"retryAfterSeconds": secs})),
    };
    tracing::warn!("initialize refused: {}", refused.message());
    let mut resp = reply::failure(format, id, &failure);
    resp.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    resp
}

/// Connects a new (or adopted) session to the backends' messages for it, and ends the session
/// evicted to make room, if any.
pub(crate) fn open_session(
    state: &AppState,
    session: &Arc<Session>,
    evicted: Option<Arc<Session>>,
) {
    let (sink, events) = CallSink::channel(256);
    state.gateway.attach_session(&session.id, &sink);
    *session.sink.lock().unwrap_or_else(|p| p.into_inner()) = Some(sink);
    tokio::spawn(relay::pump(
        Arc::downgrade(session),
        events,
        state.options.client_request_timeout,
    ));
    if let Some(old) = evicted {
        tracing::info!(session = %short(&old.id), "session cap reached; ended the least recently used session here");
        let gw = state.gateway.clone();
        tokio::spawn(async move { gw.end_session(&old.id).await });
    }
}

/// `logging/setLevel`: filters what this client gets, and asks logging backends for the most
/// verbose level any session wants (or this session's level on its own connections).
fn set_level(
    state: &AppState,
    session: &Arc<Session>,
    identity: &Identity,
    params: Option<&Value>,
) -> Result<Value, Failure> {
    let level = params
        .and_then(|p| p.get("level"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    if session.set_log_level(level) {
        let shared = LOG_LEVELS[state.sessions.min_log_level()];
        let (gw, catalog, id, level, caller) = (
            state.gateway.clone(),
            session.catalog(),
            session.id.clone(),
            level.to_string(),
            identity.clone(),
        );
        tokio::spawn(async move {
            gw.set_log_level(&catalog, &caller, &id, &level, shared)
                .await
        });
        Ok(json!({}))
    } else {
        Err(Failure::rpc(
            codes::INVALID_PARAMS,
            format!("unknown log level {level:?}"),
        ))
    }
}

/// `resources/subscribe` / `resources/unsubscribe`, forwarded to the backend that owns the URI.
async fn subscription(
    state: &AppState,
    session: &Arc<Session>,
    identity: &Identity,
    method: &str,
    params: Option<&Value>,
) -> Result<Value, Failure> {
    let Some(uri) = params.and_then(|p| p.get("uri")).and_then(Value::as_str) else {
        return Err(Failure::rpc(
            codes::INVALID_PARAMS,
            format!("{method} needs params.uri (a string)"),
        ));
    };
    let catalog = session.catalog();
    let caller = Caller {
        identity,
        session: Some(&session.id),
        sink: None,
        era: Some(Era::Legacy),
        headers: None,
    };
    let on = method == "resources/subscribe";
    // Only the first subscribe and the last unsubscribe of this session reach the core.
    if session.set_subscribed(uri, on) {
        let outcome = if on {
            state.gateway.subscribe(&caller, &catalog, uri).await
        } else {
            state.gateway.unsubscribe(&caller, &catalog, uri).await
        };
        if let Err(e) = outcome {
            session.set_subscribed(uri, !on);
            return Err(e.into());
        }
    }
    Ok(json!({}))
}

/// A JSON-RPC batch: only sessions at 2025-03-26 may send one.
async fn batch(
    state: &AppState,
    headers: &HeaderMap,
    identity: &Identity,
    items: Vec<Value>,
    format: Format,
) -> Response {
    let session = match session_of(state, headers, identity).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    let forwarded = state.options.forwarded(headers);
    if !revision::allows_batches(session.protocol_version) {
        let (id, err) = ParseError::Batch(Vec::new()).to_error();
        return reply::error(StatusCode::BAD_REQUEST, format, &id, &err);
    }
    if items.is_empty() {
        return reply::refuse(
            StatusCode::BAD_REQUEST,
            codes::INVALID_REQUEST,
            "empty batch",
        );
    }
    let mut answers = Vec::new();
    for item in items {
        audit::batch_item(
            item.get("method")
                .and_then(Value::as_str)
                .unwrap_or("batch"),
            item.get("params"),
        );
        let answer = match Message::from_value(item) {
            Ok(Message::Request { id, method, .. }) if method == "initialize" => Some(Err((
                id,
                Failure::rpc(
                    codes::INVALID_REQUEST,
                    "initialize cannot be part of a batch",
                ),
            ))),
            Ok(msg) => handle(state, &session, identity, forwarded.as_ref(), msg).await,
            Err(e) => {
                let (id, err) = e.to_error();
                Some(Err((
                    id,
                    Failure {
                        status: StatusCode::OK,
                        error: err,
                    },
                )))
            }
        };
        match answer {
            Some(Ok((id, result))) => {
                answers.push(json!({"jsonrpc": "2.0", "id": id, "result": result}))
            }
            Some(Err((id, f))) => {
                audit::error(f.error.code, &f.error.message);
                answers.push(json!({"jsonrpc": "2.0", "id": id, "error": f.error}))
            }
            None => {}
        }
    }
    if answers.is_empty() {
        return reply::accepted();
    }
    reply::message(
        StatusCode::OK,
        format,
        serde_json::to_vec(&answers).unwrap_or_default(),
    )
}

/// GET /mcp: the session's stream for server-to-client messages.
pub(crate) async fn get_stream(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    if let Err(r) = guard(&state, &headers) {
        return r;
    }
    if let Some(r) = modern_verb(&headers) {
        return r;
    }
    let identity = match auth::authenticate(&state, &headers).await {
        Ok(i) => i,
        Err(r) => return r,
    };
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if !accept.contains("text/event-stream") {
        return reply::refuse(
            StatusCode::NOT_ACCEPTABLE,
            codes::INVALID_REQUEST,
            "GET needs Accept: text/event-stream",
        );
    }
    let session = match session_of(&state, &headers, &identity).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    if let Err(r) = check_version(&headers) {
        return r;
    }
    let limits = state.stream_limits();
    // With Last-Event-ID, the stream that event belongs to continues right after it (this
    // session's GET stream, or the response stream of one of its calls); without, a new GET
    // stream replaces the session's previous one.
    let reader = match headers.get(LAST_EVENT_ID_HEADER) {
        Some(last) => match last.to_str() {
            Ok(last) => match session.resume(last) {
                Ok(reader) => Ok(reader),
                // With shared sessions, the stream may be another replica's.
                Err(refused) => {
                    match remote_resume::resume(&state, &session, last, refused).await {
                        Ok(resp) => return resp,
                        Err(refused) => Err(refused),
                    }
                }
            },
            Err(_) => Err(resumable::Refused::Unknown),
        },
        None => session.open_get_stream(limits),
    };
    match reader {
        Ok(reader) => reader.into_response(limits.keepalive),
        Err(refused) => {
            tracing::debug!(session = %short(&session.id), ?refused, "stream resume refused");
            if refused == resumable::Refused::Unreachable {
                let mut resp = reply::refuse(
                    StatusCode::SERVICE_UNAVAILABLE,
                    codes::INTERNAL_ERROR,
                    refused.message(),
                );
                resp.headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
                return resp;
            }
            reply::refuse(
                StatusCode::BAD_REQUEST,
                codes::INVALID_REQUEST,
                refused.message(),
            )
        }
    }
}

/// DELETE /mcp: ends the session and releases what it held on the backends.
pub(crate) async fn delete(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    if let Err(r) = guard(&state, &headers) {
        return r;
    }
    if let Some(r) = modern_verb(&headers) {
        return r;
    }
    let identity = match auth::authenticate(&state, &headers).await {
        Ok(i) => i,
        Err(r) => return r,
    };
    // Only the session's own caller may end it.
    let id = match session_of(&state, &headers, &identity).await {
        Ok(s) => s.id.clone(),
        Err(r) => return r,
    };
    let stored = match replicas::ended(&state, &id).await {
        Ok(stored) => stored,
        Err(refused) => return refused,
    };
    let local = state.sessions.remove(&id);
    if let Some(s) = &local {
        state.gateway.end_session(&s.id).await;
    }
    if local.is_some() && stored {
        tracing::info!(session = %short(&id), "session ended by client");
        reply::accepted_with(StatusCode::OK)
    } else {
        session_not_found()
    }
}

/// 404 with the reference SDKs' code for an unknown or expired session.
pub(crate) fn session_not_found() -> Response {
    reply::refuse(
        StatusCode::NOT_FOUND,
        SESSION_NOT_FOUND,
        "Session not found",
    )
}

fn request_parts(msg: &Message) -> Option<(Option<&Value>, &str, Option<&Value>)> {
    match msg {
        Message::Request { id, method, params } => Some((Some(id), method, params.as_ref())),
        Message::Notification { method, params } => Some((None, method, params.as_ref())),
        _ => None,
    }
}

fn into_parts(msg: Message) -> (Option<Value>, String, Option<Value>) {
    match msg {
        Message::Request { id, method, params } => (Some(id), method, params),
        Message::Notification { method, params } => (None, method, params),
        Message::Response { id, .. } | Message::Error { id, .. } => (Some(id), String::new(), None),
    }
}

/// What the era classifier needs from a request.
pub(crate) fn view<'a>(
    headers: &'a HeaderMap,
    method: &'a str,
    params: Option<&'a Value>,
) -> RequestView<'a> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let target = if method == "resources/read" {
        "uri"
    } else {
        "name"
    };
    RequestView {
        method,
        meta: params
            .and_then(|p| p.get("_meta"))
            .and_then(Value::as_object),
        version_header: header(VERSION_HEADER),
        mcp_method: header("mcp-method"),
        mcp_name: header("mcp-name"),
        name: params.and_then(|p| p.get(target)).and_then(Value::as_str),
    }
}

/// GET and DELETE do not exist in 2026-07-28: a Modern client asking for them gets 405.
fn modern_verb(headers: &HeaderMap) -> Option<Response> {
    if headers.get(VERSION_HEADER).and_then(|v| v.to_str().ok()) != Some(revision::MODERN) {
        return None;
    }
    let mut resp = reply::refuse(
        StatusCode::METHOD_NOT_ALLOWED,
        codes::INVALID_REQUEST,
        "MCP 2026-07-28 has no GET or DELETE on the MCP endpoint; use POST",
    );
    resp.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("POST"));
    Some(resp)
}

fn guard(state: &AppState, headers: &HeaderMap) -> Result<(), Response> {
    state.options.origins.check(headers).map_err(|r| {
        let what = r.message();
        tracing::warn!("{what}");
        reply::refuse(StatusCode::FORBIDDEN, codes::INVALID_REQUEST, what)
    })
}

pub(crate) fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.trim_start()
                .to_ascii_lowercase()
                .starts_with("application/json")
        })
}

pub(crate) fn session_header(headers: &HeaderMap) -> Result<&str, Response> {
    let Some(raw) = headers.get(SESSION_HEADER) else {
        return Err(reply::refuse(
            StatusCode::BAD_REQUEST,
            codes::INVALID_REQUEST,
            "Bad Request: Mcp-Session-Id header is required",
        ));
    };
    raw.to_str()
        .ok()
        .filter(|s| !s.is_empty() && s.bytes().all(|b| (0x21..=0x7e).contains(&b)))
        .ok_or_else(|| {
            reply::refuse(
                StatusCode::BAD_REQUEST,
                codes::INVALID_REQUEST,
                "Bad Request: malformed Mcp-Session-Id",
            )
        })
}

/// The session the request names, if it exists and belongs to `identity` (the same issuer and
/// subject that created it). Another caller gets exactly the unknown-session answer: it learns
/// nothing, and the session is not ended.
async fn session_of(
    state: &AppState,
    headers: &HeaderMap,
    identity: &Identity,
) -> Result<Arc<Session>, Response> {
    let id = session_header(headers)?;
    if let Some(shared) = &state.shared {
        return Box::pin(replicas::resolve(state, shared, id, identity)).await;
    }
    let session = state.sessions.get(id).filter(|s| {
        let same = s.identity.same_caller(identity);
        if !same {
            tracing::warn!(session = %short(&s.id), "request on a session by another identity refused");
        }
        same
    });
    session.ok_or_else(session_not_found)
}

pub(crate) fn check_version(headers: &HeaderMap) -> Result<(), Response> {
    match headers
        .get(VERSION_HEADER)
        .map(|v| v.to_str().unwrap_or(""))
    {
        None => Ok(()),
        Some(v) if revision::is_legacy_supported(v) => Ok(()),
        Some(v) => Err(reply::refuse(
            StatusCode::BAD_REQUEST,
            codes::INVALID_REQUEST,
            format!(
                "Bad Request: unsupported MCP-Protocol-Version {v:?} (supported: {})",
                revision::LEGACY_VERSIONS.join(", ")
            ),
        )),
    }
}
