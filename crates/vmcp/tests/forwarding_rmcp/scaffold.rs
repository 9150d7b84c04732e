//! Scaffolding of the forwarding tests: shared bounds and helpers; the rmcp backend and the
//! recording rmcp client live in their own modules.

#![allow(dead_code)]

use std::time::Duration;

use rmcp::model::JsonObject;
use serde_json::Value;

/// Upper bound for any single step (an rmcp call, a wait for a notification).
pub(crate) const STEP: Duration = Duration::from_secs(20);
/// How long to keep listening after the expected messages arrived, to catch unexpected extras.
pub(crate) const GRACE: Duration = Duration::from_millis(500);

pub(crate) async fn step<T>(what: &str, fut: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(STEP, fut)
        .await
        .unwrap_or_else(|_| panic!("{what}: nothing within {STEP:?}"))
}

pub(crate) fn obj(v: Value) -> JsonObject {
    match v {
        Value::Object(m) => m,
        other => panic!("expected a JSON object, got {other}"),
    }
}

pub(crate) fn from<T: rmcp::serde::de::DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("cannot decode {v}: {e}"))
}

pub(crate) use crate::backend::*;
pub(crate) use crate::recorder::*;
