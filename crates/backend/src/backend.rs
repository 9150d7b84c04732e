//! One configured backend: its spec, its connection(s), request ids, timeouts and health.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde::Serialize;
use serde_json::{Value, json};
use vmcp_proto::era::Era;

use vmcp_auth::{Identity, OutgoingAuth, Secret, UrlSecrets};

use crate::{
    auto::AutoConnection,
    client::Headers,
    connection::Connection,
    error::BackendError,
    handshake::ServerInfo,
    health::{Health, HealthPolicy, HealthReport, HealthTracker, Outcome, Transition},
    inbound::{Inbound, Notice, Routes},
    per_session::{DISCOVERY_KEY, PerSessionPool},
    sink::CallSink,
    sse::SseConnection,
    stdio::StdioConnection,
};

/// How to run a stdio backend.
#[derive(Debug, Clone)]
pub struct StdioSpec {
    /// The program.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
    /// Working directory.
    pub cwd: Option<PathBuf>,
}

/// How to reach a backend.
#[derive(Clone)]
pub enum TransportSpec {
    /// MCP Streamable HTTP at `url`.
    StreamableHttp {
        /// The MCP endpoint.
        url: String,
        /// Static headers sent with every request (secrets: never logged).
        headers: Vec<(String, String)>,
    },
    /// The deprecated HTTP+SSE transport; `url` is the SSE endpoint.
    Sse {
        /// The SSE endpoint.
        url: String,
        /// Static headers sent with every request (secrets: never logged).
        headers: Vec<(String, String)>,
    },
    /// A child process speaking stdio.
    Stdio(StdioSpec),
}

impl TransportSpec {
    /// The transport's config name.
    pub fn name(&self) -> &'static str {
        match self {
            TransportSpec::StreamableHttp { .. } => "streamable-http",
            TransportSpec::Sse { .. } => "sse",
            TransportSpec::Stdio(_) => "stdio",
        }
    }
}

/// Whether client sessions share one connection to the backend or get their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    /// One connection (one process, for stdio) for every client session.
    Shared,
    /// One connection per client session, capped and reaped.
    PerSession,
}

/// Everything needed to talk to one backend.
#[derive(Clone)]
pub struct BackendSpec {
    /// The backend's name (unique in the group).
    pub id: String,
    /// How to reach it.
    pub transport: TransportSpec,
    /// Per-request timeout.
    pub timeout: Duration,
    /// Shared or per-session connections.
    pub isolation: Isolation,
    /// Cap on per-session connections.
    pub max_per_session: usize,
    /// Idle time after which a per-session connection is reaped.
    pub per_session_idle: Duration,
    /// When the backend counts as unhealthy, and its circuit breaker.
    pub health: HealthPolicy,
    /// The credential the backend gets (`outgoingAuth`).
    pub auth: OutgoingAuth,
}

/// On whose behalf a backend request is made.
#[derive(Clone, Copy, Default)]
pub struct Origin<'a> {
    /// The client session (None: the gateway's own request), for per-session connections.
    pub session: Option<&'a str>,
    /// The revision family the client speaks: a backend serving both is spoken to in it.
    pub era: Option<Era>,
    /// The caller, whose token is exchanged when the backend's credential depends on it.
    pub caller: Option<&'a Identity>,
    /// The client's request headers the config passes through (`passthroughHeaders`).
    pub headers: Option<&'a HeaderMap>,
}

/// Most per-caller connections of one backend (callers whose credential is exchanged).
const MAX_CALLERS: usize = 10_000;

/// Most input rounds bridged for one request.
const MAX_ROUNDS: usize = 10;

/// How far activity may stretch a request's timeout, as a multiple of it.
const MAX_EXTENSION: u32 = 10;

fn progress_token(params: Option<&Value>) -> Option<Value> {
    params?
        .get("_meta")?
        .get("progressToken")
        .filter(|t| t.is_string() || t.is_number())
        .cloned()
}

