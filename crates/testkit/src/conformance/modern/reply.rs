//! Answering one 2026-07-28 request: as a single JSON object (with the status its outcome
//! calls for) if the work finishes without notifying anything first, otherwise as an SSE
//! stream of the notifications, then the response. The response body drives the work, so a
//! client that closes the stream cancels the request (the revision's cancellation signal).

use std::convert::Infallible;
use std::pin::Pin;

use axum::http::header::HeaderName;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Json, Response};
use futures_util::Stream;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::events::{KEEPALIVE, KEEPALIVE_INTERVAL, event, event_stream};

/// The final response and its HTTP status, once the work is done.
type Work = Pin<Box<dyn Future<Output = (StatusCode, Value)> + Send>>;

/// Runs `work`, answering as described in the module docs; `notes` are the notifications it
/// sends while it runs.
pub(super) async fn lazily(
    work: impl Future<Output = (StatusCode, Value)> + Send + 'static,
    mut notes: mpsc::UnboundedReceiver<Value>,
) -> Response {
    let mut work: Work = Box::pin(work);
    let first = tokio::select! {
        biased;
        Some(note) = notes.recv() => note,
        (status, last) = &mut work => match notes.try_recv() {
            Ok(note) => return sse(Stage::Draining { pending: Some(note), notes, last }),
            Err(_) => return (status, Json(last)).into_response(),
        },
    };
    sse(Stage::Working {
        pending: Some(first),
        work,
        notes,
    })
}

/// Where an answer stream is.
enum Stage {
    /// The work runs; `pending` goes out first.
    Working {
        pending: Option<Value>,
        work: Work,
        notes: mpsc::UnboundedReceiver<Value>,
    },
    /// The work is done: what it notified is still to go out, then `last`.
    Draining {
        pending: Option<Value>,
        notes: mpsc::UnboundedReceiver<Value>,
        last: Value,
    },
}

/// A `text/event-stream` response that proxies must not buffer.
pub(super) fn sse_response(
    events: impl Stream<Item = Result<String, Infallible>> + Send + 'static,
) -> Response {
    let mut response = event_stream(events);
    response.headers_mut().insert(
        HeaderName::from_static("x-accel-buffering"),
        HeaderValue::from_static("no"),
    );
    response
}

fn sse(stage: Stage) -> Response {
    sse_response(futures_util::stream::unfold(Some(stage), next))
}

/// The next SSE chunk of the stream at `stage`, and where the stream is after it.
async fn next(stage: Option<Stage>) -> Option<(Result<String, Infallible>, Option<Stage>)> {
    let message = |value: &Value| Ok(event("message", &value.to_string()));
    match stage? {
        Stage::Working {
            pending: Some(note),
            work,
            notes,
        } => {
            let stage = Stage::Working {
                pending: None,
                work,
                notes,
            };
            Some((message(&note), Some(stage)))
        }
        Stage::Working {
            pending: None,
            mut work,
            mut notes,
        } => {
            tokio::select! {
                biased;
                Some(note) = notes.recv() => {
                    Some((message(&note), Some(Stage::Working { pending: None, work, notes })))
                }
                (_, last) = &mut work => {
                    let pending = notes.try_recv().ok();
                    let chunk = match &pending {
                        Some(note) => message(note),
                        None => message(&last),
                    };
                    let stage = pending.map(|_| Stage::Draining { pending: None, notes, last });
                    Some((chunk, stage))
                }
                () = tokio::time::sleep(KEEPALIVE_INTERVAL) => {
                    Some((Ok(KEEPALIVE.to_owned()), Some(Stage::Working { pending: None, work, notes })))
                }
            }
        }
        Stage::Draining {
            pending,
            mut notes,
            last,
        } => {
            if let Some(note) = pending.or_else(|| notes.try_recv().ok()) {
                let stage = Stage::Draining {
                    pending: None,
                    notes,
                    last,
                };
                return Some((message(&note), Some(stage)));
            }
            Some((message(&last), None))
        }
    }
}
