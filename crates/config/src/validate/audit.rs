//! Rules for `audit`: known event type names (ToolHive refuses unknown ones at startup), a
//! positive delegation depth, and a bounded wait for the audit queue.

use std::time::Duration;

use crate::error::{Issues, KeyPath};
use crate::reader::suggest;
use crate::schema::{AUDIT_EVENT_TYPES, AuditConfig};

pub(super) fn check(a: &AuditConfig, path: &KeyPath, issues: &Issues) {
    for (key, names) in [
        ("eventTypes", &a.event_types),
        ("excludeEventTypes", &a.exclude_event_types),
    ] {
        for (i, name) in names.iter().enumerate() {
            if AUDIT_EVENT_TYPES.contains(&name.as_str()) {
                continue;
            }
            let mut message = format!("unknown event type {name:?}");
            if let Some(s) = suggest(name, AUDIT_EVENT_TYPES) {
                message.push_str(&format!(" (did you mean {s:?}?)"));
            }
            issues.push_new(&path.key(key).index(i), message);
        }
    }
    if a.max_delegation_depth == 0 {
        issues.push_new(&path.key("maxDelegationDepth"), "must be at least 1");
    }
    if a.write_timeout == Duration::ZERO || a.write_timeout > Duration::from_secs(60) {
        issues.push_new(
            &path.key("writeTimeout"),
            "must be between 1ns and 60s: it bounds how long a request waits for the audit log",
        );
    }
}