/// A backend's state for `/status`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BackendStatus {
    /// The backend's name.
    pub name: String,
    /// Its transport.
    pub transport: &'static str,
    /// Its health: state, consecutive failures, last error, last check and transition, circuit.
    #[serde(flatten)]
    pub health: HealthReport,
    /// The MCP revision negotiated with it, once known (for discovery, when it serves several).
    pub mcp_revision: Option<String>,
    /// Every revision it is known to serve, newest first: a client is served in its own revision
    /// when the backend serves it.
    pub mcp_revisions: Vec<String>,
    /// Live connections (processes, for stdio).
    pub connections: usize,
}

/// A configured backend.
pub struct Backend {
    spec: BackendSpec,
    client: crate::HttpClient,
    headers: HeaderMap,
    shared: Option<Arc<dyn Connection>>,
    pool: Option<PerSessionPool>,
    /// Connections per caller, for credentials that depend on the caller (not shared between
    /// callers: a backend session may be bound to the token that opened it).
    callers: Option<PerSessionPool>,
    next_id: AtomicI64,
    health: HealthTracker,
    routes: Arc<Routes>,
    /// What of the backend's URL is never shown (see `vmcp_auth::redact_url`), scrubbed out of
    /// every error before it is recorded, logged or returned: a backend's error page may echo
    /// the request path, a token in it included.
    secrets: UrlSecrets,
}

impl Backend {
    /// Creates the backend; a shared stdio backend starts its process now.
    ///
    /// # Errors
    /// When a static header is not a valid HTTP header.
    pub fn new(spec: BackendSpec, client: crate::HttpClient) -> Result<Arc<Self>, BackendError> {
        let mut headers = match &spec.transport {
            TransportSpec::StreamableHttp { headers, .. } | TransportSpec::Sse { headers, .. } => {
                header_map(headers)?
            }
            TransportSpec::Stdio(_) => HeaderMap::new(),
        };
        match (&spec.auth, &spec.transport) {
            (OutgoingAuth::None, _) => {}
            (_, TransportSpec::Stdio(_)) => {
                return Err(BackendError::Unavailable(
                    "outgoing auth is for HTTP backends; a stdio backend takes its credentials from env".into(),
                ));
            }
            // A static credential is one more static header.
            (OutgoingAuth::Header { name, value }, _) => {
                let (name, value) = credential_header(name, value)?;
                headers.insert(name, value);
            }
            (OutgoingAuth::TokenExchange(_), _) => {}
        }
        let per_caller = spec.auth.per_caller() && spec.isolation == Isolation::Shared;
        let secrets = match &spec.transport {
            TransportSpec::StreamableHttp { url, .. } | TransportSpec::Sse { url, .. } => {
                UrlSecrets::new(url)
            }
            TransportSpec::Stdio(_) => UrlSecrets::default(),
        };
        let mut backend = Backend {
            secrets,
            health: HealthTracker::new(spec.health),
            pool: None,
            callers: per_caller.then(|| PerSessionPool::new(MAX_CALLERS, spec.per_session_idle)),
            shared: None,
            next_id: AtomicI64::new(1),
            routes: Routes::new(&spec.id),
            headers,
            client,
            spec,
        };
        match backend.spec.isolation {
            Isolation::Shared if per_caller => {}
            Isolation::Shared => backend.shared = Some(backend.connect(None)?),
            Isolation::PerSession => {
                backend.pool = Some(PerSessionPool::new(
                    backend.spec.max_per_session,
                    backend.spec.per_session_idle,
                ));
            }
        }
        Ok(Arc::new(backend))
    }

    /// Whether each client session gets its own connection.
    pub fn is_per_session(&self) -> bool {
        self.pool.is_some()
    }

    /// The backend's name.
    pub fn id(&self) -> &str {
        &self.spec.id
    }

    /// Whether the backend answered its latest request with an SSE stream rather than JSON (a
    /// client may then get the gateway's own answers the same way).
    pub fn streams_answers(&self) -> bool {
        self.routes.streams_answers()
    }

