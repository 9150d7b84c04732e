//! Active health checks: one task per backend checks it every interval (see
//! `Backend::check` for what a check sends). What a check finds goes through the backend's
//! state machine; a backend it withdraws or brings back is re-derived by `changes.rs`.

use std::sync::Arc;
use std::time::Duration;

use vmcp_backend::{Backend, Notice};

use crate::gateway::Gateway;

/// The first re-check of a withdrawn backend; it doubles up to the interval.
const RETRY_FIRST: Duration = Duration::from_millis(500);

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
        let mut notices = backend.notices();
        let task = tokio::spawn(async move {
            let mut next = tokio::time::Instant::now() + checks.interval + offset;
            let mut retry = RETRY_FIRST;
            loop {
                tokio::select! {
                    () = tokio::time::sleep_until(next) => {}
                    notice = notices.recv() => {
                        // Withdrawn by its calls: start re-checking soon, not at the next interval.
                        if matches!(notice, Ok(Notice::Advertised(false))) {
                            next = next.min(tokio::time::Instant::now() + RETRY_FIRST);
                        }
                        continue;
                    }
                }
                b.check(checks.timeout).await;
                // A withdrawn backend is re-checked sooner (backing off to the interval), so one
                // that restarted comes back in about a second, not a whole interval later.
                let wait = if b.is_advertised() {
                    retry = RETRY_FIRST;
                    checks.interval
                } else {
                    let wait = retry.min(checks.interval);
                    retry = retry.saturating_mul(2);
                    wait
                };
                next = tokio::time::Instant::now() + wait;
            }
        });
        self.backend_task(backend.id(), task);
    }

    /// The checks' settings, when checks are on.
    pub(crate) fn health_checks(&self) -> Option<HealthChecks> {
        *self.checks.lock().unwrap_or_else(|p| p.into_inner())
    }
}
