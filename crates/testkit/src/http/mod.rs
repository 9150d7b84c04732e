//! MCP Streamable HTTP (2025-11-25) at `/mcp`: POST with sessions, answers as JSON, as one
//! SSE event or as an SSE stream that first carries what the server sends mid-call; an idle
//! GET stream; DELETE.
//!
//! Owns sessions and wire format only; what is answered comes from a [`Handler`]: the
//! `vmcp-fixture` catalogue ([`Fixture`]) or the conformance fixture. Streamed answers, and
//! pausing and resuming them, are in `stream`.

mod stream;

use std::collections::HashMap;
use std::convert::Infallible;
use std::hash::{BuildHasher, RandomState};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::header::{ACCEPT, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Json, Response};
use axum::routing::post;
use axum::serve::ListenerExt;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::FixtureOptions;
use crate::events::{KEEPALIVE, KEEPALIVE_INTERVAL, event, event_stream};
use crate::protocol::{Fixture, Outcome, crash};
pub(crate) use stream::Call;
use stream::Paused;

const SESSION_HEADER: &str = "mcp-session-id";
const LAST_EVENT_ID_HEADER: &str = "last-event-id";

/// What a Streamable HTTP endpoint does with each POSTed JSON-RPC message.
pub(crate) trait Handler: Send + Sync + 'static {
    /// Handles one message; `call` names its session and, when answers stream, carries what
    /// to send before the answer.
    fn respond(&self, message: Value, call: Call) -> impl Future<Output = Outcome> + Send;

    /// Session `id` was deleted by its client.
    fn session_closed(&self, _id: &str) {}
}

/// `vmcp-fixture`'s catalogue needs neither sessions nor streams.
impl Handler for Fixture {
    async fn respond(&self, message: Value, _call: Call) -> Outcome {
        self.handle(&message).await
    }
}

/// How POSTed requests are answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Replies {
    /// `application/json`, once the handler is done.
    Json,
    /// A `text/event-stream` of one event, once the handler is done.
    SseEvent,
    /// A `text/event-stream` opened at once, carrying [`Call::send`]'s messages, then the answer
    /// (see `stream`). `initialize` is still answered as [`Replies::SseEvent`] (its session
    /// header comes first).
    SseStream,
}

/// Shared state of one Streamable HTTP endpoint.
struct HttpState<H> {
    handler: H,
    stateless: bool,
    replies: Replies,
    /// Live sessions; dropping a sender ends that session's GET streams.
    sessions: Mutex<HashMap<String, watch::Sender<()>>>,
    /// Answer streams paused by their handler until the client resumes them.
    paused: Arc<Paused>,
}

/// The `/mcp` router of a `vmcp-fixture` Streamable HTTP fixture.
pub(crate) fn router(opts: &FixtureOptions) -> Router {
    let replies = if opts.sse_responses {
        Replies::SseEvent
    } else {
        Replies::Json
    };
    handler_router(Fixture::new(opts, !opts.stateless), replies, opts.stateless)
}

/// The `/mcp` router serving `handler`.
pub(crate) fn handler_router<H: Handler>(handler: H, replies: Replies, stateless: bool) -> Router {
    let state = Arc::new(HttpState {
        handler,
        stateless,
        replies,
        sessions: Mutex::new(HashMap::new()),
        paused: Arc::default(),
    });
    Router::new()
        .route(
            "/mcp",
            post(handle_post::<H>)
                .get(handle_get::<H>)
                .delete(handle_delete::<H>),
        )
        .with_state(state)
}

/// Serves `router` on `listener` with `TCP_NODELAY` on every accepted connection.
pub(crate) async fn serve(listener: TcpListener, router: Router) -> std::io::Result<()> {
    let listener = listener.tap_io(|tcp| {
        if let Err(err) = tcp.set_nodelay(true) {
            eprintln!("vmcp-fixture: TCP_NODELAY: {err}");
        }
    });
    axum::serve(listener, router).await
}

