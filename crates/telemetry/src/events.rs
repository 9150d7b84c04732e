//! Recording functions for events other crates observe: health transitions, rate-limit decisions,
//! cache lookups, sizes, sessions, composite workflows, optimizer calls. Each is a no-op until
//! [`crate::install`].

use std::time::Duration;

use opentelemetry::KeyValue;

use crate::global;

fn metrics() -> Option<&'static crate::instruments::Instruments> {
    global()?.metrics.as_ref()
}

/// A backend's health state changed from `from` to `to` (`healthy`, `degraded`, `unhealthy`,
/// `unauthenticated`, `unknown`).
pub fn health_transition(backend: &str, from: &str, to: &str) {
    if let Some(m) = metrics() {
        m.health_transitions.add(
            1,
            &[
                KeyValue::new("backend", backend.to_owned()),
                KeyValue::new("from", from.to_owned()),
                KeyValue::new("to", to.to_owned()),
            ],
        );
    }
}

/// One rate-limit check: `allowed`, and the kind of bucket that decided (`shared`, `per_user`,
/// `tool_shared`, `tool_per_user`; for an allowed call, the narrowest bucket checked).
pub fn rate_limit_decision(allowed: bool, bucket: &'static str) {
    if let Some(m) = metrics() {
        m.rate_limit_decisions.add(
            1,
            &[
                KeyValue::new("decision", if allowed { "allowed" } else { "rejected" }),
                KeyValue::new("bucket", bucket),
            ],
        );
    }
}

/// A rate-limit check the bucket store could not answer; `let_through` when it failed open.
pub fn rate_limit_store_error(let_through: bool) {
    if let Some(m) = metrics() {
        m.rate_limit_store_errors.add(1, &[]);
        if let_through {
            m.rate_limit_fail_open.add(1, &[]);
        }
    }
}

/// One lookup in a named cache (`capabilities`, `token_exchange`, `embeddings`, ...).
pub fn cache_lookup(cache: &'static str, hit: bool) {
    if let Some(m) = metrics() {
        m.cache_lookups.add(
            1,
            &[
                KeyValue::new("cache", cache),
                KeyValue::new("result", if hit { "hit" } else { "miss" }),
            ],
        );
    }
}

/// The aggregated catalog now holds `n` capabilities of `kind` (`tools`, `resources`,
/// `resource_templates`, `prompts`).
pub fn catalog_size(kind: &'static str, n: u64) {
    if let Some(m) = metrics() {
        m.catalog_size.record(n, &[KeyValue::new("kind", kind)]);
    }
}

/// A definition that differs from its pin was seen (`vmcp_pin_findings_total{kind,reason,
/// withheld}`), counted once per distinct definition.
pub fn pin_finding(kind: &'static str, reason: &'static str, withheld: bool) {
    if let Some(m) = metrics() {
        m.pin_findings.add(
            1,
            &[
                KeyValue::new("kind", kind),
                KeyValue::new("reason", reason),
                KeyValue::new("withheld", withheld),
            ],
        );
    }
}

/// `n` definitions await approval (`vmcp_pins_pending`).
pub fn pins_pending(n: u64) {
    if let Some(m) = metrics() {
        m.pins_pending.record(n, &[]);
    }
}

/// `n` backends are configured (ToolHive's `toolhive_vmcp_backends_discovered`).
pub fn backends_discovered(n: u64) {
    if let Some(m) = metrics() {
        m.backends_discovered.record(n, &[]);
    }
}

fn session_delta(delta: i64) {
    if let Some(g) = global()
        && let Some(m) = &g.metrics
    {
        m.active_connections.add(
            delta,
            &[
                KeyValue::new("server", g.server_name.clone()),
                KeyValue::new("transport", "streamable-http"),
            ],
        );
    }
}

/// A client session started (`toolhive_mcp_active_connections` up).
pub fn session_opened() {
    session_delta(1);
}

/// A client session ended (`toolhive_mcp_active_connections` down).
pub fn session_closed() {
    session_delta(-1);
}

/// A composite tool's workflow `name` ran for `took`, successfully or not.
pub fn workflow_finished(name: &str, took: Duration, ok: bool) {
    if let Some(m) = metrics() {
        let attrs = [KeyValue::new("workflow.name", name.to_owned())];
        m.workflow_executions.add(1, &attrs);
        m.workflow_duration.record(took.as_secs_f64(), &attrs);
        if !ok {
            m.workflow_errors.add(1, &attrs);
        }
    }
}

/// The optimizer's `find_tool` ran for `took`: `Ok((tools returned, token savings in percent))`,
/// or failed.
pub fn find_tool_finished(took: Duration, result: Result<(u64, f64), ()>) {
    if let Some(m) = metrics() {
        m.find_tool_requests.add(1, &[]);
        m.find_tool_duration.record(took.as_secs_f64(), &[]);
        match result {
            Ok((found, savings)) => {
                m.find_tool_results.record(found, &[]);
                m.token_savings.record(savings, &[]);
            }
            Err(()) => m.find_tool_errors.add(1, &[]),
        }
    }
}

/// The optimizer's `call_tool` of `tool` ran for `took`: `Ok(is_error)` with the result's
/// `isError` (counted as `_not_found`, as ToolHive does), or failed.
pub fn optimizer_call_tool_finished(tool: &str, took: Duration, result: Result<bool, ()>) {
    if let Some(m) = metrics() {
        let attrs = [KeyValue::new("tool_name", tool.to_owned())];
        m.call_tool_requests.add(1, &attrs);
        m.call_tool_duration.record(took.as_secs_f64(), &attrs);
        match result {
            Ok(true) => m.call_tool_not_found.add(1, &attrs),
            Ok(false) => {}
            Err(()) => m.call_tool_errors.add(1, &attrs),
        }
    }
}
