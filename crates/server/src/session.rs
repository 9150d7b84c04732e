//! Legacy (session-based) client sessions: unguessable ids, a sliding TTL, caps per identity and
//! in all, and the GET stream for server-to-client messages.

use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::Value;
use tokio::sync::oneshot;
use vmcp_backend::CallSink;
use vmcp_core::{Catalog, Identity};
use vmcp_proto::ErrorObject;

use crate::resumable::{self, Limits, Reader, Resumable, Streams};
use crate::state::AppState;

/// MCP log levels, in increasing severity (RFC 5424 order).
pub(crate) const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// Who a request is for, as backend channels tell callers apart (issuer and subject; None:
/// anonymous). Never sent to a backend.
pub(crate) fn caller_key(identity: &Identity) -> Option<Arc<str>> {
    identity
        .binding()
        .map(|(issuer, subject)| format!("{issuer}\u{0}{subject}").into())
}

/// One client session.
pub(crate) struct Session {
    pub(crate) id: String,
    pub(crate) protocol_version: &'static str,
    /// What the client declared at initialize (gates server-to-client requests).
    pub(crate) client_capabilities: Arc<Value>,
    pub(crate) identity: Identity,
    /// The caller's key for backend channels (`ClientView::caller`), made once per session.
    pub(crate) caller_key: Option<Arc<str>>,
    /// Who the session counts against for `maxSessionsPerIdentity`.
    owner: Owner,
    catalog: Mutex<Arc<Catalog>>,
    log_level: AtomicU8,
    last_seen_ms: AtomicU64,
    /// When the shared store last vouched for the session, and the bus generation then
    /// (`Vouch`); 0: never.
    vouched: AtomicU64,
    /// Logical clock of the last use, for LRU order (milliseconds tie too easily).
    last_touch: AtomicU64,
    /// The session's resumable SSE streams: its GET stream and its calls' response streams.
    streams: Streams,
    /// What the ids of this session's streams start with: empty, or the replica's id when
    /// replicas share sessions (so a resume arriving at another replica finds the stream's).
    stream_tag: Arc<str>,
    /// Server-to-client requests awaiting the client's answer, by the id the gateway gave them.
    pending: Mutex<HashMap<String, oneshot::Sender<Result<Value, ErrorObject>>>>,
    next_request: AtomicU64,
    /// What the ids of server-to-client requests start with: `vmcp-`, plus the replica's id when
    /// replicas share sessions (so an answer arriving at another replica finds its way back).
    request_tag: Arc<str>,
    /// Client requests in flight, by their JSON-RPC id (for `notifications/cancelled`).
    in_flight: Mutex<HashMap<String, CallSink>>,
    /// Resource URIs the client subscribed to.
    subscriptions: Mutex<HashSet<String>>,
    /// Where per-session backend connections send what belongs to no single request.
    pub(crate) sink: Mutex<Option<CallSink>>,
}

