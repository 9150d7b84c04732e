//! A backend behind MCP Streamable HTTP (2025-11-25 and earlier): one session, opened lazily,
//! re-opened when the backend forgets it (HTTP 404), closed with DELETE on shutdown.

use std::sync::{Arc, RwLock};

use futures_util::future::BoxFuture;
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde_json::Value;
use tokio::sync::Mutex as AsyncMutex;
use vmcp_proto::{Message, jsonrpc, revision, sse};

use crate::{
    client::{Endpoint, Headers, Post, Response, SESSION_HEADER, VERSION_HEADER, passed_through},
    connection::Connection,
    error::{BackendError, describe},
    handshake::{self, ServerInfo},
    inbound::{Channel, Inbound, Notice},
    sink::CallSink,
};

/// A backend refusing the gateway's credential: the client is told which backend, by a JSON-RPC
/// error, never by an HTTP 401 of the gateway's own (which would send it into an OAuth flow
/// against the gateway).
pub(crate) fn refused_credential(status: StatusCode) -> BackendError {
    BackendError::Auth(format!(
        "the backend refused the gateway's credential (HTTP {status}); check outgoingAuth for it"
    ))
}

/// Reconnection time when a backend closes a response stream without saying (`retry:`).
const DEFAULT_RETRY_MS: u64 = 1000;
/// Longest reconnection time honoured, so a backend cannot park a request for hours.
const MAX_RETRY_MS: u64 = 30_000;
/// Reconnections in a row that bring no event before the request is given up.
const MAX_QUIET_RESUMES: u32 = 5;

struct HttpSession {
    id: Option<HeaderValue>,
    version: HeaderValue,
    info: Arc<ServerInfo>,
    poster: Poster,
    /// The standalone GET stream reader, for list changes and resource updates.
    listener: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for HttpSession {
    fn drop(&mut self) {
        if let Some(l) = &self.listener {
            l.abort();
        }
    }
}

/// A Streamable HTTP backend connection.
pub(crate) struct HttpConnection {
    backend: String,
    inbound: Arc<Inbound>,
    client: crate::HttpClient,
    endpoint: Endpoint,
    headers: Headers,
    session: RwLock<Option<Arc<HttpSession>>>,
    init_lock: AsyncMutex<()>,
}

/// How one POST ended.
enum Outcome {
    Answer(Result<Value, BackendError>),
    Accepted,
    SessionGone,
}

impl HttpConnection {
    pub(crate) fn new(
        backend: &str,
        client: crate::HttpClient,
        endpoint: Endpoint,
        headers: Headers,
        inbound: Arc<Inbound>,
    ) -> Self {
        Self {
            backend: backend.to_string(),
            inbound,
            endpoint,
            client,
            headers,
            session: RwLock::new(None),
            init_lock: AsyncMutex::new(()),
        }
    }

