//! Serving a forwarded request (tools/call, resources/read, prompts/get, completion/complete) so
//! that what the backend sends while it runs reaches the client. The answer is plain JSON when the
//! backend answers plain JSON at once (the fast path), and an SSE stream carrying the relayed
//! messages and then the answer as soon as the backend answers with a stream of its own, sends
//! anything mid-request, or stays silent for a keep-alive interval (a load balancer would cut a
//! silent connection; the stream then carries SSE comments until the answer).
//!
//! Both eras share this; they differ in what may be relayed ([`Audience`]): a Legacy session gets
//! server-to-client requests forwarded, a Modern request gets only its own progress and the logs it
//! opted into, and a backend asking it something is refused with the documented error contract.
//! A Legacy session's stream is resumable ([`crate::resumable`]): a backend pausing its stream
//! (SEP-1699) pauses the client's too, and a client cut off resumes with `Last-Event-ID`. A
//! Modern stream is not (2026-07-28 removed resumption): closing it cancels the request.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use http::{HeaderValue, StatusCode, header};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use vmcp_backend::{CallEvent, CallSink, ClientView};
use vmcp_core::Identity;
use vmcp_proto::era::Era;
use vmcp_proto::{ErrorObject, codes, jsonrpc, meta::strip_reserved, sse};

use crate::{
    audit,
    dispatch::{self, Ctx},
    envelope,
    errors::Failure,
    observe,
    relay::{self, Out},
    reply::{self, Format},
    resumable::{KEEPALIVE, Resumable},
    session::{self, LOG_LEVELS, Session},
    state::AppState,
};

/// Methods whose backend request may talk back mid-call.
pub(crate) fn is_forwarded(method: &str) -> bool {
    matches!(
        method,
        "tools/call" | "resources/read" | "prompts/get" | "completion/complete"
    )
}

/// Who receives what the backend sends mid-call.
pub(crate) enum Audience {
    /// A Legacy session: everything, subject to its capabilities and log level.
    Legacy(Arc<Session>),
    /// A Modern request: progress, and logs at or above the level it asked for in `_meta`.
    Modern(ModernAudience),
}

/// A Modern request's relaying rules.
pub(crate) struct ModernAudience {
    /// The request's `clientCapabilities`.
    pub(crate) capabilities: Arc<Value>,
    /// The request's `logLevel`, as an index into [`LOG_LEVELS`]; None: no logs.
    pub(crate) log_level: Option<usize>,
    /// The capability a backend asked for mid-call, and whether the client had declared it.
    refused: Mutex<Option<(String, bool)>>,
}

impl ModernAudience {
    pub(crate) fn new(capabilities: Arc<Value>, log_level: Option<&str>) -> Self {
        let log_level = log_level.and_then(|l| LOG_LEVELS.iter().position(|x| *x == l));
        Self {
            capabilities,
            log_level,
            refused: Mutex::new(None),
        }
    }

    fn relay(&self, event: CallEvent, out: &mpsc::Sender<Bytes>) {
        match event {
            CallEvent::Notification { method, mut params } => {
                let wanted = match method.as_str() {
                    "notifications/progress" => true,
                    "notifications/message" => self
                        .log_level
                        .is_some_and(|min| session::log_passes(params.as_ref(), min)),
                    // Only request-scoped notifications belong on a Modern response stream.
                    _ => false,
                };
                if wanted {
                    if let Some(p) = params.as_mut() {
                        strip_reserved(p);
                    }
                    let bytes = sse::message_event(
                        &jsonrpc::notification_bytes(&method, params.as_ref()),
                        None,
                    );
                    let _ = out.try_send(Bytes::from(bytes));
                }
            }
            CallEvent::Request { method, reply, .. } => {
                // A Legacy backend asking mid-call: Modern has no channel for it (input requests
                // ride results, not streams), so the backend is refused and the client told why.
                let capability = match method.as_str() {
                    "elicitation/create" => "elicitation",
                    "sampling/createMessage" => "sampling",
                    "roots/list" => "roots",
                    other => other,
                };
                let declared = self.capabilities.get(capability).is_some();
                *self.refused.lock().unwrap_or_else(|p| p.into_inner()) =
                    Some((capability.to_string(), declared));
                let _ = reply.send(Err(ErrorObject::new(
                    codes::INTERNAL_ERROR,
                    format!("vmcp cannot relay {method} to a 2026-07-28 client mid-call"),
                )));
            }
            // 2026-07-28 streams are not resumable: a paused backend stream is only resumed by
            // the gateway, and the client's stays open.
            CallEvent::StreamOpened | CallEvent::StreamPaused { .. } => {}
        }
    }