impl Session {
    pub(crate) fn catalog(&self) -> Arc<Catalog> {
        self.catalog
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Sets the minimum log level the client wants; false if `level` is not an MCP level.
    pub(crate) fn set_log_level(&self, level: &str) -> bool {
        match LOG_LEVELS.iter().position(|l| *l == level) {
            Some(i) => {
                self.log_level.store(i as u8, Ordering::Relaxed);
                true
            }
            None => false,
        }
    }

    /// Replaces the catalog (after a list change), returning the previous one.
    pub(crate) fn replace_catalog(&self, catalog: Arc<Catalog>) -> Arc<Catalog> {
        std::mem::replace(
            &mut *self.catalog.lock().unwrap_or_else(|p| p.into_inner()),
            catalog,
        )
    }

    /// The client's minimum log level, as an index into [`LOG_LEVELS`].
    pub(crate) fn log_level(&self) -> usize {
        self.log_level.load(Ordering::Relaxed) as usize
    }

    /// Opens a new GET stream, replacing (and so closing) any previous one; returns the
    /// connection reading it.
    ///
    /// # Errors
    /// Never in practice: a new stream can always be read from its start.
    pub(crate) fn open_get_stream(&self, limits: Limits) -> Result<Reader, resumable::Refused> {
        self.streams
            .open_standalone(&self.stream_tag, limits, self.polls())
            .attach(None)
    }

    /// A new resumable response stream for one of the session's calls.
    pub(crate) fn open_call_stream(&self, limits: Limits) -> Arc<Resumable> {
        self.streams.open(&self.stream_tag, limits, self.polls())
    }

    /// Whether the client's revision has SSE polling (2025-11-25, SEP-1699): streams open with a
    /// priming event, and the server may close one to have it resumed. Earlier revisions get
    /// event ids and `Last-Event-ID` resumption (2025-03-26 has them) but neither of those.
    pub(crate) fn polls(&self) -> bool {
        self.protocol_version >= vmcp_proto::revision::LATEST_LEGACY
    }

    /// Continues the stream `last_event_id` belongs to, right after that event.
    ///
    /// # Errors
    /// The id is not one of this session's resumable streams, or events after it were dropped.
    pub(crate) fn resume(&self, last_event_id: &str) -> Result<Reader, resumable::Refused> {
        let (stream, seq) = self.streams.find(last_event_id)?;
        stream.attach(Some(seq))
    }

    /// Forgets streams no longer resumable.
    pub(crate) fn prune_streams(&self) {
        self.streams.prune();
    }

    /// Sends one JSON-RPC message on the GET stream (kept for a resume while no connection reads
    /// it); false when the client never opened one.
    pub(crate) fn push(&self, json: &[u8]) -> bool {
        self.streams
            .standalone()
            .is_some_and(|s| s.push_message(json))
    }

    /// Registers a server-to-client request; returns the id to send it with.
    pub(crate) fn expect_answer(
        &self,
        reply: oneshot::Sender<Result<Value, ErrorObject>>,
    ) -> String {
        let n = self.next_request.fetch_add(1, Ordering::Relaxed);
        let id = format!("{}{n}", self.request_tag);
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id.clone(), reply);
        id
    }

    /// Delivers the client's answer to request `id`; false if nothing waits for it.
    pub(crate) fn answer(&self, id: &Value, outcome: Result<Value, ErrorObject>) -> bool {
        let Some(id) = id.as_str() else { return false };
        let waiting = self
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id);
        waiting.is_some_and(|tx| tx.send(outcome).is_ok())
    }

    /// Forgets a server-to-client request (timed out).
    pub(crate) fn forget_request(&self, id: &str) {
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id);
    }

    /// Records a client request in flight so it can be cancelled.
    pub(crate) fn begin(&self, key: String, sink: CallSink) {
        self.in_flight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, sink);
    }

    /// The request finished.
    pub(crate) fn end(&self, key: &str) {
        self.in_flight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(key);
    }

    /// The client cancelled request `key`.
    pub(crate) fn cancel(&self, key: &str) -> bool {
        let sink = self
            .in_flight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(key)
            .cloned();
        sink.map(|s| s.cancel()).is_some()
    }

    /// Adds or removes a subscription; returns whether the set changed.
    pub(crate) fn set_subscribed(&self, uri: &str, on: bool) -> bool {
        let mut subs = self.subscriptions.lock().unwrap_or_else(|p| p.into_inner());
        if on {
            subs.insert(uri.to_string())
        } else {
            subs.remove(uri)
        }
    }

    /// Every URI the client subscribed to, sorted.
    pub(crate) fn subscriptions(&self) -> Vec<String> {
        let mut all: Vec<String> = self
            .subscriptions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .cloned()
            .collect();
        all.sort();
        all
    }

    /// Whether the client subscribed to anything.
    pub(crate) fn has_subscriptions(&self) -> bool {
        !self
            .subscriptions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_empty()
    }

    /// Whether a connection reads the GET stream now.
    pub(crate) fn has_stream(&self) -> bool {
        self.streams.standalone().is_some_and(|s| s.is_attached())
    }

    /// Whether the client subscribed to `uri`.
    pub(crate) fn is_subscribed(&self, uri: &str) -> bool {
        self.subscriptions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(uri)
    }

    fn close_stream(&self) {
        self.streams.close_standalone();
    }

    /// Ends everything the session holds open: its streams, its sink, and requests awaiting the
    /// client (their backends get "the client is no longer connected").
    fn close(&self) {
        self.streams.close_all();
        self.sink.lock().unwrap_or_else(|p| p.into_inner()).take();
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }

    /// Whether a `notifications/message` with these params passes the client's level.
    pub(crate) fn wants_log(&self, params: Option<&Value>) -> bool {
        log_passes(params, self.log_level())
    }
}

