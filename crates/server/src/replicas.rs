//! What replicas sharing sessions through Redis do for one another (see `shared` for the record
//! and the bus): resolve a request's session from the record, adopt one another's sessions,
//! spread changes, route a client's answer to the replica waiting for it, and end sessions
//! everywhere.
//!
//! The hot path costs no Redis round trip for a session this replica holds and the store
//! vouched for recently: a `GETEX` (which also slides the TTL) at most once per
//! [`vouch_window`] per session, and in between the bus says what ended or changed. Any gap in
//! the bus (resubscribed, or a message dropped) voids every vouch. 2026-07-28 requests never
//! touch Redis.

use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use axum::response::Response;
use http::{HeaderValue, StatusCode, header};
use serde_json::Value;
use tokio::sync::mpsc;
use vmcp_core::{Caller, Identity};
use vmcp_proto::era::Era;
use vmcp_proto::{ErrorObject, codes};
use vmcp_redis::RedisError;

use crate::legacy;
use crate::remote_resume;
use crate::reply;
use crate::session::{Session, short};
use crate::shared::{BusMessage, Record, SharedSessions};
use crate::state::AppState;

/// The session a request names, as the shared store knows it. A session this replica has not
/// seen is adopted (rebuilt from its record); one the store no longer has is dropped here too.
/// While Redis cannot answer, a session this replica holds is still served (degraded: changes
/// made elsewhere are not seen), and any other gets 503 with a reason.
pub(crate) async fn resolve(
    state: &AppState,
    shared: &SharedSessions,
    id: &str,
    identity: &Identity,
) -> Result<Arc<Session>, Response> {
    // Read before the store is asked, so a message missed or heard during the ask voids the
    // vouch it would give.
    let generation = shared.bus_generation();
    let heard = shared.heard();
    if let Some(generation) = generation {
        let window = vouch_window(state.sessions.ttl);
        if let Some(session) = state.sessions.get_vouched(id, generation, window) {
            if session.identity.same_caller(identity) {
                return Ok(session);
            }
            tracing::warn!(session = %short(id), "request on a session by another identity refused");
            return Err(legacy::session_not_found());
        }
    }
    match shared.load(id).await {
        Ok(Some(record)) => {
            if !record.belongs_to(identity) {
                tracing::warn!(session = %short(id), "request on a session by another identity refused");
                return Err(legacy::session_not_found());
            }
            let session = match state.sessions.get_any(id) {
                Some(session) => {
                    apply(state, &session, &record).await;
                    session
                }
                None => adopt(state, id, &record, identity).await?,
            };
            // An end or change heard meanwhile may postdate the record read (a session ended
            // elsewhere would be adopted again here): the next request asks again.
            if let Some(generation) = generation
                && shared.heard() == heard
                && shared.bus_generation() == Some(generation)
            {
                state.sessions.vouch(&session, generation);
            }
            Ok(session)
        }
        Ok(None) => {
            if let Some(gone) = state.sessions.remove(id) {
                state.gateway.end_session(&gone.id).await;
            }
            Err(legacy::session_not_found())
        }
        Err(e) => {
            let local = state
                .sessions
                .get_any(id)
                .filter(|s| s.identity.same_caller(identity));
            match local {
                Some(session) => {
                    warn_degraded(&e);
                    Ok(session)
                }
                None => Err(unavailable(&e)),
            }
        }
    }
}

/// How long the store's word on a session holds on this replica: a quarter of the session TTL
/// (so an active session's record is slid well before it expires), at most a minute (so a
/// record removed behind the gateways' backs, say by `FLUSHDB`, is noticed soon).
fn vouch_window(ttl: Duration) -> Duration {
    (ttl / 4).min(Duration::from_secs(60))
}

