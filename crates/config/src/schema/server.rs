//! `server`: our additive section for the HTTP edge and the process budget (host,
//! port, session limits, Origin/Host allow-lists, per-session child caps).

use std::time::Duration;

use yaml_serde::Value;

use crate::error::{Issues, KeyPath};
use crate::reader::{Choice, Fields};

/// `server.statusAccess`: who may read `/status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusAccess {
    /// Anyone (`public`).
    Public,
    /// Callers incoming authentication accepts (`authenticated`).
    Authenticated,
    /// Nobody: 404 (`disabled`).
    Disabled,
}

impl Choice for StatusAccess {
    const NAMES: &'static [(&'static str, Self)] = &[
        ("public", Self::Public),
        ("authenticated", Self::Authenticated),
        ("disabled", Self::Disabled),
    ];
}

impl StatusAccess {
    /// The spelling used in the YAML.
    pub fn as_str(self) -> &'static str {
        self.name()
    }
}

/// `server`. Every field is optional in the YAML; the defaults are listed per field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// `host`: address to bind (default `127.0.0.1`).
    pub host: String,
    /// `port` (default 4483; 0 picks a free port).
    pub port: u16,
    /// `sessionTtl`: idle time after which a client session expires (default 30m).
    pub session_ttl: Duration,
    /// `maxSessions`: live client sessions at most (default 10000).
    pub max_sessions: usize,
    /// `maxSessionsPerIdentity`: live client sessions one identity (issuer and subject; all
    /// anonymous callers are one) may open on a replica (default 100). Past it, `initialize`
    /// is refused with 429 rather than ending anyone's session.
    pub max_sessions_per_identity: usize,
    /// `maxBodyBytes`: largest accepted request body (default 4 MiB).
    pub max_body_bytes: usize,
    /// `allowedOrigins`: browser origins accepted besides loopback ones,
    /// e.g. `https://app.example.com` (scheme, host, optional port; no path).
    pub allowed_origins: Vec<String>,
    /// `allowedHosts`: `Host` header values accepted besides loopback ones
    /// (`name` or `name:port`).
    pub allowed_hosts: Vec<String>,
    /// `maxPerSessionProcesses`: total stdio children per `isolation: perSession`
    /// backend across all sessions (default 64).
    pub max_per_session_processes: usize,
    /// `perSessionIdleTimeout`: reap a per-session connection idle this long (default 10m).
    pub per_session_idle_timeout: Duration,
    /// `discoveryTimeout`: bound on listing one backend's capabilities (default 15s).
    pub discovery_timeout: Duration,
    /// `clientRequestTimeout`: how long a backend's request to the client (elicitation,
    /// sampling, roots) may wait for the client's answer (default 5m).
    pub client_request_timeout: Duration,
    /// `workerThreads`: threads serving clients, each with its own backend connection pools
    /// (default 0: one per CPU core).
    pub worker_threads: usize,
    /// `requestHeaderTimeout`: a request's headers must arrive within this once its first byte
    /// has, or the connection is closed (slow-loris; default 10s).
    pub request_header_timeout: Duration,
    /// `requestBodyTimeout`: a request's body must arrive within this once its headers have, or it
    /// gets 408 (default 30s).
    pub request_body_timeout: Duration,
    /// `idleConnectionTimeout`: a keep-alive connection with no request in flight is closed after
    /// this (default 90s; open SSE streams are requests in flight and are never cut).
    pub idle_connection_timeout: Duration,
    /// `sseKeepAlive`: an SSE stream with nothing to send gets a comment this often, and a call
    /// silent this long is answered on an SSE stream, so that load balancers and proxies that cut
    /// idle connections (60 s on most cloud load balancers) see traffic (default 15s).
    pub sse_keep_alive: Duration,
    /// `shutdownDrain`: after SIGTERM or SIGINT, how long requests in flight get to finish, and
    /// (with sessions shared between replicas) streams a cut client may resume through another
    /// replica; keep it under the orchestrator's grace period (default 10s).
    pub shutdown_drain: Duration,
    /// `allowAnonymousOnNetwork`: serve unauthenticated clients (`incomingAuth.type: anonymous`
    /// or `local`) on a non-loopback address; refused at startup unless true (default false).
    pub allow_anonymous_on_network: bool,
    /// `statusAccess`: who may read `/status` (default: `authenticated` when incoming auth is
    /// `oidc`, else `public`).
    pub status_access: Option<StatusAccess>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            host: "127.0.0.1".to_owned(),
            port: 4483,
            session_ttl: Duration::from_secs(30 * 60),
            max_sessions: 10_000,
            max_sessions_per_identity: 100,
            max_body_bytes: 4 * 1024 * 1024,
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            max_per_session_processes: 64,
            per_session_idle_timeout: Duration::from_secs(10 * 60),
            discovery_timeout: Duration::from_secs(15),
            client_request_timeout: Duration::from_secs(5 * 60),
            worker_threads: 0,
            request_header_timeout: Duration::from_secs(10),
            request_body_timeout: Duration::from_secs(30),
            idle_connection_timeout: Duration::from_secs(90),
            sse_keep_alive: Duration::from_secs(15),
            shutdown_drain: Duration::from_secs(10),
            allow_anonymous_on_network: false,
            status_access: None,
        }
    }
}

/// Decodes `server`.
pub(crate) fn decode_server(v: &Value, path: &KeyPath, issues: &Issues) -> ServerConfig {
    let mut f = Fields::open(v, path, issues);
    let d = ServerConfig::default();
    let s = ServerConfig {
        host: f.string("host").unwrap_or(d.host),
        port: f.uint("port").unwrap_or(d.port),
        session_ttl: f.duration("sessionTtl").unwrap_or(d.session_ttl),
        max_sessions: f.uint("maxSessions").unwrap_or(d.max_sessions),
        max_sessions_per_identity: f
            .uint("maxSessionsPerIdentity")
            .unwrap_or(d.max_sessions_per_identity),
        max_body_bytes: f.uint("maxBodyBytes").unwrap_or(d.max_body_bytes),
        allowed_origins: f.strings("allowedOrigins"),
        allowed_hosts: f.strings("allowedHosts"),
        max_per_session_processes: f
            .uint("maxPerSessionProcesses")
            .unwrap_or(d.max_per_session_processes),
        per_session_idle_timeout: f
            .duration("perSessionIdleTimeout")
            .unwrap_or(d.per_session_idle_timeout),
        discovery_timeout: f
            .duration("discoveryTimeout")
            .unwrap_or(d.discovery_timeout),
        client_request_timeout: f
            .duration("clientRequestTimeout")
            .unwrap_or(d.client_request_timeout),
        worker_threads: f.uint("workerThreads").unwrap_or(d.worker_threads),
        request_header_timeout: f
            .duration("requestHeaderTimeout")
            .unwrap_or(d.request_header_timeout),
        request_body_timeout: f
            .duration("requestBodyTimeout")
            .unwrap_or(d.request_body_timeout),
        idle_connection_timeout: f
            .duration("idleConnectionTimeout")
            .unwrap_or(d.idle_connection_timeout),
        sse_keep_alive: f.duration("sseKeepAlive").unwrap_or(d.sse_keep_alive),
        shutdown_drain: f.duration("shutdownDrain").unwrap_or(d.shutdown_drain),
        allow_anonymous_on_network: f
            .bool("allowAnonymousOnNetwork")
            .unwrap_or(d.allow_anonymous_on_network),
        status_access: f.choice("statusAccess"),
    };
    f.finish();
    s
}