// `toolhive_mcp_active_connections` counts sessions from creation until the last reference
// (the store's, or a request still running in it) goes.
impl Drop for Session {
    fn drop(&mut self) {
        vmcp_telemetry::session_closed();
    }
}

/// Whether a `notifications/message` with these params is at or above level `min` (an index into
/// [`LOG_LEVELS`]); a message without a level counts as `info`, an unknown level passes.
pub(crate) fn log_passes(params: Option<&Value>, min: usize) -> bool {
    let level = params
        .and_then(|p| p.get("level"))
        .and_then(Value::as_str)
        .unwrap_or("info");
    LOG_LEVELS
        .iter()
        .position(|l| *l == level)
        .unwrap_or(LOG_LEVELS.len())
        >= min
}

/// All live sessions.
pub struct SessionStore {
    sessions: Mutex<Live>,
    pub(crate) ttl: Duration,
    max: usize,
    max_per_identity: usize,
    epoch: Instant,
    clock: AtomicU64,
    request_tag: Arc<str>,
    stream_tag: Arc<str>,
    owners: std::collections::hash_map::RandomState,
}

/// A vouch is one word: the bus generation's low 24 bits, then the store's clock in
/// milliseconds plus one in 40 bits (34 years; 0 means never vouched).
const VOUCH_TIME_BITS: u32 = 40;
const VOUCH_TIME_MASK: u64 = (1 << VOUCH_TIME_BITS) - 1;
const VOUCH_GENERATION_MASK: u64 = (1 << (64 - VOUCH_TIME_BITS)) - 1;

/// When (store clock, ms) and at which bus generation a vouch was made; None: never.
fn unpack_vouch(packed: u64) -> Option<(u64, u64)> {
    let at = packed & VOUCH_TIME_MASK;
    (at != 0).then(|| (at - 1, packed >> VOUCH_TIME_BITS))
}

/// A session's identity (issuer and subject) as a hash with a per-process seed: what the
/// per-identity cap counts.
type Owner = u64;

/// The live sessions, with how many each identity holds.
#[derive(Default)]
struct Live {
    by_id: HashMap<String, Arc<Session>>,
    per_owner: HashMap<Owner, usize>,
}

impl std::ops::Deref for Live {
    type Target = HashMap<String, Arc<Session>>;
    fn deref(&self) -> &Self::Target {
        &self.by_id
    }
}

impl Live {
    fn insert(&mut self, session: Arc<Session>) {
        *self.per_owner.entry(session.owner).or_default() += 1;
        if let Some(old) = self.by_id.insert(session.id.clone(), session) {
            self.forget_owner(old.owner);
        }
    }

    fn remove(&mut self, id: &str) -> Option<Arc<Session>> {
        let s = self.by_id.remove(id)?;
        self.forget_owner(s.owner);
        Some(s)
    }

    fn forget_owner(&mut self, owner: Owner) {
        if let Some(n) = self.per_owner.get_mut(&owner) {
            *n -= 1;
            if *n == 0 {
                self.per_owner.remove(&owner);
            }
        }
    }

    fn held_by(&self, owner: Owner) -> usize {
        self.per_owner.get(&owner).copied().unwrap_or(0)
    }

    /// The least recently used session, of `owner` only when given.
    fn least_recent(&self, owner: Option<Owner>) -> Option<String> {
        self.by_id
            .values()
            .filter(|s| owner.is_none_or(|o| s.owner == o))
            .min_by_key(|s| s.last_touch.load(Ordering::Relaxed))
            .map(|s| s.id.clone())
    }
}

