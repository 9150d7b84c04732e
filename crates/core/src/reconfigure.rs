//! Live reconfiguration: a new set of backends and new options swapped in while sessions go on.
//! Backends kept unchanged (the same `Arc`) keep their connections, processes and health; new
//! ones are listened to and checked; removed or replaced ones stop receiving new requests at once
//! and are shut down after a drain period, so calls in flight on them can finish. The catalog is
//! re-aggregated and every listener is told which kinds now advertise something different.

use std::sync::Arc;
use std::time::Duration;

use vmcp_backend::Backend;

use crate::changes::{GatewayNotice, changed_kinds};
use crate::gateway::{Gateway, GatewayOptions};
use crate::health::HealthChecks;

/// What a reconfiguration did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Reconfigured {
    /// Backends that were not there before.
    pub added: Vec<String>,
    /// Backends that are gone.
    pub removed: Vec<String>,
    /// Backends whose configuration changed (restarted).
    pub restarted: Vec<String>,
    /// Kinds ("tools", "resources", "prompts") whose advertised lists changed.
    pub changed: Vec<&'static str>,
    /// Why the new catalog could not be aggregated yet, if it could not (the next client retries).
    pub aggregation_error: Option<String>,
}

impl Gateway {
    /// Swaps in `backends` and `opts`. A backend in `backends` that is the same `Arc` as a
    /// running one is kept as it is (with its health checks); new ones are checked with `checks`
    /// when checks are on. Backends leaving are shut down after `drain`.
    pub async fn reconfigure(
        &self,
        mut backends: Vec<Arc<Backend>>,
        opts: GatewayOptions,
        checks: HealthChecks,
        drain: Duration,
    ) -> Reconfigured {
        backends.sort_by(|a, b| a.id().cmp(b.id()));
        // No aggregation or re-derivation runs while the sets change.
        let _one_at_a_time = self.refresh.lock().await;
        let old = self.backends();
        let kept = |b: &Arc<Backend>, set: &[Arc<Backend>]| set.iter().any(|o| Arc::ptr_eq(o, b));
        let leaving: Vec<Arc<Backend>> = old
            .iter()
            .filter(|b| !kept(b, &backends))
            .cloned()
            .collect();
        let arriving: Vec<Arc<Backend>> = backends
            .iter()
            .filter(|b| !kept(b, &old))
            .cloned()
            .collect();
        let mut report = Reconfigured::default();
        for b in &arriving {
            if leaving.iter().any(|l| l.id() == b.id()) {
                report.restarted.push(b.id().to_owned());
            } else {
                report.added.push(b.id().to_owned());
            }
        }
        report.removed = leaving
            .iter()
            .filter(|l| !arriving.iter().any(|b| b.id() == l.id()))
            .map(|l| l.id().to_owned())
            .collect();

        for b in &leaving {
            self.forget(b.id());
        }
        self.swap(backends, opts);
        let checking = self.health_checks().is_some();
        if checking {
            *self.checks.lock().unwrap_or_else(|p| p.into_inner()) = Some(checks);
        }
        for b in &arriving {
            self.listen(b);
            if checking {
                self.check_one(b, checks, Duration::ZERO);
            }
        }

        // Aggregate afresh under the new options (naming, filters, composites may have changed).
        let before = self.cached_catalog();
        let budget = self.opts().discovery_timeout;
        let fresh = match tokio::time::timeout(budget, self.aggregate()).await {
            Ok(Ok(c)) => Some(Arc::new(c)),
            Ok(Err(e)) => {
                report.aggregation_error = Some(e.to_string());
                None
            }
            Err(_) => {
                report.aggregation_error = Some(format!("discovery timed out after {budget:?}"));
                None
            }
        };
        self.views.lock().unwrap_or_else(|p| p.into_inner()).clear();
        match fresh {
            Some(catalog) => {
                report.changed = changed_kinds(before.as_deref(), &catalog);
                self.store(catalog);
            }
            None => {
                // Drop the old catalog so the next client aggregates under the new config.
                self.invalidate();
                report.changed = vec!["tools", "resources", "prompts"];
            }
        }
        // Per-caller views are rebuilt on next use; sessions compare what they can see.
        if !report.changed.is_empty() || self.has_per_caller() {
            let kinds = if self.has_per_caller() {
                vec!["tools", "resources", "prompts"]
            } else {
                report.changed.clone()
            };
            let _ = self.notices.send(GatewayNotice::ListChanged(kinds));
        }
        if !leaving.is_empty() {
            tokio::spawn(async move {
                tokio::time::sleep(drain).await;
                for b in leaving {
                    b.shutdown().await;
                }
            });
        }
        report
    }
}