    fn current(&self) -> Option<Arc<HttpSession>> {
        self.session
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    async fn session(&self) -> Result<Arc<HttpSession>, BackendError> {
        if let Some(s) = self.current() {
            return Ok(s);
        }
        let _guard = self.init_lock.lock().await;
        if let Some(s) = self.current() {
            return Ok(s);
        }
        let s = Arc::new(self.initialize().await?);
        *self.session.write().unwrap_or_else(|p| p.into_inner()) = Some(s.clone());
        Ok(s)
    }

    /// Forgets `stale` (only if it is still the current session, so concurrent callers re-open once).
    fn forget(&self, stale: &Arc<HttpSession>) {
        let mut cur = self.session.write().unwrap_or_else(|p| p.into_inner());
        if cur.as_ref().is_some_and(|c| Arc::ptr_eq(c, stale)) {
            *cur = None;
        }
    }

    async fn initialize(&self) -> Result<HttpSession, BackendError> {
        let params = handshake::initialize_params(revision::LATEST_LEGACY);
        let body = jsonrpc::request_bytes(&Value::from(0), "initialize", Some(&params));
        let resp = self.post(None, body).await?;
        let id = resp.headers().get(SESSION_HEADER).cloned();
        let info = match self.read_outcome(resp, Some(0), None, None).await? {
            Outcome::Answer(r) => handshake::parse_initialize_result(r?)?,
            Outcome::Accepted | Outcome::SessionGone => {
                return Err(BackendError::Protocol("initialize was not answered".into()));
            }
        };
        let version = HeaderValue::from_str(&info.protocol_version)
            .map_err(|_| BackendError::Protocol("unusable protocolVersion".into()))?;
        let poster = Poster {
            client: self.client.clone(),
            endpoint: self.endpoint.clone(),
            headers: self.headers.clone(),
            session: id.clone(),
            version: version.clone(),
        };
        let mut session = HttpSession {
            id,
            version,
            info: Arc::new(info),
            poster,
            listener: None,
        };
        let note = jsonrpc::notification_bytes("notifications/initialized", None);
        let resp = self.post(Some(&session), note).await?;
        self.read_outcome(resp, None, Some(&session), None).await?;
        if session.id.is_some() && wants_listener(&session.info) {
            let poster = session.poster.clone();
            session.listener = Some(tokio::spawn(listen(
                self.backend.clone(),
                poster,
                self.inbound.clone(),
            )));
        }
        tracing::debug!(backend = %self.backend, version = ?session.version, "backend session opened");
        Ok(session)
    }

    async fn post(
        &self,
        session: Option<&HttpSession>,
        body: impl Into<bytes::Bytes>,
    ) -> Result<Response, BackendError> {
        let req = match session {
            Some(s) => s.poster.post(),
            None => self
                .client
                .post_to(&self.endpoint)
                .headers(&self.headers.load()),
        };
        passed_through(req)
            .header(ACCEPT, "application/json, text/event-stream")
            .header(CONTENT_TYPE, "application/json")
            .send(body)
            .await
            .map_err(BackendError::Unavailable)
    }

    /// Reads the answer to one POST: a JSON body, an SSE stream carrying it, 202, or a 404 session.
    async fn read_outcome(
        &self,
        resp: Response,
        id: Option<i64>,
        session: Option<&HttpSession>,
        sink: Option<&CallSink>,
    ) -> Result<Outcome, BackendError> {
        let status = resp.status();
        if status == StatusCode::NOT_FOUND && session.is_some_and(|s| s.id.is_some()) {
            return Ok(Outcome::SessionGone);
        }
        if status == StatusCode::ACCEPTED {
            return Ok(Outcome::Accepted);
        }
        if matches!(status.as_u16(), 401 | 403) {
            return Err(refused_credential(status));
        }
        if !status.is_success() {
            let text = resp.text_prefix(4096).await;
            // A client error carrying a JSON-RPC error is the backend's answer (a 2026-07-28-only
            // server refuses the handshake with -32601 at 404); auth and overload stay transport
            // failures.
            if status.is_client_error()
                && !matches!(status.as_u16(), 401 | 403 | 407 | 408 | 429)
                && let Ok(Message::Error { error, .. }) = Message::parse(text.as_bytes())
            {
                return Ok(Outcome::Answer(Err(BackendError::Rpc(error))));
            }
            let snippet: String = text.chars().take(200).collect();
            return Err(BackendError::Unavailable(format!(
                "HTTP {status}: {snippet}"
            )));
        }
        let Some(id) = id else {
            return Ok(Outcome::Accepted);
        };
        let streamed = resp.is_event_stream();
        self.inbound.routes.answered(streamed);
        if streamed {
            if let Some(sink) = sink {
                sink.stream_opened();
            }
            return self
                .read_stream(resp, id, session, sink)
                .await
                .map(Outcome::Answer);
        }
        let body = resp.read_body().await?;
        match Message::parse(&body) {
            Ok(msg) => Ok(Outcome::Answer(answer_for(id, msg))),
            Err(e) => Err(BackendError::Protocol(format!(
                "response is not JSON-RPC: {}",
                e.to_error().1.message
            ))),
        }
    }

    async fn read_stream(
        &self,
        mut resp: Response,
        id: i64,
        session: Option<&HttpSession>,
        sink: Option<&CallSink>,
    ) -> Result<Result<Value, BackendError>, BackendError> {
        let mut parser = sse::Parser::default();
        let mut quiet_resumes = 0;
        loop {
            let chunk = match resp.chunk().await {
                Ok(Some(chunk)) => chunk,
                // The stream ended (or broke) before the answer. A backend that gave its events
                // ids may have closed the connection on purpose, to be polled (2025-11-25
                // transports, SEP-1699): resume it with GET and Last-Event-ID after the `retry`
                // time it asked for. Nothing is sent again: the request may be running.
                end => {
                    let (Some(s), Some(last)) = (session, parser.last_event_id()) else {
                        return Err(match end {
                            Err(e) => {
                                BackendError::Unavailable(format!("response stream broke: {e}"))
                            }
                            Ok(_) => BackendError::Protocol(
                                "response stream ended without an answer".into(),
                            ),
                        });
                    };
                    quiet_resumes += 1;
                    if quiet_resumes > MAX_QUIET_RESUMES {
                        return Err(BackendError::Protocol(format!(
                            "response stream closed {MAX_QUIET_RESUMES} times in a row without an event"
                        )));
                    }
                    let wait = std::time::Duration::from_millis(
                        parser
                            .retry_ms()
                            .unwrap_or(DEFAULT_RETRY_MS)
                            .min(MAX_RETRY_MS),
                    );
                    // A clean close is the backend asking to be polled: the client is told to
                    // poll too (a broken connection is only ours to mend).
                    if let (Ok(None), Some(sink)) = (&end, sink) {
                        sink.stream_paused(wait);
                    }
                    tokio::time::sleep(wait).await;
                    resp = s.poster.resume(last).await?;
                    parser.reconnected();
                    continue;
                }
            };
            let events = parser
                .try_feed(&chunk)
                .map_err(|_| BackendError::Protocol("SSE line too long".into()))?;
            if !events.is_empty() {
                quiet_resumes = 0;
            }
            for ev in events {
                if ev.data.is_empty() {
                    continue;
                }
                let msg = match Message::parse(ev.data.as_bytes()) {
                    Ok(m) => m,
                    Err(e) => {
                        tracing::warn!(backend = %self.backend, error = ?e, "backend sent a non-JSON-RPC event");
                        continue;
                    }
                };
                match msg {
                    Message::Response { .. } | Message::Error { .. } => {
                        return Ok(answer_for(id, msg));
                    }
                    other => {
                        // Progress, logs and server-to-client requests of this very request.
                        if let Some(request) = self.inbound.handle(other, Channel::Request(sink))
                            && let Some(s) = session
                        {
                            let poster = s.poster.clone();
                            tokio::spawn(async move { poster.send(request.answer().await).await });
                        }
                    }
                }
            }
        }
    }

    async fn exchange(
        &self,
        id: Option<i64>,
        body: Vec<u8>,
        sink: Option<&CallSink>,
    ) -> Result<Outcome, BackendError> {
        // Bytes: a retry after a forgotten session re-sends without copying.
        let body = bytes::Bytes::from(body);
        let mut retried = false;
        loop {
            let session = self.session().await?;
            let resp = self.post(Some(&session), body.clone()).await?;
            match self.read_outcome(resp, id, Some(&session), sink).await? {
                Outcome::SessionGone if !retried => {
                    // The backend forgot our session before handling the message: open a new one
                    // and send it again (it cannot have run).
                    tracing::info!(backend = %self.backend, "backend session expired; re-initialising");
                    self.forget(&session);
                    // Usually the backend restarted: what it serves may have changed too.
                    self.inbound.routes.announce(Notice::Restarted);
                    retried = true;
                }
                Outcome::SessionGone => {
                    return Err(BackendError::Unavailable(
                        "backend rejected a fresh session".into(),
                    ));
                }
                other => return Ok(other),
            }
        }
    }
}

impl Connection for HttpConnection {
    fn request<'a>(
        &'a self,
        id: i64,
        method: &'a str,
        params: Option<&'a Value>,
        sink: Option<&'a CallSink>,
    ) -> BoxFuture<'a, Result<Value, BackendError>> {
        Box::pin(async move {
            let body = jsonrpc::request_bytes(&Value::from(id), method, params);
            let _in_flight = self.inbound.track(id, sink);
            match self.exchange(Some(id), body, sink).await? {
                Outcome::Answer(r) => r,
                _ => Err(BackendError::Protocol(format!(
                    "{method} was accepted but never answered"
                ))),
            }
        })
    }

