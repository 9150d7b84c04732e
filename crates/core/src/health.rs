//! Active health checks: one task per backend checks it every interval (see
//! `Backend::check` for what a check sends). What a check finds goes through the backend's
//! state machine; a backend it withdraws or brings back is re-derived by `changes.rs`.

use std::sync::Arc;
use std::time::Duration;

use vmcp_backend::Backend;

use crate::gateway::Gateway;

/// How often and how long backends are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HealthChecks {
    /// Time between two checks of one backend.
    pub interval: Duration,
    /// Bound on one check.
    pub timeout: Duration,
}

impl Gateway {
    /// Starts checking every backend (call once, after [`Gateway::watch`]). The first check of a
    /// backend is one interval after start: the first aggregation is its first contact.
    pub fn check_health(&self, checks: HealthChecks) {
        *self.checks.lock().unwrap_or_else(|p| p.into_inner()) = Some(checks);
        let backends = self.backends();
        for (i, backend) in backends.iter().enumerate() {
            // Spread the backends' checks over the interval instead of bursting them together.
            let offset = checks
                .interval
                .mul_f64(i as f64 / backends.len().max(1) as f64);
            self.check_one(backend, checks, offset);
        }
    }

    /// Starts checking `backend` (when checks are on), first after `interval + offset`.
    pub(crate) fn check_one(&self, backend: &Arc<Backend>, checks: HealthChecks, offset: Duration) {
        let b = backend.clone();
        let task = tokio::spawn(async move {
            let start = tokio::time::Instant::now() + checks.interval + offset;
            let mut ticks = tokio::time::interval_at(start, checks.interval);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                b.check(checks.timeout).await;
            }
        });
        self.backend_task(backend.id(), task);
    }

    /// The checks' settings, when checks are on.
    pub(crate) fn health_checks(&self) -> Option<HealthChecks> {
        *self.checks.lock().unwrap_or_else(|p| p.into_inner())
    }
}