/// Rebuilds another replica's session here from its record.
async fn adopt(
    state: &AppState,
    id: &str,
    record: &Record,
    identity: &Identity,
) -> Result<Arc<Session>, Response> {
    let Some(version) = record.version() else {
        tracing::warn!(session = %short(id), "a stored session names no revision this build speaks; treating it as unknown");
        return Err(legacy::session_not_found());
    };
    let catalog = match state.gateway.catalog(identity).await {
        Ok(c) => c,
        Err(e) => {
            return Err(reply::failure(
                reply::Format::Json,
                &Value::Null,
                &crate::errors::Failure::from(e),
            ));
        }
    };
    let (session, evicted, fresh) = state.sessions.adopt(
        id,
        version,
        record.capabilities(),
        identity.clone(),
        catalog,
    );
    if fresh {
        legacy::open_session(state, &session, evicted);
        tracing::debug!(session = %short(id), "session adopted from the shared store");
    }
    apply(state, &session, record).await;
    Ok(session)
}

/// Brings this replica's copy up to the record: log level, and resource subscriptions (each
/// replica holding a copy subscribes on its own backend connections, so whichever replica holds
/// the client's GET stream gets the updates itself).
async fn apply(state: &AppState, session: &Arc<Session>, record: &Record) {
    if let Some(level) = record.log_level() {
        session.set_log_level(level);
    }
    // The hot path: most sessions subscribe to nothing, here or in the record.
    if !record.has_subscriptions() && !session.has_subscriptions() {
        return;
    }
    let want = record.subscriptions();
    let have = session.subscriptions();
    if want == have {
        return;
    }
    let catalog = session.catalog();
    let caller = Caller {
        identity: &session.identity,
        session: Some(&session.id),
        sink: None,
        era: Some(Era::Legacy),
        headers: None,
    };
    for uri in want.iter().filter(|u| !have.contains(u)) {
        if session.set_subscribed(uri, true)
            && let Err(e) = state.gateway.subscribe(&caller, &catalog, uri).await
        {
            session.set_subscribed(uri, false);
            tracing::warn!(session = %short(&session.id), error = %e, "could not take over a resource subscription");
        }
    }
    for uri in have.iter().filter(|u| !want.contains(u)) {
        if session.set_subscribed(uri, false) {
            let _ = state.gateway.unsubscribe(&caller, &catalog, uri).await;
        }
    }
}

/// Stores a new session's record. On failure the session is undone here and the client gets
/// 503: a session other replicas cannot find would fail on the next request anyway.
pub(crate) async fn created(state: &AppState, session: &Session) -> Result<(), Response> {
    let Some(shared) = &state.shared else {
        return Ok(());
    };
    let generation = shared.bus_generation();
    match shared.create(&session.id, &Record::of(session)).await {
        Ok(()) => {
            if let Some(generation) = generation {
                state.sessions.vouch(session, generation);
            }
            Ok(())
        }
        Err(e) => {
            if let Some(s) = state.sessions.remove(&session.id) {
                state.gateway.end_session(&s.id).await;
            }
            Err(unavailable(&e))
        }
    }
}

/// Stores what changed in a session (log level, subscriptions) and tells the other replicas.
/// If Redis cannot take it, the change holds on this replica only, which is logged.
pub(crate) async fn persist(state: &AppState, session: &Session) {
    let Some(shared) = &state.shared else { return };
    match shared.save(&session.id, &Record::of(session)).await {
        Ok(true) => {}
        Ok(false) => {
            tracing::debug!(session = %short(&session.id), "session ended before its change was stored")
        }
        Err(e) => {
            tracing::warn!(session = %short(&session.id), error = %e, "session change not stored; it holds on this replica only")
        }
    }
}

/// Ends a session everywhere (DELETE). False when the store did not have it.
pub(crate) async fn ended(state: &AppState, id: &str) -> Result<bool, Response> {
    let Some(shared) = &state.shared else {
        return Ok(true);
    };
    shared.remove(id).await.map_err(|e| unavailable(&e))
}

/// A client's answer to a request this replica did not send: forwarded to the replica whose id
/// the request id carries. False when it belongs to no other replica.
pub(crate) async fn forward_answer(
    state: &AppState,
    session: &str,
    id: &Value,
    outcome: Result<Value, ErrorObject>,
) -> bool {
    let Some(shared) = &state.shared else {
        return false;
    };
    let Some(to) = shared.owner_elsewhere(id) else {
        return false;
    };
    let message = BusMessage::Answer {
        session: session.to_owned(),
        to,
        id: id.clone(),
        outcome,
    };
    if let Err(e) = shared.publish(&message).await {
        tracing::warn!(session = %short(session), error = %e, "could not forward a client's answer to the replica waiting for it");
    }
    true
}

