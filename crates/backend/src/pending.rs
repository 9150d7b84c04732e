//! Requests awaiting an answer on a multiplexed stream (stdio, HTTP+SSE): id → waiting caller.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::oneshot;

use crate::error::BackendError;

type Reply = Result<Value, BackendError>;

/// The table of in-flight requests of one stream.
#[derive(Default, Clone)]
pub(crate) struct Pending {
    inner: Arc<Mutex<PendingInner>>,
}

#[derive(Default)]
struct PendingInner {
    waiting: HashMap<i64, oneshot::Sender<Reply>>,
    closed: Option<BackendError>,
}

/// Removes its entry when the waiting caller goes away (timeout, cancellation), so abandoned ids do
/// not accumulate.
pub(crate) struct Slot {
    pending: Pending,
    id: i64,
    pub(crate) rx: oneshot::Receiver<Reply>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Ok(mut inner) = self.pending.inner.lock() {
            inner.waiting.remove(&self.id);
        }
    }
}

impl Pending {
    /// Registers `id`; fails if the stream is already closed.
    pub(crate) fn register(&self, id: i64) -> Result<Slot, BackendError> {
        let (tx, rx) = oneshot::channel();
        let mut inner = self.lock();
        if let Some(err) = &inner.closed {
            return Err(err.clone());
        }
        inner.waiting.insert(id, tx);
        Ok(Slot {
            pending: self.clone(),
            id,
            rx,
        })
    }

    /// Delivers the answer for `id`; returns false if nobody waits for it.
    pub(crate) fn resolve(&self, id: i64, reply: Reply) -> bool {
        match self.lock().waiting.remove(&id) {
            Some(tx) => tx.send(reply).is_ok(),
            None => false,
        }
    }

    /// Fails every waiting request and refuses new ones.
    pub(crate) fn close(&self, err: BackendError) {
        let waiting = {
            let mut inner = self.lock();
            inner.closed = Some(err.clone());
            std::mem::take(&mut inner.waiting)
        };
        for (_, tx) in waiting {
            let _ = tx.send(Err(err.clone()));
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, PendingInner> {
        // A poisoned lock only means another thread panicked mid-update of a plain map.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Slot {
    /// Waits for the answer.
    pub(crate) async fn wait(mut self) -> Reply {
        match (&mut self.rx).await {
            Ok(reply) => reply,
            Err(_) => Err(BackendError::Unavailable("connection closed".into())),
        }
    }
}