    fn notify<'a>(
        &'a self,
        method: &'a str,
        params: Option<&'a Value>,
    ) -> BoxFuture<'a, Result<(), BackendError>> {
        Box::pin(async move {
            self.exchange(None, jsonrpc::notification_bytes(method, params), None)
                .await
                .map(|_| ())
        })
    }

    fn ready(&self) -> BoxFuture<'_, Result<Arc<ServerInfo>, BackendError>> {
        Box::pin(async move { Ok(self.session().await?.info.clone()) })
    }

    fn server_info(&self) -> Option<Arc<ServerInfo>> {
        self.current().map(|s| s.info.clone())
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let Some(session) = self
                .session
                .write()
                .unwrap_or_else(|p| p.into_inner())
                .take()
            else {
                return;
            };
            let Some(id) = &session.id else { return };
            let req = self
                .client
                .delete(self.endpoint.url().clone())
                .headers(self.headers.to_map())
                .header(SESSION_HEADER, id.clone())
                .header(VERSION_HEADER, session.version.clone())
                .timeout(std::time::Duration::from_secs(2));
            let _ = req.send().await;
        })
    }
}

/// The result for request `id` carried by `msg`.
pub(crate) fn answer_for(id: i64, msg: Message) -> Result<Value, BackendError> {
    match msg {
        Message::Response { id: rid, result } if rid.as_i64() == Some(id) => Ok(result),
        Message::Error { id: rid, error } if rid.as_i64() == Some(id) || rid.is_null() => {
            Err(BackendError::Rpc(error))
        }
        other => Err(not_the_answer(id, &other)),
    }
}

