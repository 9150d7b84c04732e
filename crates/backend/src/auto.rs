//! A Streamable HTTP backend whose revisions are found out rather than assumed, and spoken to in
//! the client's revision whenever it serves that one.
//!
//! What it serves is learnt without extra round trips on the hot path: one `server/discover` probe
//! (its `supportedVersions`), then whether the session-based `initialize` succeeds when a
//! session-based client first needs it. A 2025-11-25 client is then served over a session-based
//! hop (mid-call requests relayed, subscriptions forwarded, as for a Legacy-only backend) and a
//! 2026-07-28 client over a stateless one; bridging between revisions is only for backends that
//! serve one. The verdict is cached; an inconclusive probe (auth, overload, outage) is not, so a
//! passing fault never pins the wrong revision. A backend that refuses a request in a way that shows
//! the verdict wrong, before running it, is reclassified and the request sent again the other
//! way; a request that may already have run is never sent again.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use reqwest::Url;
use serde_json::Value;
use tokio::sync::Mutex as AsyncMutex;
use vmcp_proto::era::Era;
use vmcp_proto::{codes, revision};

use crate::{
    client::Headers,
    connection::Connection,
    error::BackendError,
    handshake::ServerInfo,
    http::HttpConnection,
    inbound::Inbound,
    modern::{self, ModernConnection, Probe, WrongEra},
    sink::CallSink,
};

/// The revisions a backend serves, as far as known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Served {
    /// It serves 2026-07-28.
    modern: bool,
    /// It serves a session-based revision; None until something says (then it is tried).
    legacy: Option<bool>,
}

impl Served {
    /// The hop for a client speaking `client` (None: the gateway's own requests, which prefer the
    /// stateless revision: nothing to open or keep).
    fn hop(self, client: Option<Era>) -> Era {
        let legacy = self.legacy != Some(false);
        match client {
            Some(Era::Legacy) if legacy => Era::Legacy,
            _ if self.modern => Era::Modern,
            _ => Era::Legacy,
        }
    }
}

/// Either revision, chosen per backend and per client.
pub(crate) struct AutoConnection {
    backend: String,
    client: crate::HttpClient,
    url: Url,
    headers: Headers,
    legacy: HttpConnection,
    modern: ModernConnection,
    served: Mutex<Option<Served>>,
    probing: AsyncMutex<()>,
    refuted: AtomicBool,
}

impl AutoConnection {
    pub(crate) fn new(
        backend: &str,
        client: crate::HttpClient,
        url: Url,
        headers: Headers,
        inbound: Arc<Inbound>,
    ) -> Self {
        // Both revisions reach the same URL, so they share its connections.
        let endpoint = client.endpoint(url.clone());
        Self {
            legacy: HttpConnection::new(
                backend,
                client.clone(),
                endpoint.clone(),
                headers.clone(),
                inbound.clone(),
            ),
            modern: ModernConnection::new(
                backend,
                client.clone(),
                endpoint,
                headers.clone(),
                inbound,
            ),
            backend: backend.to_string(),
            client,
            url,
            headers,
            served: Mutex::new(None),
            probing: AsyncMutex::new(()),
            refuted: AtomicBool::new(false),
        }
    }