    /// The backend's spec.
    pub fn spec(&self) -> &BackendSpec {
        &self.spec
    }

    /// A new connection; `session` receives what the backend sends on it that no single request
    /// owns (per-session connections only).
    fn connect(&self, session: Option<CallSink>) -> Result<Arc<dyn Connection>, BackendError> {
        let inbound = Arc::new(Inbound::new(self.routes.clone(), session));
        // Each connection has its own headers, so a per-caller credential can be set on it.
        let headers = Headers::new(self.headers.clone());
        Ok(match &self.spec.transport {
            TransportSpec::StreamableHttp { url, .. } => Arc::new(AutoConnection::new(
                &self.spec.id,
                self.client.clone(),
                // Parsed once per connection, not per request.
                reqwest::Url::parse(url)
                    .map_err(|e| BackendError::Unavailable(format!("invalid backend URL: {e}")))?,
                headers,
                inbound,
            )),
            TransportSpec::Sse { url, .. } => Arc::new(SseConnection::new(
                &self.spec.id,
                self.client.clone(),
                url.clone(),
                headers,
                inbound,
            )),
            TransportSpec::Stdio(stdio) => Arc::new(StdioConnection::start(
                &self.spec.id,
                stdio.clone(),
                self.spec.timeout,
                inbound,
            )),
        })
    }

    /// The connection for `origin`, with the caller's credential set on it when the backend's
    /// credential depends on the caller.
    async fn connection(&self, origin: Origin<'_>) -> Result<Arc<dyn Connection>, BackendError> {
        let conn = if let Some(shared) = &self.shared {
            shared.clone()
        } else if let Some(callers) = &self.callers {
            let caller = origin.caller.and_then(Identity::binding).ok_or_else(|| {
                BackendError::Auth(
                    "its credential is exchanged for the caller's token, and this request has no authenticated caller".into(),
                )
            })?;
            let key = format!("{}\u{0}{}", caller.0, caller.1);
            callers.get(&key, || self.connect(None))?
        } else {
            let pool = self
                .pool
                .as_ref()
                .ok_or_else(|| BackendError::Unavailable("no connection".into()))?;
            let key = origin.session.unwrap_or(DISCOVERY_KEY);
            pool.get(key, || self.connect(pool.sink(key)))?
        };
        if self.spec.auth.per_caller() {
            let credential =
                self.spec
                    .auth
                    .header_for(origin.caller)
                    .await
                    .map_err(|e| match e {
                        vmcp_auth::AuthError::Unavailable(why) => BackendError::Credential(why),
                        refused => BackendError::Auth(refused.to_string()),
                    })?;
            if let (Some((name, value)), Some(headers)) = (credential, conn.headers()) {
                let (name, value) = credential_header(&name, &value)?;
                headers.set(&name, &value);
            }
        }
        Ok(conn)
    }

    /// Whether the backend's credential depends on the caller (each caller's view is discovered
    /// with its own credential).
    pub fn per_caller(&self) -> bool {
        self.spec.auth.per_caller()
    }

    /// Gives client session `session` a sink for what its dedicated connection receives outside any
    /// single request (per-session backends only; a no-op for shared ones).
    pub fn attach_session(&self, session: &str, sink: CallSink) {
        if let Some(pool) = &self.pool {
            pool.attach(session, sink);
        }
    }

    /// List changes and resource updates the backend announces.
    pub fn notices(&self) -> tokio::sync::broadcast::Receiver<Notice> {
        self.routes.subscribe()
    }

