//! A backend's health: one state machine fed by active checks and by every request's outcome
//! (passive), with ToolHive's states and an optional circuit breaker.
//!
//! - A success resets the consecutive failures. After failures it reads `degraded` for that round
//!   (recovering); an active check slower than [`DEGRADED_LATENCY`] reads `degraded` too.
//! - A failure below `unhealthyThreshold` turns `healthy` into `degraded`; at the threshold the
//!   backend is `unhealthy` (or `unauthenticated` when the backend refused the credential).
//! - The circuit (when enabled) opens after `failureThreshold` consecutive failures: requests then
//!   fail at once instead of waiting for a timeout, and after `timeout` one request (a client's or
//!   the next check) probes the backend; its success closes the circuit, its failure reopens it.
//!
//! A backend is *advertised* (its capabilities are in the catalog) unless it is unhealthy,
//! unauthenticated or its circuit is not closed. A change of that is what the gateway acts on.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use serde::Serialize;

use crate::error::BackendError;

/// An active check answered slower than this reads `degraded` (ToolHive's fixed threshold).
pub(crate) const DEGRADED_LATENCY: Duration = Duration::from_secs(5);

/// Longest last-error text kept (a backend's error can be arbitrarily long).
const MAX_ERROR_LEN: usize = 300;

/// A backend's health, with ToolHive's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Health {
    /// Not contacted yet.
    Unknown,
    /// Answering.
    Healthy,
    /// Answering slowly, failing below the threshold, or recovering from failures.
    Degraded,
    /// At least the threshold of consecutive failures.
    Unhealthy,
    /// At least the threshold of consecutive failures, the last one a refused credential.
    Unauthenticated,
}

impl Health {
    /// Whether a backend in this state has its capabilities advertised (ToolHive withdraws
    /// unhealthy and unauthenticated ones; an unknown backend is discovered, which decides).
    pub fn is_advertised(self) -> bool {
        !matches!(self, Health::Unhealthy | Health::Unauthenticated)
    }

    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Health::Unknown => "unknown",
            Health::Healthy => "healthy",
            Health::Degraded => "degraded",
            Health::Unhealthy => "unhealthy",
            Health::Unauthenticated => "unauthenticated",
        }
    }
}

/// The circuit breaker's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Circuit {
    /// Requests flow.
    Closed,
    /// Requests fail at once until the timeout passes.
    Open,
    /// One probe request is in flight.
    HalfOpen,
}

/// When to call a backend unhealthy and when to stop calling it.
#[derive(Debug, Clone, Copy)]
pub struct HealthPolicy {
    /// Consecutive failures that make the backend unhealthy.
    pub unhealthy_threshold: u32,
    /// The circuit breaker, if enabled: (consecutive failures that open it, how long it stays open).
    pub circuit: Option<(u32, Duration)>,
}

impl Default for HealthPolicy {
    fn default() -> Self {
        Self {
            unhealthy_threshold: 3,
            circuit: None,
        }
    }
}

/// A snapshot of the state machine, for `/status`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HealthReport {
    /// The state.
    pub health: Health,
    /// Failures since the last success.
    pub consecutive_failures: u32,
    /// The last failure's description, if any since the last success.
    pub last_error: Option<String>,
    /// When the backend was last checked or called (RFC 3339).
    pub last_check: Option<String>,
    /// When `health` last changed (RFC 3339).
    pub last_transition: Option<String>,
    /// The circuit's state, when the breaker is enabled.
    pub circuit_state: Option<Circuit>,
}

/// A change of state, for logs and metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transition {
    /// The state before.
    pub from: Health,
    /// The state after.
    pub to: Health,
    /// Whether the backend's advertising changed (it was withdrawn or came back).
    pub advertising_changed: bool,
}

#[derive(Debug)]
struct State {
    health: Health,
    failures: u32,
    last_error: Option<String>,
    last_check: Option<SystemTime>,
    last_transition: Option<SystemTime>,
    circuit: Circuit,
    /// When the circuit last opened, or when the half-open probe started.
    circuit_since: Instant,
}

impl State {
    fn advertised(&self) -> bool {
        self.health.is_advertised() && self.circuit == Circuit::Closed
    }
}

/// The state machine of one backend.
#[derive(Debug)]
pub(crate) struct HealthTracker {
    state: Mutex<State>,
    /// Set while healthy with no failures and a closed circuit: the common success needs no lock.
    steady: AtomicBool,
    policy: HealthPolicy,
}

