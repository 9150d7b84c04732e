//! Definition pinning (`toolPinning`): a backend that changes a tool, prompt or resource
//! template after it was first served — a "rug pull": a poisoned description, a widened schema,
//! a tool renamed into another's place — is caught on the next discovery. `warn` reports it;
//! `enforce` withholds the changed item (not listed, called as an unknown tool) until someone
//! approves it with `vmcp tools approve`, which a running gateway picks up from the store (a file
//! beside the config, or Redis shared by replicas).

mod book;
mod diff;
mod screen;
mod store;
#[cfg(test)]
mod tests;
mod view;

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::SystemTime;

use serde_json::Value;

pub use book::{Approval, BOOK_VERSION, MAX_APPROVALS, Pending, Pin, PinBook, Reason, Shelf};
pub use diff::{PendingReport, diff, pending_report};
pub use screen::{Finding, Screened, screen};
pub use store::{Locked, PinFile, PinStore, RedisPins, Stamp};
pub use view::{PinKind, fingerprint, model_view};

use crate::discover::BackendCapabilities;

/// How often a running gateway looks for another writer's change to the pin store.
pub const WATCH_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

/// Now, as the pin file records times (RFC 3339, seconds).
pub fn now() -> String {
    vmcp_proto::time::rfc3339(SystemTime::now())
}

/// Sees what pinning finds and what is approved (the audit trail).
pub trait PinObserver: Send + Sync {
    /// A definition that differs from its pin was seen (once per distinct definition).
    fn finding(&self, finding: &Finding, enforced: bool);
    /// An approval made elsewhere (`vmcp tools approve`) was picked up.
    fn approval(&self, approval: &Approval);
}

/// A gateway's pinning: the mode, the book and where it is kept.
pub struct Pinning {
    enforce: bool,
    store: PinStore,
    book: Mutex<PinBook>,
    /// The store's version this book was read from or written as.
    version: Mutex<Option<String>>,
    /// Findings already reported (backend, kind, name, fingerprint), so each is logged once.
    reported: Mutex<HashSet<(String, PinKind, String, String)>>,
    observer: Option<std::sync::Arc<dyn PinObserver>>,
}

impl Pinning {
    /// Pinning in `enforce` (else `warn`) mode, kept in `store`.
    ///
    /// # Errors
    /// The store cannot be read, or holds something that is not a valid pin book.
    pub async fn open(
        enforce: bool,
        store: PinStore,
        observer: Option<std::sync::Arc<dyn PinObserver>>,
    ) -> Result<Self, String> {
        let version = store.version().await?;
        let book = store.read().await?;
        Ok(Self {
            enforce,
            store,
            book: Mutex::new(book),
            version: Mutex::new(version),
            reported: Mutex::new(HashSet::new()),
            observer,
        })
    }

    /// Whether changed definitions are withheld.
    pub fn enforces(&self) -> bool {
        self.enforce
    }

    /// Where the book is kept.
    pub fn store(&self) -> &PinStore {
        &self.store
    }

    /// A copy of the book as this gateway has it.
    pub fn book(&self) -> PinBook {
        lock(&self.book).clone()
    }

    /// Screens a discovery's answers (see [`screen`]); reports new findings; returns whether
    /// the book changed and must be written, and the tools withheld (with their backend).
    pub(crate) fn screen(&self, caps: &mut [BackendCapabilities]) -> (bool, Vec<(String, Value)>) {
        let now = now();
        let screened = screen(&mut lock(&self.book), caps, self.enforce, &now);
        {
            let mut reported = lock(&self.reported);
            for f in &screened.findings {
                let key = (
                    f.backend.clone(),
                    f.kind,
                    f.name.clone(),
                    f.fingerprint.clone(),
                );
                if !reported.insert(key) {
                    continue;
                }
                tracing::warn!(
                    backend = %f.backend,
                    kind = f.kind.as_str(),
                    name = %f.name,
                    reason = %f.reason.describe(),
                    withheld = self.enforce,
                    "definition differs from its pin{}; see `vmcp tools diff`",
                    if self.enforce { ": withheld until approved" } else { "" }
                );
                vmcp_telemetry::pin_finding(f.kind.as_str(), f.reason.label(), self.enforce);
                if let Some(o) = &self.observer {
                    o.finding(f, self.enforce);
                }
            }
        }
        vmcp_telemetry::pins_pending(screened.findings.len() as u64);
        (screened.changed, screened.withheld_tools)
    }

    /// Writes what this gateway saw into the store, merged with what others wrote since (their
    /// pins and approvals win), and adopts the result.
    ///
    /// # Errors
    /// The store cannot be locked, read or written.
    pub async fn persist(&self) -> Result<(), String> {
        let ours = self.book();
        let (merged, (), version) = self.store.update(move |disk| merge(disk, &ours)).await?;
        *lock(&self.version) = version;
        self.adopt(merged);
        Ok(())
    }

    /// [`Pinning::persist`] in a task of its own; failures are logged.
    pub(crate) fn persist_in_background(self: &std::sync::Arc<Self>) {
        let pinning = self.clone();
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            tracing::error!("cannot record definition pins: no runtime");
            return;
        };
        rt.spawn(async move {
            if let Err(e) = pinning.persist().await {
                tracing::error!(error = %e, "cannot record definition pins");
            }
        });
    }

    /// Re-reads the store when another writer changed it; returns whether it did (the catalog
    /// must then be re-screened).
    ///
    /// # Errors
    /// The store cannot be reached, or the changed book is not valid (the book in memory is
    /// kept).
    pub async fn reload_if_changed(&self) -> Result<bool, String> {
        let now = self.store.version().await?;
        if now == *lock(&self.version) {
            return Ok(false);
        }
        let fresh = self.store.read().await?;
        *lock(&self.version) = now;
        self.adopt(fresh);
        Ok(true)
    }

    /// Replaces the book with `fresh`, reporting the approvals it has that this one had not.
    fn adopt(&self, fresh: PinBook) {
        let new_approvals: Vec<Approval> = {
            let mut book = lock(&self.book);
            let new = fresh
                .approvals
                .iter()
                .filter(|a| !book.approvals.contains(a))
                .cloned()
                .collect();
            *book = fresh;
            new
        };
        for a in &new_approvals {
            tracing::info!(backend = %a.backend, kind = %a.kind, name = %a.name, by = %a.by, action = %a.action, "pin approved");
            if let Some(o) = &self.observer {
                o.approval(a);
            }
        }
    }
}

/// Merges a gateway's book into the stored one: pins it took on first sight are added (a pin
/// already stored wins: it may be an approval), its pending entries replace the stored ones
/// except those an approval made meanwhile settled.
fn merge(disk: &mut PinBook, ours: &PinBook) {
    for (backend, kind, name, pin) in ours.all_pins() {
        if disk.pin(backend, kind, name).is_none() {
            disk.set_pin(backend, kind, name, pin.clone());
        }
    }
    disk.pending = ours.pending.clone();
    let settled: Vec<(String, PinKind, String)> = disk
        .all_pending()
        .filter(|(b, k, n, p)| {
            disk.pin(b, *k, n)
                .is_some_and(|pin| pin.fingerprint == p.fingerprint)
        })
        .map(|(b, k, n, _)| (b.to_owned(), k, n.to_owned()))
        .collect();
    for (b, k, n) in settled {
        disk.clear_pending(&b, k, &n);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
