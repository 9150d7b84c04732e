//! Rules for `operational`, after ToolHive's validator: positive timeouts and
//! intervals, a health-check timeout below its interval, circuit-breaker bounds;
//! plus ours: `perWorkload` names must be configured backends.

use std::time::Duration;

use super::{backend_names, check_backend_ref};
use crate::duration::format_duration;
use crate::error::{Issues, KeyPath};
use crate::schema::Config;

pub(super) fn check(config: &Config, issues: &Issues) {
    let op = &config.operational;
    let path = KeyPath::root().key("operational");
    let tpath = path.key("timeouts");
    positive(op.timeouts.default, &tpath.key("default"), issues);
    let names = backend_names(config);
    for (name, d) in &op.timeouts.per_workload {
        let p = tpath.key("perWorkload").key(name);
        positive(*d, &p, issues);
        check_backend_ref(names.as_ref(), name, &p, issues);
    }

    let fh = &op.failure_handling;
    let fpath = path.key("failureHandling");
    positive(
        fh.health_check_interval,
        &fpath.key("healthCheckInterval"),
        issues,
    );
    positive(
        fh.status_reporting_interval,
        &fpath.key("statusReportingInterval"),
        issues,
    );
    if fh.unhealthy_threshold == 0 {
        issues.push_new(&fpath.key("unhealthyThreshold"), "must be positive");
    }
    if !fh.health_check_timeout.is_zero() && fh.health_check_timeout >= fh.health_check_interval {
        issues.push_new(
            &fpath.key("healthCheckTimeout"),
            format!(
                "({}) must be less than healthCheckInterval ({}) so checks do not queue up",
                format_duration(fh.health_check_timeout),
                format_duration(fh.health_check_interval)
            ),
        );
    }
    let cb = &fh.circuit_breaker;
    let cpath = fpath.key("circuitBreaker");
    if cb.enabled {
        if cb.failure_threshold < 1 {
            issues.push_new(&cpath.key("failureThreshold"), "must be at least 1");
        }
        if cb.timeout < Duration::from_secs(1) {
            issues.push_new(
                &cpath.key("timeout"),
                format!(
                    "({}) must be at least 1s to prevent thrashing",
                    format_duration(cb.timeout)
                ),
            );
        }
    }
}

fn positive(d: Duration, path: &KeyPath, issues: &Issues) {
    if d.is_zero() {
        issues.push_new(path, "must be positive");
    }
}
