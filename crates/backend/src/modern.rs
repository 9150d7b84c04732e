//! A backend speaking MCP 2026-07-28 over Streamable HTTP: no handshake and no session; every
//! request carries the protocol version, our identity and the client's capabilities in `_meta`,
//! and the `Mcp-Method`/`Mcp-Name` headers. Also the `server/discover` probe that tells whether a
//! backend speaks this revision at all.

use std::sync::{Arc, OnceLock};

use futures_util::future::BoxFuture;
use reqwest::Url;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde_json::{Map, Value, json};
use vmcp_proto::era::{
    META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL, META_PROTOCOL_VERSION,
    META_SERVER_INFO,
};
use vmcp_proto::{Message, codes, era, jsonrpc, mcp_name, meta::strip_reserved, revision, sse};

use crate::{
    client::{
        Endpoint, Headers, METHOD_HEADER, NAME_HEADER, Response, VERSION_HEADER, passed_through,
    },
    connection::Connection,
    error::BackendError,
    error::describe,
    handshake::ServerInfo,
    http::with_headers,
    inbound::{Channel, Inbound},
    listen::Listener,
    param_headers::ParamHeaders,
    sink::CallSink,
};

/// What a `server/discover` probe says about a backend.
#[derive(Debug)]
pub(crate) enum Probe {
    /// It serves 2026-07-28; `legacy` is Some(true) when the answer lists a session-based revision
    /// too. Nothing else can be read from it: servers that serve both (the Python SDK's, for one)
    /// list only 2026-07-28, so whether the handshake works is learnt by trying it.
    Modern {
        /// What it said about itself.
        info: ServerInfo,
        /// Whether it also serves a session-based revision.
        legacy: Option<bool>,
    },
    /// It does not (or only answers like a session-based server).
    Legacy,
    /// The answer says nothing about the revision (auth, overload, outage): do not remember it.
    Inconclusive(BackendError),
}

/// A Modern request was refused in a way that says the backend is not Modern after all (a bare 4xx
/// with no JSON-RPC body, or a "session required" error): it did not run, so it is safe to send
/// again in the session-based revision.
#[derive(Debug)]
pub(crate) struct WrongEra;

/// A Modern Streamable HTTP backend.
pub(crate) struct ModernConnection {
    backend: String,
    client: crate::HttpClient,
    endpoint: Endpoint,
    headers: Headers,
    inbound: Arc<Inbound>,
    info: OnceLock<Arc<ServerInfo>>,
    listener: Listener,
    param_headers: ParamHeaders,
}

impl ModernConnection {
    pub(crate) fn new(
        backend: &str,
        client: crate::HttpClient,
        endpoint: Endpoint,
        headers: Headers,
        inbound: Arc<Inbound>,
    ) -> Self {
        let listener = Listener::new(
            backend,
            client.clone(),
            endpoint.url().clone(),
            headers.clone(),
            inbound.clone(),
        );
        Self {
            backend: backend.to_string(),
            endpoint,
            client,
            headers,
            listener,
            inbound,
            info: OnceLock::new(),
            param_headers: ParamHeaders::default(),
        }
    }

    /// Records what the probe learnt; a backend announcing list changes gets a listen stream.
    pub(crate) fn set_info(&self, info: ServerInfo) {
        self.listener.list_changes(&info.capabilities);
        let _ = self.info.set(Arc::new(info));
    }

    /// Starts or stops forwarding `notifications/resources/updated` for `uri` (2026-07-28 has no
    /// resources/subscribe: the URI joins the listen stream's filter).
    pub(crate) fn watch_resource(&self, uri: &str, on: bool) {
        self.listener.resource(uri, on);
    }

    /// Sends one request; `Err(WrongEra)` when the refusal shows the backend is not Modern.
    pub(crate) async fn call(
        &self,
        id: i64,
        method: &str,
        params: Option<&Value>,
        sink: Option<&CallSink>,
    ) -> Result<Result<Value, BackendError>, WrongEra> {
        let body = modern_body(id, method, params, sink);
        let resp = match self.post(method, params, body).await {
            Ok(r) => r,
            Err(e) => return Ok(Err(e)),
        };
        let answer = read_answer(&self.backend, resp, id, sink, &self.inbound).await;
        if method == "tools/list"
            && let Ok(Ok(result)) = &answer
        {
            self.param_headers.learn(result);
        }
        answer
    }