    /// The error the client gets when its backend asked for input mid-call.
    fn refusal(&self) -> Option<Failure> {
        let (capability, declared) = self
            .refused
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()?;
        let error = if declared {
            ErrorObject::new(
                codes::INTERNAL_ERROR,
                format!(
                    "the backend needs {capability} mid-call; it speaks MCP 2025-11-25, and vmcp cannot turn that into a multi-round (input_required) result for a 2026-07-28 client. The backend may already have done part of the work."
                ),
            )
        } else {
            ErrorObject::new(
                codes::MISSING_CLIENT_CAPABILITY,
                format!(
                    "the backend needs the {capability} client capability mid-call, which this request did not declare (declaring it would not help: vmcp cannot relay mid-call requests to 2026-07-28 clients). The backend may already have done part of the work."
                ),
            )
            .with_data(json!({"requiredCapabilities": {capability: {}}}))
        };
        // The spec puts both -32021 and this -32603 on the status the Modern status rule gives.
        Some(crate::modern::modern_failure(Failure {
            status: StatusCode::OK,
            error,
        }))
    }
}

/// Where a call's SSE response goes.
enum Outlet {
    /// A Legacy session's resumable stream.
    Resumable(Arc<Resumable>),
    /// A Modern request's stream, without event ids.
    Plain(mpsc::Sender<Bytes>),
}

impl Outlet {
    /// Resolves when the client went away for good: a Modern client closing its stream; never
    /// for a resumable stream, which the client may come back to.
    async fn abandoned(&self) {
        match self {
            Outlet::Plain(tx) => tx.closed().await,
            Outlet::Resumable(_) => std::future::pending().await,
        }
    }

    /// Sends the answer, which ends the stream.
    async fn finish(&self, json: &[u8]) {
        match self {
            Outlet::Resumable(stream) => stream.finish_with(json),
            Outlet::Plain(tx) => {
                let _ = tx.send(Bytes::from(sse::message_event(json, None))).await;
            }
        }
    }
}

impl Audience {
    fn relay(&self, event: CallEvent, out: &Outlet, state: &AppState) {
        match (self, out) {
            (_, Outlet::Resumable(stream)) => {
                if let CallEvent::StreamPaused { retry } = event {
                    // An earlier revision's client might not come back: only the gateway polls.
                    if self.session().is_some_and(|s| s.polls()) {
                        stream.pause(retry);
                    }
                } else if let Audience::Legacy(session) = self {
                    relay::relay(
                        session,
                        event,
                        &Out::Stream(stream.clone()),
                        state.options.client_request_timeout,
                    );
                }
            }
            (Audience::Modern(m), Outlet::Plain(tx)) => m.relay(event, tx),
            // A Legacy session always gets a resumable stream.
            (Audience::Legacy(_), Outlet::Plain(_)) => {}
        }
    }

    /// The SSE response for a call switching to a stream, and where its events go.
    fn open_stream(&self, state: &AppState) -> (Response, Outlet) {
        let limits = state.stream_limits();
        if let Audience::Legacy(session) = self {
            let stream = session.open_call_stream(limits);
            if let Ok(reader) = stream.attach(None) {
                return (
                    reader.into_response(limits.keepalive),
                    Outlet::Resumable(stream),
                );
            }
        }
        let (tx, rx) = mpsc::channel::<Bytes>(256);
        (event_stream(rx, limits.keepalive), Outlet::Plain(tx))
    }

    fn finish(
        &self,
        outcome: Result<Value, Failure>,
        method: &str,
        state: &AppState,
    ) -> Result<Value, Failure> {
        match self {
            Audience::Legacy(_) => outcome,
            Audience::Modern(m) => match m.refusal() {
                Some(refusal) => Err(refusal),
                None => outcome
                    .map(|r| envelope::stamp(method, r, &state.options.name))
                    .map_err(crate::modern::modern_failure),
            },
        }
    }

    /// What backends may learn about the client (forwarded to 2026-07-28 backends), and who it
    /// is (`identity`, the request's; a Legacy session is bound to it, so its key is made once).
    fn client_view(&self, identity: &Identity) -> ClientView {
        match self {
            Audience::Legacy(s) => ClientView {
                capabilities: s.client_capabilities.clone(),
                log_level: Some(LOG_LEVELS[s.log_level()]),
                era: Some(Era::Legacy),
                caller: s.caller_key.clone(),
            },
            Audience::Modern(m) => ClientView {
                capabilities: m.capabilities.clone(),
                log_level: m.log_level.map(|i| LOG_LEVELS[i]),
                era: Some(Era::Modern),
                caller: crate::session::caller_key(identity),
            },
        }
    }

    fn era(&self) -> Era {
        match self {
            Audience::Legacy(_) => Era::Legacy,
            Audience::Modern(_) => Era::Modern,
        }
    }

    fn session(&self) -> Option<&Arc<Session>> {
        match self {
            Audience::Legacy(s) => Some(s),
            Audience::Modern(_) => None,
        }
    }
}

/// Cancels the backend request when dropped while armed: a 2026-07-28 client closing its response
/// stream is cancelling the request. (A 2025-11-25 client's disconnect is not a cancellation: its
/// request runs on; it cancels with `notifications/cancelled`.)
struct CancelOnDrop(Option<CallSink>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(sink) = self.0.take() {
            sink.cancel();
        }
    }
}

