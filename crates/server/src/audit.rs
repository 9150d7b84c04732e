//! Auditing at the HTTP edge: a layer around `/mcp` that reserves the request's place in the
//! audit queue, lets the handlers note what they learn (who called, which method and target,
//! which backend, which JSON-RPC error), and writes the line when the response body ends, so a
//! streamed answer is audited with its real duration and outcome. 401s and 403s pass through it
//! like any other answer, on both revisions.
//!
//! Handlers note through a task-local, so nothing changes for them when audit is off (each note
//! is then one failed task-local lookup).

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Instant, SystemTime};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use bytes::Bytes;
use futures_util::future::Either;
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use http_body::{Frame, SizeHint};
use serde_json::Value;
use vmcp_audit::{Auditor, HttpEvent, Slot};
use vmcp_core::{Catalog, Identity};
use vmcp_proto::codes;

use crate::{reply, state::AppState};

/// The TCP peer of a request, put in its extensions by the connection that read it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Peer(pub(crate) SocketAddr);

tokio::task_local! {
    static NOTE: Arc<Note>;
}

/// What the handlers of one request noted. A batch notes one event per message.
pub(crate) struct Note {
    event: Mutex<HttpEvent>,
    items: Mutex<Vec<HttpEvent>>,
    keep_request: bool,
}

impl Note {
    fn with_event(&self, f: impl FnOnce(&mut HttpEvent)) {
        if let Ok(mut items) = self.items.lock()
            && let Some(last) = items.last_mut()
        {
            f(last);
            return;
        }
        if let Ok(mut e) = self.event.lock() {
            f(&mut e);
        }
    }

    /// Notes the JSON-RPC error answered.
    pub(crate) fn error(&self, code: i64, message: &str) {
        self.with_event(|e| e.error = Some((code, message.to_string())));
    }
}

/// The current request's note, for work moved to another task.
pub(crate) fn current() -> Option<Arc<Note>> {
    NOTE.try_with(Arc::clone).ok()
}

fn with(f: impl FnOnce(&Note)) {
    let _ = NOTE.try_with(|n| f(n));
}

/// Notes who called.
pub(crate) fn identity(identity: &Identity) {
    with(|n| {
        if let Ok(mut e) = n.event.lock() {
            e.identity = Some(identity.clone());
        }
    });
}

/// Notes the request body (kept only when request data is audited).
pub(crate) fn body(bytes: &Bytes) {
    with(|n| {
        if n.keep_request
            && let Ok(mut e) = n.event.lock()
        {
            e.request = Some(bytes.clone());
        }
    });
}

/// Notes the JSON-RPC method and what it is about.
pub(crate) fn request(method: &str, params: Option<&Value>) {
    with(|n| n.with_event(|e| set_request(e, method, params)));
}

/// Starts the event of one message of a batch.
pub(crate) fn batch_item(method: &str, params: Option<&Value>) {
    with(|n| {
        let base = n.event.lock().map(|e| e.clone()).unwrap_or_default();
        let mut item = base;
        set_request(&mut item, method, params);
        if n.keep_request {
            item.request = params.map(|p| Bytes::from(p.to_string()));
        }
        if let Ok(mut items) = n.items.lock() {
            items.push(item);
        }
    });
}

/// Notes the JSON-RPC error answered.
pub(crate) fn error(code: i64, message: &str) {
    with(|n| n.error(code, message));
}

/// Notes the backend that serves a forwarded request.
pub(crate) fn backend(catalog: &Catalog, method: &str, params: &Value) {
    with(|n| {
        let text = |k: &str| params.get(k).and_then(Value::as_str).unwrap_or_default();
        let backend = match method {
            "tools/call" => catalog.tool(text("name")).map(|r| r.backend.as_str()),
            "prompts/get" => catalog.prompt(text("name")).map(|r| r.backend.as_str()),
            "resources/read" => catalog
                .resource_backend(text("uri"))
                .or_else(|| catalog.template_backend(text("uri"))),
            _ => None,
        };
        if let Some(b) = backend {
            n.with_event(|e| e.backend = Some(b.to_string()));
        }
    });
}

fn set_request(e: &mut HttpEvent, method: &str, params: Option<&Value>) {
    e.method = Some(method.to_string());
    if method == "initialize" && e.protocol_version.is_none() {
        e.protocol_version = params
            .and_then(|p| p.get("protocolVersion"))
            .and_then(Value::as_str)
            .map(str::to_string);
    }
    let key = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => "uri",
        _ => return,
    };
    e.target = params
        .and_then(|p| p.get(key))
        .and_then(Value::as_str)
        .map(str::to_string);
}

