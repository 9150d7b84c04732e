use serde_json::json;

use super::*;
use crate::catalog::Catalog;
use crate::discover::BackendCapabilities;
use crate::policy::{AggregationPolicy, WorkloadPolicy};

fn caps(backend: &str, tools: &[(&str, Value)]) -> BackendCapabilities {
    BackendCapabilities {
        backend: backend.into(),
        tools: tools
            .iter()
            .map(|(t, ann)| json!({"name": t, "inputSchema": {"type": "object"}, "annotations": ann}))
            .collect(),
        ..Default::default()
    }
}

fn policy(yaml: &str) -> AggregationPolicy {
    let doc =
        format!("backends: [{{name: a, url: 'http://127.0.0.1:1/mcp'}}]\ncompositeTools:\n{yaml}");
    let config = vmcp_config::load_str(&doc, &|_| None).unwrap_or_else(|e| panic!("{e}"));
    let compiled = config
        .composite_tools
        .iter()
        .map(|c| Arc::new(Workflow::compile(c).unwrap()))
        .collect();
    AggregationPolicy {
        composites: Composites(Arc::new(compiled)),
        ..AggregationPolicy::default()
    }
}

fn listed(cat: &Catalog) -> Vec<&str> {
    cat.tools()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect()
}

#[test]
fn a_composite_is_listed_when_its_tools_resolve_by_either_name_hidden_ones_included() {
    let mut p = policy(
        "  - {name: both, description: d, steps: [{id: x, tool: a_read}, {id: y, tool: b.secret}]}\n  - {name: missing, description: d, steps: [{id: x, tool: b.nope}]}\n",
    );
    p.workloads.insert(
        "b".into(),
        WorkloadPolicy {
            exclude_all: true,
            ..Default::default()
        },
    );
    let ro = json!({"readOnlyHint": true, "openWorldHint": false});
    let cat = Catalog::build(
        &p,
        vec![
            caps("a", &[("read", ro.clone())]),
            caps("b", &[("secret", ro)]),
        ],
        vec![],
    )
    .unwrap();
    assert_eq!(
        listed(&cat),
        ["a_read", "both"],
        "sorted with the backend tools"
    );
    assert!(cat.composite("missing").is_none());
    assert_eq!(cat.composite_route("b.secret").unwrap().original, "secret");
    assert_eq!(cat.composite_route("a_read").unwrap().backend, "a");
    // Both step tools are read-only and closed-world: so is the composite.
    let both = cat.advertised_tool("both").unwrap();
    assert_eq!(
        both["annotations"],
        json!({"readOnlyHint": true, "destructiveHint": false, "openWorldHint": false})
    );
}

#[test]
fn a_composite_that_claims_more_safety_than_its_steps_or_shadows_a_tool_is_not_listed() {
    let p = policy(
        "  - {name: liar, description: d, annotations: {readOnlyHint: true}, steps: [{id: x, tool: a.write}]}\n  - {name: a_write, description: d, steps: [{id: x, tool: a.write}]}\n  - {name: honest, description: d, annotations: {title: T}, steps: [{id: x, tool: a.write}]}\n",
    );
    let cat = Catalog::build(&p, vec![caps("a", &[("write", json!({}))])], vec![]).unwrap();
    assert_eq!(listed(&cat), ["a_write", "honest"]);
    assert!(
        cat.composite("a_write").is_none(),
        "the backend tool keeps its name"
    );
    assert_eq!(
        cat.advertised_tool("honest").unwrap()["annotations"],
        json!({"readOnlyHint": false, "destructiveHint": true, "openWorldHint": true, "title": "T"})
    );
}