/// Why a new session was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The caller already holds `maxSessionsPerIdentity` sessions.
    IdentityFull { cap: usize },
    /// The replica holds `maxSessions`, none of them the caller's.
    StoreFull { cap: usize },
}

impl Refused {
    /// How long to wait before trying again, in seconds.
    pub(crate) const RETRY_AFTER_SECS: u64 = 10;

    /// The refusal in words for the client.
    pub(crate) fn message(&self) -> String {
        match self {
            Self::IdentityFull { cap } => format!(
                "too many sessions: this identity holds {cap}, the most allowed (server.maxSessionsPerIdentity); end one with DELETE or retry after one expires"
            ),
            Self::StoreFull { cap } => format!(
                "the gateway holds {cap} sessions, the most allowed (server.maxSessions); retry later"
            ),
        }
    }
}

impl SessionStore {
    /// A store whose sessions expire after `ttl` without a request and which holds at most `max`,
    /// at most `max_per_identity` of them opened by one identity.
    pub fn new(ttl: Duration, max: usize, max_per_identity: usize) -> Self {
        Self {
            sessions: Mutex::new(Live::default()),
            ttl,
            max: max.max(1),
            max_per_identity: max_per_identity.max(1),
            epoch: Instant::now(),
            clock: AtomicU64::new(0),
            request_tag: Arc::from("vmcp-"),
            stream_tag: Arc::from(""),
            owners: std::collections::hash_map::RandomState::new(),
        }
    }

    fn owner_of(&self, identity: &Identity) -> Owner {
        self.owners.hash_one(identity.binding())
    }

    /// Server-to-client request ids and SSE event ids of this store's sessions carry
    /// `replica`'s id.
    pub(crate) fn tag_requests(&mut self, replica: &str) {
        self.request_tag = Arc::from(format!("vmcp-{replica}-"));
        self.stream_tag = Arc::from(format!("{replica}."));
    }

    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Live> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Number of live sessions.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether there are no sessions.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Creates a session; returns it and the caller's own session evicted to make room, if any.
    /// Nobody else's session is ended for it: an identity at its cap, or a full store holding
    /// none of the caller's sessions, refuses.
    ///
    /// # Errors
    /// The caller's identity is at its cap, or the store is full of others' sessions.
    pub(crate) fn create(
        &self,
        protocol_version: &'static str,
        client_capabilities: Value,
        identity: Identity,
        catalog: Arc<Catalog>,
    ) -> Result<(Arc<Session>, Option<Arc<Session>>), Refused> {
        let owner = self.owner_of(&identity);
        {
            let map = self.lock();
            if map.held_by(owner) >= self.max_per_identity {
                return Err(Refused::IdentityFull {
                    cap: self.max_per_identity,
                });
            }
            if map.len() >= self.max && map.held_by(owner) == 0 {
                return Err(Refused::StoreFull { cap: self.max });
            }
        }
        Ok(self.insert(
            new_session_id(),
            protocol_version,
            client_capabilities,
            identity,
            catalog,
            Some(owner),
        ))
    }

    /// This replica's copy of a session another replica created (shared sessions); if a
    /// concurrent request made one first, that one. Also returns the session evicted, if any.
    pub(crate) fn adopt(
        &self,
        id: &str,
        protocol_version: &'static str,
        client_capabilities: Value,
        identity: Identity,
        catalog: Arc<Catalog>,
    ) -> (Arc<Session>, Option<Arc<Session>>, bool) {
        if let Some(s) = self.get_any(id) {
            return (s, None, false);
        }
        // A copy of a session the shared store holds: making room may drop anyone's copy, which
        // is adopted again from the store at its next request.
        let (s, evicted) = self.insert(
            id.to_owned(),
            protocol_version,
            client_capabilities,
            identity,
            catalog,
            None,
        );
        (s, evicted, true)
    }

