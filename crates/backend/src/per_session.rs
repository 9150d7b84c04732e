//! Connections dedicated to one client session (`isolation: perSession`), capped in number and
//! reaped when their session ends or idles.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::{connection::Connection, error::BackendError, sink::CallSink};

/// The key used for the connection the gateway itself uses to discover capabilities.
pub(crate) const DISCOVERY_KEY: &str = "";

struct Entry {
    conn: Arc<dyn Connection>,
    last_used: Instant,
}

/// Per-session connections of one backend.
pub(crate) struct PerSessionPool {
    entries: Mutex<HashMap<String, Entry>>,
    sinks: Mutex<HashMap<String, CallSink>>,
    cap: usize,
    idle: Duration,
}

impl PerSessionPool {
    pub(crate) fn new(cap: usize, idle: Duration) -> Self {
        Self {
            entries: Mutex::new(HashMap::new()),
            sinks: Mutex::new(HashMap::new()),
            cap: cap.max(1),
            idle,
        }
    }

    /// The connection of `key`, created by `make` if it has none yet.
    pub(crate) fn get(
        &self,
        key: &str,
        make: impl FnOnce() -> Result<Arc<dyn Connection>, BackendError>,
    ) -> Result<Arc<dyn Connection>, BackendError> {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = entries.get_mut(key) {
            e.last_used = Instant::now();
            return Ok(e.conn.clone());
        }
        if entries.len() >= self.cap {
            return Err(BackendError::Unavailable(format!(
                "per-session connection limit reached ({} live); end idle sessions or raise server.maxPerSessionProcesses",
                self.cap
            )));
        }
        let conn = make()?;
        entries.insert(
            key.to_string(),
            Entry {
                conn: conn.clone(),
                last_used: Instant::now(),
            },
        );
        Ok(conn)
    }

    /// Records where unattributed messages of `key`'s connection go.
    pub(crate) fn attach(&self, key: &str, sink: CallSink) {
        self.sinks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key.to_string(), sink);
    }

    /// The sink attached for `key`, if any.
    pub(crate) fn sink(&self, key: &str) -> Option<CallSink> {
        self.sinks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(key)
            .cloned()
    }

    /// Removes the connection of `key`, returning it so the caller can shut it down.
    pub(crate) fn remove(&self, key: &str) -> Option<Arc<dyn Connection>> {
        self.sinks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(key);
        self.entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(key)
            .map(|e| e.conn)
    }

    /// Removes connections idle for longer than the idle timeout.
    pub(crate) fn take_idle(&self) -> Vec<Arc<dyn Connection>> {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        let idle: Vec<String> = entries
            .iter()
            .filter(|(_, e)| now.duration_since(e.last_used) > self.idle)
            .map(|(k, _)| k.clone())
            .collect();
        idle.into_iter()
            .filter_map(|k| entries.remove(&k).map(|e| e.conn))
            .collect()
    }

    /// Removes every connection.
    pub(crate) fn drain(&self) -> Vec<Arc<dyn Connection>> {
        self.entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain()
            .map(|(_, e)| e.conn)
            .collect()
    }

    /// How many connections are live.
    pub(crate) fn len(&self) -> usize {
        self.entries.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Any live connection's server info (they all front the same server).
    pub(crate) fn any(&self) -> Option<Arc<dyn Connection>> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries
            .get(DISCOVERY_KEY)
            .or_else(|| entries.values().next())
            .map(|e| e.conn.clone())
    }
}
