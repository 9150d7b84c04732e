//! Composite tools in the gateway: which ones a catalog advertises (every step's tool must
//! resolve, the annotations must not claim more safety than the steps have, the name must
//! not shadow a backend tool), and the runner that executes their steps as the caller.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Value, json};
use vmcp_workflow::{Event, Runner, Workflow, derive_annotations};

use crate::catalog::Route;
use crate::gateway::{Caller, Gateway};

/// The configured composite tools (compared by identity: they are compiled once).
#[derive(Clone, Default)]
pub struct Composites(pub Arc<Vec<Arc<Workflow>>>);

impl std::fmt::Debug for Composites {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|w| w.name()))
            .finish()
    }
}

impl PartialEq for Composites {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Sees every workflow and step event of composite-tool runs, with the caller (the audit trail).
pub trait WorkflowObserver: Send + Sync {
    /// One event of a run made by `identity`.
    fn observe(&self, identity: &crate::Identity, event: &Event<'_>);
}

/// What a catalog knows to run its composites: each advertised composite, and where each
/// tool reference of their steps goes.
#[derive(Debug, Default)]
pub(crate) struct CompositeIndex {
    pub(crate) workflows: HashMap<String, Arc<Workflow>>,
    /// Step tool reference (advertised name or `backend.tool`) → routed tool name.
    pub(crate) refs: HashMap<String, String>,
    /// Definitions of the tools steps call (hidden ones included), by routed name.
    pub(crate) defs: HashMap<String, Value>,
}

/// A resolved tool of the catalog, as composites see it.
pub(crate) struct RoutedTool<'a> {
    pub(crate) name: &'a str,
    pub(crate) route: &'a Route,
    pub(crate) definition: &'a Value,
}

/// Decides which composites a catalog advertises; returns their definitions and the index.
pub(crate) fn advertise<'a>(
    composites: &Composites,
    tools: impl Iterator<Item = RoutedTool<'a>>,
    advertised: &dyn Fn(&str) -> bool,
) -> (Vec<Value>, CompositeIndex) {
    let mut index = CompositeIndex::default();
    if composites.0.is_empty() {
        return (Vec::new(), index);
    }
    let mut by_name: HashMap<&str, &RoutedTool<'a>> = HashMap::new();
    let mut by_origin: HashMap<String, &RoutedTool<'a>> = HashMap::new();
    let tools: Vec<RoutedTool<'a>> = tools.collect();
    for t in &tools {
        by_name.insert(t.name, t);
        by_origin.insert(format!("{}.{}", t.route.backend, t.route.original), t);
    }
    let mut defs = Vec::new();
    'next: for wf in composites.0.iter() {
        if advertised(wf.name()) {
            tracing::error!(
                composite = wf.name(),
                "a backend tool has the composite tool's name; the composite is not advertised (rename one of them)"
            );
            continue;
        }
        let mut step_tools = Vec::new();
        let mut refs = Vec::new();
        for r in wf.tool_references() {
            // The exact routed name first, else `<backend>.<backend's own tool name>`.
            let Some(t) = by_name.get(r).or_else(|| by_origin.get(r)) else {
                tracing::warn!(
                    composite = wf.name(),
                    tool = r,
                    "a step's tool is not served by any backend now; the composite is not advertised until it is"
                );
                continue 'next;
            };
            step_tools.push(Some(t.definition));
            refs.push((r.to_owned(), t));
        }
        let annotations = match derive_annotations(&step_tools, wf.explicit_annotations()) {
            Ok(a) => a,
            Err(why) => {
                tracing::warn!(composite = wf.name(), "composite tool dropped: {why}");
                continue;
            }
        };
        let mut def = wf.definition();
        if let Some(a) = annotations {
            def.insert("annotations".into(), Value::Object(a));
        }
        defs.push(Value::Object(def));
        for (r, t) in refs {
            index.defs.insert(t.name.to_owned(), t.definition.clone());
            index.refs.insert(r, t.name.to_owned());
        }
        index.workflows.insert(wf.name().to_owned(), wf.clone());
    }
    (defs, index)
}

/// Runs a composite's steps for one caller: each step calls its backend as the caller
/// (identity, credentials, session), elicitations go to the caller's client, and progress
/// goes to the caller when it asked for it.
pub(crate) struct GatewayRunner<'a> {
    pub(crate) gateway: &'a Gateway,
    pub(crate) caller: Caller<'a>,
    pub(crate) catalog: &'a crate::Catalog,
    pub(crate) progress_token: Option<Value>,
}

impl Runner for GatewayRunner<'_> {
    async fn call_tool(&self, tool: &str, arguments: Value) -> Result<Value, String> {
        // After the client cancelled, no step reaches a backend (running ones are cancelled
        // upstream by the backend layer, which watches the same sink).
        if self.caller.sink.is_some_and(|s| s.is_cancelled()) {
            return Err("cancelled by the client".into());
        }
        let Some(route) = self.catalog.composite_route(tool) else {
            return Err(format!("tool {tool:?} is no longer served"));
        };
        let params = json!({"name": route.original, "arguments": arguments});
        self.gateway
            .forward(&route.backend, &self.caller, "tools/call", params)
            .await
            .map_err(|e| e.to_string())
    }

    fn input_schema(&self, tool: &str) -> Option<&Value> {
        self.catalog
            .composite_definition(tool)
            .and_then(|d| d.get("inputSchema"))
    }

    async fn elicit(&self, message: String, schema: Value) -> Result<Value, String> {
        let Some(sink) = self.caller.sink else {
            return Err("the client cannot be asked: no session".into());
        };
        let ask = sink.request(
            "elicitation/create".into(),
            Some(json!({"message": message, "requestedSchema": schema})),
        );
        tokio::select! {
            answer = ask => answer.map_err(|e| e.message),
            () = sink.cancelled() => Err("cancelled by the client".into()),
        }
    }

    fn cancelled(&self) -> bool {
        self.caller.sink.is_some_and(|s| s.is_cancelled())
    }

    fn observe(&self, event: Event<'_>) {
        if let Some(o) = &self.gateway.opts().workflow_observer {
            o.observe(self.caller.identity, &event);
        }
        let (Some(token), Some(sink)) = (&self.progress_token, self.caller.sink) else {
            return;
        };
        if let Event::StepEnded {
            step,
            status,
            done,
            total,
            ..
        } = event
        {
            sink.notify(
                "notifications/progress".into(),
                Some(json!({
                    "progressToken": token,
                    "progress": done,
                    "total": total,
                    "message": format!("step {step} {status}"),
                })),
            );
        }
    }
}

/// Why this caller cannot run `wf`, if it cannot: a workflow that asks the user needs a
/// client that declared the elicitation capability.
pub(crate) fn cannot_run(wf: &Workflow, caller: &Caller<'_>) -> Option<String> {
    let step = wf.elicitation_step()?;
    let declared = caller
        .sink
        .is_some_and(|s| s.client().capabilities.get("elicitation").is_some());
    (!declared).then(|| {
        format!(
            "step {step:?} asks the user, and the client did not declare the elicitation capability"
        )
    })
}

/// Whether the caller is asked between requests (a 2026-07-28 client: `input_required` and a
/// retry), rather than while the call runs (a 2025-11-25 session).
pub(crate) fn asks_in_rounds(wf: &Workflow, caller: &Caller<'_>) -> bool {
    wf.elicitation_step().is_some() && !caller.sink.is_some_and(|s| s.client().relays_requests())
}

#[cfg(test)]
mod tests;
