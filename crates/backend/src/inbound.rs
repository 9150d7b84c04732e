//! Messages a backend sends us that are not answers: who they are for.
//!
//! Attribution is only ever certain, never guessed: a progress notification carries a token the
//! gateway issued; a message on a request's own response stream belongs to that request; on a
//! multiplexed channel (stdio, HTTP+SSE) a message belongs to the one request in flight if there is
//! exactly one, or to the client session that owns the connection (`isolation: perSession`). The
//! HTTP GET stream is for messages unrelated to requests, so only the owning session gets them.
//! Log messages included: rmcp sends a call's logs there, but so does a tool talking after its
//! call ended, and giving such a log to whichever call is in flight hands one client's data to
//! another (the forwarding_rmcp test). A dropped GET-stream log is reported once per connection,
//! naming `isolation: perSession`, which delivers them. Anything else is not forwarded:
//! notifications are dropped with a debug log, and requests are refused with an error that says
//! why.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::sync::broadcast;
use vmcp_proto::{ErrorObject, Message, codes};

use crate::sink::CallSink;

/// What a backend announced about itself, for every client session to hear about.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// `notifications/{tools,resources,prompts}/list_changed`: the kind ("tools", "resources",
    /// "prompts").
    ListChanged(&'static str),
    /// `notifications/resources/updated` with its params.
    ResourceUpdated(Value),
    /// The backend's health changed whether it is advertised: withdrawn (`false`) or back.
    Advertised(bool),
    /// The backend restarted (a stdio process respawned, an HTTP backend forgot our session):
    /// what it serves may have changed with its code.
    Restarted,
}

/// Routing state shared by all connections of one backend.
pub(crate) struct Routes {
    pub(crate) backend: String,
    progress: Mutex<HashMap<String, (CallSink, Value)>>,
    notices: broadcast::Sender<Notice>,
    /// Whether the backend answered its latest request with an SSE stream (not JSON).
    streams: AtomicBool,
}

impl Routes {
    pub(crate) fn new(backend: &str) -> Arc<Self> {
        let (notices, _) = broadcast::channel(64);
        Arc::new(Self {
            backend: backend.to_string(),
            progress: Mutex::new(HashMap::new()),
            notices,
            streams: AtomicBool::new(false),
        })
    }

    /// Records how the backend answered a request: as an SSE stream, or as JSON.
    pub(crate) fn answered(&self, streamed: bool) {
        // Most answers repeat the last one's form: skip the write (and its cache traffic).
        if self.streams.load(Ordering::Relaxed) != streamed {
            self.streams.store(streamed, Ordering::Relaxed);
        }
    }

    /// Whether the backend answered its latest request with an SSE stream.
    pub(crate) fn streams_answers(&self) -> bool {
        self.streams.load(Ordering::Relaxed)
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Notice> {
        self.notices.subscribe()
    }

    /// Tells the listeners something about the backend as a whole.
    pub(crate) fn announce(&self, notice: Notice) {
        let _ = self.notices.send(notice);
    }

    /// Registers a gateway-issued progress token; the route lives as long as the guard.
    pub(crate) fn progress(
        self: &Arc<Self>,
        token: String,
        sink: CallSink,
        client_token: Value,
    ) -> ProgressGuard {
        self.progress
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(token.clone(), (sink, client_token));
        ProgressGuard {
            routes: self.clone(),
            token,
        }
    }
}

/// Removes a progress route when its request ends.
pub(crate) struct ProgressGuard {
    routes: Arc<Routes>,
    token: String,
}

impl Drop for ProgressGuard {
    fn drop(&mut self) {
        self.routes
            .progress
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.token);
    }
}

/// Most requests from one backend connection awaiting an answer at once; past it, more are
/// refused at once, so a backend flooding requests cannot pile up waiting tasks.
const MAX_OUTSTANDING: usize = 64;

