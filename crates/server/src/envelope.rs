//! The Modern (2026-07-28) result envelope: `resultType`, the gateway's own `serverInfo` stamped
//! last in `_meta` (after every reserved key a backend or client sent is stripped), and the
//! `ttlMs`/`cacheScope` cache hints on cacheable results.

use serde_json::{Map, Value, json};
use vmcp_proto::{era::META_SERVER_INFO, meta::strip_reserved};

/// Results that carry cache hints.
fn cacheable(method: &str) -> bool {
    matches!(
        method,
        "server/discover"
            | "tools/list"
            | "resources/list"
            | "resources/templates/list"
            | "prompts/list"
            | "resources/read"
    )
}

/// Wraps a result for a Modern client. A backend's own `resultType` (e.g. `input_required` from a
/// Modern backend) is kept; a result without one is `complete`.
pub(crate) fn stamp(method: &str, mut result: Value, server_name: &str) -> Value {
    if !result.is_object() {
        result = json!({});
    }
    strip_reserved(&mut result);
    let Some(obj) = result.as_object_mut() else {
        return result;
    };
    let kind = obj
        .entry("resultType")
        .or_insert_with(|| Value::from("complete"))
        .clone();
    // Responses are per identity (admission-filtered): never cacheable by shared intermediaries.
    if cacheable(method) && kind == "complete" {
        obj.insert("ttlMs".into(), json!(0));
        obj.insert("cacheScope".into(), json!("private"));
    }
    let meta = obj
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    if let Some(meta) = meta.as_object_mut() {
        meta.insert(
            META_SERVER_INFO.into(),
            json!({"name": "vmcp", "title": server_name, "version": env!("CARGO_PKG_VERSION")}),
        );
    }
    result
}

#[cfg(test)]
mod tests;
