//! MCP Streamable HTTP (2025-11-25) at `/mcp`: POST with sessions, answers as JSON or as one
//! SSE event, an idle GET stream, DELETE.
//!
//! Owns sessions and wire format only; what is answered comes from [`Fixture`].

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

const SESSION_HEADER: &str = "mcp-session-id";

/// Shared state of one Streamable HTTP fixture.
struct HttpState {
    fixture: Fixture,
    stateless: bool,
    sse_responses: bool,
    /// Live sessions; dropping a sender ends that session's GET streams.
    sessions: Mutex<HashMap<String, watch::Sender<()>>>,
}

/// The `/mcp` router of a Streamable HTTP fixture.
pub(crate) fn router(opts: &FixtureOptions) -> Router {
    let state = Arc::new(HttpState {
        fixture: Fixture::new(opts, !opts.stateless),
        stateless: opts.stateless,
        sse_responses: opts.sse_responses,
        sessions: Mutex::new(HashMap::new()),
    });
    Router::new()
        .route(
            "/mcp",
            post(handle_post).get(handle_get).delete(handle_delete),
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
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1:0");
    let addr = listener
        .local_addr()
        .expect("local address of the fixture listener");
    let router = router(&opts);
    let task = tokio::spawn(async move {
        if let Err(err) = serve(listener, router).await {
            eprintln!("vmcp-fixture (in process): {err}");
        }
    });
    (format!("http://{addr}/mcp"), task)
}

async fn handle_post(
    State(state): State<Arc<HttpState>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let message = match Fixture::parse(&body) {
        Ok(message) => message,
        Err(parse_error) => return (StatusCode::BAD_REQUEST, Json(parse_error)).into_response(),
    };
    let initialize = message.get("method").and_then(Value::as_str) == Some("initialize");
    if !state.stateless
        && !initialize
        && let Err(rejection) = state.check_session(&headers)
    {
        return rejection.into_response();
    }
    match state.fixture.handle(&message).await {
        Outcome::Accepted => StatusCode::ACCEPTED.into_response(),
        Outcome::Reply(response) => {
            let session = (initialize && !state.stateless).then(|| state.open_session());
            state.reply(&response, session)
        }
        Outcome::ReplyThenForgetSessions(response) => {
            state.sessions().clear();
            state.reply(&response, None)
        }
        Outcome::Garbage => ([(CONTENT_TYPE, "application/json")], "not json{").into_response(),
        Outcome::Crash => crash(),
    }
}

async fn handle_get(State(state): State<Arc<HttpState>>, headers: HeaderMap) -> Response {
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
    let closed = match state.check_session(&headers) {
        Ok(id) => match state.sessions().get(&id) {
            Some(sender) => sender.subscribe(),
            None => return SessionRejection::Unknown.into_response(),
        },
        Err(rejection) => return rejection.into_response(),
    };
    event_stream(idle_stream(closed))
}

async fn handle_delete(State(state): State<Arc<HttpState>>, headers: HeaderMap) -> Response {
    if state.stateless {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    match state.check_session(&headers) {
        Ok(id) => {
            state.sessions().remove(&id);
            StatusCode::OK.into_response()
        }
        Err(rejection) => rejection.into_response(),
    }
}

impl HttpState {
    fn sessions(&self) -> MutexGuard<'_, HashMap<String, watch::Sender<()>>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn open_session(&self) -> String {
        let id = new_session_id();
        self.sessions().insert(id.clone(), watch::channel(()).0);
        id
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
        let mut reply = if self.sse_responses {
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

/// 128 random bits as hex, from the std hasher's per-process random keys.
fn new_session_id() -> String {
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