/// A request from the backend to be answered, and where it should go.
pub(crate) struct ServerRequest {
    pub(crate) id: Value,
    pub(crate) method: String,
    params: Option<Value>,
    to: Option<CallSink>,
    backend: String,
    slot: Option<Outstanding>,
}

/// Counts a request as awaiting its answer until dropped.
struct Outstanding(Arc<AtomicUsize>);

impl Drop for Outstanding {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl ServerRequest {
    /// Gets the answer (asking the client when there is one to ask) as the reply message.
    pub(crate) async fn answer(self) -> Message {
        if self.method == "ping" {
            return Message::Response {
                id: self.id,
                result: json!({}),
            };
        }
        if self.slot.is_none() {
            return Message::Error {
                id: self.id,
                error: ErrorObject::new(
                    codes::INTERNAL_ERROR,
                    format!(
                        "vmcp refuses {}: more than {MAX_OUTSTANDING} requests from backend {} await answers",
                        self.method, self.backend
                    ),
                ),
            };
        }
        let outcome = match self.to {
            Some(sink) => sink.request(self.method, self.params).await,
            None => Err(ErrorObject::new(
                codes::INTERNAL_ERROR,
                format!(
                    "vmcp cannot tell which client {} is for: it arrived outside a request, or on a shared connection while several requests were in flight or after more than one caller used it; configure backend {} with isolation: perSession",
                    self.method, self.backend
                ),
            )),
        };
        match outcome {
            Ok(result) => Message::Response {
                id: self.id,
                result,
            },
            Err(error) => Message::Error { id: self.id, error },
        }
    }
}

/// Where a message from a backend arrived, which decides how certain its recipient is.
#[derive(Clone, Copy)]
pub(crate) enum Channel<'a> {
    /// The response stream of this one request: it belongs to that request.
    Request(Option<&'a CallSink>),
    /// A channel every request of the connection shares (stdio, HTTP+SSE): it belongs to the only
    /// request in flight, if exactly one is.
    Shared,
    /// A stream meant for messages unrelated to any request (the HTTP GET stream): it belongs to no
    /// request, only to the session owning a per-session connection.
    Standalone,
}

/// Per-connection attribution state.
pub(crate) struct Inbound {
    pub(crate) routes: Arc<Routes>,
    calls: Mutex<HashMap<i64, CallSink>>,
    session: Option<CallSink>,
    outstanding: Arc<AtomicUsize>,
    /// Whether a log on the GET stream was dropped already (reported once).
    standalone_log_dropped: AtomicBool,
    /// The first caller whose request was tracked here, and whether another has been since: from
    /// then on a shared channel's message is not given to its single call in flight, since it may
    /// be another caller's tool talking after its call ended.
    first_caller: std::sync::OnceLock<Option<Arc<str>>>,
    callers_mixed: AtomicBool,
}

/// Keeps a request registered as in flight on its connection until dropped.
pub(crate) struct Tracked<'a> {
    inbound: &'a Inbound,
    id: i64,
}

impl Drop for Tracked<'_> {
    fn drop(&mut self) {
        self.inbound.lock().remove(&self.id);
    }
}

