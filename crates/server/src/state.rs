//! Shared state of the HTTP edge.

use std::sync::Arc;
use std::time::Duration;

use vmcp_core::Gateway;

use vmcp_auth::Authenticator;

use crate::{
    auth::StatusAccess, conn_limits::ConnectionLimits, guard::OriginPolicy, resumable::Limits,
    session::SessionStore, shared::SharedSessions,
};

/// Settings of the HTTP edge.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// The config's `name`, shown as the gateway's title.
    pub name: String,
    /// Largest accepted request body.
    pub max_body_bytes: usize,
    /// Host/Origin validation.
    pub origins: OriginPolicy,
    /// Page size of Legacy list results.
    pub page_size: usize,
    /// How long a backend's request to the client may wait for the client's answer.
    pub client_request_timeout: Duration,
    /// Serve MCP 2026-07-28 (stateless) requests; off, they are refused with -32022.
    pub modern_enabled: bool,
    /// Time limits on client connections (slow headers and bodies, idle keep-alive).
    pub connection_limits: ConnectionLimits,
    /// Who is calling: every MCP request is authenticated with this.
    pub auth: Authenticator,
    /// Who may read `/status`.
    pub status_access: StatusAccess,
    /// Client request headers copied to backend requests (`passthroughHeaders`).
    pub passthrough_headers: Vec<http::HeaderName>,
    /// The audit trail of `/mcp` requests, when `audit` is configured.
    pub audit: Option<Arc<vmcp_audit::Auditor>>,
    /// How often an SSE stream with nothing to send gets a comment, so that load balancers and
    /// proxies that cut idle connections see traffic (`server.sseKeepAlive`); a call that runs
    /// this long without a word is answered on an SSE stream for the same reason.
    pub sse_keepalive: Duration,
}

impl ServerOptions {
    /// The passed-through headers a client request carries, if any.
    pub(crate) fn forwarded(&self, headers: &http::HeaderMap) -> Option<http::HeaderMap> {
        if self.passthrough_headers.is_empty() {
            return None;
        }
        let mut out = http::HeaderMap::new();
        for name in &self.passthrough_headers {
            for value in headers.get_all(name) {
                out.append(name.clone(), value.clone());
            }
        }
        (!out.is_empty()).then_some(out)
    }
}

impl Default for ServerOptions {
    fn default() -> Self {
        Self {
            name: "vmcp".into(),
            max_body_bytes: 4 * 1024 * 1024,
            origins: OriginPolicy::default(),
            page_size: 1000,
            client_request_timeout: Duration::from_secs(300),
            modern_enabled: true,
            connection_limits: ConnectionLimits::default(),
            auth: Authenticator::Anonymous,
            status_access: StatusAccess::Public,
            passthrough_headers: Vec::new(),
            audit: None,
            sse_keepalive: Duration::from_secs(15),
        }
    }
}

/// Everything a request handler needs.
pub struct AppState {
    /// The core.
    pub gateway: Arc<Gateway>,
    /// Legacy sessions.
    pub sessions: SessionStore,
    /// Edge settings.
    pub options: ServerOptions,
    /// Sessions shared with other replicas through Redis, when configured.
    pub shared: Option<SharedSessions>,
    /// The bus's messages, until `serve` starts acting on them.
    pub(crate) bus: std::sync::Mutex<Option<tokio::sync::mpsc::Receiver<vmcp_redis::Message>>>,
}

impl AppState {
    /// The bounds and timings of the SSE streams the edge serves.
    pub(crate) fn stream_limits(&self) -> Limits {
        let d = Limits::default();
        Limits {
            keepalive: self.options.sse_keepalive,
            // A finished stream is not kept past the session it belongs to could expire.
            retention: d.retention.min(self.sessions.ttl),
            ..d
        }
    }

    /// New state; sessions expire after `session_ttl` idle and are capped at `max_sessions`,
    /// `max_sessions_per_identity` of them one identity's (on this replica). With `redis`, sessions live in Redis under `key_prefix` and any replica
    /// serves any of them.
    pub fn new(
        gateway: Arc<Gateway>,
        options: ServerOptions,
        session_ttl: Duration,
        (max_sessions, max_sessions_per_identity): (usize, usize),
        redis: Option<(Arc<vmcp_redis::Client>, Option<String>)>,
    ) -> Arc<Self> {
        let mut sessions = SessionStore::new(session_ttl, max_sessions, max_sessions_per_identity);
        let (shared, bus) = match redis {
            Some((client, prefix)) => {
                let (shared, bus) = SharedSessions::start(client, prefix.as_deref(), session_ttl);
                sessions.tag_requests(shared.replica());
                (Some(shared), Some(bus))
            }
            None => (None, None),
        };
        Arc::new(Self {
            sessions,
            gateway,
            options,
            shared,
            bus: std::sync::Mutex::new(bus),
        })
    }
}