/// Runs the Streamable HTTP fixture inside this process on `127.0.0.1:0`, for benchmarks.
///
/// Returns the endpoint URL (`http://127.0.0.1:PORT/mcp`) and the server task; abort the task
/// to stop the server. Needs a tokio runtime. The `crash` tool exits *this* process.
///
/// # Panics
///
/// If no local port can be bound.
pub async fn serve_http_in_process(opts: FixtureOptions) -> (String, JoinHandle<()>) {
    serve_in_process(router(&opts), "/mcp").await
}

/// Serves `router` on `127.0.0.1:0` on a new task; returns `http://127.0.0.1:PORT<path>` and
/// the task.
///
/// # Panics
///
/// If no local port can be bound.
pub(crate) async fn serve_in_process(router: Router, path: &str) -> (String, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1:0");
    let addr = listener
        .local_addr()
        .expect("local address of the fixture listener");
    let task = tokio::spawn(async move {
        if let Err(err) = serve(listener, router).await {
            eprintln!("vmcp-fixture (in process): {err}");
        }
    });
    (format!("http://{addr}{path}"), task)
}

async fn handle_post<H: Handler>(
    State(state): State<Arc<HttpState<H>>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let message = match Fixture::parse(&body) {
        Ok(message) => message,
        Err(parse_error) => return (StatusCode::BAD_REQUEST, Json(parse_error)).into_response(),
    };
    let initialize = message.get("method").and_then(Value::as_str) == Some("initialize");
    let session = if state.stateless {
        None
    } else if initialize {
        // Live only once the handler has answered; see `finish`.
        Some(random_id())
    } else {
        match state.check_session(&headers) {
            Ok(id) => Some(id),
            Err(rejection) => return rejection.into_response(),
        }
    };
    let request = message.get("method").is_some() && message.get("id").is_some();
    if state.replies == Replies::SseStream && request && !initialize {
        return stream_reply(state, message, session);
    }
    let new_session = session.clone().filter(|_| initialize);
    let outcome = state
        .handler
        .respond(message, Call::unstreamed(session))
        .await;
    state.finish(outcome, new_session)
}

/// Answers a request with an SSE stream that the handler feeds while it runs.
fn stream_reply<H: Handler>(
    state: Arc<HttpState<H>>,
    message: Value,
    session: Option<String>,
) -> Response {
    let (call, answer, response) = stream::open(session, &state.paused);
    tokio::spawn(async move {
        let last = match state.handler.respond(message, call).await {
            Outcome::Accepted => return,
            Outcome::Reply(response) | Outcome::ReplyThenLater(response, ..) => {
                response.to_string()
            }
            Outcome::ReplyThenForgetSessions(response) => {
                state.sessions().clear();
                response.to_string()
            }
            Outcome::Garbage => "not json{".to_owned(),
            Outcome::Crash => crash(),
        };
        answer.send(last);
    });
    response
}

