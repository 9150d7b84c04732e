//! Resumable SSE streams (2025-11-25 transports, "Resumability and Redelivery"). Every event of a
//! stream that spans time (a call's response stream, the session's GET stream) carries the id
//! `<stream>:<seq>`, is kept in a bounded buffer, and a `GET` with `Last-Event-ID` continues that
//! stream on a new connection right after the last event the client saw: nothing lost, nothing
//! twice. A stream opens with a priming event (an id, a `retry` hint, empty data) so the client
//! holds an id before anything else arrives.
//!
//! One connection reads a stream at a time: a resume replaces the connection before it (the spec
//! forbids delivering a message on two streams, and a client resuming has given the old one up).
//! A stream is a session's: the registry ([`Streams`]) lives in the session, so an id of another
//! session's stream is simply unknown there.
//!
//! Bounds: per stream [`Limits::events`] and [`Limits::bytes`] (the oldest events go first; a
//! resume from before what is kept is refused rather than silently skipping), per session
//! [`Limits::streams`] resumable streams, per process [`MAX_RETAINED`] bytes, and a finished
//! stream is kept [`Limits::retention`] for a client that was cut just before its end.
//!
//! Not for 2026-07-28 requests: that revision removed event ids and resumption.

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::response::Response;
use base64::Engine;
use bytes::Bytes;
use tokio::sync::watch;
use vmcp_proto::sse;

/// Retained event bytes across every stream of the process; past it, each new event pushes out its
/// own stream's oldest ones (a stream always keeps its newest).
pub(crate) const MAX_RETAINED: usize = 256 * 1024 * 1024;

static RETAINED: AtomicUsize = AtomicUsize::new(0);

/// What bounds a stream, and how it talks to clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    /// Events kept per stream.
    pub(crate) events: usize,
    /// Event bytes kept per stream.
    pub(crate) bytes: usize,
    /// Resumable streams per session (the oldest, finished ones first, stop being resumable).
    pub(crate) streams: usize,
    /// How long a finished stream stays resumable.
    pub(crate) retention: Duration,
    /// The reconnection time a stream's priming event asks for.
    pub(crate) retry: Duration,
    /// An idle connection gets an SSE comment this often, so proxies see traffic.
    pub(crate) keepalive: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            events: 256,
            bytes: 1024 * 1024,
            streams: 16,
            retention: Duration::from_secs(5 * 60),
            retry: Duration::from_secs(1),
            keepalive: Duration::from_secs(15),
        }
    }
}

/// Why a `Last-Event-ID` cannot be resumed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// No stream of this session has that event (malformed, another session's, or expired).
    Unknown,
    /// The stream dropped events after that one (its buffer bound): resuming would lose them.
    Lost,
    /// The replica holding the stream did not answer (sessions shared between replicas).
    Unreachable,
}

impl Refused {
    /// The refusal in words for the client.
    pub(crate) fn message(self) -> &'static str {
        match self {
            Self::Unknown => {
                "Last-Event-ID names no stream of this session (unknown, or no longer resumable)"
            }
            Self::Lost => {
                "cannot resume: events after Last-Event-ID were dropped (the stream's replay buffer is bounded)"
            }
            Self::Unreachable => {
                "cannot resume now: the replica holding this stream did not answer; retry shortly"
            }
        }
    }
}

/// One resumable stream.
pub(crate) struct Resumable {
    id: Arc<str>,
    limits: Limits,
    opened: Instant,
    state: Mutex<State>,
    /// Wakes the reading connection on every change.
    changed: watch::Sender<()>,
}

struct State {
    /// Sequence number of the next event.
    next: u64,
    /// Sequence number of `events[0]`.
    first: u64,
    events: VecDeque<Bytes>,
    bytes: usize,
    /// The one connection allowed to read (a resume takes over with the next number).
    reader: u64,
    /// Whether that connection is open.
    attached: bool,
    /// A connection the server closes on purpose: it ends once it delivered this event.
    close_after: Option<(u64, u64)>,
    /// When the last event was pushed; none follows.
    finished: Option<Instant>,
    /// How far any connection has read: events before this one reached a client.
    read: u64,
}