    async fn post(
        &self,
        method: &str,
        params: Option<&Value>,
        body: Vec<u8>,
    ) -> Result<Response, BackendError> {
        let mut req = passed_through(
            self.client
                .post_to(&self.endpoint)
                .headers(&self.headers.load()),
        )
        .header(ACCEPT, "application/json, text/event-stream")
        .header(CONTENT_TYPE, "application/json")
        .header(VERSION_HEADER, revision::MODERN)
        .header(METHOD_HEADER, method);
        if method == "tools/call"
            && let Some(tool) = params.and_then(|p| p.get("name")).and_then(Value::as_str)
        {
            for (name, value) in self
                .param_headers
                .headers_for(tool, params.and_then(|p| p.get("arguments")))
            {
                req = req.header(name, value);
            }
        }
        if era::names_a_target(method) {
            let key = if method == "resources/read" {
                "uri"
            } else {
                "name"
            };
            if let Some(name) = params.and_then(|p| p.get(key)).and_then(Value::as_str) {
                req = req.header(NAME_HEADER, mcp_name::encode(name));
            }
        }
        req.send(body).await.map_err(BackendError::Unavailable)
    }
}

/// The request body: the caller's params, reserved `_meta` keys replaced by ours.
pub(crate) fn modern_body(
    id: i64,
    method: &str,
    params: Option<&Value>,
    sink: Option<&CallSink>,
) -> Vec<u8> {
    let mut params = params.cloned().unwrap_or_else(|| Value::Object(Map::new()));
    strip_reserved(&mut params);
    let client = sink.map(|s| s.client());
    let mut meta = params
        .get("_meta")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    meta.insert(META_PROTOCOL_VERSION.into(), json!(revision::MODERN));
    meta.insert(
        META_CLIENT_INFO.into(),
        json!({"name": "vmcp", "version": env!("CARGO_PKG_VERSION")}),
    );
    let caps = client
        .map(|c| (*c.capabilities).clone())
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({}));
    meta.insert(META_CLIENT_CAPABILITIES.into(), caps);
    if let Some(level) = client.and_then(|c| c.log_level) {
        meta.insert(META_LOG_LEVEL.into(), json!(level));
    }
    params["_meta"] = Value::Object(meta);
    jsonrpc::request_bytes(&Value::from(id), method, Some(&params))
}

/// Reads the answer to a Modern request (JSON or an SSE stream carrying request-scoped
/// notifications first).
async fn read_answer(
    backend: &str,
    mut resp: Response,
    id: i64,
    sink: Option<&CallSink>,
    inbound: &Inbound,
) -> Result<Result<Value, BackendError>, WrongEra> {
    let status = resp.status();
    if matches!(status.as_u16(), 401 | 403) {
        return Ok(Err(crate::http::refused_credential(status)));
    }
    if matches!(status.as_u16(), 407 | 408 | 429) || status.is_server_error() {
        let text = resp.text_prefix(4096).await;
        return Ok(Err(BackendError::Unavailable(format!(
            "HTTP {status}: {}",
            text.chars().take(200).collect::<String>()
        ))));
    }
    let streamed = resp.is_event_stream();
    inbound.routes.answered(streamed);
    let answer = if streamed {
        if let Some(sink) = sink {
            sink.stream_opened();
        }
        let mut parser = sse::Parser::default();
        let mut found = None;
        'read: loop {
            let chunk = match resp.chunk().await {
                Ok(Some(c)) => c,
                Ok(None) => break,
                Err(e) => {
                    return Ok(Err(BackendError::Unavailable(format!(
                        "response stream broke: {e}"
                    ))));
                }
            };
            let Ok(events) = parser.try_feed(&chunk) else {
                break;
            };
            for ev in events {
                match Message::parse(ev.data.as_bytes()) {
                    Ok(m @ (Message::Response { .. } | Message::Error { .. })) => {
                        found = Some(m);
                        break 'read;
                    }
                    // Progress and logs of this request.
                    Ok(other) => {
                        let _ = inbound.handle(other, Channel::Request(sink));
                    }
                    Err(_) => {}
                }
            }
        }
        found
    } else {
        match resp.read_body().await {
            Ok(body) => Message::parse(&body).ok(),
            Err(e) => return Ok(Err(e)),
        }
    };
    match answer {
        Some(Message::Response { id: rid, result }) if rid.as_i64() == Some(id) => {
            // The spec has clients treat a result without `resultType` as complete (some SDKs
            // omit it); the answer is used as it is, never re-sent.
            if result.get("resultType").is_none() {
                tracing::debug!(%backend, "2026-07-28 result without resultType; treating it as complete");
            }
            Ok(Ok(result))
        }
        Some(Message::Error { error, .. }) => {
            if status.is_client_error()
                && error.code == codes::INVALID_REQUEST
                && error.message.to_lowercase().contains("session")
            {
                return Err(WrongEra);
            }
            Ok(Err(BackendError::Rpc(error)))
        }
        Some(other) => Ok(Err(crate::http::not_the_answer(id, &other))),
        // A bare refusal with no JSON-RPC body: not a Modern endpoint.
        None if status.is_client_error() => Err(WrongEra),
        None => Ok(Err(BackendError::Protocol(
            "response is not JSON-RPC".into(),
        ))),
    }
}

