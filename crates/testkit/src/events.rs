//! Server-sent-event framing shared by the `http` and `sse` transports.

use std::convert::Infallible;
use std::time::Duration;

use axum::body::Body;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use futures_util::Stream;

/// How often an otherwise idle event stream sends a comment to stay alive.
pub(crate) const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(15);

/// An SSE comment; clients ignore it, proxies see traffic.
pub(crate) const KEEPALIVE: &str = ": keep-alive\n\n";

/// One `event: <event>` with a single `data:` line (`data` must hold no newline; compact JSON
/// never does).
pub(crate) fn event(event: &str, data: &str) -> String {
    format!("event: {event}\ndata: {data}\n\n")
}

/// A `200 text/event-stream` response streaming `events`.
pub(crate) fn event_stream<S>(events: S) -> Response
where
    S: Stream<Item = Result<String, Infallible>> + Send + 'static,
{
    let headers = [
        (CONTENT_TYPE, "text/event-stream"),
        (CACHE_CONTROL, "no-cache"),
    ];
    (headers, Body::from_stream(events)).into_response()
}

/// An event with an id, a `retry` delay and empty data: it gives the client an id to resume
/// from (SEP-1699) before the server closes the stream.
pub(crate) fn priming_event(id: &str, retry: Duration) -> String {
    format!("id: {id}\nretry: {}\ndata: \n\n", retry.as_millis())
}