impl Inbound {
    /// `session`: the sink of the client session that owns this connection (perSession only).
    pub(crate) fn new(routes: Arc<Routes>, session: Option<CallSink>) -> Self {
        Self {
            routes,
            calls: Mutex::new(HashMap::new()),
            session,
            outstanding: Arc::new(AtomicUsize::new(0)),
            standalone_log_dropped: AtomicBool::new(false),
            first_caller: std::sync::OnceLock::new(),
            callers_mixed: AtomicBool::new(false),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<i64, CallSink>> {
        self.calls.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Marks request `id` as in flight (with its sink, when it has one).
    pub(crate) fn track(&self, id: i64, sink: Option<&CallSink>) -> Tracked<'_> {
        if let Some(s) = sink {
            let caller = &s.client().caller;
            if self.first_caller.get_or_init(|| caller.clone()) != caller
                && !self.callers_mixed.swap(true, Ordering::Relaxed)
                && self.session.is_none()
            {
                tracing::warn!(
                    backend = %self.routes.backend,
                    "a second caller uses this shared backend connection: from now on what the backend sends outside a request's own stream (logs, elicitation, sampling) goes to nobody, since it may be another caller's; `isolation: perSession` on this backend delivers it"
                );
            }
            self.lock().insert(id, s.clone());
        }
        Tracked { inbound: self, id }
    }

    /// The certain recipient of a message that arrived on `channel`, if there is one.
    fn target(&self, channel: Channel<'_>) -> Option<CallSink> {
        match channel {
            Channel::Request(Some(c)) => return Some(c.clone()),
            Channel::Shared if !self.callers_mixed.load(Ordering::Relaxed) => {
                let calls = self.lock();
                if calls.len() == 1 {
                    return calls.values().next().cloned();
                }
            }
            Channel::Shared | Channel::Request(None) | Channel::Standalone => {}
        }
        self.session.clone()
    }

    /// Handles a notification or request from the backend that arrived on `channel`. Returns a
    /// request that needs an answer.
    pub(crate) fn handle(&self, msg: Message, channel: Channel<'_>) -> Option<ServerRequest> {
        match msg {
            Message::Notification { method, params } => {
                self.notification(method, params, channel);
                None
            }
            Message::Request { id, method, params } => {
                let slot = if self.outstanding.fetch_add(1, Ordering::Relaxed) < MAX_OUTSTANDING {
                    Some(Outstanding(self.outstanding.clone()))
                } else {
                    self.outstanding.fetch_sub(1, Ordering::Relaxed);
                    None
                };
                Some(ServerRequest {
                    to: if method == "ping" {
                        None
                    } else {
                        self.target(channel)
                    },
                    id,
                    method,
                    params,
                    backend: self.routes.backend.clone(),
                    slot,
                })
            }
            Message::Response { id, .. } | Message::Error { id, .. } => {
                tracing::debug!(backend = %self.routes.backend, %id, "answer for a request nobody waits for");
                None
            }
        }
    }

    fn notification(&self, method: String, mut params: Option<Value>, channel: Channel<'_>) {
        let kind = match method.as_str() {
            "notifications/tools/list_changed" => Some("tools"),
            "notifications/resources/list_changed" => Some("resources"),
            "notifications/prompts/list_changed" => Some("prompts"),
            _ => None,
        };
        if let Some(kind) = kind {
            let _ = self.routes.notices.send(Notice::ListChanged(kind));
            return;
        }
        if method == "notifications/resources/updated" {
            let _ = self
                .routes
                .notices
                .send(Notice::ResourceUpdated(params.unwrap_or(Value::Null)));
            return;
        }
        if method == "notifications/progress" {
            let token = params
                .as_ref()
                .and_then(|p| p.get("progressToken"))
                .and_then(Value::as_str)
                .map(str::to_string);
            let route = token.and_then(|t| {
                self.routes
                    .progress
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .get(&t)
                    .cloned()
            });
            match (route, params.as_mut()) {
                (Some((sink, client_token)), Some(p)) => {
                    p["progressToken"] = client_token;
                    sink.notify(method, params);
                }
                _ => {
                    tracing::debug!(backend = %self.routes.backend, "progress for a token the gateway did not issue; dropped")
                }
            }
            return;
        }
        let standalone = matches!(channel, Channel::Standalone);
        match self.target(channel) {
            Some(sink) => sink.notify(method, params),
            None if standalone
                && method == "notifications/message"
                && !self.standalone_log_dropped.swap(true, Ordering::Relaxed) =>
            {
                tracing::warn!(
                    backend = %self.routes.backend,
                    "the backend sends log messages on its GET stream, outside any request: behind a connection shared by all clients no client can be told they are its, so they are dropped; `isolation: perSession` on this backend delivers them to their session"
                )
            }
            None => {
                tracing::debug!(backend = %self.routes.backend, %method, "notification with no certain recipient; dropped")
            }
        }
    }
}

#[cfg(test)]
mod tests;