/// Asks `url` whether it serves 2026-07-28.
pub(crate) async fn probe(
    backend: &str,
    client: &crate::HttpClient,
    url: &Url,
    headers: &Headers,
) -> Probe {
    let body = modern_body(0, "server/discover", None, None);
    let resp = with_headers(client.post(url.clone()), &headers.load())
        .header(ACCEPT, "application/json, text/event-stream")
        .header(CONTENT_TYPE, "application/json")
        .header(VERSION_HEADER, revision::MODERN)
        .header(METHOD_HEADER, "server/discover")
        .body(body)
        .send()
        .await;
    let resp = match resp {
        Ok(r) => r,
        Err(e) => return Probe::Inconclusive(BackendError::Unavailable(describe(&e))),
    };
    let status = resp.status();
    if status.is_redirection() {
        return Probe::Inconclusive(BackendError::Unavailable(crate::redirect::refused(
            status,
            resp.headers(),
            resp.url(),
        )));
    }
    if matches!(status.as_u16(), 401 | 403 | 407 | 408 | 429) || status.is_server_error() {
        return Probe::Inconclusive(BackendError::Unavailable(format!(
            "discover answered HTTP {status}"
        )));
    }
    let inbound = Inbound::new(crate::inbound::Routes::new(backend), None);
    let modern_info = || ServerInfo {
        protocol_version: revision::MODERN.to_string(),
        ..Default::default()
    };
    match read_answer(backend, resp.into(), 0, None, &inbound).await {
        Ok(Ok(result)) => {
            let Some(versions) = supported(result.get("supportedVersions")) else {
                return Probe::Legacy;
            };
            Probe::Modern {
                legacy: versions.legacy,
                info: ServerInfo {
                    protocol_version: revision::MODERN.to_string(),
                    capabilities: result
                        .get("capabilities")
                        .cloned()
                        .unwrap_or_else(|| json!({})),
                    implementation: result
                        .get("_meta")
                        .and_then(|m| m.get(META_SERVER_INFO))
                        .cloned()
                        .unwrap_or(Value::Null),
                    instructions: result
                        .get("instructions")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                },
            }
        }
        Ok(Err(BackendError::Rpc(e))) => match e.code {
            codes::HEADER_MISMATCH | codes::MISSING_CLIENT_CAPABILITY => Probe::Modern {
                info: modern_info(),
                legacy: None,
            },
            codes::UNSUPPORTED_PROTOCOL_VERSION => {
                match supported(e.data.as_ref().and_then(|d| d.get("supported"))) {
                    Some(v) => Probe::Modern {
                        info: modern_info(),
                        legacy: v.legacy,
                    },
                    None => Probe::Legacy,
                }
            }
            _ => Probe::Legacy,
        },
        Ok(Err(e @ BackendError::Unavailable(_))) => Probe::Inconclusive(e),
        Ok(Err(_)) | Err(_) => Probe::Legacy,
    }
}

/// What a `supportedVersions` list says, when it includes 2026-07-28 (None otherwise).
struct Supported {
    /// Some(true) when it also lists a session-based revision; None when it does not say.
    legacy: Option<bool>,
}

fn supported(versions: Option<&Value>) -> Option<Supported> {
    let versions = versions?.as_array()?;
    let listed = |v: &str| versions.iter().any(|x| x == v);
    listed(revision::MODERN).then(|| Supported {
        legacy: revision::LEGACY_VERSIONS
            .iter()
            .chain([&revision::HTTP_SSE_VERSION])
            .any(|v| listed(v))
            .then_some(true),
    })
}

impl Connection for ModernConnection {
    fn request<'a>(
        &'a self,
        id: i64,
        method: &'a str,
        params: Option<&'a Value>,
        sink: Option<&'a CallSink>,
    ) -> BoxFuture<'a, Result<Value, BackendError>> {
        Box::pin(async move {
            let _in_flight = self.inbound.track(id, sink);
            match self.call(id, method, params, sink).await {
                Ok(r) => r,
                Err(_) => Err(BackendError::Protocol(
                    "the backend stopped speaking MCP 2026-07-28".into(),
                )),
            }
        })
    }

    fn notify<'a>(
        &'a self,
        _method: &'a str,
        _params: Option<&'a Value>,
    ) -> BoxFuture<'a, Result<(), BackendError>> {
        // 2026-07-28 defines no client-to-server notifications over HTTP (cancellation is closing
        // the stream, which dropping the request does).
        Box::pin(async { Ok(()) })
    }

    fn ready(&self) -> BoxFuture<'_, Result<Arc<ServerInfo>, BackendError>> {
        Box::pin(async move {
            self.info
                .get()
                .cloned()
                .ok_or_else(|| BackendError::Unavailable("backend not probed".into()))
        })
    }

    fn server_info(&self) -> Option<Arc<ServerInfo>> {
        self.info.get().cloned()
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}