    /// Sends a request on behalf of `origin` (a client session, its revision and its caller; all
    /// None for the gateway's own, e.g. discovery) and waits for the result, at most the
    /// backend's timeout.
    ///
    /// # Errors
    /// The backend's own JSON-RPC error, or why no answer came.
    pub async fn request(
        &self,
        origin: Origin<'_>,
        method: &str,
        params: Option<&Value>,
        sink: Option<&CallSink>,
    ) -> Result<Value, BackendError> {
        let era = origin.era;
        self.health.admit()?;
        let conn = self.connection(origin).await.map_err(|e| self.scrub(e))?;
        crate::client::with_passthrough(
            origin.headers,
            self.request_on(conn, era, method, params, sink),
        )
        .await
    }

    /// `e` with the secrets of the backend's URL scrubbed out.
    fn scrub(&self, e: BackendError) -> BackendError {
        e.scrubbed(&self.secrets)
    }

    async fn request_on(
        &self,
        conn: Arc<dyn Connection>,
        era: Option<Era>,
        method: &str,
        params: Option<&Value>,
        sink: Option<&CallSink>,
    ) -> Result<Value, BackendError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        // A progress token is replaced by one the gateway issued, so progress can be attributed on
        // any transport and mapped back to the caller's own token.
        let mut own_params;
        let mut params = params;
        let _progress = match (sink, progress_token(params)) {
            (Some(sink), Some(client_token)) => {
                let token = format!("vmcp-{id}");
                own_params = params.cloned().unwrap_or(Value::Null);
                own_params["_meta"]["progressToken"] = Value::String(token.clone());
                params = Some(&own_params);
                Some(self.routes.progress(token, sink.clone(), client_token))
            }
            _ => None,
        };
        // A client span per backend request; its trace context reaches the backend in `_meta` and,
        // over HTTP, as the `traceparent`/`tracestate` headers.
        let call = vmcp_telemetry::BackendCall::start(
            &self.spec.id,
            self.spec.transport.name(),
            method,
            params,
        );
        let (traced, mut trace_headers);
        if let Some(tp) = call.traceparent() {
            traced = vmcp_telemetry::with_trace_meta(params, tp, call.tracestate());
            params = Some(&traced);
            trace_headers = crate::client::passthrough_headers().unwrap_or_default();
            for (name, value) in [("traceparent", Some(tp)), ("tracestate", call.tracestate())] {
                if let Some(v) = value.and_then(|v| HeaderValue::from_str(v).ok()) {
                    trace_headers.insert(name, v);
                }
            }
        } else {
            trace_headers = HeaderMap::new();
        }
        let outcome = crate::client::with_passthrough(Some(&trace_headers), async {
            let mut outcome = self.run(&conn, era, id, method, params, sink).await;
            if let Some(sink) = sink.filter(|s| s.client().relays_requests()) {
                outcome = self.bridge(&conn, era, method, params, sink, outcome).await;
            }
            outcome
        })
        .await
        .map_err(|e| self.scrub(e));
        call.finish(match &outcome {
            Ok(r) if r.get("isError") == Some(&Value::Bool(true)) => Some("tool_error".into()),
            Ok(_) => None,
            Err(BackendError::Rpc(e)) => Some(e.code.to_string().into()),
            Err(BackendError::Timeout(_)) => Some("timeout".into()),
            Err(BackendError::Cancelled) => Some("cancelled".into()),
            Err(BackendError::Unavailable(_) | BackendError::Exited(_)) => {
                Some("unavailable".into())
            }
            Err(BackendError::Protocol(_)) => Some("protocol".into()),
            Err(BackendError::Auth(_)) => Some("auth".into()),
            Err(BackendError::Credential(_)) => Some("credential_unavailable".into()),
        });
        match &outcome {
            Err(BackendError::Cancelled) => {}
            Err(e) if e.is_operational() => self.observe(Outcome::Failure(e)),
            _ => self.observe(Outcome::Success(None)),
        }
        outcome
    }

    /// A 2026-07-28 backend asking for input (`input_required`) of a client that can be asked
    /// mid-call (a session-based client): each input request is put to the client, and the request
    /// is retried with the answers and the backend's `requestState`, for at most [`MAX_ROUNDS`].
    async fn bridge(
        &self,
        conn: &Arc<dyn Connection>,
        era: Option<Era>,
        method: &str,
        params: Option<&Value>,
        sink: &CallSink,
        mut outcome: Result<Value, BackendError>,
    ) -> Result<Value, BackendError> {
        for _ in 0..MAX_ROUNDS {
            let result = match &outcome {
                Ok(r) if r.get("resultType").and_then(Value::as_str) == Some("input_required") => r,
                _ => return outcome,
            };
            let mut responses = serde_json::Map::new();
            if let Some(requests) = result.get("inputRequests").and_then(Value::as_object) {
                for (key, req) in requests {
                    let m = req
                        .get("method")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string();
                    let p = req.get("params").cloned();
                    let answer = sink.request(m, p).await.map_err(BackendError::Rpc)?;
                    responses.insert(key.clone(), answer);
                }
            }
            let mut retry = params.cloned().unwrap_or_else(|| json!({}));
            retry["inputResponses"] = Value::Object(responses);
            match result.get("requestState") {
                Some(state) => retry["requestState"] = state.clone(),
                None => {
                    if let Some(o) = retry.as_object_mut() {
                        o.remove("requestState");
                    }
                }
            }
            let id = self.next_id.fetch_add(1, Ordering::Relaxed);
            outcome = self
                .run(conn, era, id, method, Some(&retry), Some(sink))
                .await;
        }
        Err(BackendError::Protocol(format!(
            "the backend still asked for input after {MAX_ROUNDS} rounds"
        )))
    }

    /// Runs one request under the timeout. The clock restarts whenever the request shows activity
    /// (progress, logs) and stops while the backend waits on the client (elicitation, sampling),
    /// up to [`MAX_EXTENSION`] times the timeout in all.
    async fn run(
        &self,
        conn: &Arc<dyn Connection>,
        era: Option<Era>,
        id: i64,
        method: &str,
        params: Option<&Value>,
        sink: Option<&CallSink>,
    ) -> Result<Value, BackendError> {
        let timeout = self.spec.timeout;
        let started = tokio::time::Instant::now();
        let hard_limit = started + timeout * MAX_EXTENSION;
        let mut deadline = started + timeout;
        let call = conn.request_for(era, id, method, params, sink);
        tokio::pin!(call);
        let cancelled = async {
            match sink {
                Some(s) => s.cancelled().await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(cancelled);
        let (outcome, reason) = loop {
            tokio::select! {
                r = &mut call => return r,
                _ = &mut cancelled => break (BackendError::Cancelled, "vmcp: the client cancelled the request"),
                _ = tokio::time::sleep_until(deadline) => {
                    let now = tokio::time::Instant::now();
                    let next = match sink {
                        Some(s) if s.busy() => Some(now + timeout),
                        Some(s) => s.idle_for().map(|idle| now + timeout.saturating_sub(idle)).filter(|d| *d > now),
                        None => None,
                    };
                    match next {
                        Some(d) if now < hard_limit => deadline = d.min(hard_limit),
                        _ => break (BackendError::Timeout(now - started), "vmcp: request timed out"),
                    }
                }
            }
        };
        // Tell the backend to stop working on it; the answer, if any, is dropped.
        let conn = conn.clone();
        let cancel = json!({"requestId": id, "reason": reason});
        tokio::spawn(async move {
            let _ = conn.notify("notifications/cancelled", Some(&cancel)).await;
        });
        Err(outcome)
    }

    /// Starts or stops watching `uri` for updates, on behalf of `origin`.
    ///
    /// # Errors
    /// The backend's refusal, or why it could not be reached.
    pub async fn watch_resource(
        &self,
        origin: Origin<'_>,
        uri: &str,
        on: bool,
    ) -> Result<(), BackendError> {
        let conn = self.connection(origin).await.map_err(|e| self.scrub(e))?;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let watch = conn.watch_resource(origin.era, id, uri, on);
        match tokio::time::timeout(self.spec.timeout, watch).await {
            Ok(r) => r.map_err(|e| self.scrub(e)),
            Err(_) => Err(BackendError::Timeout(self.spec.timeout)),
        }
    }

    /// Sends a notification on behalf of `session`.
    ///
    /// # Errors
    /// When it cannot be delivered.
    pub async fn notify(
        &self,
        origin: Origin<'_>,
        method: &str,
        params: Option<&Value>,
    ) -> Result<(), BackendError> {
        let conn = self.connection(origin).await.map_err(|e| self.scrub(e))?;
        match tokio::time::timeout(self.spec.timeout, conn.notify(method, params)).await {
            Ok(r) => r.map_err(|e| self.scrub(e)),
            Err(_) => Err(BackendError::Timeout(self.spec.timeout)),
        }
    }

    /// Connects (initialising if needed) and returns what the backend said about itself.
    ///
    /// # Errors
    /// Why the backend could not be reached within its timeout.
    pub async fn ready(&self, origin: Origin<'_>) -> Result<Arc<ServerInfo>, BackendError> {
        self.health.admit()?;
        let conn = self.connection(origin).await.map_err(|e| self.scrub(e))?;
        let outcome = match tokio::time::timeout(self.spec.timeout, conn.ready()).await {
            Ok(r) => r.map_err(|e| self.scrub(e)),
            Err(_) => Err(BackendError::Timeout(self.spec.timeout)),
        };
        match &outcome {
            Ok(_) => self.observe(Outcome::Success(None)),
            Err(e) => self.observe(Outcome::Failure(e)),
        }
        outcome
    }

    /// One active health check, bounded by `timeout`: the lightest request that proves the
    /// backend still serves MCP on the connection the gateway already has — `ping` (Legacy) or
    /// `server/discover` (2026-07-28, which has no ping) — never a second `initialize` on a live
    /// connection or process. A backend never contacted gets its handshake, which is its first
    /// contact anyway. Any JSON-RPC answer, even an error, proves it is serving. Backends whose
    /// credential is the caller's are not checked (the gateway has no caller to check as); their
    /// calls still count.
    pub async fn check(&self, timeout: Duration) {
        if self.per_caller() {
            return;
        }
        if let Err(e) = self.health.admit() {
            tracing::debug!(backend = %self.spec.id, error = %e, "health check skipped");
            return;
        }
        let started = tokio::time::Instant::now();
        match tokio::time::timeout(timeout, self.probe()).await {
            Ok(Ok(())) | Ok(Err(BackendError::Rpc(_))) => {
                self.observe(Outcome::Success(Some(started.elapsed())));
            }
            Ok(Err(e)) => self.observe(Outcome::Failure(&self.scrub(e))),
            Err(_) => self.observe(Outcome::Failure(&BackendError::Timeout(timeout))),
        }
    }

    async fn probe(&self) -> Result<(), BackendError> {
        let conn = self.connection(Origin::default()).await?;
        let Some(info) = conn.server_info() else {
            return conn.ready().await.map(|_| ());
        };
        let method = if info.protocol_version == vmcp_proto::revision::MODERN {
            "server/discover"
        } else {
            "ping"
        };
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        conn.request(id, method, None, None).await.map(|_| ())
    }

    /// Records a request's outcome and announces a change of state.
    fn observe(&self, outcome: Outcome<'_>) {
        if let Some(t) = self.health.record(outcome) {
            self.announce(t);
        }
    }

    fn announce(&self, t: Transition) {
        vmcp_telemetry::health_transition(&self.spec.id, t.from.as_str(), t.to.as_str());
        let report = self.health.report();
        if t.to.is_advertised() {
            tracing::info!(backend = %self.spec.id, from = t.from.as_str(), to = t.to.as_str(), "backend health changed");
        } else {
            tracing::warn!(backend = %self.spec.id, from = t.from.as_str(), to = t.to.as_str(), failures = report.consecutive_failures, last_error = report.last_error.as_deref().unwrap_or(""), "backend health changed");
        }
        if t.advertising_changed {
            self.routes
                .announce(Notice::Advertised(self.health.advertised()));
        }
    }

    /// Whether the backend's capabilities belong in the catalog now (not unhealthy,
    /// unauthenticated, or behind an open circuit).
    pub fn is_advertised(&self) -> bool {
        self.health.advertised()
    }

    /// The health state machine's snapshot.
    pub fn health_report(&self) -> HealthReport {
        self.health.report()
    }

    /// What the backend said about itself at initialize, once known.
    pub fn server_info(&self) -> Option<Arc<ServerInfo>> {
        self.any_connection().and_then(|c| c.server_info())
    }

    fn any_connection(&self) -> Option<Arc<dyn Connection>> {
        match (&self.shared, &self.pool, &self.callers) {
            (Some(c), _, _) => Some(c.clone()),
            (None, Some(pool), _) | (None, None, Some(pool)) => pool.any(),
            _ => None,
        }
    }

    /// Every revision the backend is known to serve, newest first.
    pub fn revisions(&self) -> Vec<String> {
        self.any_connection()
            .map(|c| c.revisions())
            .unwrap_or_default()
    }

    /// Ends client session `session`'s dedicated connection, if it has one.
    pub async fn release_session(&self, session: &str) {
        if let Some(conn) = self.pool.as_ref().and_then(|p| p.remove(session)) {
            conn.shutdown().await;
        }
    }

    /// Reaps per-session connections idle past their timeout; returns how many.
    pub async fn reap_idle(&self) -> usize {
        let idle: Vec<_> = [&self.pool, &self.callers]
            .into_iter()
            .flatten()
            .flat_map(|p| p.take_idle())
            .collect();
        let n = idle.len();
        for conn in idle {
            conn.shutdown().await;
        }
        n
    }

    /// Closes every connection and stops every process.
    pub async fn shutdown(&self) {
        if let Some(c) = &self.shared {
            c.shutdown().await;
        }
        for pool in [&self.pool, &self.callers].into_iter().flatten() {
            for c in pool.drain() {
                c.shutdown().await;
            }
        }
    }

    /// The backend's current health.
    pub fn health(&self) -> Health {
        self.health.get()
    }

    /// The backend's state for `/status`.
    pub fn status(&self) -> BackendStatus {
        let connections = match (&self.shared, &self.pool, &self.callers) {
            (Some(c), _, _) => usize::from(c.server_info().is_some()),
            (None, Some(p), _) | (None, None, Some(p)) => p.len(),
            _ => 0,
        };
        BackendStatus {
            name: self.spec.id.clone(),
            transport: self.spec.transport.name(),
            health: self.health.report(),
            mcp_revision: self.server_info().map(|i| i.protocol_version.clone()),
            mcp_revisions: self.revisions(),
            connections,
        }
    }
}

/// A credential as a header, marked sensitive (never printed by the HTTP stack).
fn credential_header(
    name: &str,
    value: &Secret,
) -> Result<(HeaderName, HeaderValue), BackendError> {
    let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
        BackendError::Unavailable(format!("invalid credential header name {name:?}"))
    })?;
    let mut value = HeaderValue::from_str(value.expose()).map_err(|_| {
        BackendError::Unavailable(format!("invalid value for credential header {name}"))
    })?;
    value.set_sensitive(true);
    Ok((name, value))
}

fn header_map(headers: &[(String, String)]) -> Result<HeaderMap, BackendError> {
    let mut map = HeaderMap::new();
    for (k, v) in headers {
        let name = HeaderName::from_bytes(k.as_bytes())
            .map_err(|_| BackendError::Unavailable(format!("invalid header name {k:?}")))?;
        let mut value = HeaderValue::from_str(v)
            .map_err(|_| BackendError::Unavailable(format!("invalid value for header {k:?}")))?;
        value.set_sensitive(true);
        map.insert(name, value);
    }
    Ok(map)
}
