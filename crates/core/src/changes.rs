//! Live list changes: a backend's `notifications/{tools,resources,prompts}/list_changed` re-lists
//! that kind of that backend only, rebuilds the catalog, and tells every listener which kinds now
//! advertise something different (additions and removals alike).
//!
//! Storms coalesce: notifications mark (backend, kind) dirty, and one worker drains the dirty set,
//! so at most one re-derivation is in flight however fast a backend announces changes.
//!
//! A backend withdrawn or brought back by its health (kind [`AVAILABILITY`]) is handled the same
//! way, debounced: the first change is acted on at once, further ones within the debounce window
//! are coalesced into one re-derivation at its end, so a flapping backend cannot storm sessions.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::{Notify, broadcast};
use vmcp_backend::{Backend, Notice};

use crate::{catalog::Catalog, discover, gateway::Gateway};

/// What the gateway tells its edges about.
#[derive(Debug, Clone, PartialEq)]
pub enum GatewayNotice {
    /// These kinds ("tools", "resources", "prompts") advertise something different now.
    ListChanged(Vec<&'static str>),
    /// A backend said a resource changed (`notifications/resources/updated` params).
    ResourceUpdated(Value),
}

/// The dirty "kind" of a backend whose health withdrew it or brought it back.
const AVAILABILITY: &str = "availability";

/// The dirty "kind" (of no backend) when the pin store changed: re-screen the last answers.
const PINS: &str = "pins";

/// (backend, kind) pairs waiting to be re-derived, and the worker's wake-up.
#[derive(Default)]
pub(crate) struct Dirty {
    set: Mutex<BTreeSet<(String, &'static str)>>,
    wake: Notify,
}

impl Dirty {
    fn mark(&self, pairs: impl IntoIterator<Item = (String, &'static str)>) {
        self.set
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(pairs);
        self.wake.notify_one();
    }

    fn has_availability(&self) -> bool {
        self.set
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .any(|(_, k)| *k == AVAILABILITY)
    }
}

impl Gateway {
    /// Subscribes to list changes and resource updates.
    pub fn notices(&self) -> broadcast::Receiver<GatewayNotice> {
        self.notices.subscribe()
    }

    /// Starts listening to every backend's announcements (call once, after construction).
    pub fn watch(self: &Arc<Self>) {
        let gw = Arc::downgrade(self);
        let _ = self.this.set(gw.clone());
        for backend in self.backends().iter() {
            self.listen(backend);
        }
        let dirty = self.dirty.clone();
        let worker = tokio::spawn(async move {
            let mut last_availability: Option<tokio::time::Instant> = None;
            loop {
                dirty.wake.notified().await;
                let Some(debounce) = gw.upgrade().map(|g| g.opts().health_debounce) else {
                    break;
                };
                // Leading edge at once; a change within the window waits for its end.
                if let Some(at) = last_availability
                    && dirty.has_availability()
                {
                    tokio::time::sleep_until(at + debounce).await;
                }
                let batch =
                    std::mem::take(&mut *dirty.set.lock().unwrap_or_else(|p| p.into_inner()));
                if batch.iter().any(|(_, k)| *k == AVAILABILITY) {
                    last_availability = Some(tokio::time::Instant::now());
                }
                let Some(gw) = gw.upgrade() else { break };
                if !batch.is_empty() {
                    gw.rederive(batch).await;
                }
            }
        });
        self.watchers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(worker);
        if self.opts().pinning.is_some() {
            self.watch_pins();
        }
    }

    /// Polls the pin store for approvals made elsewhere, so they apply within seconds
    /// (`toolPinning` is fixed while serving, so this starts only when it is on).
    fn watch_pins(self: &Arc<Self>) {
        let gw = Arc::downgrade(self);
        let dirty = self.dirty.clone();
        let poller = tokio::spawn(async move {
            let mut tick = tokio::time::interval(crate::pins::WATCH_EVERY);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(pinning) = gw.upgrade().map(|g| g.opts().pinning.clone()) else {
                    break;
                };
                let Some(pinning) = pinning else { continue };
                match pinning.reload_if_changed().await {
                    Ok(true) => dirty.mark([(String::new(), PINS)]),
                    Ok(false) => {}
                    Err(e) => {
                        tracing::error!(error = %e, "cannot read the pin store; keeping the pins in memory");
                    }
                }
            }
        });
        self.watchers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(poller);
    }

