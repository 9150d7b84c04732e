//! Clients for the MCP servers behind the gateway: one [`Backend`] per configured server, speaking
//! Streamable HTTP, the deprecated HTTP+SSE transport, or stdio to a supervised child process.
//!
//! This crate owns transports, the initialize handshake, request ids, timeouts and process
//! supervision. It knows nothing about aggregation or client sessions beyond an opaque session key
//! used to pick a per-session connection.

mod auto;
mod backend;
mod client;
mod connection;
mod error;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod h1_pool;
mod handshake;
mod health;
mod http;
mod inbound;
mod listen;
mod modern;
mod param_headers;
mod pending;
mod per_session;
mod redirect;
mod sink;
mod sse;
mod stdio;

pub use backend::{
    Backend, BackendSpec, BackendStatus, Isolation, Origin, StdioSpec, TransportSpec,
};
pub use client::{Headers, HttpClient, set_serving_thread};
pub use connection::Connection;
pub use error::BackendError;
pub use handshake::ServerInfo;
pub use health::{Circuit, Health, HealthPolicy, HealthReport, Transition};
pub use inbound::Notice;
pub use sink::{CallEvent, CallSink, ClientView};

/// Builds the pooled HTTP client every HTTP backend shares.
///
/// # Errors
/// When the TLS stack cannot be initialised.
pub fn http_client() -> Result<reqwest::Client, BackendError> {
    http_client_trusting(&[])
}

/// Like [`http_client`], also trusting `roots` (a backend's `caBundlePath`).
pub(crate) fn http_client_trusting(
    roots: &[reqwest::Certificate],
) -> Result<reqwest::Client, BackendError> {
    // reqwest is built without a default crypto provider; install ring once (a second install fails
    // harmlessly when one is already set).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut builder = reqwest::Client::builder()
        // A redirect would carry the backend's credential to wherever it points (see redirect.rs).
        .redirect(reqwest::redirect::Policy::none())
        .tcp_nodelay(true)
        .pool_idle_timeout(std::time::Duration::from_secs(90))
        .pool_max_idle_per_host(64);
    for root in roots {
        builder = builder.add_root_certificate(root.clone());
    }
    builder
        .build()
        .map_err(|e| BackendError::Unavailable(format!("cannot build HTTP client: {e}")))
}
