//! The HTTP edge of vmcp: MCP Streamable HTTP for clients (Legacy, session-based revisions),
//! request guards (Host/Origin, body size), and the operational endpoints.
//!
//! Each edge only deals with wire format and sessions; every capability operation goes to the
//! shared core ([`vmcp_core::Gateway`]) through [`dispatch`].

mod audit;
mod auth;
mod conn_limits;
mod dispatch;
mod envelope;
mod errors;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod guard;
mod legacy;
mod listen;
mod modern;
mod notify;
mod observe;
mod ops;
mod relay;
mod remote_resume;
mod replicas;
mod reply;
mod resumable;
mod serving_threads;
mod session;
mod shared;
mod state;
mod status_page;
mod stream;

use std::sync::Arc;

use axum::Router;
use axum::middleware;
use axum::routing::get;
use tokio::net::TcpListener;

pub use auth::StatusAccess;
pub use conn_limits::ConnectionLimits;
pub use guard::OriginPolicy;
pub use serving_threads::ServingThreads;
pub use session::SessionStore;
pub use shared::{DEFAULT_KEY_PREFIX, SharedSessions};
pub use state::{AppState, ServerOptions};

/// The gateway's HTTP routes.
pub fn router(state: Arc<AppState>) -> Router {
    let mut mcp = get(legacy::get_stream)
        .post(legacy::post)
        .delete(legacy::delete);
    // Without an audit trail, requests do not pass through its layer at all.
    if state.options.audit.is_some() {
        mcp = mcp.route_layer(middleware::from_fn_with_state(state.clone(), audit::layer));
    }
    let mut operational = Router::new()
        .route("/health", get(ops::health))
        .route("/ping", get(ops::health))
        .route("/readyz", get(ops::readyz))
        .route("/status", get(ops::status));
    // Unauthenticated, like ToolHive's, and only when the config asks for it.
    if vmcp_telemetry::serves_prometheus() {
        operational = operational.route("/metrics", get(observe::metrics));
    }
    let operational = operational.route_layer(middleware::from_fn_with_state(
        state.clone(),
        guard::operational,
    ));
    // `/mcp` checks Host and Origin in its handlers; the OAuth metadata under `/.well-known` is
    // public by design (every client, browser-based ones included, must read it).
    Router::new()
        .route("/mcp", mcp)
        .merge(operational)
        .route(
            "/.well-known/{*rest}",
            get(auth::well_known).options(auth::well_known),
        )
        .with_state(state)
}

/// Serves the gateway on `listener` from `threads` until `shutdown` resolves, then stops
/// accepting, lets in-flight requests finish (bounded by `drain`), and returns.
///
/// Accepting and background work (session expiry, notification fan-out) run on the caller's
/// runtime.
pub async fn serve(
    threads: &ServingThreads,
    listener: TcpListener,
    state: Arc<AppState>,
    shutdown: impl std::future::Future<Output = ()>,
    drain: std::time::Duration,
) {
    let reaper = tokio::spawn(session::reap_loop(state.clone()));
    let fan_out = tokio::spawn(notify::fan_out(state.clone()));
    let bus = state
        .bus
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
        .map(|rx| tokio::spawn(replicas::bus_loop(Arc::downgrade(&state), rx)));
    let shared = bus.is_some();
    let mut stopped_at = None;
    // Open SSE streams would hold their connections forever; closing every session ends them.
    let on_stop = || {
        stopped_at = Some(std::time::Instant::now());
        state.sessions.close_all_streams();
    };
    let drained = threads
        .serve(
            listener,
            serving_threads::App {
                router: router(state.clone()),
                direct_post: state.options.audit.is_none().then(|| state.clone()),
            },
            state.options.connection_limits,
            shutdown,
            on_stop,
            drain,
        )
        .await;
    if !drained {
        tracing::warn!("in-flight requests did not finish within {drain:?}; stopping anyway");
    }
    if shared {
        let deadline = stopped_at.unwrap_or_else(std::time::Instant::now) + drain;
        await_outstanding_resumes(&state, deadline).await;
    }
    reaper.abort();
    fan_out.abort();
    if let Some(b) = bus {
        b.abort();
    }
}

/// With sessions shared between replicas, a client cut from a stream this replica holds (a load
/// balancer, or this replica's own restart) resumes through another replica, which asks this one
/// over the bus: keep the bus and the calls alive until no such stream is left, or `deadline`.
async fn await_outstanding_resumes(state: &AppState, deadline: std::time::Instant) {
    let mut logged = false;
    loop {
        let waiting = state.sessions.with_outstanding_streams();
        if waiting == 0 {
            return;
        }
        if std::time::Instant::now() >= deadline {
            tracing::warn!(
                sessions = waiting,
                "stopping with streams clients may still resume (server.shutdownDrain passed); resuming them elsewhere gets 503"
            );
            return;
        }
        if !logged {
            tracing::info!(
                sessions = waiting,
                "waiting for streams a client may resume through another replica"
            );
            logged = true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// Threads serving clients when the config leaves it to us: one per core.
#[must_use]
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}