    /// Listens to one backend's announcements (until [`Gateway::forget`] stops it).
    pub(crate) fn listen(&self, backend: &Arc<Backend>) {
        let mut rx = backend.notices();
        let id = backend.id().to_string();
        let dirty = self.dirty.clone();
        let notices = self.notices.clone();
        let task = tokio::spawn(async move {
            loop {
                match rx.recv().await {
                    Ok(Notice::ListChanged(kind)) => dirty.mark([(id.clone(), kind)]),
                    Ok(Notice::ResourceUpdated(params)) => {
                        let _ = notices.send(GatewayNotice::ResourceUpdated(params));
                    }
                    // A restart is re-listed like a return (debounced the same way, so a
                    // backend that restarts in a loop cannot storm sessions).
                    Ok(Notice::Advertised(_) | Notice::Restarted) => {
                        dirty.mark([(id.clone(), AVAILABILITY)]);
                    }
                    // Missed notices under a flood: re-derive everything of this backend.
                    Err(broadcast::error::RecvError::Lagged(_)) => dirty.mark(
                        ["tools", "resources", "prompts", AVAILABILITY].map(|k| (id.clone(), k)),
                    ),
                    Err(broadcast::error::RecvError::Closed) => break,
                }
            }
        });
        self.backend_task(backend.id(), task);
    }

    /// Re-lists the dirty (backend, kind) pairs and publishes which kinds changed.
    async fn rederive(&self, batch: BTreeSet<(String, &'static str)>) {
        let _one_at_a_time = self.refresh.lock().await;
        // A backend whose credential depends on the caller lives in the callers' views: drop
        // them all (they are rebuilt on next use) and let sessions compare.
        let mut per_caller: Vec<&'static str> = batch
            .iter()
            .filter(|(id, _)| self.backend(id).is_ok_and(|b| b.per_caller()))
            .flat_map(|(_, kind)| match *kind {
                AVAILABILITY => vec!["tools", "resources", "prompts"],
                kind => vec![kind],
            })
            .collect();
        per_caller.sort_unstable();
        per_caller.dedup();
        if !per_caller.is_empty() {
            self.views.lock().unwrap_or_else(|p| p.into_inner()).clear();
            let _ = self.notices.send(GatewayNotice::ListChanged(per_caller));
        }
        let Some((mut caps, mut failed)) = self
            .answers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
        else {
            // Nothing aggregated yet: the first client will aggregate afresh anyway.
            return;
        };
        for (id, kind) in &batch {
            let Ok(backend) = self.backend(id) else {
                continue;
            };
            if *kind == AVAILABILITY {
                // Back: its lists may have changed while it was away (or were never had).
                if backend.is_advertised() && !backend.per_caller() {
                    match discover::query(&backend, None).await {
                        Ok(fresh) => {
                            caps.retain(|c| &c.backend != id);
                            caps.push(fresh);
                            caps.sort_by(|a, b| a.backend.cmp(&b.backend));
                            failed.retain(|(b, _)| b != id);
                        }
                        Err(e) => {
                            tracing::warn!(backend = %id, error = %e, "re-discovery of a recovered backend failed");
                        }
                    }
                }
                continue;
            }
            let Some(entry) = caps.iter_mut().find(|c| &c.backend == id) else {
                continue;
            };
            let before = entry.clone();
            if let Err(e) = discover::requery(&backend, entry, kind).await {
                tracing::warn!(backend = %id, kind, error = %e, "re-listing after list_changed failed; keeping the previous list");
            } else if *entry == before {
                // The backend asked its clients to re-list and nothing we see changed: still
                // tell the clients that see its items, as a direct connection would.
                *self
                    .relists
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .entry((id.clone(), crate::catalog::kind_index(kind)))
                    .or_default() += 1;
            }
        }
        let catalog = match self.build(caps.clone(), failed.clone()) {
            Ok(c) => Arc::new(c),
            Err(e) => {
                tracing::error!(error = %e, "list change left the catalog inconsistent; keeping the previous one");
                return;
            }
        };
        let changed = changed_kinds(self.cached_catalog().as_deref(), &catalog);
        *self.answers.lock().unwrap_or_else(|p| p.into_inner()) = Some((caps, failed));
        self.store(catalog);
        self.views.lock().unwrap_or_else(|p| p.into_inner()).clear();
        tracing::info!(?changed, backends = ?batch.iter().map(|(b, k)| format!("{b}:{k}")).collect::<Vec<_>>(), "capabilities re-derived");
        if !changed.is_empty() {
            let _ = self.notices.send(GatewayNotice::ListChanged(changed));
        }
    }
}

/// The kinds whose advertised lists differ between `before` (None: nothing yet) and `after`.
pub(crate) fn changed_kinds(before: Option<&Catalog>, after: &Catalog) -> Vec<&'static str> {
    ["tools", "resources", "prompts"]
        .into_iter()
        .filter(|k| before.is_none_or(|b| b.fingerprint(k) != after.fingerprint(k)))
        .collect()
}