impl Resumable {
    fn new(id: Arc<str>, limits: Limits) -> Arc<Self> {
        Arc::new(Self {
            id,
            limits,
            opened: Instant::now(),
            state: Mutex::new(State {
                next: 0,
                first: 0,
                events: VecDeque::new(),
                bytes: 0,
                reader: 0,
                attached: false,
                close_after: None,
                finished: None,
                read: 0,
            }),
            changed: watch::Sender::new(()),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The stream's id, as its events' ids begin.
    #[cfg(test)]
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// Sends a priming event: an id to resume from and a `retry` hint, no data.
    pub(crate) fn prime(&self) {
        self.push_frame(|id| priming(id, self.limits.retry));
    }

    /// Sends one JSON-RPC message; false when the stream is finished.
    pub(crate) fn push_message(&self, json: &[u8]) -> bool {
        self.push_frame(|id| sse::message_event(json, Some(id)))
            .is_some()
    }

    /// Sends the last message and finishes the stream.
    pub(crate) fn finish_with(&self, json: &[u8]) {
        self.push_message(json);
        self.finish();
    }

    /// Closes the reading connection (not the stream) after telling it to reconnect after
    /// `retry`: what follows waits for the client's `GET` with `Last-Event-ID`.
    pub(crate) fn pause(&self, retry: Duration) {
        let mut st = self.lock();
        if st.finished.is_some() {
            return;
        }
        let seq = self.append(&mut st, |id| priming(id, retry));
        st.close_after = Some((st.reader, seq));
        drop(st);
        self.changed.send_replace(());
    }

    /// No event follows: the reading connection ends once it delivered what is left.
    pub(crate) fn finish(&self) {
        let mut st = self.lock();
        if st.finished.is_none() {
            st.finished = Some(Instant::now());
        }
        drop(st);
        self.changed.send_replace(());
    }

    /// Whether a connection reads the stream now.
    pub(crate) fn is_attached(&self) -> bool {
        self.lock().attached
    }

    fn is_finished(&self) -> bool {
        self.lock().finished.is_some()
    }

    /// Whether a client may still come back for this stream: it is still being written, or it
    /// finished less than a few reconnection times ago with events no connection has read.
    fn outstanding(&self, now: Instant) -> bool {
        let st = self.lock();
        let linger = (self.limits.retry * 3).max(Duration::from_secs(2));
        st.finished
            .is_none_or(|t| st.read < st.next && now.saturating_duration_since(t) < linger)
    }

    /// Finished more than `retention` ago.
    fn expired(&self, now: Instant) -> bool {
        self.lock()
            .finished
            .is_some_and(|t| now.saturating_duration_since(t) > self.limits.retention)
    }

    fn push_frame(&self, frame: impl FnOnce(&str) -> Vec<u8>) -> Option<u64> {
        let mut st = self.lock();
        if st.finished.is_some() {
            return None;
        }
        let seq = self.append(&mut st, frame);
        drop(st);
        self.changed.send_replace(());
        Some(seq)
    }

    fn append(&self, st: &mut State, frame: impl FnOnce(&str) -> Vec<u8>) -> u64 {
        let seq = st.next;
        let bytes = Bytes::from(frame(&format!("{}:{seq}", self.id)));
        st.bytes += bytes.len();
        RETAINED.fetch_add(bytes.len(), Ordering::Relaxed);
        st.events.push_back(bytes);
        st.next += 1;
        while st.events.len() > 1
            && (st.events.len() > self.limits.events
                || st.bytes > self.limits.bytes
                || RETAINED.load(Ordering::Relaxed) > MAX_RETAINED)
        {
            if let Some(old) = st.events.pop_front() {
                st.bytes -= old.len();
                RETAINED.fetch_sub(old.len(), Ordering::Relaxed);
                st.first += 1;
            }
        }
        seq
    }

    /// A connection reading the stream from the event after `after` (from its start when None),
    /// taking over from any connection reading it now.
    ///
    /// # Errors
    /// The event is not one of this stream's, or events after it were dropped.
    pub(crate) fn attach(self: &Arc<Self>, after: Option<u64>) -> Result<Reader, Refused> {
        let mut st = self.lock();
        let cursor = match after {
            None => st.first,
            Some(seq) => seq.checked_add(1).ok_or(Refused::Unknown)?,
        };
        if cursor > st.next {
            return Err(Refused::Unknown);
        }
        if cursor < st.first {
            return Err(Refused::Lost);
        }
        st.reader += 1;
        st.attached = true;
        let reader = st.reader;
        drop(st);
        let changes = self.changed.subscribe();
        // The connection this one replaces wakes up and ends.
        self.changed.send_replace(());
        Ok(Reader {
            stream: self.clone(),
            reader,
            cursor,
            changes,
        })
    }

    fn step(&self, reader: u64, cursor: u64) -> Step {
        let mut st = self.lock();
        if st.reader != reader || cursor < st.first {
            // Replaced by a resume, or too slow to keep up with the bound: the client resumes.
            return Step::End;
        }
        if st
            .close_after
            .is_some_and(|(r, seq)| r == reader && cursor > seq)
        {
            return Step::End;
        }
        if cursor < st.next {
            let at = usize::try_from(cursor - st.first).unwrap_or(usize::MAX);
            st.read = st.read.max(cursor + 1);
            return st.events.get(at).cloned().map_or(Step::End, Step::Event);
        }
        if st.finished.is_some() {
            Step::End
        } else {
            Step::Wait
        }
    }
}

impl Drop for Resumable {
    fn drop(&mut self) {
        let st = self.state.get_mut().unwrap_or_else(|p| p.into_inner());
        RETAINED.fetch_sub(st.bytes, Ordering::Relaxed);
    }
}

enum Step {
    Event(Bytes),
    Wait,
    End,
}

/// The priming (or pausing) event: an id, a reconnection time, empty data.
fn priming(id: &str, retry: Duration) -> Vec<u8> {
    format!("id: {id}\nretry: {}\ndata: \n\n", retry.as_millis()).into_bytes()
}

/// One connection's read of a stream.
pub(crate) struct Reader {
    stream: Arc<Resumable>,
    reader: u64,
    cursor: u64,
    changes: watch::Receiver<()>,
}

impl Reader {
    /// The next event, or a keep-alive comment after `keepalive` without one (with `None`, it
    /// waits as long as it takes); None when the connection is to end.
    pub(crate) async fn next(&mut self, keepalive: Option<Duration>) -> Option<Bytes> {
        loop {
            self.changes.borrow_and_update();
            match self.stream.step(self.reader, self.cursor) {
                Step::Event(bytes) => {
                    self.cursor += 1;
                    return Some(bytes);
                }
                Step::End => return None,
                Step::Wait => {}
            }
            let Some(keepalive) = keepalive else {
                if self.changes.changed().await.is_err() {
                    return None;
                }
                continue;
            };
            match tokio::time::timeout(keepalive, self.changes.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) => return None,
                Err(_) => return Some(Bytes::from_static(KEEPALIVE)),
            }
        }
    }

    /// The next event if one is ready: `Some(None)` when the connection is to end, None when
    /// it would wait.
    pub(crate) fn try_next(&mut self) -> Option<Option<Bytes>> {
        self.changes.borrow_and_update();
        match self.stream.step(self.reader, self.cursor) {
            Step::Event(bytes) => {
                self.cursor += 1;
                Some(Some(bytes))
            }
            Step::End => Some(None),
            Step::Wait => None,
        }
    }

    /// The `text/event-stream` response this connection reads into.
    pub(crate) fn into_response(self, keepalive: Duration) -> Response {
        let body = futures_util::stream::unfold(self, move |mut reader| async move {
            let bytes = reader.next(Some(keepalive)).await?;
            Some((Ok::<_, Infallible>(bytes), reader))
        });
        crate::stream::sse_response(Body::from_stream(body))
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        let mut st = self.stream.lock();
        if st.reader == self.reader {
            st.attached = false;
        }
    }
}

/// The comment an idle stream sends so that proxies and load balancers see traffic.
pub(crate) const KEEPALIVE: &[u8] = b": keepalive\n\n";

/// A session's resumable streams.
#[derive(Default)]
pub(crate) struct Streams {
    inner: Mutex<Registry>,
}

#[derive(Default)]
struct Registry {
    by_id: HashMap<Arc<str>, Arc<Resumable>>,
    /// The session's GET stream, if one was opened.
    standalone: Option<Arc<Resumable>>,
}

impl Streams {
    fn lock(&self) -> MutexGuard<'_, Registry> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new stream with an unguessable id starting with `tag`, primed when `prime`. Past the
    /// session's bound, the oldest stream (finished ones first) stops being resumable.
    pub(crate) fn open(&self, tag: &str, limits: Limits, prime: bool) -> Arc<Resumable> {
        let stream = Resumable::new(new_id(tag), limits);
        if prime {
            stream.prime();
        }
        let mut reg = self.lock();
        reg.prune(Instant::now());
        while reg.by_id.len() >= limits.streams.max(1) {
            let oldest = reg
                .by_id
                .values()
                .min_by_key(|s| (!s.is_finished(), s.opened))
                .map(|s| s.id.clone());
            match oldest {
                Some(id) => {
                    reg.by_id.remove(&id);
                }
                None => break,
            }
        }
        reg.by_id.insert(stream.id.clone(), stream.clone());
        stream
    }

    /// A new GET stream for the session, replacing (and ending) the one before.
    pub(crate) fn open_standalone(&self, tag: &str, limits: Limits, prime: bool) -> Arc<Resumable> {
        let stream = self.open(tag, limits, prime);
        let old = self.lock().standalone.replace(stream.clone());
        if let Some(old) = old {
            old.finish();
            self.lock().by_id.remove(&old.id);
        }
        stream
    }

    /// The session's GET stream, while one is open.
    pub(crate) fn standalone(&self) -> Option<Arc<Resumable>> {
        self.lock().standalone.clone()
    }

    /// The stream and sequence number a `Last-Event-ID` names, if it is one of this session's.
    ///
    /// # Errors
    /// [`Refused::Unknown`] otherwise (another session's id looks exactly like a made-up one).
    pub(crate) fn find(&self, last_event_id: &str) -> Result<(Arc<Resumable>, u64), Refused> {
        let (stream, seq) = parse_event_id(last_event_id).ok_or(Refused::Unknown)?;
        let found = self.lock().by_id.get(stream).cloned();
        let stream = found
            .filter(|s| !s.expired(Instant::now()))
            .ok_or(Refused::Unknown)?;
        Ok((stream, seq))
    }

    /// Whether a client may still come back for one of the session's streams (see
    /// [`Resumable::outstanding`]).
    pub(crate) fn outstanding(&self) -> bool {
        let now = Instant::now();
        self.lock().by_id.values().any(|s| s.outstanding(now))
    }

    /// Forgets streams finished longer ago than their retention.
    pub(crate) fn prune(&self) {
        self.lock().prune(Instant::now());
    }

    /// Ends the GET stream (at shutdown).
    pub(crate) fn close_standalone(&self) {
        if let Some(s) = self.lock().standalone.take() {
            s.finish();
        }
    }

    /// Ends every stream (the session ended).
    pub(crate) fn close_all(&self) {
        let mut reg = self.lock();
        reg.standalone = None;
        for (_, s) in reg.by_id.drain() {
            s.finish();
        }
    }
}

impl Registry {
    fn prune(&mut self, now: Instant) {
        self.by_id.retain(|_, s| !s.expired(now));
    }
}

/// `<stream>:<seq>` split; None when malformed.
pub(crate) fn parse_event_id(id: &str) -> Option<(&str, u64)> {
    let (stream, seq) = id.rsplit_once(':')?;
    if stream.is_empty() || !seq.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((stream, seq.parse().ok()?))
}

/// `tag` and 16 random bytes, base64url: unguessable, and free of `:`.
fn new_id(tag: &str) -> Arc<str> {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // The OS RNG is not expected to fail; refuse to mint predictable ids if it does.
        panic!("the operating system's random number generator failed");
    }
    let random = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    Arc::from(format!("{tag}{random}"))
}

#[cfg(test)]
mod tests;
