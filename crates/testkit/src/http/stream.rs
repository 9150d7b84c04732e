//! Answering a request with an SSE stream that its handler feeds while it runs, and SEP-1699
//! polling: a handler may end the stream early (after a priming event carrying an event id
//! and a `retry` delay) and the client resumes it with `GET` + `Last-Event-ID`.
//!
//! Owns the stream plumbing only; which requests stream, and sessions, are `http`'s.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::response::Response;
use futures_util::Stream;
use serde_json::Value;
use tokio::sync::mpsc;

use super::random_id;
use crate::events::{KEEPALIVE, KEEPALIVE_INTERVAL, event, event_stream, priming_event};

/// The transport side of one POSTed message, as its handler sees it.
pub(crate) struct Call {
    /// The message's session (a new one for `initialize`); `None` when stateless.
    pub(crate) session: Option<String>,
    /// This POST's SSE stream, when the answer streams.
    frames: Option<mpsc::UnboundedSender<Frame>>,
}

/// What a handler puts on its answer stream.
enum Frame {
    /// One JSON-RPC message (or, for `garbage`, not quite).
    Message(String),
    /// End the HTTP response now; the rest waits for the client to resume after `retry`.
    Pause(Duration),
}

impl Call {
    /// A call whose answer does not stream.
    pub(super) fn unstreamed(session: Option<String>) -> Self {
        Self {
            session,
            frames: None,
        }
    }

    /// Sends `message` on this POST's SSE stream ahead of the answer. Returns false when there
    /// is no such stream or nobody reads it any more.
    pub(crate) fn send(&self, message: &Value) -> bool {
        self.frame(Frame::Message(message.to_string()))
    }

    /// Ends this POST's HTTP response now, after a priming event telling the client to
    /// reconnect after `retry`; whatever is sent afterwards, the answer included, waits for
    /// a `GET` whose `Last-Event-ID` is that event's id. Returns false if the answer does not
    /// stream.
    pub(crate) fn pause(&self, retry: Duration) -> bool {
        self.frame(Frame::Pause(retry))
    }

    fn frame(&self, frame: Frame) -> bool {
        self.frames
            .as_ref()
            .is_some_and(|frames| frames.send(frame).is_ok())
    }
}

/// Where the handler's answer goes once it is done.
pub(super) struct Answer(mpsc::UnboundedSender<Frame>);

impl Answer {
    /// Sends the last message and closes the stream (the client may be gone; then nobody
    /// hears it).
    pub(super) fn send(self, data: String) {
        let _ = self.0.send(Frame::Message(data));
    }
}

/// Opens an answer stream for a request of `session`: the [`Call`] to hand its handler, the
/// [`Answer`] for its result, and the `text/event-stream` response to return right away.
pub(super) fn open(session: Option<String>, paused: &Arc<Paused>) -> (Call, Answer, Response) {
    let (sender, frames) = mpsc::unbounded_channel();
    let response = event_stream(frames_stream(frames, Arc::clone(paused), session.clone()));
    let call = Call {
        session,
        frames: Some(sender.clone()),
    };
    (call, Answer(sender), response)
}

/// Paused answer streams by the id of their priming event.
#[derive(Default)]
pub(super) struct Paused(Mutex<HashMap<String, PausedStream>>);

struct PausedStream {
    session: Option<String>,
    frames: mpsc::UnboundedReceiver<Frame>,
}

impl Paused {
    fn streams(&self) -> MutexGuard<'_, HashMap<String, PausedStream>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The rest of the stream paused at `event_id`, as the response to the `GET` resuming it,
    /// if that stream belongs to `session`.
    pub(super) fn resume(self: &Arc<Self>, event_id: &str, session: &str) -> Option<Response> {
        let frames = {
            let mut streams = self.streams();
            let owned = streams.get(event_id)?.session.as_deref() == Some(session);
            owned.then(|| streams.remove(event_id)).flatten()?.frames
        };
        let rest = frames_stream(frames, Arc::clone(self), Some(session.to_owned()));
        Some(event_stream(rest))
    }

    /// Drops the paused streams of `session`.
    pub(super) fn forget_session(&self, session: &str) {
        self.streams()
            .retain(|_, stream| stream.session.as_deref() != Some(session));
    }
}

/// `frames` as SSE, with keep-alive comments while the handler works; ends when the handler
/// is done (all senders dropped) or pauses the stream.
fn frames_stream(
    frames: mpsc::UnboundedReceiver<Frame>,
    paused: Arc<Paused>,
    session: Option<String>,
) -> impl Stream<Item = Result<String, Infallible>> + Send + 'static {
    futures_util::stream::unfold(Some(frames), move |frames| {
        let (paused, session) = (Arc::clone(&paused), session.clone());
        async move {
            let mut frames = frames?;
            let next = tokio::select! {
                frame = frames.recv() => match frame? {
                    Frame::Message(data) => (event("message", &data), Some(frames)),
                    Frame::Pause(retry) => {
                        let id = random_id();
                        let priming = priming_event(&id, retry);
                        paused.streams().insert(id, PausedStream { session, frames });
                        (priming, None)
                    }
                },
                () = tokio::time::sleep(KEEPALIVE_INTERVAL) => (KEEPALIVE.to_owned(), Some(frames)),
            };
            Some((Ok(next.0), next.1))
        }
    })
}
