//! Stage one and two of aggregation: ask every backend, in parallel, for everything it offers,
//! following pagination cursors.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::{Value, json};
use vmcp_backend::{Backend, BackendError, Origin};

use crate::admission::Identity;

/// Most pages followed per list, so a backend that hands out endless cursors cannot hang discovery.
const MAX_PAGES: usize = 1000;

/// What one backend offers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BackendCapabilities {
    /// The backend's name.
    pub backend: String,
    /// Tools, as the backend described them.
    pub tools: Vec<Value>,
    /// Resources.
    pub resources: Vec<Value>,
    /// Resource templates.
    pub templates: Vec<Value>,
    /// Prompts.
    pub prompts: Vec<Value>,
    /// Whether it declared the completions capability.
    pub completions: bool,
    /// Whether it supports resource subscriptions.
    pub subscribe: bool,
    /// Whether it declared the logging capability.
    pub logging: bool,
}

/// Queries one backend for all its capabilities, as `caller` (None: the gateway's own view).
pub(crate) async fn query(
    backend: &Arc<Backend>,
    caller: Option<&Identity>,
) -> Result<BackendCapabilities, BackendError> {
    let origin = Origin {
        caller,
        ..Origin::default()
    };
    // Connecting performs initialize; its answer tells us which lists the backend has.
    let info = backend.ready(origin).await?;
    let mut caps = BackendCapabilities {
        backend: backend.id().to_string(),
        ..Default::default()
    };
    if info.has("tools") {
        caps.tools = list_all(backend, origin, "tools/list", "tools").await?;
    }
    if info.has("resources") {
        caps.resources = list_all(backend, origin, "resources/list", "resources").await?;
        caps.templates = list_all(
            backend,
            origin,
            "resources/templates/list",
            "resourceTemplates",
        )
        .await?;
    }
    if info.has("prompts") {
        caps.prompts = list_all(backend, origin, "prompts/list", "prompts").await?;
    }
    caps.completions = info.has("completions");
    caps.subscribe = info
        .capabilities
        .get("resources")
        .and_then(|r| r.get("subscribe"))
        .and_then(Value::as_bool)
        == Some(true);
    caps.logging = info.has("logging");
    Ok(caps)
}

/// Re-lists one kind ("tools", "resources" (with templates) or "prompts") of a backend.
pub(crate) async fn requery(
    backend: &Arc<Backend>,
    caps: &mut BackendCapabilities,
    kind: &str,
) -> Result<(), BackendError> {
    let origin = Origin::default();
    match kind {
        "tools" => caps.tools = list_all(backend, origin, "tools/list", "tools").await?,
        "resources" => {
            caps.resources = list_all(backend, origin, "resources/list", "resources").await?;
            caps.templates = list_all(
                backend,
                origin,
                "resources/templates/list",
                "resourceTemplates",
            )
            .await?;
        }
        "prompts" => caps.prompts = list_all(backend, origin, "prompts/list", "prompts").await?,
        _ => {}
    }
    Ok(())
}

/// Lists every page of `method`, collecting the `field` arrays.
async fn list_all(
    backend: &Backend,
    origin: Origin<'_>,
    method: &str,
    field: &str,
) -> Result<Vec<Value>, BackendError> {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen = HashSet::new();
    for _ in 0..MAX_PAGES {
        let params = cursor.as_ref().map(|c| json!({ "cursor": c }));
        let mut result = backend
            .request(origin, method, params.as_ref(), None)
            .await?;
        match result.get_mut(field).map(Value::take) {
            Some(Value::Array(page)) => items.extend(page),
            Some(Value::Null) | None => {}
            Some(_) => {
                return Err(BackendError::Protocol(format!(
                    "{method}: \"{field}\" is not an array"
                )));
            }
        }
        match result.get("nextCursor").and_then(Value::as_str) {
            Some(next) if seen.insert(next.to_string()) => cursor = Some(next.to_string()),
            Some(_) => {
                return Err(BackendError::Protocol(format!(
                    "{method}: pagination cursor repeats"
                )));
            }
            None => return Ok(items),
        }
    }
    Err(BackendError::Protocol(format!(
        "{method}: more than {MAX_PAGES} pages"
    )))
}
