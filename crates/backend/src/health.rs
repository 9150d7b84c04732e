//! Passive health: every request outcome is recorded; consecutive operational failures past a
//! threshold mark the backend unhealthy until the next success.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use serde::Serialize;

/// A backend's health as reported on `/status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Health {
    /// Not contacted yet.
    Unknown,
    /// The last request got an answer.
    Healthy,
    /// Some recent requests failed, fewer than the threshold.
    Degraded,
    /// At least the threshold of consecutive requests failed.
    Unhealthy,
}

/// Counts consecutive failures.
#[derive(Debug)]
pub(crate) struct HealthTracker {
    failures: AtomicU32,
    contacted: AtomicBool,
    threshold: u32,
}

impl HealthTracker {
    pub(crate) fn new(threshold: u32) -> Self {
        Self {
            failures: AtomicU32::new(0),
            contacted: AtomicBool::new(false),
            threshold: threshold.max(1),
        }
    }

    pub(crate) fn success(&self) {
        self.contacted.store(true, Ordering::Relaxed);
        if self.failures.load(Ordering::Relaxed) != 0 {
            self.failures.store(0, Ordering::Relaxed);
        }
    }

    pub(crate) fn failure(&self) {
        self.contacted.store(true, Ordering::Relaxed);
        self.failures.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn get(&self) -> Health {
        let failures = self.failures.load(Ordering::Relaxed);
        if !self.contacted.load(Ordering::Relaxed) {
            Health::Unknown
        } else if failures == 0 {
            Health::Healthy
        } else if failures < self.threshold {
            Health::Degraded
        } else {
            Health::Unhealthy
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threshold_marks_unhealthy_and_success_heals() {
        let h = HealthTracker::new(3);
        assert_eq!(h.get(), Health::Unknown);
        h.failure();
        assert_eq!(h.get(), Health::Degraded);
        h.failure();
        h.failure();
        assert_eq!(h.get(), Health::Unhealthy);
        h.success();
        assert_eq!(h.get(), Health::Healthy);
    }
}