/// How an outcome is classified.
pub(crate) enum Outcome<'e> {
    /// An answer, and how long it took when that is meaningful (active checks only: a call's
    /// duration is the tool's work, not the backend's health).
    Success(Option<Duration>),
    /// No usable answer.
    Failure(&'e BackendError),
}

impl HealthTracker {
    pub(crate) fn new(policy: HealthPolicy) -> Self {
        let policy = HealthPolicy {
            unhealthy_threshold: policy.unhealthy_threshold.max(1),
            circuit: policy.circuit.map(|(n, t)| (n.max(1), t)),
        };
        Self {
            state: Mutex::new(State {
                health: Health::Unknown,
                failures: 0,
                last_error: None,
                last_check: None,
                last_transition: None,
                circuit: Circuit::Closed,
                circuit_since: Instant::now(),
            }),
            steady: AtomicBool::new(false),
            policy,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether a request may go out now. With the circuit open it may not, until the timeout has
    /// passed: then this request becomes the probe (half-open). A probe that never reports (its
    /// caller gave up) is replaced after another timeout.
    pub(crate) fn admit(&self) -> Result<(), BackendError> {
        if self.steady.load(Ordering::Relaxed) {
            return Ok(());
        }
        let Some((threshold, timeout)) = self.policy.circuit else {
            return Ok(());
        };
        let mut s = self.lock();
        match s.circuit {
            Circuit::Closed => Ok(()),
            Circuit::Open | Circuit::HalfOpen if s.circuit_since.elapsed() >= timeout => {
                s.circuit = Circuit::HalfOpen;
                s.circuit_since = Instant::now();
                Ok(())
            }
            _ => Err(BackendError::Unavailable(format!(
                "circuit open after {threshold} consecutive failures; the next probe is in {}s",
                timeout
                    .saturating_sub(s.circuit_since.elapsed())
                    .as_secs()
                    .max(1)
            ))),
        }
    }

    /// Records an outcome; returns the transition it caused, if any.
    pub(crate) fn record(&self, outcome: Outcome<'_>) -> Option<Transition> {
        if matches!(outcome, Outcome::Success(None)) && self.steady.load(Ordering::Relaxed) {
            return None;
        }
        let mut s = self.lock();
        let (from, was_advertised) = (s.health, s.advertised());
        s.last_check = Some(SystemTime::now());
        match outcome {
            Outcome::Success(latency) => {
                let slow = latency.is_some_and(|l| l > DEGRADED_LATENCY);
                s.health = if s.failures > 0 || slow {
                    Health::Degraded
                } else {
                    Health::Healthy
                };
                s.failures = 0;
                s.last_error = None;
                s.circuit = Circuit::Closed;
            }
            Outcome::Failure(error) => {
                s.failures = s.failures.saturating_add(1);
                s.last_error = Some(truncate(error.to_string()));
                if s.failures >= self.policy.unhealthy_threshold {
                    s.health = if matches!(error, BackendError::Auth(_)) {
                        Health::Unauthenticated
                    } else {
                        Health::Unhealthy
                    };
                } else if s.health == Health::Healthy {
                    s.health = Health::Degraded;
                }
                if let Some((threshold, _)) = self.policy.circuit
                    && (s.failures >= threshold || s.circuit == Circuit::HalfOpen)
                    && s.circuit != Circuit::Open
                {
                    s.circuit = Circuit::Open;
                    s.circuit_since = Instant::now();
                }
            }
        }
        self.steady.store(
            s.health == Health::Healthy && s.failures == 0,
            Ordering::Relaxed,
        );
        let advertising_changed = was_advertised != s.advertised();
        if from != s.health {
            s.last_transition = s.last_check;
        }
        (from != s.health || advertising_changed).then_some(Transition {
            from,
            to: s.health,
            advertising_changed,
        })
    }

    pub(crate) fn get(&self) -> Health {
        self.lock().health
    }

    /// Whether the backend's capabilities belong in the catalog now.
    pub(crate) fn advertised(&self) -> bool {
        self.steady.load(Ordering::Relaxed) || self.lock().advertised()
    }

    pub(crate) fn report(&self) -> HealthReport {
        let s = self.lock();
        HealthReport {
            health: s.health,
            consecutive_failures: s.failures,
            last_error: s.last_error.clone(),
            last_check: s.last_check.map(vmcp_proto::time::rfc3339),
            last_transition: s.last_transition.map(vmcp_proto::time::rfc3339),
            circuit_state: self.policy.circuit.map(|_| s.circuit),
        }
    }
}

fn truncate(mut s: String) -> String {
    if s.len() > MAX_ERROR_LEN {
        s.truncate(s.floor_char_boundary(MAX_ERROR_LEN));
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests;