    fn insert(
        &self,
        id: String,
        protocol_version: &'static str,
        client_capabilities: Value,
        identity: Identity,
        catalog: Arc<Catalog>,
        evict_only: Option<Owner>,
    ) -> (Arc<Session>, Option<Arc<Session>>) {
        let owner = evict_only.unwrap_or_else(|| self.owner_of(&identity));
        let now = self.now_ms();
        let touch = self.clock.fetch_add(1, Ordering::Relaxed);
        let mut map = self.lock();
        // Two requests adopting the same session at once: the first one's copy stands.
        if let Some(existing) = map.get(&id) {
            return (existing.clone(), None);
        }
        let session = Arc::new(Session {
            id,
            protocol_version,
            client_capabilities: Arc::new(client_capabilities),
            caller_key: caller_key(&identity),
            identity,
            owner,
            catalog: Mutex::new(catalog),
            log_level: AtomicU8::new(1),
            last_seen_ms: AtomicU64::new(now),
            vouched: AtomicU64::new(0),
            last_touch: AtomicU64::new(touch),
            streams: Streams::default(),
            stream_tag: self.stream_tag.clone(),
            pending: Mutex::new(HashMap::new()),
            next_request: AtomicU64::new(1),
            request_tag: self.request_tag.clone(),
            in_flight: Mutex::new(HashMap::new()),
            subscriptions: Mutex::new(HashSet::new()),
            sink: Mutex::new(None),
        });
        let evicted = if map.len() >= self.max {
            map.least_recent(evict_only).and_then(|id| map.remove(&id))
        } else {
            None
        };
        map.insert(session.clone());
        vmcp_telemetry::session_opened();
        (session, evicted)
    }

    /// The live session `id`, refreshing its TTL; None if unknown or expired.
    pub(crate) fn get(&self, id: &str) -> Option<Arc<Session>> {
        let now = self.now_ms();
        let session = self.lock().get(id).cloned()?;
        let last = session.last_seen_ms.load(Ordering::Relaxed);
        if now.saturating_sub(last) > self.ttl.as_millis() as u64 {
            return None;
        }
        self.touch(&session, now);
        Some(session)
    }

    /// The session `id` if the shared store vouched for it less than `window` ago and the bus
    /// is still at `generation` (so no end or change of it published since can have been
    /// missed), refreshing its TTL; None: ask the store.
    pub(crate) fn get_vouched(
        &self,
        id: &str,
        generation: u64,
        window: Duration,
    ) -> Option<Arc<Session>> {
        let session = self.lock().get(id).cloned()?;
        let (at, vouched_generation) = unpack_vouch(session.vouched.load(Ordering::Relaxed))?;
        let now = self.now_ms();
        if vouched_generation != generation & VOUCH_GENERATION_MASK
            || now.saturating_sub(at) >= window.as_millis() as u64
        {
            return None;
        }
        self.touch(&session, now);
        Some(session)
    }

    /// Records that the shared store vouched for `session` now, at bus generation `generation`.
    pub(crate) fn vouch(&self, session: &Session, generation: u64) {
        let packed = ((generation & VOUCH_GENERATION_MASK) << VOUCH_TIME_BITS)
            | ((self.now_ms() + 1) & VOUCH_TIME_MASK);
        session.vouched.store(packed, Ordering::Relaxed);
    }

    /// The session `id` whatever its local idle time (the shared store vouched for it),
    /// refreshing its TTL.
    pub(crate) fn get_any(&self, id: &str) -> Option<Arc<Session>> {
        let session = self.lock().get(id).cloned()?;
        self.touch(&session, self.now_ms());
        Some(session)
    }

    /// A use of `session` at `now`: it slides its TTL and moves it last in LRU order.
    fn touch(&self, session: &Session, now: u64) {
        session.last_seen_ms.store(now, Ordering::Relaxed);
        session.last_touch.store(
            self.clock.fetch_add(1, Ordering::Relaxed),
            Ordering::Relaxed,
        );
    }

