//! Resuming, on one replica, an SSE stream another replica holds (sessions shared through Redis).
//! A stream lives on the replica that serves it: its events are never written to Redis, so the
//! streams of every call cost nothing extra (a Redis round trip per event would; see
//! docs/streams.md for the measurement). Only a resume that a load balancer sends elsewhere
//! crosses replicas: the replica the client reached asks the stream's replica (named by the
//! event id's tag) over the bus, and relays what comes back.
//!
//! ```text
//! client ──GET Last-Event-ID: A.x:7──▶ replica B ──resume(conn)──▶ bus ──▶ replica A
//! client ◀── events, keep-alives ───── replica B ◀──frames(conn)── bus ◀── A reads stream x
//! ```
//!
//! A's first message accepts or refuses; B waits for it at most [`ANSWER_WAIT`]. When B's client
//! goes away, B tells A to stop; a resume anywhere replaces this one, as on one replica.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use crate::resumable::{KEEPALIVE, Refused};
use crate::session::{Session, short};
use crate::shared::{BusMessage, SharedSessions};
use crate::state::AppState;

/// How long the replica the client reached waits for the stream's replica to answer.
const ANSWER_WAIT: Duration = Duration::from_secs(3);

/// Frames waiting for a client connection on this replica, before the bus is read again.
const CONNECTION_QUEUE: usize = 256;

/// Keep-alive intervals without a message (frames or heartbeat) from the holder after which a
/// connection resumed here ends.
const HOLDER_SILENCE: u32 = 3;

/// What reaches a connection resumed here from the stream's replica.
enum Delivery {
    Frames { frames: Vec<String>, end: bool },
    Refused { lost: bool },
}

/// The resumes in flight through this replica, both ways.
#[derive(Default)]
pub(crate) struct RemoteStreams {
    /// Connections of clients here reading another replica's stream, by connection id.
    reading: Mutex<HashMap<String, mpsc::Sender<Delivery>>>,
    /// This replica's streams read by clients elsewhere: the tasks sending them.
    sending: Mutex<HashMap<String, AbortHandle>>,
}

impl RemoteStreams {
    fn reading(&self) -> MutexGuard<'_, HashMap<String, mpsc::Sender<Delivery>>> {
        self.reading.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn sending(&self) -> MutexGuard<'_, HashMap<String, AbortHandle>> {
        self.sending.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The replica whose stream `last_event_id` names, if it is another replica's.
fn holder<'a>(shared: &SharedSessions, last_event_id: &'a str) -> Option<&'a str> {
    let (replica, _) = last_event_id.split_once('.')?;
    // Replica ids are 8 hex digits: anything else names no replica, and is not asked about.
    let well_formed = replica.len() == 8 && replica.bytes().all(|b| b.is_ascii_hexdigit());
    (well_formed && replica != shared.replica()).then_some(replica)
}

/// A `GET` resuming a stream this replica does not have: when the id names another replica,
/// that replica's stream continues here. Err: why it cannot (`refused` when the id names no
/// other replica).
pub(crate) async fn resume(
    state: &Arc<AppState>,
    session: &Session,
    last_event_id: &str,
    refused: Refused,
) -> Result<Response, Refused> {
    let Some(shared) = &state.shared else {
        return Err(refused);
    };
    let Some(to) = holder(shared, last_event_id) else {
        return Err(refused);
    };
    let conn = connection_id();
    let (tx, mut rx) = mpsc::channel(CONNECTION_QUEUE);
    shared.streams.reading().insert(conn.clone(), tx);
    let forget = |state: &AppState| {
        if let Some(shared) = &state.shared {
            shared.streams.reading().remove(&conn);
        }
    };
    let ask = BusMessage::Resume {
        session: session.id.clone(),
        to: to.to_owned(),
        from: shared.replica().to_owned(),
        last_event_id: last_event_id.to_owned(),
        conn: conn.clone(),
    };
    if let Err(e) = shared.publish(&ask).await {
        tracing::warn!(session = %short(&session.id), error = %e, "cannot ask another replica for a stream");
        forget(state);
        return Err(Refused::Unreachable);
    }
    let first = match tokio::time::timeout(ANSWER_WAIT, rx.recv()).await {
        Ok(Some(Delivery::Frames { frames, end })) => (frames, end),
        Ok(Some(Delivery::Refused { lost })) => {
            forget(state);
            return Err(if lost {
                Refused::Lost
            } else {
                Refused::Unknown
            });
        }
        Ok(None) | Err(_) => {
            tracing::warn!(session = %short(&session.id), replica = %to, "the replica holding a stream did not answer a resume");
            forget(state);
            return Err(Refused::Unreachable);
        }
    };
    tracing::debug!(session = %short(&session.id), replica = %to, "stream resumed from another replica");
    let relay = Relay {
        pending: first.0.into_iter().map(Bytes::from).collect(),
        ended: first.1,
        rx,
        quiet: 0,
        _release: Release {
            state: Arc::downgrade(state),
            to: to.to_owned(),
            conn,
        },
    };
    Ok(relay.into_response(state.options.sse_keepalive))
}

/// One client connection here reading another replica's stream.
struct Relay {
    pending: std::collections::VecDeque<Bytes>,
    ended: bool,
    rx: mpsc::Receiver<Delivery>,
    /// Keep-alive intervals in a row without a word from the holder.
    quiet: u32,
    /// Held for its `Drop`.
    _release: Release,
}