/// Acts on what other replicas publish, until the state is gone.
pub(crate) async fn bus_loop(state: Weak<AppState>, mut rx: mpsc::Receiver<vmcp_redis::Message>) {
    while let Some(message) = rx.recv().await {
        let Some(state) = state.upgrade() else { break };
        let Some(shared) = &state.shared else { break };
        let Some(message) = shared.decode(&message.payload) else {
            continue;
        };
        if matches!(
            message,
            BusMessage::Ended { .. } | BusMessage::Changed { .. }
        ) {
            shared.hear();
        }
        match message {
            BusMessage::Ended { session } => {
                if let Some(s) = state.sessions.remove(&session) {
                    tracing::debug!(session = %short(&s.id), "session ended on another replica");
                    state.gateway.end_session(&s.id).await;
                }
            }
            BusMessage::Changed { session } => {
                let Some(s) = state.sessions.get_any(&session) else {
                    continue;
                };
                // Applied off the bus's task: a subscription's backend call must not hold it.
                let state = state.clone();
                tokio::spawn(async move {
                    let Some(shared) = &state.shared else { return };
                    if let Ok(Some(record)) = shared.peek(&s.id).await {
                        apply(&state, &s, &record).await;
                    }
                });
            }
            BusMessage::Answer {
                session,
                id,
                outcome,
                ..
            } => {
                let delivered = state
                    .sessions
                    .get_any(&session)
                    .is_some_and(|s| s.answer(&id, outcome));
                if !delivered {
                    tracing::debug!(session = %short(&session), %id, "forwarded answer to no pending request");
                }
            }
            BusMessage::Resume {
                session,
                from,
                last_event_id,
                conn,
                ..
            } => remote_resume::serve(&state, &session, &last_event_id, from, conn),
            BusMessage::Frames {
                conn, frames, end, ..
            } => remote_resume::deliver(shared, &conn, frames, end),
            BusMessage::Refused { conn, lost, .. } => remote_resume::refused(shared, &conn, lost),
            BusMessage::Release { conn, .. } => remote_resume::release(shared, &conn),
        }
    }
}

/// Before the reaper ends sessions idle here, those holding a GET stream are checked against the
/// store: in use on other replicas, they stay (their stream is this replica's to serve).
pub(crate) async fn keep_streams_in_use(state: &AppState) {
    let Some(shared) = &state.shared else { return };
    let idle = state.sessions.idle_with_streams();
    if idle.is_empty() {
        return;
    }
    let ids: Vec<String> = idle.iter().map(|s| s.id.clone()).collect();
    match shared.exist(&ids).await {
        Ok(alive) => {
            for (id, alive) in ids.iter().zip(alive) {
                if alive {
                    state.sessions.get_any(id);
                }
            }
        }
        // Without an answer, nothing is ended on a guess: they are checked again next round.
        Err(_) => {
            for id in &ids {
                state.sessions.get_any(id);
            }
        }
    }
}

/// 503 with the reason, for a Legacy request the shared store could not serve.
fn unavailable(e: &RedisError) -> Response {
    let mut resp = reply::refuse(
        StatusCode::SERVICE_UNAVAILABLE,
        codes::INTERNAL_ERROR,
        format!("session storage unavailable, try again shortly: {e}"),
    );
    resp.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    resp
}

/// Serving from this replica's copy while Redis is away is logged once per 10 s.
fn warn_degraded(e: &RedisError) {
    static LAST: Mutex<Option<Instant>> = Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(|p| p.into_inner());
    if last.is_some_and(|t| t.elapsed() < Duration::from_secs(10)) {
        return;
    }
    *last = Some(Instant::now());
    tracing::warn!(error = %e, "session storage unavailable; serving sessions this replica holds from its own copy");
}
