//! A backend behind the deprecated HTTP+SSE transport (2024-11-05): a long-lived GET stream that
//! announces where to POST, and carries every answer back.

use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde_json::Value;
use tokio::sync::Mutex as AsyncMutex;
use vmcp_auth::redact_url;
use vmcp_proto::{Message, jsonrpc, revision, sse};

use crate::{
    client::Headers,
    connection::Connection,
    error::BackendError,
    error::describe,
    handshake::{self, ServerInfo},
    inbound::{Channel, Inbound},
    pending::Pending,
    redirect,
    sink::CallSink,
};

struct SseSession {
    post_url: reqwest::Url,
    pending: Pending,
    info: Arc<ServerInfo>,
    reader: tokio::task::JoinHandle<()>,
}

impl Drop for SseSession {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// An HTTP+SSE backend connection.
pub(crate) struct SseConnection {
    backend: String,
    inbound: Arc<Inbound>,
    client: crate::HttpClient,
    url: String,
    headers: Headers,
    session: Mutex<Option<Arc<SseSession>>>,
    connect_lock: AsyncMutex<()>,
}

impl SseConnection {
    pub(crate) fn new(
        backend: &str,
        client: crate::HttpClient,
        url: String,
        headers: Headers,
        inbound: Arc<Inbound>,
    ) -> Self {
        Self {
            backend: backend.to_string(),
            inbound,
            client,
            url,
            headers,
            session: Mutex::new(None),
            connect_lock: AsyncMutex::new(()),
        }
    }

    fn current(&self) -> Option<Arc<SseSession>> {
        let guard = self.session.lock().unwrap_or_else(|p| p.into_inner());
        guard.as_ref().filter(|s| !s.reader.is_finished()).cloned()
    }

    async fn session(&self) -> Result<Arc<SseSession>, BackendError> {
        if let Some(s) = self.current() {
            return Ok(s);
        }
        let _guard = self.connect_lock.lock().await;
        if let Some(s) = self.current() {
            return Ok(s);
        }
        let s = Arc::new(self.connect().await?);
        *self.session.lock().unwrap_or_else(|p| p.into_inner()) = Some(s.clone());
        Ok(s)
    }

    async fn connect(&self) -> Result<SseSession, BackendError> {
        let mut resp = self
            .client
            .get(&self.url)
            .headers(self.headers.to_map())
            .header(ACCEPT, "text/event-stream")
            .send()
            .await
            .map_err(|e| BackendError::Unavailable(describe(&e)))?;
        if resp.status().is_redirection() {
            return Err(BackendError::Unavailable(redirect::refused(
                resp.status(),
                resp.headers(),
                resp.url(),
            )));
        }
        if !resp.status().is_success() {
            return Err(BackendError::Unavailable(format!(
                "GET {} answered HTTP {}",
                redact_url(&self.url),
                resp.status()
            )));
        }
        let mut parser = sse::Parser::default();
        // The first event must announce the POST endpoint.
        let endpoint = loop {
            let chunk = resp
                .chunk()
                .await
                .map_err(|e| BackendError::Unavailable(describe(&e)))?
                .ok_or_else(|| {
                    BackendError::Protocol("SSE stream closed before the endpoint event".into())
                })?;
            let events = parser
                .try_feed(&chunk)
                .map_err(|_| BackendError::Protocol("SSE line too long".into()))?;
            if let Some(ev) = events.into_iter().find(|e| e.event == "endpoint") {
                break ev.data;
            }
        };
        let post_url = post_url(&self.url, &endpoint)?;
        let pending = Pending::default();
        let stream = Stream {
            backend: self.backend.clone(),
            pending: pending.clone(),
            inbound: self.inbound.clone(),
            client: self.client.clone(),
            post_url: post_url.clone(),
            headers: self.headers.clone(),
        };
        let reader = tokio::spawn(read_events(stream, resp, parser));
        let mut session = SseSession {
            post_url,
            pending,
            info: Arc::new(ServerInfo::default()),
            reader,
        };
        let params = handshake::initialize_params(revision::HTTP_SSE_VERSION);
        let result = self
            .round_trip(&session, 0, "initialize", Some(&params))
            .await?;
        session.info = Arc::new(handshake::parse_initialize_result(result)?);
        self.send(
            &session,
            jsonrpc::notification_bytes("notifications/initialized", None),
        )
        .await?;
        Ok(session)
    }

