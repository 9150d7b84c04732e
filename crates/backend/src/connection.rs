//! The transport-independent face of one live MCP connection to a backend.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::Value;
use vmcp_proto::era::Era;

use crate::{client::Headers, error::BackendError, handshake::ServerInfo, sink::CallSink};

/// One connection (or supervised process) speaking MCP to a backend, already initialised or able to
/// initialise itself on first use. Ids are chosen by the caller so that it can cancel by id.
pub trait Connection: Send + Sync {
    /// Sends request `method` with id `id` and waits for its result; what the backend sends that
    /// belongs to the request goes to `sink`.
    fn request<'a>(
        &'a self,
        id: i64,
        method: &'a str,
        params: Option<&'a Value>,
        sink: Option<&'a CallSink>,
    ) -> BoxFuture<'a, Result<Value, BackendError>>;

    /// Like [`Connection::request`], for a client speaking `client` (None: the gateway's own
    /// request). A connection that can speak both revisions uses the client's.
    fn request_for<'a>(
        &'a self,
        client: Option<Era>,
        id: i64,
        method: &'a str,
        params: Option<&'a Value>,
        sink: Option<&'a CallSink>,
    ) -> BoxFuture<'a, Result<Value, BackendError>> {
        let _ = client;
        self.request(id, method, params, sink)
    }

    /// Starts (`on`) or stops watching `uri` for `notifications/resources/updated` on behalf of a
    /// client speaking `client`; `id` is the request id to use if that takes a request.
    fn watch_resource<'a>(
        &'a self,
        client: Option<Era>,
        id: i64,
        uri: &'a str,
        on: bool,
    ) -> BoxFuture<'a, Result<(), BackendError>> {
        let _ = client;
        Box::pin(async move {
            let method = if on {
                "resources/subscribe"
            } else {
                "resources/unsubscribe"
            };
            let params = serde_json::json!({ "uri": uri });
            self.request(id, method, Some(&params), None)
                .await
                .map(|_| ())
        })
    }

    /// Sends a notification.
    fn notify<'a>(
        &'a self,
        method: &'a str,
        params: Option<&'a Value>,
    ) -> BoxFuture<'a, Result<(), BackendError>>;

    /// Opens the connection (performing initialize) if needed, and returns what the backend said.
    fn ready(&self) -> BoxFuture<'_, Result<Arc<ServerInfo>, BackendError>>;

    /// What the backend said at initialize, once the handshake has happened.
    fn server_info(&self) -> Option<Arc<ServerInfo>>;

    /// The revisions the backend is known to serve, newest first (empty until known).
    fn revisions(&self) -> Vec<String> {
        self.server_info()
            .map(|i| vec![i.protocol_version.clone()])
            .unwrap_or_default()
    }

    /// Ends the connection: closes the session or stops and reaps the process.
    fn shutdown(&self) -> BoxFuture<'_, ()>;

    /// The connection's HTTP request headers, for a credential set per caller (None: not HTTP).
    fn headers(&self) -> Option<&Headers> {
        None
    }
}