    /// Sessions idle past the TTL here that hold a GET stream (with shared sessions, they may
    /// still be in use on other replicas: the reaper asks the store before ending them).
    pub(crate) fn idle_with_streams(&self) -> Vec<Arc<Session>> {
        let now = self.now_ms();
        let ttl = self.ttl.as_millis() as u64;
        self.lock()
            .values()
            .filter(|s| now.saturating_sub(s.last_seen_ms.load(Ordering::Relaxed)) > ttl)
            .filter(|s| s.has_stream())
            .cloned()
            .collect()
    }

    /// Removes session `id`.
    pub(crate) fn remove(&self, id: &str) -> Option<Arc<Session>> {
        let s = self.lock().remove(id);
        if let Some(s) = &s {
            s.close();
        }
        s
    }

    /// Removes and returns every expired session.
    pub(crate) fn take_expired(&self) -> Vec<Arc<Session>> {
        let now = self.now_ms();
        let ttl = self.ttl.as_millis() as u64;
        let mut map = self.lock();
        let expired: Vec<String> = map
            .values()
            .filter(|s| now.saturating_sub(s.last_seen_ms.load(Ordering::Relaxed)) > ttl)
            .map(|s| s.id.clone())
            .collect();
        expired
            .iter()
            .filter_map(|id| map.remove(id))
            .inspect(|s| s.close())
            .collect()
    }

    /// Ends every GET stream (at shutdown, so open streams do not hold the server).
    pub fn close_all_streams(&self) {
        for s in self.lock().values() {
            s.close_stream();
        }
    }

    /// How many sessions have a resumable stream a client may still come back for: a call still
    /// running, or events written after the client's connection was cut.
    pub(crate) fn with_outstanding_streams(&self) -> usize {
        self.lock()
            .values()
            .filter(|s| s.streams.outstanding())
            .count()
    }

    /// All live sessions.
    pub(crate) fn all(&self) -> Vec<Arc<Session>> {
        self.lock().values().cloned().collect()
    }

    /// The most verbose log level any session asked for, as an index into [`LOG_LEVELS`].
    pub(crate) fn min_log_level(&self) -> usize {
        self.lock()
            .values()
            .map(|s| s.log_level())
            .min()
            .unwrap_or(1)
    }

    /// Ids of all sessions (for shutdown).
    pub fn ids(&self) -> Vec<String> {
        self.lock().keys().cloned().collect()
    }
}

