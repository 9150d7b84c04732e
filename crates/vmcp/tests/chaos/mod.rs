//! The chaos suite's harness and scenarios: one scenario per fault, each driving 16 keep-alive
//! clients through the gateway before, during and after the fault, and asserting on what they got.
//!
//! Module map: `load` runs the clients, `outcome` judges one answer, `report` counts, prints and
//! asserts, `idp` is the identity provider the auth scenarios control; `backends`, `auth` and
//! `replicas` are the scenarios.

mod auth;
mod backends;
mod idp;
mod load;
mod outcome;
mod replicas;
mod report;

use std::time::Duration;

/// Per scenario, the seconds of load (before + during + after the fault) when
/// `VMCP_CHAOS_SECS` is unset: short enough that the binary stays within CI's budget.
const DEFAULT_SECS: f64 = 6.0;
/// The gateway's backend request timeout in every scenario (`operational.timeouts.default`).
pub(crate) const BACKEND_TIMEOUT: Duration = Duration::from_secs(3);
/// Added to the gateway's bound to make a client's hard deadline: a request still unanswered
/// past it counts as hung.
pub(crate) const MARGIN: Duration = Duration::from_secs(2);
/// Longest wait for the first good answer after a fault ends; recovery is reported, and only
/// its happening within this bound is asserted.
pub(crate) const RECOVERY_BOUND: Duration = Duration::from_secs(20);

/// One scenario at a time: they measure recovery, and two at once on a 2-core machine would
/// measure each other.
pub(crate) static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// How long each phase of a scenario lasts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timeline {
    pub(crate) secs: f64,
    pub(crate) before: Duration,
    pub(crate) during: Duration,
    /// At least this long after the fault, and until recovery (within [`RECOVERY_BOUND`]).
    pub(crate) after: Duration,
}

impl Timeline {
    /// From `VMCP_CHAOS_SECS` (default 6): a fifth before the fault, three tenths during, half
    /// after.
    pub(crate) fn from_env() -> Timeline {
        let secs = std::env::var("VMCP_CHAOS_SECS")
            .ok()
            .and_then(|s| s.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 1.0)
            .unwrap_or(DEFAULT_SECS)
            .min(3600.0);
        Timeline {
            secs,
            before: Duration::from_secs_f64(secs * 0.2),
            during: Duration::from_secs_f64(secs * 0.3),
            after: Duration::from_secs_f64(secs * 0.5),
        }
    }
}

/// The settings every scenario's gateway shares: a 3 s backend timeout, health checks every
/// second (two failures make a backend unhealthy, so a fault is noticed within the fault window
/// of a short run), best-effort partial failure, and room for every client's session.
pub(crate) fn operational() -> String {
    format!(
        "operational:\n  timeouts:\n    default: {}s\n  failureHandling:\n    healthCheckInterval: 1s\n    healthCheckTimeout: 900ms\n    unhealthyThreshold: 2\n    partialFailureMode: best_effort\nserver:\n  maxSessionsPerIdentity: 10000\n",
        BACKEND_TIMEOUT.as_secs()
    )
}