impl Relay {
    async fn next(&mut self, keepalive: Duration) -> Option<Bytes> {
        loop {
            if let Some(frame) = self.pending.pop_front() {
                return Some(frame);
            }
            if self.ended {
                return None;
            }
            match tokio::time::timeout(keepalive, self.rx.recv()).await {
                Ok(Some(Delivery::Frames { frames, end })) => {
                    self.quiet = 0;
                    self.pending.extend(frames.into_iter().map(Bytes::from));
                    self.ended = end;
                }
                // The queue overflowed (dropped here) or the bus went away: the client resumes.
                Ok(Some(Delivery::Refused { .. }) | None) => return None,
                // The holder sends at least a heartbeat every interval: silent for several, it is
                // gone (or cut off from Redis), and the client had better resume elsewhere.
                Err(_) if self.quiet >= HOLDER_SILENCE => return None,
                Err(_) => {
                    self.quiet += 1;
                    return Some(Bytes::from_static(KEEPALIVE));
                }
            }
        }
    }

    fn into_response(self, keepalive: Duration) -> Response {
        let body = futures_util::stream::unfold(self, move |mut relay| async move {
            let frame = relay.next(keepalive).await?;
            Some((Ok::<_, Infallible>(frame), relay))
        });
        crate::stream::sse_response(Body::from_stream(body))
    }
}

/// Tells the stream's replica to stop once the client's connection here is gone.
struct Release {
    state: std::sync::Weak<AppState>,
    to: String,
    conn: String,
}

impl Drop for Release {
    fn drop(&mut self) {
        let Some(state) = self.state.upgrade() else {
            return;
        };
        let Some(shared) = &state.shared else { return };
        shared.streams.reading().remove(&self.conn);
        let message = BusMessage::Release {
            to: std::mem::take(&mut self.to),
            conn: std::mem::take(&mut self.conn),
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            if let Some(shared) = &state.shared {
                let _ = shared.publish(&message).await;
            }
        });
    }
}

/// Delivers what the stream's replica sent for a connection here; a connection that cannot
/// keep up is ended (its client resumes from what it got).
pub(crate) fn deliver(shared: &SharedSessions, conn: &str, frames: Vec<String>, end: bool) {
    let mut reading = shared.streams.reading();
    let Some(tx) = reading.get(conn) else { return };
    if tx.try_send(Delivery::Frames { frames, end }).is_err() || end {
        reading.remove(conn);
    }
}

/// The stream's replica refused a resume asked from here.
pub(crate) fn refused(shared: &SharedSessions, conn: &str, lost: bool) {
    if let Some(tx) = shared.streams.reading().remove(conn) {
        let _ = tx.try_send(Delivery::Refused { lost });
    }
}

/// Another replica's client asks for one of this replica's streams: its events go to that
/// replica over the bus until the stream's connection ends or the client goes away.
pub(crate) fn serve(
    state: &Arc<AppState>,
    session: &str,
    last_event_id: &str,
    from: String,
    conn: String,
) {
    let Some(shared) = &state.shared else { return };
    let reader = match state.sessions.get_any(session) {
        Some(s) => s.resume(last_event_id),
        None => Err(Refused::Unknown),
    };
    let mut reader = match reader {
        Ok(reader) => reader,
        Err(why) => {
            let message = BusMessage::Refused {
                to: from,
                conn,
                lost: why == Refused::Lost,
            };
            let state = state.clone();
            tokio::spawn(async move {
                if let Some(shared) = &state.shared {
                    let _ = shared.publish(&message).await;
                }
            });
            return;
        }
    };
    let keepalive = state.options.sse_keepalive;
    // Locked across the spawn, so that a task ending at once removes its own entry after it.
    let mut sending = shared.streams.sending();
    let task = {
        let (state, conn) = (state.clone(), conn.clone());
        tokio::spawn(async move {
            let Some(shared) = &state.shared else { return };
            // The first message accepts the resume, with whatever is ready.
            let mut frames = Vec::new();
            let mut end = false;
            loop {
                while !end {
                    match reader.try_next() {
                        Some(Some(frame)) => {
                            frames.push(String::from_utf8_lossy(&frame).into_owned())
                        }
                        Some(None) => end = true,
                        None => break,
                    }
                }
                let message = BusMessage::Frames {
                    to: from.clone(),
                    conn: conn.clone(),
                    frames: std::mem::take(&mut frames),
                    end,
                };
                if shared.publish(&message).await.is_err() || end {
                    break;
                }
                // An idle interval sends an empty message: the heartbeat the other side watches.
                match reader.next(Some(keepalive)).await {
                    Some(frame) if frame == KEEPALIVE => {}
                    Some(frame) => frames.push(String::from_utf8_lossy(&frame).into_owned()),
                    None => end = true,
                }
            }
            shared.streams.sending().remove(&conn);
        })
    };
    sending.insert(conn, task.abort_handle());
}

/// Another replica's client went away: stop sending it the stream.
pub(crate) fn release(shared: &SharedSessions, conn: &str) {
    if let Some(task) = shared.streams.sending().remove(conn) {
        task.abort();
    }
}

/// 16 random bytes, hex: names one resumed connection on the bus.
fn connection_id() -> String {
    let mut bytes = [0u8; 16];
    let _ = getrandom::fill(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