/// The error for a message where request `id`'s answer should be. It names the message by kind
/// and id or method, never by content: that may be another request's answer (another caller's
/// result), and this error goes to this request's caller, the logs and `/status`.
pub(crate) fn not_the_answer(id: i64, other: &Message) -> BackendError {
    let short = |s: String| s.chars().take(64).collect::<String>();
    let got = match other {
        Message::Response { id: rid, .. } => {
            format!("the answer to request {}", short(rid.to_string()))
        }
        Message::Error { id: rid, .. } => {
            format!("an error answer to request {}", short(rid.to_string()))
        }
        Message::Request { method, .. } => format!("a request ({})", short(method.clone())),
        Message::Notification { method, .. } => {
            format!("a notification ({})", short(method.clone()))
        }
    };
    BackendError::Protocol(format!("expected the answer to request {id}, got {got}"))
}

/// Everything needed to POST one message into an established backend session, detached from the
/// connection so spawned tasks (answers, the GET stream) can use it.
#[derive(Clone)]
struct Poster {
    client: crate::HttpClient,
    endpoint: Endpoint,
    headers: Headers,
    session: Option<HeaderValue>,
    version: HeaderValue,
}

impl Poster {
    fn request(&self, builder: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        let mut b = with_headers(builder, &self.headers.load())
            .header(VERSION_HEADER, self.version.clone());
        if let Some(id) = &self.session {
            b = b.header(SESSION_HEADER, id.clone());
        }
        b
    }

    /// Starts a POST into the session.
    fn post(&self) -> Post {
        let mut post = self
            .client
            .post_to(&self.endpoint)
            .headers(&self.headers.load())
            .header(VERSION_HEADER, self.version.clone());
        if let Some(id) = &self.session {
            post = post.header(SESSION_HEADER, id.clone());
        }
        post
    }

    /// Resumes a response stream the backend closed: GET with `Last-Event-ID`.
    async fn resume(&self, last_event_id: &str) -> Result<Response, BackendError> {
        let last = HeaderValue::from_str(last_event_id)
            .map_err(|_| BackendError::Protocol("unusable SSE event id".into()))?;
        let resp = self
            .request(self.client.get(self.endpoint.url().clone()))
            .header(ACCEPT, "text/event-stream")
            .header("last-event-id", last)
            .send()
            .await
            .map_err(|e| {
                BackendError::Unavailable(format!(
                    "cannot resume the response stream: {}",
                    describe(&e)
                ))
            })?;
        if resp.status().is_redirection() {
            return Err(BackendError::Unavailable(format!(
                "cannot resume the response stream: {}",
                crate::redirect::refused(resp.status(), resp.headers(), resp.url())
            )));
        }
        let resp = Response::from(resp);
        if !resp.status().is_success() || !resp.is_event_stream() {
            return Err(BackendError::Unavailable(format!(
                "cannot resume the response stream: HTTP {}",
                resp.status()
            )));
        }
        Ok(resp)
    }