async fn handle_get<H: Handler>(
    State(state): State<Arc<HttpState<H>>>,
    headers: HeaderMap,
) -> Response {
    if state.stateless {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    let accepts_sse = headers
        .get_all(ACCEPT)
        .iter()
        .any(|v| v.to_str().is_ok_and(|v| v.contains("text/event-stream")));
    if !accepts_sse {
        return StatusCode::NOT_ACCEPTABLE.into_response();
    }
    let id = match state.check_session(&headers) {
        Ok(id) => id,
        Err(rejection) => return rejection.into_response(),
    };
    let resume_from = headers
        .get(LAST_EVENT_ID_HEADER)
        .and_then(|v| v.to_str().ok());
    if let Some(rest) = resume_from.and_then(|event_id| state.paused.resume(event_id, &id)) {
        return rest;
    }
    let closed = match state.sessions().get(&id) {
        Some(sender) => sender.subscribe(),
        None => return SessionRejection::Unknown.into_response(),
    };
    event_stream(idle_stream(closed))
}

async fn handle_delete<H: Handler>(
    State(state): State<Arc<HttpState<H>>>,
    headers: HeaderMap,
) -> Response {
    if state.stateless {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    match state.check_session(&headers) {
        Ok(id) => {
            state.sessions().remove(&id);
            state.paused.forget_session(&id);
            state.handler.session_closed(&id);
            StatusCode::OK.into_response()
        }
        Err(rejection) => rejection.into_response(),
    }
}

impl<H: Handler> HttpState<H> {
    fn sessions(&self) -> MutexGuard<'_, HashMap<String, watch::Sender<()>>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Turns the handler's outcome into the HTTP response; `new_session` (of an `initialize`)
    /// goes live only if it was answered.
    fn finish(&self, outcome: Outcome, new_session: Option<String>) -> Response {
        match outcome {
            Outcome::Accepted => StatusCode::ACCEPTED.into_response(),
            Outcome::Reply(response) | Outcome::ReplyThenLater(response, ..) => {
                if let Some(id) = &new_session {
                    self.sessions().insert(id.clone(), watch::channel(()).0);
                }
                self.reply(&response, new_session)
            }
            Outcome::ReplyThenForgetSessions(response) => {
                self.sessions().clear();
                self.reply(&response, None)
            }
            Outcome::Garbage => ([(CONTENT_TYPE, "application/json")], "not json{").into_response(),
            Outcome::Crash => crash(),
        }
    }

    /// The request's session id if it names a live session.
    fn check_session(&self, headers: &HeaderMap) -> Result<String, SessionRejection> {
        let Some(id) = headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok()) else {
            return Err(SessionRejection::Missing);
        };
        if self.sessions().contains_key(id) {
            Ok(id.to_owned())
        } else {
            Err(SessionRejection::Unknown)
        }
    }

    fn reply(&self, response: &Value, session: Option<String>) -> Response {
        let mut reply = if self.replies != Replies::Json {
            let body = event("message", &response.to_string());
            event_stream(futures_util::stream::iter([Ok::<_, Infallible>(body)]))
        } else {
            Json(response).into_response()
        };
        if let Some(value) = session.and_then(|id| HeaderValue::from_str(&id).ok()) {
            reply.headers_mut().insert(SESSION_HEADER, value);
        }
        reply
    }
}

/// Why a request's `Mcp-Session-Id` was refused.
enum SessionRejection {
    /// No header on a non-initialize request: 400.
    Missing,
    /// Unknown, deleted or forgotten session: 404, so the client re-initializes.
    Unknown,
}

impl IntoResponse for SessionRejection {
    fn into_response(self) -> Response {
        let (status, code, message) = match self {
            Self::Missing => (
                StatusCode::BAD_REQUEST,
                -32000,
                "Bad Request: missing Mcp-Session-Id header",
            ),
            Self::Unknown => (StatusCode::NOT_FOUND, -32001, "Session not found"),
        };
        let body =
            json!({ "jsonrpc": "2.0", "id": null, "error": { "code": code, "message": message } });
        (status, Json(body)).into_response()
    }
}

/// 128 random bits as hex, from the std hasher's per-process random keys: session and event ids.
fn random_id() -> String {
    let state = RandomState::new();
    format!("{:016x}{:016x}", state.hash_one(1u8), state.hash_one(2u8))
}

/// A stream that sends only keep-alive comments, and ends when its session is forgotten.
fn idle_stream(
    closed: watch::Receiver<()>,
) -> impl futures_util::Stream<Item = Result<String, Infallible>> + Send + 'static {
    futures_util::stream::unfold(closed, |mut closed| async move {
        tokio::select! {
            changed = closed.changed() => changed.ok().map(|()| (Ok(KEEPALIVE.to_owned()), closed)),
            () = tokio::time::sleep(KEEPALIVE_INTERVAL) => Some((Ok(KEEPALIVE.to_owned()), closed)),
        }
    })
}