/// Serves one forwarded request with relaying.
pub(crate) async fn serve(
    state: Arc<AppState>,
    audience: Arc<Audience>,
    identity: Identity,
    forwarded: Option<http::HeaderMap>,
    id: Value,
    method: String,
    params: Option<Value>,
) -> Response {
    let key = id.to_string();
    let (sink, mut events) = CallSink::for_client(256, audience.client_view(&identity));
    if let Some(s) = audience.session() {
        s.begin(key.clone(), sink.clone());
    }
    let cancel_on_drop =
        CancelOnDrop(matches!(*audience, Audience::Modern(_)).then(|| sink.clone()));
    let version = match audience.session() {
        Some(s) => s.protocol_version,
        None => vmcp_proto::revision::MODERN,
    };
    let request = vmcp_telemetry::ServerRequest::start(
        &method,
        params.as_ref(),
        Some(&id),
        audience.session().map(|s| s.id.as_str()),
        Some(version),
    );
    // The request runs in its own task so that a client going away does not silently drop it.
    let mut work = {
        let (state, audience, method, key) =
            (state.clone(), audience.clone(), method.clone(), key.clone());
        tokio::spawn(audit::carry(async move {
            let session = audience.session();
            let outcome = async {
                let catalog = match session {
                    Some(s) => s.catalog(),
                    None => state.gateway.catalog(&identity).await?,
                };
                let ctx = Ctx {
                    identity: &identity,
                    catalog: &catalog,
                    session: session.map(|s| s.id.as_str()),
                    page_size: state.options.page_size,
                    sink: Some(&sink),
                    era: audience.era(),
                    forwarded: forwarded.as_ref(),
                };
                observe::run(
                    request,
                    dispatch::dispatch(&state.gateway, &ctx, &method, params),
                )
                .await
                .map(dispatch::Reply::into_value)
            }
            .await;
            if let Some(s) = session {
                s.end(&key);
            }
            outcome
        }))
    };
    let joined = |r: Result<Result<Value, Failure>, tokio::task::JoinError>| {
        r.unwrap_or_else(|e| {
            Err(Failure::rpc(
                codes::INTERNAL_ERROR,
                format!("request failed: {e}"),
            ))
        })
    };
    let keepalive = state.options.sse_keepalive;
    let first = tokio::select! {
        biased;
        outcome = &mut work => First::Done(joined(outcome)),
        event = events.recv() => First::Event(event),
        () = tokio::time::sleep(keepalive) => First::Quiet,
    };
    let (done, first_event) = match first {
        // What the backend sent before its answer (its stream opening, progress) goes out
        // first, on a stream: the client gets the answer in the form the backend gave it.
        First::Done(outcome) => match events.try_recv() {
            Ok(event) => (Some(outcome), Some(event)),
            Err(_) => {
                let mut guard = cancel_on_drop;
                guard.0 = None;
                return match audience.finish(outcome, &method, &state) {
                    Ok(result) => reply::result(Format::Json, &id, &result),
                    Err(f) => reply::failure(Format::Json, &id, &f),
                };
            }
        },
        First::Event(event) => (None, event),
        First::Quiet => (None, None),
    };
    let (response, out) = audience.open_stream(&state);
    tokio::spawn(audit::carry(async move {
        let mut guard = cancel_on_drop;
        if let Some(event) = first_event {
            audience.relay(event, &out, &state);
        }
        let outcome = match done {
            Some(outcome) => outcome,
            None => loop {
                tokio::select! {
                    outcome = &mut work => break joined(outcome),
                    Some(event) = events.recv() => audience.relay(event, &out, &state),
                    // The client went away: the guard cancels a Modern request as it drops.
                    () = out.abandoned() => return,
                }
            },
        };
        guard.0 = None;
        // Whatever the backend sent before its answer goes out before the answer.
        while let Ok(event) = events.try_recv() {
            audience.relay(event, &out, &state);
        }
        let bytes = match audience.finish(outcome, &method, &state) {
            Ok(result) => jsonrpc::response_bytes(&id, &result),
            Err(f) => {
                audit::error(f.error.code, &f.error.message);
                jsonrpc::error_bytes(&id, &f.error)
            }
        };
        out.finish(&bytes).await;
    }));
    response
}

/// How the first wait of a forwarded request ended.
enum First {
    /// The request finished first.
    Done(Result<Value, Failure>),
    /// The backend sent something (None: it can send nothing more).
    Event(Option<CallEvent>),
    /// Nothing for a keep-alive interval.
    Quiet,
}

/// An SSE response fed by `rx` until it closes, with a comment every `keepalive` without an
/// event.
pub(crate) fn event_stream(rx: mpsc::Receiver<Bytes>, keepalive: Duration) -> Response {
    let body = futures_util::stream::unfold(rx, move |mut rx| async move {
        let bytes = match tokio::time::timeout(keepalive, rx.recv()).await {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return None,
            Err(_) => Bytes::from_static(KEEPALIVE),
        };
        Some((Ok::<_, Infallible>(bytes), rx))
    });
    sse_response(Body::from_stream(body))
}

/// A `text/event-stream` response with `body`, which proxies must neither cache nor buffer.
pub(crate) fn sse_response(body: Body) -> Response {
    let mut resp = Response::new(body);
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    resp
}