pub(crate) fn header_text(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// The layer: reserve, serve, and write the line when the response ends.
pub(crate) async fn layer(
    State(state): State<Arc<AppState>>,
    req: Request,
    next: Next,
) -> Response {
    let Some(auditor) = state.options.audit.clone() else {
        return next.run(req).await;
    };
    let slot = match auditor.reserve().await {
        Ok(slot) => slot,
        Err(why) => {
            tracing::warn!(reason = %why.0, "refusing a request: the audit log cannot be written");
            let mut resp = reply::refuse(
                StatusCode::SERVICE_UNAVAILABLE,
                codes::INTERNAL_ERROR,
                "the audit log cannot be written; requests are refused until it can be",
            );
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
            return resp;
        }
    };
    let headers = req.headers();
    let event = HttpEvent {
        started: Some(SystemTime::now()),
        http_method: req.method().to_string(),
        endpoint: req.uri().path().to_string(),
        peer: req.extensions().get::<Peer>().map(|p| p.0),
        user_agent: header_text(headers, "user-agent"),
        request_id: header_text(headers, "x-request-id"),
        forwarded_for: header_text(headers, "x-forwarded-for"),
        protocol_version: header_text(headers, "mcp-protocol-version"),
        ..HttpEvent::default()
    };
    let is_get = req.method() == Method::GET;
    let note = Arc::new(Note {
        event: Mutex::new(event),
        items: Mutex::new(Vec::new()),
        keep_request: auditor.settings().include_request_data,
    });
    let started = Instant::now();
    let resp = NOTE.scope(note.clone(), next.run(req)).await;
    let status = resp.status().as_u16();
    let is_stream = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    let listens = note
        .event
        .lock()
        .is_ok_and(|e| e.method.as_deref() == Some("subscriptions/listen"));
    let mut pending = Pending {
        auditor,
        slot: Some(slot),
        note,
        status,
        started,
        ended: None,
        size: 0,
        capture: None,
        capture_limit: 0,
    };
    if is_stream && (is_get || listens) {
        // A GET stream lives as long as the session, a Modern listen as long as the client
        // wants: both are audited when they open.
        if let Ok(mut e) = pending.note.event.lock() {
            e.stream_open = is_get;
        }
        pending.write();
        return resp;
    }
    if pending.auditor.settings().include_response_data {
        pending.capture_limit = pending.auditor.response_capture_limit();
        pending.capture = Some(Vec::new());
    }
    resp.map(|body| {
        Body::new(AuditedBody {
            inner: body,
            pending,
        })
    })
}

/// A request whose line is not written yet.
struct Pending {
    auditor: Arc<Auditor>,
    slot: Option<Slot>,
    note: Arc<Note>,
    status: u16,
    started: Instant,
    ended: Option<Instant>,
    size: u64,
    capture: Option<Vec<u8>>,
    capture_limit: usize,
}

impl Pending {
    fn write(&mut self) {
        let Some(slot) = self.slot.take() else {
            return;
        };
        let duration = self.ended.unwrap_or_else(Instant::now) - self.started;
        let mut base = match self.note.event.lock() {
            Ok(e) => e.clone(),
            Err(_) => return,
        };
        base.status = self.status;
        base.duration = duration;
        base.response_size = self.size;
        base.response = self.capture.take();
        let items = self
            .note
            .items
            .lock()
            .map(|mut i| std::mem::take(&mut *i))
            .unwrap_or_default();
        if items.is_empty() {
            self.auditor.emit(slot, &base);
            return;
        }
        let mut slot = Some(slot);
        for mut item in items {
            item.status = self.status;
            item.duration = duration;
            item.identity.clone_from(&base.identity);
            item.response_size = self.size;
            self.auditor.emit(slot.take().unwrap_or_default(), &item);
        }
    }
}

/// The response body, counted (and its start kept, when response data is audited) as it goes
/// out; the line is written when it ends or is dropped (a client that hangs up mid-stream).
struct AuditedBody {
    inner: Body,
    pending: Pending,
}

impl http_body::Body for AuditedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    let p = &mut this.pending;
                    p.size += data.len() as u64;
                    if let Some(c) = &mut p.capture {
                        let room = p.capture_limit.saturating_sub(c.len());
                        c.extend_from_slice(&data[..room.min(data.len())]);
                    }
                }
            }
            Poll::Ready(None) => {
                this.pending.ended = Some(Instant::now());
                this.pending.write();
            }
            _ => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for AuditedBody {
    fn drop(&mut self) {
        self.pending.write();
    }
}

/// `fut` with the current request's note, for work spawned onto another task. Not an `async`
/// block: one would hold `fut` twice (as captured and as awaited), doubling what is spawned.
pub(crate) fn carry<F: Future>(fut: F) -> impl Future<Output = F::Output> {
    match current() {
        Some(n) => Either::Left(NOTE.scope(n, fut)),
        None => Either::Right(fut),
    }
}

#[cfg(test)]
mod tests {
    /// Every spawned request is carried: the wrapper must not hold the request twice.
    #[test]
    fn carry_holds_its_future_once() {
        let work = async {
            let state = [1u8; 4096];
            std::future::ready(()).await;
            state[0]
        };
        let alone = std::mem::size_of_val(&work);
        let carried = super::carry(work);
        assert!(alone >= 4096);
        assert!(std::mem::size_of_val(&carried) < alone + 64);
    }
}
