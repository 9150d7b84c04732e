//! The channel between one in-flight backend request and whoever made it: everything the backend
//! sends that belongs to the request (progress, log messages, server-to-client requests such as
//! elicitation or sampling) flows out through a [`CallSink`], and answers flow back.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::{mpsc, oneshot, watch};
use vmcp_proto::era::Era;
use vmcp_proto::{ErrorObject, codes};

/// Something a backend sent during a request.
#[derive(Debug)]
pub enum CallEvent {
    /// A notification (progress with the caller's own token, a log message, ...).
    Notification {
        /// The method.
        method: String,
        /// The params.
        params: Option<Value>,
    },
    /// A request the backend wants the client to answer.
    Request {
        /// The method (`elicitation/create`, `sampling/createMessage`, `roots/list`, ...).
        method: String,
        /// The params.
        params: Option<Value>,
        /// Where the client's answer goes.
        reply: oneshot::Sender<Result<Value, ErrorObject>>,
    },
    /// The backend answers this request with an SSE stream (not JSON), so the client may be
    /// answered with one too.
    StreamOpened,
    /// The backend closed its response stream before answering, to be polled (SEP-1699); the
    /// gateway resumes it after `retry`, and tells its client to do the same.
    StreamPaused {
        /// The reconnection time the backend asked for (or the default), as honoured.
        retry: Duration,
    },
}

/// What the backend side may know about the client behind a request: its revision, what it can
/// answer, and which logs it wants. Forwarded to 2026-07-28 backends in the request's `_meta`.
#[derive(Debug, Clone, Default)]
pub struct ClientView {
    /// The client's declared capabilities (elicitation, sampling, roots, ...).
    pub capabilities: Arc<Value>,
    /// The minimum log level the client wants, if it asked for logs.
    pub log_level: Option<&'static str>,
    /// The revision family the client speaks (None: unknown, e.g. the gateway's own requests). A
    /// backend serving both revisions is spoken to in the client's.
    pub era: Option<Era>,
    /// Who the request is for (issuer and subject; None: anonymous). Never sent to backends: a
    /// shared channel that more than one caller has used stops giving a message to its single call
    /// in flight, which could be another caller's tool talking late.
    pub caller: Option<Arc<str>>,
}

impl ClientView {
    /// Whether server-to-client requests can be relayed to the client while the request runs
    /// (Legacy sessions). When false, a 2026-07-28 backend's `input_required` result is passed
    /// back to the client as it is.
    pub fn relays_requests(&self) -> bool {
        self.era == Some(Era::Legacy)
    }
}

/// The sending half, held by the backend side while a request runs (cheap to clone).
#[derive(Clone)]
pub struct CallSink {
    inner: Arc<Inner>,
}

struct Inner {
    tx: mpsc::Sender<CallEvent>,
    client: ClientView,
    outstanding: AtomicUsize,
    epoch: Instant,
    last_activity_ms: AtomicU64,
    cancel: watch::Sender<bool>,
    dropped: AtomicU64,
}

impl CallSink {
    /// A sink and the receiver its events arrive on. Notifications beyond `capacity` queued events
    /// are dropped (and counted) rather than stalling the backend's reader.
    pub fn channel(capacity: usize) -> (CallSink, mpsc::Receiver<CallEvent>) {
        Self::for_client(capacity, ClientView::default())
    }

    /// Like [`CallSink::channel`], describing the client behind the request.
    pub fn for_client(
        capacity: usize,
        client: ClientView,
    ) -> (CallSink, mpsc::Receiver<CallEvent>) {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        let (cancel, _) = watch::channel(false);
        let inner = Inner {
            tx,
            client,
            outstanding: AtomicUsize::new(0),
            epoch: Instant::now(),
            last_activity_ms: AtomicU64::new(0),
            cancel,
            dropped: AtomicU64::new(0),
        };
        (
            CallSink {
                inner: Arc::new(inner),
            },
            rx,
        )
    }

