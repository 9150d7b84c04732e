//! `operational`: log level, backend timeouts, health checks and failure handling
//! (ToolHive's `OperationalConfig`, with its defaults applied at load).

use std::collections::BTreeMap;
use std::time::Duration;

use yaml_serde::Value;

use crate::error::{Issues, KeyPath};
use crate::reader::{Choice, Fields, as_duration, entries};

/// `operational.logLevel`. ToolHive accepts only `debug`; we also take the other
/// `tracing` levels.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum LogLevel {
    /// `trace`.
    Trace,
    /// `debug`.
    Debug,
    /// `info` (the default).
    #[default]
    Info,
    /// `warn`.
    Warn,
    /// `error`.
    Error,
}

impl Choice for LogLevel {
    const NAMES: &'static [(&'static str, Self)] = &[
        ("trace", Self::Trace),
        ("debug", Self::Debug),
        ("info", Self::Info),
        ("warn", Self::Warn),
        ("error", Self::Error),
    ];
}

impl LogLevel {
    /// The level's name as `tracing` filters spell it.
    pub fn as_str(self) -> &'static str {
        self.name()
    }
}

/// What a request does when some backends are unavailable.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum PartialFailureMode {
    /// Fail the request (`fail`, the default).
    #[default]
    Fail,
    /// Serve what the healthy backends answer (`best_effort`).
    BestEffort,
}

impl Choice for PartialFailureMode {
    const NAMES: &'static [(&'static str, Self)] =
        &[("fail", Self::Fail), ("best_effort", Self::BestEffort)];
}

/// `operational`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OperationalConfig {
    /// `logLevel` (default `info`).
    pub log_level: LogLevel,
    /// `timeouts`.
    pub timeouts: TimeoutConfig,
    /// `failureHandling`.
    pub failure_handling: FailureHandlingConfig,
}

/// `operational.timeouts`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeoutConfig {
    /// `default`: timeout of a backend request (default 30s).
    pub default: Duration,
    /// `perWorkload`: overrides by backend name.
    pub per_workload: BTreeMap<String, Duration>,
}

impl Default for TimeoutConfig {
    fn default() -> Self {
        Self {
            default: Duration::from_secs(30),
            per_workload: BTreeMap::new(),
        }
    }
}

/// `operational.failureHandling`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailureHandlingConfig {
    /// `healthCheckInterval` (default 30s).
    pub health_check_interval: Duration,
    /// `unhealthyThreshold`: consecutive failures before a backend is unhealthy (default 3).
    pub unhealthy_threshold: u32,
    /// `healthCheckTimeout`: bound on one health check (default 10s, or half the
    /// interval when the interval is 10s or less). An explicit `0s` means no timeout,
    /// as in ToolHive; otherwise it must be below the interval.
    pub health_check_timeout: Duration,
    /// `statusReportingInterval` (default 30s; Kubernetes status in ToolHive).
    pub status_reporting_interval: Duration,
    /// `partialFailureMode` (default `fail`).
    pub partial_failure_mode: PartialFailureMode,
    /// `circuitBreaker`.
    pub circuit_breaker: CircuitBreakerConfig,
}

const DEFAULT_HEALTH_CHECK_TIMEOUT: Duration = Duration::from_secs(10);

impl Default for FailureHandlingConfig {
    fn default() -> Self {
        Self {
            health_check_interval: Duration::from_secs(30),
            unhealthy_threshold: 3,
            health_check_timeout: DEFAULT_HEALTH_CHECK_TIMEOUT,
            status_reporting_interval: Duration::from_secs(30),
            partial_failure_mode: PartialFailureMode::Fail,
            circuit_breaker: CircuitBreakerConfig::default(),
        }
    }
}

/// `operational.failureHandling.circuitBreaker`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CircuitBreakerConfig {
    /// `enabled` (default false).
    pub enabled: bool,
    /// `failureThreshold`: failures before the circuit opens (default 5).
    pub failure_threshold: u32,
    /// `timeout`: wait before trying to close the circuit (default 60s).
    pub timeout: Duration,
}

impl Default for CircuitBreakerConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            failure_threshold: 5,
            timeout: Duration::from_secs(60),
        }
    }
}

/// Decodes `operational`.
pub(crate) fn decode_operational(v: &Value, path: &KeyPath, issues: &Issues) -> OperationalConfig {
    let mut f = Fields::open(v, path, issues);
    let timeouts = f
        .value("timeouts")
        .map(|(v, p)| decode_timeouts(v, &p, issues))
        .unwrap_or_default();
    let failure_handling = f
        .value("failureHandling")
        .map(|(v, p)| decode_failure(v, &p, issues))
        .unwrap_or_default();
    let op = OperationalConfig {
        log_level: f.choice("logLevel").unwrap_or_default(),
        timeouts,
        failure_handling,
    };
    f.finish();
    op
}

fn decode_timeouts(v: &Value, path: &KeyPath, issues: &Issues) -> TimeoutConfig {
    let mut f = Fields::open(v, path, issues);
    let d = TimeoutConfig::default();
    let per_workload = match f.value("perWorkload") {
        Some((v, p)) => entries(v, &p, issues)
            .filter_map(|(name, item, ip)| Some((name, as_duration(item, &ip, issues)?)))
            .collect(),
        None => BTreeMap::new(),
    };
    let t = TimeoutConfig {
        default: f.duration("default").unwrap_or(d.default),
        per_workload,
    };
    f.finish();
    t
}

fn decode_failure(v: &Value, path: &KeyPath, issues: &Issues) -> FailureHandlingConfig {
    let mut f = Fields::open(v, path, issues);
    let d = FailureHandlingConfig::default();
    let interval = f
        .duration("healthCheckInterval")
        .unwrap_or(d.health_check_interval);
    let circuit_breaker = f
        .value("circuitBreaker")
        .map(|(v, p)| {
            let mut c = Fields::open(v, &p, issues);
            let d = CircuitBreakerConfig::default();
            let cb = CircuitBreakerConfig {
                enabled: c.bool("enabled").unwrap_or(d.enabled),
                failure_threshold: c.uint("failureThreshold").unwrap_or(d.failure_threshold),
                timeout: c.duration("timeout").unwrap_or(d.timeout),
            };
            c.finish();
            cb
        })
        .unwrap_or_default();
    let fh = FailureHandlingConfig {
        health_check_interval: interval,
        unhealthy_threshold: f
            .uint("unhealthyThreshold")
            .unwrap_or(d.unhealthy_threshold),
        health_check_timeout: f.duration("healthCheckTimeout").unwrap_or(
            if interval > DEFAULT_HEALTH_CHECK_TIMEOUT {
                DEFAULT_HEALTH_CHECK_TIMEOUT
            } else {
                interval / 2
            },
        ),
        status_reporting_interval: f
            .duration("statusReportingInterval")
            .unwrap_or(d.status_reporting_interval),
        partial_failure_mode: f.choice("partialFailureMode").unwrap_or_default(),
        circuit_breaker,
    };
    f.finish();
    fh
}
