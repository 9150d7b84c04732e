//! The HTTP edge of vmcp: MCP Streamable HTTP for clients (Legacy, session-based revisions),
//! request guards (Host/Origin, body size), and the operational endpoints.
//!
//! Each edge only deals with wire format and sessions; every capability operation goes to the
//! shared core ([`vmcp_core::Gateway`]) through [`dispatch`].

mod dispatch;
mod envelope;
mod errors;
mod guard;
mod legacy;
mod listen;
mod modern;
mod notify;
mod ops;
mod relay;
mod reply;
mod session;
mod state;
mod stream;

use std::sync::Arc;

use axum::Router;
use axum::routing::get;
use axum::serve::ListenerExt;
use tokio::net::TcpListener;

pub use guard::OriginPolicy;
pub use session::SessionStore;
pub use state::{AppState, ServerOptions};

/// The gateway's HTTP routes.
pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route(
            "/mcp",
            get(legacy::get_stream)
                .post(legacy::post)
                .delete(legacy::delete),
        )
        .route("/health", get(ops::health))
        .route("/ping", get(ops::health))
        .route("/readyz", get(ops::readyz))
        .route("/status", get(ops::status))
        .with_state(state)
}

/// Serves the gateway on `listener` until `shutdown` resolves, then stops accepting, lets in-flight
/// requests finish (bounded by `drain`), and returns.
///
/// # Errors
/// When the listener fails.
pub async fn serve(
    listener: TcpListener,
    state: Arc<AppState>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    drain: std::time::Duration,
) -> std::io::Result<()> {
    let reaper = tokio::spawn(session::reap_loop(state.clone()));
    let fan_out = tokio::spawn(notify::fan_out(state.clone()));
    let app = router(state.clone()).into_make_service();
    let (stopped_tx, stopped_rx) = tokio::sync::oneshot::channel::<()>();
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let server = axum::serve(listener, app).with_graceful_shutdown(async move {
        shutdown.await;
        let _ = stopped_tx.send(());
    });
    let server = tokio::spawn(async move { server.await });
    // Once shutdown starts, give in-flight requests `drain` to finish. Open SSE streams would
    // otherwise hold the server forever; closing every session ends them.
    let result = tokio::select! {
        r = server => r.unwrap_or(Ok(())),
        _ = async {
            let _ = stopped_rx.await;
            state.sessions.close_all_streams();
            tokio::time::sleep(drain).await;
        } => {
            tracing::warn!("in-flight requests did not finish within {drain:?}; stopping anyway");
            Ok(())
        }
    };
    reaper.abort();
    fan_out.abort();
    result
}
