//! `vmcp-rmcp-conformance`: an MCP server built with rmcp, the official Rust SDK, serving what
//! the official MCP conformance suite's *server* scenarios ask for, in both protocol revisions
//! on one Streamable HTTP endpoint (`/mcp`):
//!
//! * 2025-11-25: sessions (`initialize`, `Mcp-Session-Id`), server-to-client requests
//!   (sampling, elicitation, roots) sent mid-call, `logging/setLevel`, `resources/subscribe`.
//! * 2026-07-28: stateless requests (`server/discover`, per-request `_meta`), questions to the
//!   client answered by retrying the request (Multi Round-Trip Requests, `input_required`),
//!   `subscriptions/listen`, caching hints, `Mcp-Param-*` header validation.
//!
//! rmcp's `StreamableHttpService` with `legacy_session_mode` decides which revision a request
//! belongs to. It is the second independent server CI runs the suite against, directly and
//! through vmcp (the first is the Python SDK's, tests/interop/conformance_server.py).
//!
//! Usage: `vmcp-rmcp-conformance --port 0` prints `listening http://127.0.0.1:PORT` once it
//! accepts connections; SIGTERM or SIGINT stops it.

mod ask;
mod media;
mod prompts;
mod server;
mod tools;

use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::signal::unix::{SignalKind, signal};
use tokio_util::sync::CancellationToken;

use crate::server::{Conformance, Shared};

/// SSE `retry` the server suggests on its 2025-11-25 streams (sent with the priming event).
const SSE_RETRY: Duration = Duration::from_millis(500);

/// An rmcp MCP server for the MCP conformance suite's server scenarios (both revisions).
#[derive(Debug, Parser)]
#[command(version)]
struct Cli {
    /// Port to bind (0: any free port).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Address to bind.
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    host: IpAddr,
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();

    let stop = CancellationToken::new();
    // Sessions for `initialize` (2025-11-25); rmcp serves 2026-07-28 requests statelessly
    // whatever this says. Host validation (DNS-rebinding protection) allows loopback names by
    // default.
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(true)
        .with_sse_retry(Some(SSE_RETRY))
        .with_cancellation_token(stop.child_token());
    // The same `retry` on the POST streams a session's requests are answered on.
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.sse_retry = Some(SSE_RETRY);
    let shared = Shared::new();
    let service: StreamableHttpService<Conformance, LocalSessionManager> =
        StreamableHttpService::new(
            move || Ok(Conformance::new(&shared)),
            Arc::new(sessions),
            config,
        );
    let app = axum::Router::new().nest_service("/mcp", service);

    // Before announcing the address, so a stop signal is never missed.
    let mut terminate = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    let listener = tokio::net::TcpListener::bind(SocketAddr::new(cli.host, cli.port)).await?;
    let bound = listener.local_addr()?;
    let shown = match bound.ip() {
        IpAddr::V6(ip) => format!("[{ip}]"),
        IpAddr::V4(ip) => ip.to_string(),
    };
    let mut stdout = std::io::stdout();
    writeln!(stdout, "listening http://{shown}:{}", bound.port())?;
    stdout.flush()?;

    let shutdown = stop.clone();
    tokio::spawn(async move {
        tokio::select! {
            _ = terminate.recv() => {}
            _ = interrupt.recv() => {}
        }
        // Ends the sessions and their open SSE streams, then the server drains.
        shutdown.cancel();
    });
    let served = axum::serve(listener, app).with_graceful_shutdown(stop.clone().cancelled_owned());
    let mut served = tokio::spawn(served.into_future());
    tokio::select! {
        result = &mut served => return result.unwrap_or_else(|e| Err(std::io::Error::other(e))),
        () = stop.cancelled() => {}
    }
    // A client holding a connection open does not keep us from exiting for long.
    match tokio::time::timeout(Duration::from_secs(3), served).await {
        Ok(Ok(result)) => result,
        _ => Ok(()),
    }
}
