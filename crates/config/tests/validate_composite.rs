//! `compositeTools[]`: strict decoding and ToolHive's load-time rules, each problem at its
//! path, plus the limits and the bad input of the composite-tools issue.

#![allow(clippy::unwrap_used)] // Test helpers: a panic is the failure report.

mod common;

use common::{ONE_STDIO, error_at, errors, ok};
use vmcp_config::{ElicitAction, ErrorAction, OutputType, StepKind};

fn doc(tools: &str) -> String {
    format!("{ONE_STDIO}compositeTools:\n{tools}")
}

#[test]
fn a_full_workflow_decodes_with_defaults() {
    let c = ok(&doc(r#"
  - name: deploy_and_notify
    description: Deploy and notify
    parameters:
      type: object
      properties:
        pr: {type: integer}
        env: {type: string, default: staging}
      required: [pr]
    annotations: {title: Deploy}
    output:
      properties:
        url: {type: string, description: u, value: "{{.steps.merge.output.url}}"}
        meta:
          type: object
          description: m
          properties:
            env: {type: string, description: e, value: "{{.params.env}}"}
      required: [url]
    steps:
      - id: merge
        tool: github.merge_pr
        arguments: {pr: "{{.params.pr}}", nested: {deep: ["{{.params.env}}", 3]}}
        onError: {action: retry, retryCount: 2, retryDelay: 2s}
      - id: confirm
        type: elicitation
        message: "Merged {{.params.pr}}. Deploy?"
        schema: {type: object, properties: {ok: {type: boolean}}}
        onDecline: {action: skip_remaining}
        onCancel: {action: abort}
        dependsOn: [merge]
      - id: each
        type: forEach
        collection: "{{json .steps.merge.output.files}}"
        itemVar: f
        maxParallel: 5
        maxIterations: 200
        onError: {action: continue}
        step:
          type: tool
          tool: linter.check
          arguments: {path: "{{.forEach.f.path}}", n: "{{.forEach.index}}"}
        dependsOn: [confirm]
"#));
    let t = &c.composite_tools[0];
    assert_eq!(t.timeout, vmcp_config::DEFAULT_WORKFLOW_TIMEOUT);
    assert_eq!(
        t.annotations.as_ref().unwrap().title.as_deref(),
        Some("Deploy")
    );
    let out = t.output.as_ref().unwrap();
    assert_eq!(out.properties[1].1.kind, Some(OutputType::Object));
    assert_eq!(out.properties[1].1.properties[0].0, "env");
    let [merge, confirm, each] = t.steps.as_slice() else {
        panic!("three steps")
    };
    assert_eq!(merge.kind, Some(StepKind::Tool), "inferred from `tool`");
    assert_eq!(merge.on_error.action, ErrorAction::Retry);
    assert_eq!(merge.on_error.retry_count, 2);
    assert_eq!(confirm.on_decline, Some(ElicitAction::SkipRemaining));
    assert_eq!(confirm.on_cancel, Some(ElicitAction::Abort));
    assert_eq!(each.kind, Some(StepKind::ForEach));
    assert_eq!(
        each.step.as_ref().unwrap().tool.as_deref(),
        Some("linter.check")
    );
    assert!(c.unsupported().is_empty(), "{:?}", c.unsupported());
}

#[test]
fn toolhive_keys_that_its_strict_loader_rejects_are_rejected() {
    let yaml = doc(r#"
  - name: x
    description: d
    failureMode: abort
    steps:
      - {id: a, tool: b.t, onError: {action: retry, maxRetries: 3}}
"#);
    error_at(&yaml, "compositeTools[0].failureMode", "unknown key");
    error_at(
        &yaml,
        "compositeTools[0].steps[0].onError.maxRetries",
        "unknown key",
    );
}

#[test]
fn structure_errors_name_their_paths() {
    let yaml = doc(r#"
  - name: x
    steps:
      - {id: a, type: teleport}
      - {id: b, tool: b.t, message: hi}
      - {id: c, message: hi}
      - {id: d}
      - {id: e, type: forEach, step: {tool: b.t}}
      - {id: f, type: forEach, collection: "{{.params.x}}"}
      - {id: g, type: elicitation, message: m}
      - {id: h, type: tool}
      - {id: i, tool: "bad tool!"}
      - {id: j, tool: b.t, timeout: 0s}
      - {id: k, tool: b.t, onError: {action: retry}}
      - {id: l, type: forEach, collection: "[]", itemVar: index, maxParallel: 51, maxIterations: 1001, step: {type: tool, tool: b.t}}
      - {id: m, type: forEach, collection: "[]", step: {type: forEach, collection: "[]", step: {tool: b.t}}}
      - {id: n, type: elicitation, message: m, schema: {}, onDecline: {}}
      - {id: a, tool: b.t}
"#);
    let p = "compositeTools[0]";
    error_at(&yaml, &format!("{p}.description"), "is required");
    error_at(&yaml, &format!("{p}.steps[0].type"), "must be one of");
    error_at(&yaml, &format!("{p}.steps[1].type"), "ambiguous");
    error_at(&yaml, &format!("{p}.steps[2].type"), "type: elicitation");
    error_at(&yaml, &format!("{p}.steps[3].type"), "is required");
    error_at(&yaml, &format!("{p}.steps[4].collection"), "is required");
    error_at(&yaml, &format!("{p}.steps[5].step"), "is required");
    error_at(&yaml, &format!("{p}.steps[6].schema"), "is required");
    error_at(&yaml, &format!("{p}.steps[7].tool"), "is required");
    error_at(&yaml, &format!("{p}.steps[8].tool"), "valid tool name");
    error_at(&yaml, &format!("{p}.steps[9].timeout"), "greater than zero");
    error_at(
        &yaml,
        &format!("{p}.steps[10].onError.retryCount"),
        "at least 1",
    );
    error_at(
        &yaml,
        &format!("{p}.steps[11].itemVar"),
        "other than \"index\"",
    );
    error_at(&yaml, &format!("{p}.steps[11].maxParallel"), "at most 50");
    error_at(
        &yaml,
        &format!("{p}.steps[11].maxIterations"),
        "at most 1000",
    );
    error_at(
        &yaml,
        &format!("{p}.steps[12].step.type"),
        "tool steps only",
    );
    error_at(&yaml, &format!("{p}.steps[13].schema"), "non-empty");
    error_at(
        &yaml,
        &format!("{p}.steps[13].onDecline.action"),
        "is required",
    );
    error_at(&yaml, &format!("{p}.steps[14].id"), "duplicate step id");
}

#[test]
fn cycles_are_named_and_unknown_dependencies_reported() {
    let yaml = doc(r#"
  - name: x
    description: d
    steps:
      - {id: a, tool: b.t, dependsOn: [b]}
      - {id: b, tool: b.t, dependsOn: [a]}
      - {id: c, tool: b.t, dependsOn: [nope]}
"#);
    let e = error_at(
        &yaml,
        "compositeTools[0].steps[0].dependsOn",
        "dependency cycle detected",
    );
    assert!(e.message.contains("a -> b -> a"), "{e}");
    error_at(
        &yaml,
        "compositeTools[0].steps[2].dependsOn[0]",
        "unknown step \"nope\"",
    );
    let yaml = doc(
        "  - name: x\n    description: d\n    steps: [{id: self, tool: b.t, dependsOn: [self]}]\n",
    );
    let e = error_at(&yaml, "compositeTools[0].steps[0].dependsOn", "cycle");
    assert!(e.message.contains("self -> self"), "{e}");
}

#[test]
fn templates_must_parse_and_read_existing_steps() {
    let yaml = doc(r#"
  - name: x
    description: d
    steps:
      - {id: a, tool: b.t, arguments: {x: "{{.params.x", y: {deep: "{{nosuchfunc 1}}"}}}
      - {id: b, tool: b.t, condition: "{{.steps.ghost.status}}"}
      - {id: c, type: elicitation, message: "{{if}}", schema: {type: object}}
"#);
    let p = "compositeTools[0].steps";
    let e = error_at(
        &yaml,
        &format!("{p}[0].arguments.x"),
        "template does not parse",
    );
    assert!(e.line.is_some());
    error_at(
        &yaml,
        &format!("{p}[0].arguments.y.deep"),
        "template does not parse",
    );
    error_at(&yaml, &format!("{p}[1].condition"), "reads .steps.ghost");
    error_at(&yaml, &format!("{p}[2].message"), "template does not parse");
}

#[test]
fn a_step_that_may_be_skipped_needs_defaults_for_the_fields_others_read() {
    let yaml = doc(r#"
  - name: x
    description: d
    steps:
      - {id: maybe, tool: b.t, condition: "{{.params.go}}"}
      - {id: flaky, tool: b.t, onError: {action: continue}, defaultResults: {ok: false}}
      - id: user
        tool: b.t
        dependsOn: [maybe, flaky]
        arguments: {a: "{{.steps.maybe.output.url}}", b: "{{.steps.maybe.status}}", c: "{{.steps.flaky.output.ok}}", d: "{{.steps.flaky.output.why}}"}
"#);
    let e = error_at(
        &yaml,
        "compositeTools[0].steps[0].defaultResults",
        "defaultResults[url] is required",
    );
    assert!(e.message.contains("has a condition"), "{e}");
    let e = error_at(
        &yaml,
        "compositeTools[0].steps[1].defaultResults",
        "defaultResults[why] is required",
    );
    assert!(e.message.contains("continues on error"), "{e}");
    let all = errors(&yaml);
    assert_eq!(
        all.len(),
        2,
        ".status and fields with defaults need nothing: {all:#?}"
    );
}

#[test]
fn output_rules() {
    let yaml = doc(r#"
  - name: x
    description: d
    steps: [{id: a, tool: b.t}]
    output:
      properties:
        notype: {description: d, value: v}
        nodesc: {type: string, value: v}
        both: {type: object, description: d, value: v, properties: {k: {type: string, description: d, value: v}}}
        neither: {type: string, description: d}
        props_on_string: {type: string, description: d, properties: {k: {type: string, description: d, value: v}}}
        bad_default: {type: integer, description: d, value: v, default: [1]}
        weird: {type: tuple, description: d, value: v}
      required: [missing]
"#);
    let p = "compositeTools[0].output";
    error_at(&yaml, &format!("{p}.properties.notype.type"), "is required");
    error_at(
        &yaml,
        &format!("{p}.properties.nodesc.description"),
        "is required",
    );
    error_at(&yaml, &format!("{p}.properties.both"), "not both");
    error_at(
        &yaml,
        &format!("{p}.properties.neither.value"),
        "is required",
    );
    error_at(
        &yaml,
        &format!("{p}.properties.props_on_string.properties"),
        "only an object",
    );
    error_at(
        &yaml,
        &format!("{p}.properties.bad_default.default"),
        "does not fit type integer",
    );
    error_at(
        &yaml,
        &format!("{p}.properties.weird.type"),
        "must be one of",
    );
    error_at(
        &yaml,
        &format!("{p}.required[0]"),
        "not one of the output properties",
    );
    let empty = doc(
        "  - name: x\n    description: d\n    steps: [{id: a, tool: b.t}]\n    output: {properties: {}}\n",
    );
    error_at(
        &empty,
        "compositeTools[0].output.properties",
        "at least one",
    );
}

#[test]
fn limits_and_names() {
    let steps: String = (0..1000)
        .map(|i| format!("      - {{id: s{i}, tool: b.t}}\n"))
        .collect();
    let yaml = doc(&format!(
        "  - name: big\n    description: d\n    steps:\n{steps}"
    ));
    error_at(&yaml, "compositeTools[0].steps", "at most 100");
    let yaml = doc(
        "  - name: \"has space\"\n    description: d\n    steps: [{id: a, tool: b.t}]\n  - name: empty\n    description: d\n    steps: []\n",
    );
    error_at(&yaml, "compositeTools[0].name", "not a valid tool name");
    error_at(&yaml, "compositeTools[1].steps", "at least one step");
    let yaml = doc(
        "  - name: x\n    description: d\n    parameters: {type: string, required: nope}\n    steps: [{id: a, tool: b.t}]\n",
    );
    error_at(
        &yaml,
        "compositeTools[0].parameters.type",
        "must be \"object\"",
    );
    error_at(
        &yaml,
        "compositeTools[0].parameters.required",
        "list of property names",
    );
}

#[test]
fn keys_that_would_be_ignored_are_errors() {
    let big = "x".repeat(101 * 1024);
    let yaml = doc(&format!(
        r#"
  - name: x
    description: d
    steps:
      - id: each
        type: forEach
        collection: "[1]"
        step: {{type: tool, tool: b.t, condition: "{{{{true}}}}", dependsOn: [ask], defaultResults: {{a: 1}}, onError: {{action: continue}}}}
      - {{id: ask, type: elicitation, message: m, schema: {{type: object, description: "{big}"}}}}
"#
    ));
    let p = "compositeTools[0].steps";
    for key in ["condition", "dependsOn", "defaultResults", "onError"] {
        error_at(
            &yaml,
            &format!("{p}[0].step.{key}"),
            "no effect in a forEach's inner step",
        );
    }
    error_at(&yaml, &format!("{p}[1].schema"), "larger than 100 KB");
}
