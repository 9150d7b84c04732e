//! The deprecated 2024-11-05 HTTP+SSE transport: `GET /sse` opens the stream (first event
//! `endpoint`), `POST /messages?sessionId=<id>` sends a message (202), answers go out on the
//! stream as `event: message`.
//!
//! Owns the stream-per-session plumbing only; answers come from [`Fixture`].

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Json, Response};
use axum::routing::{get, post};
use futures_util::Stream;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::FixtureOptions;
use crate::events::{KEEPALIVE, KEEPALIVE_INTERVAL, event, event_stream};
use crate::http::serve_in_process;
use crate::protocol::{Fixture, Outcome, crash};

/// Shared state of one HTTP+SSE fixture.
struct SseState {
    fixture: Fixture,
    next_session: AtomicU64,
    /// Open streams by session id; each sender feeds one `GET /sse` response.
    sessions: Mutex<HashMap<String, mpsc::UnboundedSender<String>>>,
}

/// The `/sse` + `/messages` router of an HTTP+SSE fixture.
pub(crate) fn router(opts: &FixtureOptions) -> Router {
    let state = Arc::new(SseState {
        fixture: Fixture::new(opts, false),
        next_session: AtomicU64::new(1),
        sessions: Mutex::new(HashMap::new()),
    });
    Router::new()
        .route("/sse", get(open_stream))
        .route("/messages", post(receive))
        .with_state(state)
}

/// Runs the HTTP+SSE fixture inside this process on `127.0.0.1:0`, for benchmarks.
///
/// Returns the stream URL (`http://127.0.0.1:PORT/sse`) and the server task.
///
/// # Panics
///
/// If no local port can be bound.
pub async fn serve_sse_in_process(opts: FixtureOptions) -> (String, JoinHandle<()>) {
    serve_in_process(router(&opts), "/sse").await
}

impl SseState {
    fn sessions(&self) -> MutexGuard<'_, HashMap<String, mpsc::UnboundedSender<String>>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

async fn open_stream(State(state): State<Arc<SseState>>) -> Response {
    let id = format!("s{}", state.next_session.fetch_add(1, Ordering::Relaxed));
    let (sender, receiver) = mpsc::unbounded_channel();
    state.sessions().insert(id.clone(), sender);
    let endpoint = event("endpoint", &format!("/messages?sessionId={id}"));
    let guard = SessionGuard { state, id };
    event_stream(session_stream(endpoint, receiver, guard))
}

async fn receive(
    State(state): State<Arc<SseState>>,
    Query(query): Query<HashMap<String, String>>,
    body: Bytes,
) -> Response {
    let Some(stream) = query
        .get("sessionId")
        .and_then(|id| state.sessions().get(id).cloned())
    else {
        return (StatusCode::NOT_FOUND, "unknown sessionId").into_response();
    };
    let message = match Fixture::parse(&body) {
        Ok(message) => message,
        Err(parse_error) => return (StatusCode::BAD_REQUEST, Json(parse_error)).into_response(),
    };
    tokio::spawn(async move {
        let sent = match state.fixture.handle(&message).await {
            Outcome::Accepted => return,
            Outcome::Reply(response)
            | Outcome::ReplyThenForgetSessions(response)
            | Outcome::ReplyThenLater(response, ..) => event("message", &response.to_string()),
            Outcome::Garbage => event("message", "not json{"),
            Outcome::Crash => crash(),
        };
        // The stream may have closed meanwhile; then there is nobody to answer.
        let _ = stream.send(sent);
    });
    (StatusCode::ACCEPTED, "Accepted").into_response()
}

/// Removes its session when the stream it belongs to is dropped (client went away).
struct SessionGuard {
    state: Arc<SseState>,
    id: String,
}

impl Drop for SessionGuard {
    fn drop(&mut self) {
        self.state.sessions().remove(&self.id);
    }
}

/// The `endpoint` event, then every queued message, with keep-alive comments when idle.
fn session_stream(
    endpoint: String,
    receiver: mpsc::UnboundedReceiver<String>,
    guard: SessionGuard,
) -> impl Stream<Item = Result<String, Infallible>> + Send + 'static {
    let first = futures_util::stream::iter([Ok(endpoint)]);
    let rest =
        futures_util::stream::unfold((receiver, guard), |(mut receiver, guard)| async move {
            let next = tokio::select! {
                message = receiver.recv() => message?,
                () = tokio::time::sleep(KEEPALIVE_INTERVAL) => KEEPALIVE.to_owned(),
            };
            Some((Ok(next), (receiver, guard)))
        });
    futures_util::StreamExt::chain(first, rest)
}
