//! A Streamable HTTP backend whose revision is found out rather than assumed: a `server/discover`
//! probe first, then MCP 2026-07-28 if it says so, session-based MCP otherwise. The verdict is
//! cached; an inconclusive probe (auth, overload, outage) is not, so a passing fault never pins the
//! wrong revision. A backend that refuses a Modern request as a session-based server would (before
//! running it) is reclassified and the request sent again that way; a request that may already have
//! run is never sent again.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use reqwest::Url;
use reqwest::header::HeaderMap;
use serde_json::Value;
use tokio::sync::Mutex as AsyncMutex;
use vmcp_proto::era::Era;
use vmcp_proto::{codes, revision};

use crate::{
    connection::Connection,
    error::BackendError,
    handshake::ServerInfo,
    http::HttpConnection,
    inbound::Inbound,
    modern::{self, ModernConnection, Probe, WrongEra},
    sink::CallSink,
};

/// Either revision, chosen per backend.
pub(crate) struct AutoConnection {
    backend: String,
    client: crate::HttpClient,
    url: Url,
    headers: HeaderMap,
    legacy: HttpConnection,
    modern: ModernConnection,
    era: Mutex<Option<Era>>,
    probing: AsyncMutex<()>,
    refuted: AtomicBool,
}

impl AutoConnection {
    pub(crate) fn new(
        backend: &str,
        client: crate::HttpClient,
        url: Url,
        headers: HeaderMap,
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
            era: Mutex::new(None),
            probing: AsyncMutex::new(()),
            refuted: AtomicBool::new(false),
        }
    }

    fn cached(&self) -> Option<Era> {
        *self.era.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn remember(&self, era: Era) {
        let mut cur = self.era.lock().unwrap_or_else(|p| p.into_inner());
        if *cur != Some(era) {
            tracing::info!(backend = %self.backend, ?era, "backend MCP revision classified");
        }
        *cur = Some(era);
    }

    /// Forgets the verdict and probes again; true when the backend now classifies Modern.
    async fn reprobe(&self) -> bool {
        *self.era.lock().unwrap_or_else(|p| p.into_inner()) = None;
        self.era().await == Era::Modern
    }

    async fn era(&self) -> Era {
        if let Some(e) = self.cached() {
            return e;
        }
        let _one = self.probing.lock().await;
        if let Some(e) = self.cached() {
            return e;
        }
        match modern::probe(&self.backend, &self.client, &self.url, &self.headers).await {
            Probe::Modern(info) => {
                self.modern.set_info(info);
                self.remember(Era::Modern);
                Era::Modern
            }
            Probe::Legacy => {
                self.remember(Era::Legacy);
                Era::Legacy
            }
            Probe::Inconclusive(e) => {
                tracing::debug!(backend = %self.backend, error = %e, "revision probe inconclusive; using the session-based revision for now");
                Era::Legacy
            }
        }
    }
}

impl Connection for AutoConnection {
    fn request<'a>(
        &'a self,
        id: i64,
        method: &'a str,
        params: Option<&'a Value>,
        sink: Option<&'a CallSink>,
    ) -> BoxFuture<'a, Result<Value, BackendError>> {
        Box::pin(async move {
            if self.era().await == Era::Legacy {
                let outcome = self.legacy.request(id, method, params, sink).await;
                // Corrected in band: a backend that refuses the handshake itself (no session came
                // of it, so nothing ran) or negotiates 2026-07-28 in it is probed again.
                let refused_handshake = matches!(&outcome, Err(BackendError::Rpc(e)) if e.code == codes::METHOD_NOT_FOUND)
                    && self.legacy.server_info().is_none();
                let negotiated_modern = self
                    .legacy
                    .server_info()
                    .is_some_and(|i| i.protocol_version == revision::MODERN);
                // A hint the probe refuted once is not chased on every call.
                let hinted = refused_handshake
                    || (negotiated_modern && !self.refuted.swap(true, Ordering::Relaxed));
                if !hinted {
                    return outcome;
                }
                let now_modern = self.reprobe().await;
                // Only a refused handshake means nothing ran: only then is the request sent again.
                if !(now_modern && refused_handshake) {
                    return outcome;
                }
            }
            match self.modern.call(id, method, params, sink).await {
                Ok(r) => r,
                Err(WrongEra) => {
                    self.remember(Era::Legacy);
                    self.legacy.request(id, method, params, sink).await
                }
            }
        })
    }

    fn watch_resource<'a>(
        &'a self,
        id: i64,
        uri: &'a str,
        on: bool,
    ) -> BoxFuture<'a, Result<(), BackendError>> {
        Box::pin(async move {
            match self.era().await {
                Era::Modern => {
                    self.modern.watch_resource(uri, on);
                    Ok(())
                }
                Era::Legacy => self.legacy.watch_resource(id, uri, on).await,
            }
        })
    }

    fn notify<'a>(
        &'a self,
        method: &'a str,
        params: Option<&'a Value>,
    ) -> BoxFuture<'a, Result<(), BackendError>> {
        Box::pin(async move {
            match self.cached() {
                Some(Era::Modern) => Ok(()),
                _ => self.legacy.notify(method, params).await,
            }
        })
    }

    fn ready(&self) -> BoxFuture<'_, Result<Arc<ServerInfo>, BackendError>> {
        Box::pin(async move {
            match self.era().await {
                Era::Modern => self.modern.ready().await,
                Era::Legacy => self.legacy.ready().await,
            }
        })
    }

    fn server_info(&self) -> Option<Arc<ServerInfo>> {
        match self.cached() {
            Some(Era::Modern) => self.modern.server_info(),
            _ => self.legacy.server_info(),
        }
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move { self.legacy.shutdown().await })
    }
}