    /// The client cancelled the request: the backend request is abandoned and cancelled upstream.
    pub fn cancel(&self) {
        let _ = self.inner.cancel.send(true);
    }

    /// Whether [`CallSink::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        *self.inner.cancel.borrow()
    }

    /// Resolves once [`CallSink::cancel`] was called.
    pub async fn cancelled(&self) {
        let mut rx = self.inner.cancel.subscribe();
        let _ = rx.wait_for(|c| *c).await;
    }

    /// The client behind the request.
    pub fn client(&self) -> &ClientView {
        &self.inner.client
    }

    /// Notifications dropped because the receiver did not keep up.
    pub fn dropped(&self) -> u64 {
        self.inner.dropped.load(Ordering::Relaxed)
    }

    fn touch(&self) {
        let ms = self.inner.epoch.elapsed().as_millis() as u64;
        self.inner.last_activity_ms.store(ms, Ordering::Relaxed);
    }

    /// Delivers a notification without waiting; drops it when the queue is full.
    pub fn notify(&self, method: String, params: Option<Value>) {
        self.touch();
        if self
            .inner
            .tx
            .try_send(CallEvent::Notification { method, params })
            .is_err()
        {
            self.inner.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Tells the client side that the answer streams ([`CallEvent::StreamOpened`]). Not activity:
    /// only what the backend sends counts for idleness.
    pub fn stream_opened(&self) {
        let _ = self.inner.tx.try_send(CallEvent::StreamOpened);
    }

    /// Tells the client side that the backend paused its answer stream, to be resumed after
    /// `retry` ([`CallEvent::StreamPaused`]).
    pub fn stream_paused(&self, retry: Duration) {
        let _ = self.inner.tx.try_send(CallEvent::StreamPaused { retry });
    }

    /// Asks the client something and waits for its answer.
    pub async fn request(
        &self,
        method: String,
        params: Option<Value>,
    ) -> Result<Value, ErrorObject> {
        let (reply, rx) = oneshot::channel();
        self.inner.outstanding.fetch_add(1, Ordering::Relaxed);
        let sent = self
            .inner
            .tx
            .send(CallEvent::Request {
                method,
                params,
                reply,
            })
            .await;
        let answer = match sent {
            Ok(()) => rx.await.unwrap_or_else(|_| Err(client_gone())),
            Err(_) => Err(client_gone()),
        };
        self.inner.outstanding.fetch_sub(1, Ordering::Relaxed);
        self.touch();
        answer
    }

    /// Whether a server-to-client request is waiting on the client (the backend is not idle).
    pub(crate) fn busy(&self) -> bool {
        self.inner.outstanding.load(Ordering::Relaxed) > 0
    }

    /// How long ago the last event passed through, if any did.
    pub(crate) fn idle_for(&self) -> Option<Duration> {
        let last = self.inner.last_activity_ms.load(Ordering::Relaxed);
        if last == 0 {
            return None;
        }
        let now = self.inner.epoch.elapsed().as_millis() as u64;
        Some(Duration::from_millis(now.saturating_sub(last)))
    }
}

fn client_gone() -> ErrorObject {
    ErrorObject::new(codes::INTERNAL_ERROR, "the client is no longer connected")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notification_flood_is_dropped_past_the_queue_not_buffered() {
        let (sink, mut rx) = CallSink::channel(4);
        for i in 0..10_000 {
            sink.notify(
                "notifications/message".into(),
                Some(serde_json::json!({"n": i})),
            );
        }
        assert_eq!(sink.dropped(), 10_000 - 4);
        let mut kept = 0;
        while rx.try_recv().is_ok() {
            kept += 1;
        }
        assert_eq!(kept, 4);
        assert!(sink.idle_for().is_some(), "activity was recorded");
    }

    #[tokio::test]
    async fn a_request_to_a_gone_client_fails_instead_of_hanging() {
        let (sink, rx) = CallSink::channel(4);
        drop(rx);
        let answer = sink.request("elicitation/create".into(), None).await;
        assert!(answer.is_err());
        assert!(!sink.busy());
    }
}