    async fn send(&self, session: &SseSession, body: Vec<u8>) -> Result<(), BackendError> {
        let mut headers = self.headers.to_map();
        headers.extend(crate::client::passthrough_headers().unwrap_or_default());
        let resp = self
            .client
            .post(session.post_url.clone())
            .headers(headers)
            .header(CONTENT_TYPE, "application/json")
            .body(body)
            .send()
            .await
            .map_err(|e| BackendError::Unavailable(describe(&e)))?;
        if resp.status().is_redirection() {
            return Err(BackendError::Unavailable(redirect::refused(
                resp.status(),
                resp.headers(),
                resp.url(),
            )));
        }
        if !resp.status().is_success() {
            return Err(BackendError::Unavailable(format!(
                "POST answered HTTP {}",
                resp.status()
            )));
        }
        Ok(())
    }

    async fn round_trip(
        &self,
        session: &SseSession,
        id: i64,
        method: &str,
        params: Option<&Value>,
    ) -> Result<Value, BackendError> {
        let slot = session.pending.register(id)?;
        self.send(
            session,
            jsonrpc::request_bytes(&Value::from(id), method, params),
        )
        .await?;
        slot.wait().await
    }
}

impl Connection for SseConnection {
    fn request<'a>(
        &'a self,
        id: i64,
        method: &'a str,
        params: Option<&'a Value>,
        sink: Option<&'a CallSink>,
    ) -> BoxFuture<'a, Result<Value, BackendError>> {
        Box::pin(async move {
            let session = self.session().await?;
            let _in_flight = self.inbound.track(id, sink);
            self.round_trip(&session, id, method, params).await
        })
    }

    fn notify<'a>(
        &'a self,
        method: &'a str,
        params: Option<&'a Value>,
    ) -> BoxFuture<'a, Result<(), BackendError>> {
        Box::pin(async move {
            let session = self.session().await?;
            self.send(&session, jsonrpc::notification_bytes(method, params))
                .await
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
            let s = self
                .session
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take();
            if let Some(s) = s {
                s.pending.close(BackendError::Unavailable(
                    "backend connection closed".into(),
                ));
            }
        })
    }
    fn headers(&self) -> Option<&Headers> {
        Some(&self.headers)
    }
}

/// What the stream reader needs to route messages and answer the backend's requests.
struct Stream {
    backend: String,
    pending: Pending,
    inbound: Arc<Inbound>,
    client: crate::HttpClient,
    post_url: reqwest::Url,
    headers: Headers,
}

async fn read_events(stream: Stream, mut resp: reqwest::Response, mut parser: sse::Parser) {
    let Stream {
        backend,
        pending,
        inbound,
        client,
        post_url,
        headers,
    } = stream;
    let why = loop {
        let chunk = match resp.chunk().await {
            Ok(Some(c)) => c,
            Ok(None) => break "the backend closed its SSE stream".to_string(),
            Err(e) => break format!("SSE stream broke: {}", describe(&e)),
        };
        let Ok(events) = parser.try_feed(&chunk) else {
            break "SSE line too long".to_string();
        };
        for ev in events {
            if !(ev.event.is_empty() || ev.event == "message") {
                continue;
            }
            match Message::parse(ev.data.as_bytes()) {
                Ok(Message::Response { id, result }) => resolve(&pending, &id, Ok(result)),
                Ok(Message::Error { id, error }) => {
                    resolve(&pending, &id, Err(BackendError::Rpc(error)))
                }
                Ok(other) => {
                    if let Some(request) = inbound.handle(other, Channel::Shared) {
                        let req = client
                            .post(post_url.clone())
                            .headers(headers.to_map())
                            .header(CONTENT_TYPE, "application/json");
                        tokio::spawn(async move {
                            let _ = req.body(request.answer().await.to_bytes()).send().await;
                        });
                    }
                }
                Err(e) => tracing::warn!(%backend, error = ?e, "backend sent a non-JSON-RPC event"),
            }
        }
    };
    tracing::info!(%backend, "{why}");
    pending.close(BackendError::Unavailable(why));
}

/// Where to POST, from the backend URL and the data of its `endpoint` event: resolved against
/// the backend URL and on its origin (a backend cannot send the gateway's traffic elsewhere).
pub(crate) fn post_url(backend_url: &str, endpoint: &str) -> Result<reqwest::Url, BackendError> {
    let base = reqwest::Url::parse(backend_url)
        .map_err(|e| BackendError::Unavailable(format!("bad backend URL: {e}")))?;
    let post_url = base
        .join(endpoint.trim())
        .map_err(|e| BackendError::Protocol(format!("bad endpoint event {endpoint:?}: {e}")))?;
    if post_url.origin() != base.origin() {
        return Err(BackendError::Protocol(
            "endpoint event points to another origin".into(),
        ));
    }
    Ok(post_url)
}

fn resolve(pending: &Pending, id: &Value, reply: Result<Value, BackendError>) {
    if !id.as_i64().is_some_and(|id| pending.resolve(id, reply)) {
        tracing::debug!(%id, "answer for a request nobody waits for (late or unknown id)");
    }
}
