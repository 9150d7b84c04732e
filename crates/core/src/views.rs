//! Per-caller views of the catalog, for backends whose credential depends on the caller (token
//! exchange): each caller's capabilities of those backends are discovered with its own
//! credential, so each caller sees what its credentials surface. Backends whose credential does
//! not depend on the caller keep the shared answers and their cost; a view is the shared answers
//! plus the caller's own, built into a catalog and kept for the cache TTL, at most [`VIEW_CAP`]
//! callers (least recently used evicted). Any list change drops every view.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use crate::{
    admission::Identity, catalog::Catalog, discover, error::CoreError, gateway::Gateway,
    policy::PartialFailureMode,
};

/// Most callers with a view.
pub(crate) const VIEW_CAP: usize = 1024;

pub(crate) struct View {
    catalog: Arc<Catalog>,
    built: Instant,
    used: Instant,
}

/// The cache of views, by caller.
#[derive(Default)]
pub(crate) struct Views(HashMap<String, View>);

/// The key of a caller's view (issuer and subject; the token may refresh under it).
fn key(identity: &Identity) -> Option<String> {
    identity
        .binding()
        .map(|(iss, sub)| format!("{iss}\u{0}{sub}"))
}

impl Views {
    pub(crate) fn clear(&mut self) {
        self.0.clear();
    }

    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }
}

impl Gateway {
    /// Whether some backend's credential depends on the caller.
    pub(crate) fn has_per_caller(&self) -> bool {
        self.backends().iter().any(|b| b.per_caller())
    }

    /// `identity`'s view: the shared catalog's answers plus the per-caller backends' answers
    /// discovered with its credential. None when the caller has no token to exchange (then it
    /// sees the shared catalog, without the per-caller backends).
    pub(crate) async fn view(
        &self,
        identity: &Identity,
    ) -> Result<Option<Arc<Catalog>>, CoreError> {
        let Some(key) = key(identity).filter(|_| identity.token.is_some()) else {
            return Ok(None);
        };
        {
            let mut views = self.views.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(v) = views.0.get_mut(&key)
                && v.built.elapsed() < self.opts().cache_ttl
            {
                v.used = Instant::now();
                return Ok(Some(v.catalog.clone()));
            }
        }
        let (mut caps, mut failed) = self
            .answers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .unwrap_or_default();
        let backends = self.backends();
        let own: Vec<_> = backends
            .iter()
            .filter(|b| b.per_caller() && b.is_advertised())
            .collect();
        let budget = self.opts().discovery_timeout;
        let answers = tokio::time::timeout(
            budget,
            futures_util::future::join_all(own.iter().map(|b| discover::query(b, Some(identity)))),
        )
        .await
        .map_err(|_| CoreError::DiscoveryTimeout(budget))?;
        for (backend, answer) in own.iter().zip(answers) {
            match answer {
                Ok(c) => caps.push(c),
                Err(e) => {
                    tracing::warn!(backend = %backend.id(), error = %e, "capability discovery with the caller's credential failed");
                    failed.push((backend.id().to_string(), e.to_string()));
                }
            }
        }
        if !failed.is_empty() && self.opts().partial_failure == PartialFailureMode::Fail {
            let why = failed
                .iter()
                .map(|(b, e)| format!("backend {b}: {e}"))
                .collect::<Vec<_>>()
                .join("; ");
            return Err(CoreError::DiscoveryFailed(why));
        }
        caps.sort_by(|a, b| a.backend.cmp(&b.backend));
        let catalog = Arc::new(self.build(caps, failed)?);
        let mut views = self.views.lock().unwrap_or_else(|p| p.into_inner());
        if views.0.len() >= VIEW_CAP
            && let Some(oldest) = views
                .0
                .iter()
                .min_by_key(|(_, v)| v.used)
                .map(|(k, _)| k.clone())
        {
            views.0.remove(&oldest);
        }
        let now = Instant::now();
        views.0.insert(
            key,
            View {
                catalog: catalog.clone(),
                built: now,
                used: now,
            },
        );
        Ok(Some(catalog))
    }
}