    /// Sends one message (an answer to the backend's request); the outcome only matters to logs.
    async fn send(&self, msg: Message) {
        let sent = self
            .post()
            .header(ACCEPT, "application/json, text/event-stream")
            .header(CONTENT_TYPE, "application/json")
            .send(msg.to_bytes())
            .await;
        match sent {
            Ok(resp) => resp.drain().await,
            Err(e) => tracing::debug!(error = %e, "cannot deliver an answer to the backend"),
        }
    }
}

/// Whether the backend may push anything on the standalone stream worth listening to. Some servers
/// misbehave when the stream is opened for nothing, so only open it when they announce pushes.
fn wants_listener(info: &ServerInfo) -> bool {
    let flag = |cap: &str, key: &str| {
        info.capabilities
            .get(cap)
            .and_then(|c| c.get(key))
            .and_then(Value::as_bool)
            == Some(true)
    };
    flag("tools", "listChanged")
        || flag("prompts", "listChanged")
        || flag("resources", "listChanged")
        || flag("resources", "subscribe")
}

/// Reads the session's standalone GET stream for as long as the session lives, reconnecting with
/// backoff; stops for good if the backend does not offer one (405) or forgot the session (404).
async fn listen(backend: String, poster: Poster, inbound: Arc<Inbound>) {
    let mut backoff = std::time::Duration::from_millis(500);
    loop {
        let resp = poster
            .request(poster.client.get(poster.endpoint.url().clone()))
            .header(ACCEPT, "text/event-stream")
            .send()
            .await;
        match resp {
            Ok(mut resp) if resp.status().is_success() => {
                backoff = std::time::Duration::from_millis(500);
                let mut parser = sse::Parser::default();
                while let Ok(Some(chunk)) = resp.chunk().await {
                    let Ok(events) = parser.try_feed(&chunk) else {
                        break;
                    };
                    for ev in events {
                        let Ok(msg) = Message::parse(ev.data.as_bytes()) else {
                            continue;
                        };
                        if let Some(request) = inbound.handle(msg, Channel::Standalone) {
                            let poster = poster.clone();
                            tokio::spawn(async move { poster.send(request.answer().await).await });
                        }
                    }
                }
            }
            Ok(resp)
                if matches!(
                    resp.status(),
                    StatusCode::METHOD_NOT_ALLOWED | StatusCode::NOT_FOUND
                ) =>
            {
                tracing::debug!(%backend, status = %resp.status(), "backend offers no standalone stream");
                return;
            }
            Ok(resp) => {
                tracing::debug!(%backend, status = %resp.status(), "standalone stream refused")
            }
            Err(e) => tracing::debug!(%backend, error = %describe(&e), "standalone stream failed"),
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(std::time::Duration::from_secs(30));
    }
}

/// Adds the backend's static headers, if it has any (most have none: skip the copy).
pub(crate) fn with_headers(
    req: reqwest::RequestBuilder,
    headers: &HeaderMap,
) -> reqwest::RequestBuilder {
    if headers.is_empty() {
        req
    } else {
        req.headers(headers.clone())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn regression_another_requests_answer_is_refused_without_its_content() {
        let theirs = Message::Response {
            id: json!(7),
            result: json!({"content": [{"type": "text", "text": "SOMEONE-ELSES-RESULT"}]}),
        };
        let e = answer_for(5, theirs).unwrap_err();
        assert!(matches!(e, BackendError::Protocol(_)), "{e:?}");
        let text = e.to_string();
        assert!(!text.contains("SOMEONE-ELSES"), "{text}");
        assert_eq!(
            text,
            "protocol violation: expected the answer to request 5, got the answer to request 7"
        );
        let failed = Message::Error {
            id: json!("x"),
            error: vmcp_proto::ErrorObject::new(-32603, "SOMEONE-ELSES-FAILURE"),
        };
        let text = answer_for(5, failed).unwrap_err().to_string();
        assert!(!text.contains("SOMEONE-ELSES"), "{text}");
        assert!(
            text.ends_with("got an error answer to request \"x\""),
            "{text}"
        );
    }
}