    fn cached(&self) -> Option<Served> {
        *self.served.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn remember(&self, served: Served) {
        let mut cur = self.served.lock().unwrap_or_else(|p| p.into_inner());
        if *cur != Some(served) {
            tracing::info!(backend = %self.backend, modern = served.modern, legacy = ?served.legacy, "backend MCP revisions classified");
        }
        *cur = Some(served);
    }

    /// Records whether the session-based handshake works (refused: session-based clients are
    /// bridged to 2026-07-28).
    fn legacy_served(&self, served: bool) {
        if let Some(mut s) = self.cached()
            && s.legacy != Some(served)
        {
            s.legacy = Some(served);
            self.remember(s);
        }
    }

    /// Forgets the verdict and probes again; true when the backend now serves 2026-07-28.
    async fn reprobe(&self) -> bool {
        *self.served.lock().unwrap_or_else(|p| p.into_inner()) = None;
        self.served().await.modern
    }

    async fn served(&self) -> Served {
        if let Some(s) = self.cached() {
            return s;
        }
        let _one = self.probing.lock().await;
        if let Some(s) = self.cached() {
            return s;
        }
        match modern::probe(&self.backend, &self.client, &self.url, &self.headers).await {
            Probe::Modern { info, legacy } => {
                self.modern.set_info(info);
                let s = Served {
                    modern: true,
                    legacy,
                };
                self.remember(s);
                s
            }
            Probe::Legacy => {
                let s = Served {
                    modern: false,
                    legacy: Some(true),
                };
                self.remember(s);
                s
            }
            Probe::Inconclusive(e) => {
                tracing::debug!(backend = %self.backend, error = %e, "revision probe inconclusive; using the session-based revision for now");
                Served {
                    modern: false,
                    legacy: None,
                }
            }
        }
    }

    /// Sends a request over the session-based hop, correcting the verdict in band: a backend that
    /// refuses the handshake itself (no session came of it, so nothing ran) is spoken to in
    /// 2026-07-28 from then on, the request included; one that negotiates 2026-07-28 in it is
    /// probed again.
    async fn legacy_request(
        &self,
        id: i64,
        method: &str,
        params: Option<&Value>,
        sink: Option<&CallSink>,
    ) -> Result<Value, BackendError> {
        let outcome = self.legacy.request(id, method, params, sink).await;
        let opened = self.legacy.server_info();
        if opened.is_some() {
            self.legacy_served(true);
        }
        // A handshake refused as a 2026-07-28-only server refuses it (the method is gone, or the
        // version unsupported) started no session, so nothing ran.
        let refused_handshake = opened.is_none()
            && matches!(&outcome, Err(BackendError::Rpc(e))
                if e.code == codes::METHOD_NOT_FOUND || e.code == codes::UNSUPPORTED_PROTOCOL_VERSION);
        if refused_handshake {
            let modern = self.cached().is_some_and(|s| s.modern) || self.reprobe().await;
            if !modern {
                return outcome;
            }
            self.legacy_served(false);
            return self.modern_request(id, method, params, sink).await;
        }
        // A session negotiated at 2026-07-28 (an odd server): probe again, once.
        if opened.is_some_and(|i| i.protocol_version == revision::MODERN)
            && !self.refuted.swap(true, Ordering::Relaxed)
        {
            self.reprobe().await;
        }
        outcome
    }

    /// Sends a request over the stateless hop; one refused as a session-based server would refuse
    /// it (before running it) reclassifies the backend and goes the session-based way.
    async fn modern_request(
        &self,
        id: i64,
        method: &str,
        params: Option<&Value>,
        sink: Option<&CallSink>,
    ) -> Result<Value, BackendError> {
        match self.modern.call(id, method, params, sink).await {
            Ok(r) => r,
            Err(WrongEra) => {
                self.remember(Served {
                    modern: false,
                    legacy: Some(true),
                });
                self.legacy.request(id, method, params, sink).await
            }
        }
    }
}

/// Methods only the session-based revision has: whoever asks, they go over that hop.
fn session_only(method: &str) -> bool {
    matches!(
        method,
        "logging/setLevel" | "resources/subscribe" | "resources/unsubscribe"
    )
}

impl Connection for AutoConnection {
    fn request<'a>(
        &'a self,
        id: i64,
        method: &'a str,
        params: Option<&'a Value>,
        sink: Option<&'a CallSink>,
    ) -> BoxFuture<'a, Result<Value, BackendError>> {
        let era = sink.and_then(|s| s.client().era);
        self.request_for(era, id, method, params, sink)
    }

    fn request_for<'a>(
        &'a self,
        client: Option<Era>,
        id: i64,
        method: &'a str,
        params: Option<&'a Value>,
        sink: Option<&'a CallSink>,
    ) -> BoxFuture<'a, Result<Value, BackendError>> {
        Box::pin(async move {
            let client = if session_only(method) {
                Some(Era::Legacy)
            } else {
                client
            };
            match self.served().await.hop(client) {
                Era::Legacy => self.legacy_request(id, method, params, sink).await,
                Era::Modern => self.modern_request(id, method, params, sink).await,
            }
        })
    }

    fn watch_resource<'a>(
        &'a self,
        client: Option<Era>,
        id: i64,
        uri: &'a str,
        on: bool,
    ) -> BoxFuture<'a, Result<(), BackendError>> {
        Box::pin(async move {
            match self.served().await.hop(client) {
                // 2026-07-28 has no resources/subscribe: the URI joins the listen stream's filter.
                Era::Modern => {
                    self.modern.watch_resource(uri, on);
                    Ok(())
                }
                Era::Legacy => {
                    self.legacy
                        .watch_resource(Some(Era::Legacy), id, uri, on)
                        .await
                }
            }
        })
    }

    fn notify<'a>(
        &'a self,
        method: &'a str,
        params: Option<&'a Value>,
    ) -> BoxFuture<'a, Result<(), BackendError>> {
        Box::pin(async move {
            // Notifications (cancellation, roots changes) only mean something to a session; the
            // stateless hop cancels by closing the request's stream. Request ids are unique per
            // backend, so a cancellation of a stateless request is ignored by the session.
            if self.legacy.server_info().is_some() || self.cached().is_none_or(|s| !s.modern) {
                self.legacy.notify(method, params).await
            } else {
                Ok(())
            }
        })
    }

    fn ready(&self) -> BoxFuture<'_, Result<Arc<ServerInfo>, BackendError>> {
        Box::pin(async move {
            match self.served().await.hop(None) {
                Era::Modern => self.modern.ready().await,
                Era::Legacy => self.legacy.ready().await,
            }
        })
    }

    fn server_info(&self) -> Option<Arc<ServerInfo>> {
        match self.cached() {
            Some(s) if s.modern => self.modern.server_info(),
            _ => self.legacy.server_info(),
        }
    }

    fn revisions(&self) -> Vec<String> {
        let Some(s) = self.cached() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if s.modern {
            out.push(revision::MODERN.to_string());
        }
        match (self.legacy.server_info(), s.legacy) {
            (Some(i), _) if i.protocol_version != revision::MODERN => {
                out.push(i.protocol_version.clone());
            }
            // Known to serve sessions, none opened yet: the revision the gateway asks for.
            (_, Some(true)) => out.push(revision::LATEST_LEGACY.to_string()),
            _ => {}
        }
        out
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move { self.legacy.shutdown().await })
    }

    fn headers(&self) -> Option<&Headers> {
        Some(&self.headers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_client_gets_its_own_revision_when_the_backend_serves_both() {
        let both = Served {
            modern: true,
            legacy: Some(true),
        };
        assert_eq!(both.hop(Some(Era::Legacy)), Era::Legacy);
        assert_eq!(both.hop(Some(Era::Modern)), Era::Modern);
        assert_eq!(both.hop(None), Era::Modern, "the gateway's own requests");
        // Not known yet whether it serves sessions: a session-based client tries the handshake.
        let unknown = Served {
            modern: true,
            legacy: None,
        };
        assert_eq!(unknown.hop(Some(Era::Legacy)), Era::Legacy);
    }

    #[test]
    fn a_backend_serving_one_revision_is_bridged_for_the_other() {
        let modern_only = Served {
            modern: true,
            legacy: Some(false),
        };
        assert_eq!(modern_only.hop(Some(Era::Legacy)), Era::Modern);
        assert_eq!(modern_only.hop(None), Era::Modern);
        let legacy_only = Served {
            modern: false,
            legacy: Some(true),
        };
        assert_eq!(legacy_only.hop(Some(Era::Modern)), Era::Legacy);
        assert_eq!(legacy_only.hop(None), Era::Legacy);
    }
}
