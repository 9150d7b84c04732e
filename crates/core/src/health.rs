//! Active health checks: one task per backend checks it every interval (see
//! `Backend::check` for what a check sends). What a check finds goes through the backend's
//! state machine; a backend it withdraws or brings back is re-derived by `changes.rs`.

use std::sync::Arc;
use std::time::Duration;

use crate::gateway::Gateway;

/// How often and how long backends are checked.
#[derive(Debug, Clone, Copy)]
pub struct HealthChecks {
    /// Time between two checks of one backend.
    pub interval: Duration,
    /// Bound on one check.
    pub timeout: Duration,
}

impl Gateway {
    /// Starts checking every backend (call once, after [`Gateway::watch`]). The first check of a
    /// backend is one interval after start: the first aggregation is its first contact.
    pub fn check_health(self: &Arc<Self>, checks: HealthChecks) {
        let mut handles = Vec::new();
        for (i, backend) in self.backends.iter().enumerate() {
            let backend = backend.clone();
            // Spread the backends' checks over the interval instead of bursting them together.
            let offset = checks
                .interval
                .mul_f64(i as f64 / self.backends.len().max(1) as f64);
            handles.push(tokio::spawn(async move {
                let start = tokio::time::Instant::now() + checks.interval + offset;
                let mut ticks = tokio::time::interval_at(start, checks.interval);
                ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    ticks.tick().await;
                    backend.check(checks.timeout).await;
                }
            }));
        }
        self.watchers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(handles);
    }
}