/// 32 random bytes, base64url: visible ASCII, unguessable.
fn new_session_id() -> String {
    let mut bytes = [0u8; 32];
    if getrandom::fill(&mut bytes).is_err() {
        // The OS RNG is not expected to fail; refuse to mint predictable ids if it does.
        panic!("the operating system's random number generator failed");
    }
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// Periodically ends expired sessions and reaps idle per-session backend connections.
pub(crate) async fn reap_loop(state: Arc<AppState>) {
    let every = (state.sessions.ttl / 4).clamp(Duration::from_millis(200), Duration::from_secs(30));
    loop {
        tokio::time::sleep(every).await;
        crate::replicas::keep_streams_in_use(&state).await;
        for s in state.sessions.all() {
            s.prune_streams();
        }
        for s in state.sessions.take_expired() {
            tracing::debug!(session = %short(&s.id), "session expired");
            state.gateway.end_session(&s.id).await;
        }
        let reaped = state.gateway.reap_idle().await;
        if reaped > 0 {
            tracing::debug!(reaped, "idle per-session backend connections reaped");
        }
    }
}

/// A session id shortened for logs (ids are bearer-like; never log them whole).
pub(crate) fn short(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(ttl_ms: u64, max: usize) -> SessionStore {
        SessionStore::new(Duration::from_millis(ttl_ms), max, 100)
    }

    fn create(s: &SessionStore) -> (Arc<Session>, Option<Arc<Session>>) {
        create_as(s, Identity::anonymous()).unwrap()
    }

    fn create_as(
        s: &SessionStore,
        identity: Identity,
    ) -> Result<(Arc<Session>, Option<Arc<Session>>), Refused> {
        s.create(
            "2025-11-25",
            Value::Null,
            identity,
            Arc::new(Catalog::default()),
        )
    }

    fn user(sub: &str) -> Identity {
        Identity {
            subject: Some(sub.into()),
            issuer: Some("https://idp".into()),
            ..Identity::anonymous()
        }
    }

    #[test]
    fn an_identity_at_its_cap_is_refused_and_ends_nobody_elses_session() {
        let s = SessionStore::new(Duration::from_secs(60), 5, 2);
        let (bob, _) = create_as(&s, user("bob")).unwrap();
        create_as(&s, user("mallory")).unwrap();
        create_as(&s, user("mallory")).unwrap();
        assert_eq!(
            create_as(&s, user("mallory")).err(),
            Some(Refused::IdentityFull { cap: 2 })
        );
        assert!(s.get(&bob.id).is_some());
        // Another issuer with the same subject is another identity.
        let other_idp = Identity {
            issuer: Some("https://other".into()),
            ..user("mallory")
        };
        assert!(create_as(&s, other_idp).is_ok());
        // Ending a session frees a place in its identity's share.
        let (alice, _) = create_as(&s, user("alice")).unwrap();
        assert_eq!(s.len(), 5);
        s.remove(&alice.id);
        assert!(create_as(&s, user("alice")).is_ok());
    }

    #[test]
    fn a_full_store_ends_only_the_callers_own_session_or_refuses() {
        let s = SessionStore::new(Duration::from_secs(60), 3, 10);
        let (bob, _) = create_as(&s, user("bob")).unwrap();
        let (m1, _) = create_as(&s, user("mallory")).unwrap();
        let (m2, _) = create_as(&s, user("mallory")).unwrap();
        assert!(s.get(&m1.id).is_some()); // m2 is now mallory's least recent
        assert_eq!(
            create_as(&s, user("carol")).err(),
            Some(Refused::StoreFull { cap: 3 })
        );
        let (_m3, evicted) = create_as(&s, user("mallory")).unwrap();
        assert_eq!(evicted.map(|e| e.id.clone()), Some(m2.id.clone()));
        assert!(
            s.get(&bob.id).is_some(),
            "bob's session is not mallory's to end"
        );
        assert_eq!(s.len(), 3);
    }

    #[test]
    fn ids_are_long_visible_ascii_and_distinct() {
        let a = new_session_id();
        let b = new_session_id();
        assert_ne!(a, b);
        assert_eq!(a.len(), 43);
        assert!(a.bytes().all(|c| (0x21..=0x7e).contains(&c)));
    }

    #[test]
    fn sessions_expire_after_ttl_without_use() {
        let s = store(50, 10);
        let (sess, _) = create(&s);
        assert!(s.get(&sess.id).is_some());
        std::thread::sleep(Duration::from_millis(120));
        assert!(s.get(&sess.id).is_none());
        assert_eq!(s.take_expired().len(), 1);
        assert!(s.is_empty());
    }

    #[test]
    fn use_slides_the_ttl() {
        let s = store(150, 10);
        let (sess, _) = create(&s);
        for _ in 0..4 {
            std::thread::sleep(Duration::from_millis(60));
            assert!(s.get(&sess.id).is_some());
        }
    }

    #[test]
    fn cap_evicts_least_recently_used() {
        let s = store(60_000, 2);
        let (a, _) = create(&s);
        std::thread::sleep(Duration::from_millis(5));
        let (b, _) = create(&s);
        std::thread::sleep(Duration::from_millis(5));
        assert!(s.get(&a.id).is_some()); // a is now more recent than b
        let (_c, evicted) = create(&s);
        assert_eq!(evicted.map(|e| e.id.clone()), Some(b.id.clone()));
        assert_eq!(s.len(), 2);
        assert!(s.get(&b.id).is_none());
    }

    #[test]
    fn log_levels_validate() {
        let s = store(1000, 1);
        let (sess, _) = create(&s);
        assert!(sess.set_log_level("warning"));
        assert_eq!(sess.log_level(), 3);
        assert!(!sess.set_log_level("verbose"));
    }
}
