//! Composite tools end to end through the binary: ToolHive's twelve scenarios (reference
//! section 8.6) over backends built with independent SDKs — a Python `mcp` SDK server
//! (tests/interop/composite_server.py, stdio) whose tools return structured content, and an
//! rmcp server (HTTP) — called by Legacy and Modern clients.
//!
//! Needs the Python SDK (`.ci/venv.sh`); outside CI the test is skipped with a note when the
//! venv is absent.

#![allow(clippy::unwrap_used)] // Test code: a panic is the failure report.
#![allow(missing_docs, unreachable_pub)]

mod common;

use common::eras::*;
use common::{Gateway, PYTHON, http_backend, python_sdk_available, temp_path};
use serde_json::{Value, json};

const SERVER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/interop/composite_server.py"
);

const COMPOSITES: &str = r#"
compositeTools:
  - name: echo_twice
    description: Echo a message twice (scenario 1)
    parameters: {type: object, properties: {message: {type: string}}, required: [message]}
    steps:
      - {id: first_echo, tool: data.echo, arguments: {input: "{{ .params.message }}"}}
      - {id: second_echo, tool: data.echo, dependsOn: [first_echo], arguments: {input: "{{ .steps.first_echo.output.output }}"}}
  - name: typed_fetch
    description: Typed output (scenario 2)
    parameters: {type: object, properties: {source: {type: string}}}
    steps:
      - {id: fetch, tool: data.fetch, arguments: {source: "{{.params.source}}"}}
    output:
      properties:
        message: {type: string, description: m, value: "{{.steps.fetch.output.text}}"}
        count: {type: integer, description: c, value: "{{.steps.fetch.output.count}}"}
        success: {type: boolean, description: s, value: "{{.steps.fetch.output.success}}"}
        score: {type: number, description: s, value: "{{.steps.fetch.output.score}}"}
      required: [message]
  - name: record_defaults
    description: Output defaults (scenario 3)
    steps: [{id: get, tool: data.get_record}]
    output:
      properties:
        id: {type: string, description: i, value: "{{.steps.get.output.id}}"}
        status: {type: string, description: s, value: "{{.steps.get.output.status}}", default: unknown}
        priority: {type: integer, description: p, value: "{{.steps.get.output.priority}}", default: 1}
        enabled: {type: boolean, description: e, value: "{{.steps.get.output.enabled}}", default: false}
  - name: json_out
    description: JSON strings to values (scenario 4)
    steps: [{id: get, tool: data.get_json}]
    output:
      properties:
        metadata: {type: object, description: m, value: "{{.steps.get.output.metadata_json}}"}
        tags: {type: array, description: t, value: "{{.steps.get.output.tags_json}}"}
  - name: conditional
    description: Skipped step with defaults (scenario 5)
    parameters: {type: object, properties: {run_step: {type: boolean}, message: {type: string}}}
    steps:
      - id: conditional_step
        tool: data.echo
        condition: "{{.params.run_step}}"
        arguments: {input: "{{.params.message}}"}
        defaultResults: {output: default_value_when_skipped}
    output:
      properties:
        result: {type: string, description: r, value: "{{.steps.conditional_step.output.output}}"}
  - name: file_and_label
    description: Multi-step aggregation (scenario 6)
    parameters: {type: object, properties: {label: {type: string}}}
    annotations: {title: File and label}
    steps:
      - {id: create, tool: data.create_issue, arguments: {title: t}}
      - {id: label, tool: data_add_label, dependsOn: [create], arguments: {issue: "{{.steps.create.output.number}}", label: "{{.params.label}}"}}
    output:
      properties:
        issue_number: {type: integer, description: n, value: "{{.steps.create.output.number}}"}
        issue_url: {type: string, description: u, value: "{{.steps.create.output.url}}"}
        label_added: {type: boolean, description: l, value: "{{.steps.label.output.success}}"}
        label_name: {type: string, description: l, value: "{{.params.label}}"}
  - name: retry_flaky
    description: Retry (scenario 7)
    parameters: {type: object, properties: {key: {type: string}}}
    steps:
      - {id: flaky, tool: data.flaky, arguments: {key: "{{.params.key}}"}, onError: {action: retry, retryCount: 2, retryDelay: 10ms}}
    output:
      properties:
        result: {type: string, description: r, value: "{{.steps.flaky.output.data}}"}
  - name: no_retry_flaky
    description: Without retry the first failure fails the workflow
    parameters: {type: object, properties: {key: {type: string}}}
    steps:
      - {id: flaky, tool: data.flaky, arguments: {key: "{{.params.key}}"}}
  - name: scan_packages
    description: forEach (scenario 8)
    steps:
      - {id: get_packages, tool: data.list_packages}
      - id: scan
        type: forEach
        dependsOn: [get_packages]
        collection: "{{json .steps.get_packages.output.packages}}"
        itemVar: pkg
        maxParallel: 2
        step: {type: tool, tool: data.query_vulnerability, arguments: {package_name: "{{.forEach.pkg.name}}"}}
  - name: confirm_deploy
    description: Elicitation then deploy (scenario 9)
    steps:
      - id: confirm
        type: elicitation
        message: "Deploy to which environment?"
        schema: {type: object, properties: {environment: {type: string, enum: [staging, production]}}, required: [environment]}
        onDecline: {action: skip_remaining}
      - {id: deploy, tool: data.deploy_tool, dependsOn: [confirm], arguments: {env: "{{.steps.confirm.output.content.environment}}"}}
  - name: fan_in
    description: Parallel fan-in over two SDKs (scenario 10)
    steps:
      - {id: echo_backend1, tool: rm.echo, arguments: {text: one}}
      - {id: echo_backend2, tool: data.echo, arguments: {input: two}}
      - {id: combine_results, tool: data.echo, dependsOn: [echo_backend1, echo_backend2], arguments: {input: "Combined: [{{ .steps.echo_backend1.result }}] + [{{ .steps.echo_backend2.output.output }}]"}}
  - name: grow_rm
    description: Makes the rmcp backend add its tool `extra`
    steps: [{id: grow, tool: rm.grow}]
  - name: uses_extra
    description: Advertised only once the rmcp backend serves `extra`
    steps: [{id: extra, tool: rm.extra}]
  - name: slow_pair
    description: A slow step, then one that must not run once the client cancels
    steps:
      - {id: slow, tool: fx.sleep, arguments: {ms: 5000}, onError: {action: continue}}
      - {id: after, tool: data.echo, dependsOn: [slow], arguments: {input: after-cancel}}
  - name: hidden_pair
    description: Calls two tools hidden by filters (scenario 12)
    steps:
      - {id: a, tool: rm_echo, arguments: {text: from-a}}
      - {id: b, tool: data_echo, dependsOn: [a], arguments: {input: "{{.steps.a.output.echoed}}"}}
"#;

struct World {
    gw: Gateway,
    calls: std::path::PathBuf,
    audit: std::path::PathBuf,
    _rm: SdkBackend,
}

impl World {
    /// Every call the Python backend saw, in order.
    fn calls(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.calls)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// The audit trail's workflow lines so far.
    fn workflow_audit(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.audit)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|l| {
                l["type"]
                    .as_str()
                    .unwrap_or_default()
                    .starts_with("vmcp_workflow")
            })
            .collect()
    }

    fn calls_to(&self, tool: &str) -> Vec<Value> {
        self.calls()
            .into_iter()
            .filter(|c| c["tool"] == tool)
            .map(|c| c["arguments"].clone())
            .collect()
    }
}

async fn world() -> Option<World> {
    world_with("").await
}

/// The world with `extra` top-level YAML (e.g. `incomingAuth`).
async fn world_with(extra: &str) -> Option<World> {
    if !python_sdk_available() {
        return None;
    }
    let rm = spawn_sdk("rm", BackendEra::Legacy, 0).await;
    let calls = temp_path("jsonl");
    let audit = temp_path("audit.jsonl");
    let yaml = format!(
        "name: composites\n{extra}audit: {{logFile: {audit:?}, includeRequestData: true, includeResponseData: true, maxDataSize: 4096}}\nbackends:\n  - name: data\n    transport: stdio\n    command: {PYTHON:?}\n    args: [{SERVER:?}]\n    env: {{COMPOSITE_CALLS: {calls:?}}}\n{rm}{fx}aggregation:\n  conflictResolution: prefix\n  conflictResolutionConfig: {{prefixFormat: \"{{workload}}_\"}}\n  tools:\n    - {{workload: rm, excludeAll: true}}\n    - {{workload: fx, excludeAll: true}}\n    - {{workload: data, filter: [nonexistent]}}\n{COMPOSITES}",
        rm = http_backend("rm", &rm.url),
        fx = common::stdio_backend("fx", ""),
    );
    let gw = Gateway::start(&yaml);
    Some(World {
        gw,
        calls,
        audit,
        _rm: rm,
    })
}

fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn toolhive_scenarios_through_the_binary_on_a_legacy_session() {
    let Some(w) = world().await else { return };
    let c = legacy_connect(&w.gw.url, json!({"elicitation": {}})).await;

    // Scenario 12 (and the listing): only composites are listed; hidden tools stay callable.
    let listed = c.ok("tools/list", json!({})).await;
    let tools = listed["tools"].as_array().unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "conditional",
            "confirm_deploy",
            "echo_twice",
            "fan_in",
            "file_and_label",
            "grow_rm",
            "hidden_pair",
            "json_out",
            "no_retry_flaky",
            "record_defaults",
            "retry_flaky",
            "scan_packages",
            "slow_pair",
            "typed_fetch"
        ],
        "{listed}"
    );
    let typed = tools.iter().find(|t| t["name"] == "typed_fetch").unwrap();
    assert_eq!(
        typed["outputSchema"]["properties"]["count"],
        json!({"type": "integer", "description": "c"})
    );
    assert_eq!(typed["outputSchema"]["required"], json!(["message"]));
    let labeled = tools
        .iter()
        .find(|t| t["name"] == "file_and_label")
        .unwrap();
    assert_eq!(
        labeled["annotations"]["title"], "File and label",
        "{labeled}"
    );
    assert_eq!(
        labeled["annotations"]["destructiveHint"], true,
        "the SDK's tools say nothing, which taints: {labeled}"
    );
    let r = c.call("hidden_pair", json!({})).await;
    assert_eq!(
        r["result"]["structuredContent"],
        json!({"output": "from-a"}),
        "{r}"
    );

    // Scenario 1.
    let r = c
        .call("echo_twice", json!({"message": "hellocomposite"}))
        .await;
    assert!(r["result"].get("isError").is_none(), "{r}");
    assert!(text(&r["result"]).contains("hellocomposite"), "{r}");
    assert_eq!(
        w.calls_to("echo")[1..3],
        [
            json!({"input": "hellocomposite"}),
            json!({"input": "hellocomposite"})
        ]
    );

    // Scenario 2: typed output, text item with sorted keys.
    let r = c.call("typed_fetch", json!({"source": "api"})).await;
    assert_eq!(
        text(&r["result"]),
        r#"{"count":42,"message":"Data fetched successfully","score":95.5,"success":true}"#,
        "{r}"
    );
    assert_eq!(w.calls_to("fetch"), [json!({"source": "api"})]);

    // Scenario 3 and 4.
    let r = c.call("record_defaults", json!({})).await;
    assert_eq!(
        text(&r["result"]),
        r#"{"enabled":false,"id":"rec123","priority":1,"status":"unknown"}"#
    );
    let r = c.call("json_out", json!({})).await;
    assert_eq!(
        r["result"]["structuredContent"],
        json!({"metadata": {"author": "system", "version": "1.0"}, "tags": ["important", "reviewed", "approved"]})
    );

    // Scenario 5: skipped (the backend is not called), then run.
    let before = w.calls_to("echo").len();
    let r = c
        .call("conditional", json!({"run_step": false, "message": "m"}))
        .await;
    assert!(
        text(&r["result"]).contains("default_value_when_skipped"),
        "{r}"
    );
    assert_eq!(w.calls_to("echo").len(), before);
    let r = c
        .call("conditional", json!({"run_step": true, "message": "m"}))
        .await;
    assert_eq!(
        r["result"]["structuredContent"],
        json!({"result": "m"}),
        "{r}"
    );

    // Scenario 6: the rendered "456" reaches the Python tool as the integer its schema wants.
    let r = c.call("file_and_label", json!({"label": "bug"})).await;
    assert_eq!(
        r["result"]["structuredContent"],
        json!({"issue_number": 456, "issue_url": "https://github.com/org/repo/issues/456", "label_added": true, "label_name": "bug"}),
        "{r}"
    );
    assert_eq!(
        w.calls_to("add_label"),
        [json!({"issue": 456, "label": "bug"})]
    );

    // Scenario 7: the SDK's first answer is an isError result; the retry succeeds.
    let r = c.call("retry_flaky", json!({"key": "k1"})).await;
    assert_eq!(
        r["result"]["structuredContent"],
        json!({"result": "success_after_retry"}),
        "{r}"
    );
    let r = c.call("no_retry_flaky", json!({"key": "k2"})).await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    let t = text(&r["result"]);
    assert!(
        t.starts_with(
            "Workflow execution failed: step \"flaky\" failed: Error executing tool flaky"
        ),
        "{t}"
    );

    // Scenario 8: forEach.
    let r = c.call("scan_packages", json!({})).await;
    let out = &r["result"]["structuredContent"];
    assert_eq!(out["count"], 3, "{r}");
    assert_eq!(out["completed"], 3);
    assert_eq!(out["iterations"][1]["output"]["vulnerabilities"], 1);
    let mut asked: Vec<String> = w
        .calls_to("query_vulnerability")
        .iter()
        .map(|a| a["package_name"].as_str().unwrap().to_owned())
        .collect();
    asked.sort();
    assert_eq!(asked, ["curl", "openssl", "zlib"]);

    // Scenario 10: two SDKs in parallel, then a fan-in reading a field that does not exist.
    let r = c.call("fan_in", json!({})).await;
    assert!(r["result"].get("isError").is_none(), "{r}");
    assert_eq!(
        w.calls_to("echo").last().unwrap(),
        &json!({"input": "Combined: [<no value>] + [two]"})
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn elicitation_steps_ask_a_legacy_client_and_refuse_clients_that_cannot_answer() {
    let Some(w) = world().await else { return };
    // Scenario 9: the client accepts; the deploy step gets its answer.
    let c = legacy_connect(&w.gw.url, json!({"elicitation": {}})).await;
    let (asked, answer) = legacy_call_answering(
        &c,
        "confirm_deploy",
        json!({}),
        |_| json!({"action": "accept", "content": {"environment": "production"}}),
    )
    .await;
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["method"], "elicitation/create");
    assert_eq!(
        asked[0]["params"]["requestedSchema"]["properties"]["environment"]["enum"],
        json!(["staging", "production"])
    );
    assert_eq!(
        answer["result"]["structuredContent"],
        json!({"deployed": "production"}),
        "{answer}"
    );
    assert_eq!(w.calls_to("deploy_tool"), [json!({"env": "production"})]);

    // Declined with skip_remaining: the deploy step does not run.
    let (_, answer) = legacy_call_answering(
        &c,
        "confirm_deploy",
        json!({}),
        |_| json!({"action": "decline"}),
    )
    .await;
    assert_eq!(
        answer["result"]["structuredContent"],
        json!({"action": "decline", "skipped": true}),
        "{answer}"
    );
    assert_eq!(w.calls_to("deploy_tool").len(), 1);

    // A client that did not declare elicitation gets a clear error before any step runs.
    let plain = legacy_connect(&w.gw.url, json!({})).await;
    let r = plain.call("confirm_deploy", json!({})).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let msg = r["error"]["message"].as_str().unwrap();
    assert!(msg.contains("elicitation capability"), "{msg}");

    // A 2026-07-28 client without the capability is refused the same way.
    let m = ModernClient::new(&w.gw.url);
    let a = m
        .request(
            "tools/call",
            json!({"name": "confirm_deploy", "arguments": {}}),
        )
        .await;
    assert!(a.text.contains("elicitation capability"), "{}", a.text);
    assert_eq!(w.calls_to("deploy_tool").len(), 1);
}

/// A 2026-07-28 client is asked between requests: `input_required` with the question and a
/// sealed `requestState`, then its retry with the answer resumes the workflow where it
/// stopped (ToolHive cannot ask 2026-07-28 clients at all).
#[tokio::test(flavor = "multi_thread")]
async fn elicitation_steps_ask_a_modern_client_in_rounds() {
    let Some(w) = world().await else { return };
    let m = ModernClient::with_caps(&w.gw.url, json!({"elicitation": {}}));
    let call = json!({"name": "confirm_deploy", "arguments": {}});
    let first = m.ok("tools/call", call.clone()).await;
    assert_eq!(first["resultType"], "input_required", "{first}");
    let asked = &first["inputRequests"]["confirm"];
    assert_eq!(asked["method"], "elicitation/create", "{first}");
    assert_eq!(asked["params"]["message"], "Deploy to which environment?");
    assert_eq!(
        asked["params"]["requestedSchema"]["properties"]["environment"]["enum"],
        json!(["staging", "production"])
    );
    let state = first["requestState"].as_str().unwrap().to_owned();
    assert!(w.calls_to("deploy_tool").is_empty());

    let mut retry = call.clone();
    retry["inputResponses"] =
        json!({"confirm": {"action": "accept", "content": {"environment": "staging"}}});
    retry["requestState"] = json!(state);
    let done = m.ok("tools/call", retry.clone()).await;
    assert_eq!(
        done["structuredContent"],
        json!({"deployed": "staging"}),
        "{done}"
    );
    assert_eq!(w.calls_to("deploy_tool"), [json!({"env": "staging"})]);

    // Used once: a replay is refused. So is a changed state, or one presented for other
    // arguments; none reaches the backend.
    let a = m.request("tools/call", retry.clone()).await;
    assert_eq!(a.body["error"]["code"], -32602, "{}", a.text);
    assert!(a.text.contains("already used"), "{}", a.text);
    let fresh = m.ok("tools/call", call.clone()).await;
    let state = fresh["requestState"].as_str().unwrap().to_owned();
    let mut forged = retry.clone();
    let mut bad = state.clone();
    bad.insert(
        3,
        if state.as_bytes()[3] == b'A' {
            'B'
        } else {
            'A'
        },
    );
    forged["requestState"] = json!(bad);
    let a = m.request("tools/call", forged).await;
    assert_eq!(a.body["error"]["code"], -32602, "{}", a.text);
    let mut other = retry.clone();
    other["arguments"] = json!({"x": 1});
    other["requestState"] = json!(state);
    let a = m.request("tools/call", other).await;
    assert_eq!(a.body["error"]["code"], -32602, "{}", a.text);
    assert!(
        a.text.contains("for this caller, tool and arguments"),
        "{}",
        a.text
    );
    assert_eq!(w.calls_to("deploy_tool").len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_modern_client_lists_and_calls_composites() {
    let Some(w) = world().await else { return };
    let m = ModernClient::new(&w.gw.url);
    let (tools, _) = m.list_all("tools/list", "tools").await;
    assert!(
        tools.iter().any(|t| t["name"] == "typed_fetch"),
        "{tools:?}"
    );
    let r = m
        .ok(
            "tools/call",
            json!({"name": "typed_fetch", "arguments": {"source": "modern"}}),
        )
        .await;
    assert_eq!(r["structuredContent"]["count"], 42, "{r}");
    assert_eq!(w.calls_to("fetch"), [json!({"source": "modern"})]);
}

/// Every run and step is in the audit trail in ToolHive's workflow layout (and the lines match
/// docs/audit-event.schema.json); the caller is the subject.
#[tokio::test(flavor = "multi_thread")]
async fn workflows_and_their_steps_are_audited() {
    let Some(w) = world().await else { return };
    let c = legacy_connect(&w.gw.url, json!({})).await;
    let r = c
        .call("conditional", json!({"run_step": false, "message": "m"}))
        .await;
    assert!(r["result"].get("isError").is_none(), "{r}");
    let r = c.call("no_retry_flaky", json!({"key": "audit"})).await;
    assert_eq!(r["result"]["isError"], true);
    let r = c.call("retry_flaky", json!({"key": "audit2"})).await;
    assert!(r["result"].get("isError").is_none(), "{r}");
    // Lines are written off the request path: wait for the last run's end.
    let mut lines = Vec::new();
    for _ in 0..100 {
        lines = w.workflow_audit();
        if lines
            .iter()
            .filter(|l| l["type"] == "vmcp_workflow_completed")
            .count()
            == 2
        {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let kinds: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "vmcp_workflow_started",
            "vmcp_workflow_step_skipped",
            "vmcp_workflow_completed",
            "vmcp_workflow_started",
            "vmcp_workflow_step_started",
            "vmcp_workflow_step_failed",
            "vmcp_workflow_failed",
            "vmcp_workflow_started",
            "vmcp_workflow_step_started",
            "vmcp_workflow_step_completed",
            "vmcp_workflow_completed",
        ],
        "{lines:#?}"
    );
    let started = &lines[0];
    assert_eq!(
        started["source"],
        json!({"type": "local", "value": "vmcp-composer", "extra": {}})
    );
    assert_eq!(started["target"]["workflow_name"], "conditional");
    assert_eq!(started["target"]["type"], "workflow");
    assert_eq!(started["metadata"]["extra"]["timeout_ms"], 1_800_000);
    assert_eq!(
        started["data"]["request"],
        json!({"run_step": false, "message": "m"})
    );
    assert_eq!(started["subjects"]["user"], "anonymous");
    let skipped = &lines[1];
    assert_eq!(skipped["target"]["step_id"], "conditional_step");
    assert_eq!(
        skipped["target"]["workflow_id"],
        started["target"]["workflow_id"]
    );
    assert_eq!(
        skipped["metadata"]["extra"]["condition"],
        "{{.params.run_step}}"
    );
    assert_eq!(
        lines[2]["data"]["response"],
        json!({"result": "default_value_when_skipped"})
    );
    assert_eq!(lines[2]["metadata"]["extra"]["step_count"], 1);
    let failed = &lines[5];
    assert_eq!(failed["outcome"], "failure");
    assert_eq!(failed["target"]["tool_name"], "data.flaky");
    assert!(
        failed["metadata"]["extra"]["error"]
            .as_str()
            .unwrap()
            .contains("flaky"),
        "{failed}"
    );
    assert_eq!(lines[6]["outcome"], "failure");
    assert_eq!(
        lines[9]["metadata"]["extra"]["retry_count"], 1,
        "{}",
        lines[9]
    );
    assert!(common::audit_matches_schema(&w.audit));
}

/// A client that sent a progress token hears of every finished step (ToolHive sends none).
#[tokio::test(flavor = "multi_thread")]
async fn progress_is_reported_per_finished_step() {
    let Some(w) = world().await else { return };
    let c = legacy_connect(&w.gw.url, json!({})).await;
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "file_and_label", "arguments": {"label": "x"}, "_meta": {"progressToken": "tok"}}});
    let resp = legacy_post(&c, &body).send().await.unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let mut sse = SseReader::new(resp);
    let mut progress = Vec::new();
    loop {
        let msg = sse
            .next(std::time::Duration::from_secs(20))
            .await
            .expect("the answer");
        if msg["method"] == "notifications/progress" {
            progress.push(msg["params"].clone());
        } else if msg["id"] == 9 {
            assert_eq!(
                msg["result"]["structuredContent"]["issue_number"], 456,
                "{msg}"
            );
            break;
        }
    }
    assert_eq!(
        progress,
        [
            json!({"progressToken": "tok", "progress": 1, "total": 2, "message": "step create completed"}),
            json!({"progressToken": "tok", "progress": 2, "total": 2, "message": "step label completed"}),
        ]
    );
}

/// A composite whose step's tool a backend does not serve is not listed; when the backend
/// starts serving it (and says so with list_changed), the composite appears.
#[tokio::test(flavor = "multi_thread")]
async fn a_composite_appears_when_its_tools_do() {
    let Some(w) = world().await else { return };
    let c = legacy_connect(&w.gw.url, json!({})).await;
    let names = c.tool_names().await;
    assert!(!names.contains(&"uses_extra".to_owned()), "{names:?}");
    let r = c.call("uses_extra", json!({})).await;
    assert!(r.get("error").is_some(), "not callable either: {r}");
    let r = c.call("grow_rm", json!({})).await;
    assert!(r["result"].get("isError").is_none(), "{r}");
    let mut names = Vec::new();
    for _ in 0..100 {
        names = c.tool_names().await;
        if names.contains(&"uses_extra".to_owned()) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(
        names.contains(&"uses_extra".to_owned()),
        "{names:?}\n{}",
        w.gw.logs()
    );
    let r = c.call("uses_extra", json!({})).await;
    assert_eq!(
        r["result"]["content"][0]["text"], "{\"text\":\"extra\"}",
        "{r}"
    );
}

/// Scenario 11: `vmcp validate` (and `serve`) refuse ToolHive's invalid composites, each
/// problem with its path and line.
#[test]
fn invalid_composites_are_refused_with_paths_and_lines() {
    let config = temp_path("yaml");
    std::fs::write(
        &config,
        r#"backends: [{name: b, url: "http://127.0.0.1:9/mcp"}]
compositeTools:
  - name: broken
    description: d
    steps:
      - {id: a, tool: b.t, dependsOn: [b]}
      - {id: b, tool: b.t, dependsOn: [a]}
      - {id: c, tool: b.t, condition: "{{.params.go}}"}
      - {id: d, tool: b.t, dependsOn: [c], arguments: {y: "{{.steps.c.output.y}}"}}
      - {id: e, tool: b.t, onError: {action: retry}}
      - {id: f, tool: "bad tool!"}
"#,
    )
    .unwrap();
    let (status, out, err) = common::run_cli(&["validate", "--config", config.to_str().unwrap()]);
    assert!(!status.success(), "{out}{err}");
    for needle in [
        "compositeTools[0].steps[0].dependsOn (line 6): dependency cycle detected: a -> b -> a",
        "compositeTools[0].steps[2].defaultResults (line 8): defaultResults[y] is required",
        "compositeTools[0].steps[4].onError.retryCount (line 10): must be at least 1",
        "compositeTools[0].steps[5].tool (line 11):",
    ] {
        assert!(
            err.contains(needle) || out.contains(needle),
            "{needle}\n{out}{err}"
        );
    }
}

/// The client's notifications/cancelled stops the workflow: the running step's backend call is
/// cancelled and no later step reaches a backend (even with `onError: continue`).
#[tokio::test(flavor = "multi_thread")]
async fn cancelling_the_call_cancels_every_step() {
    let Some(w) = world().await else { return };
    let c = legacy_connect(&w.gw.url, json!({})).await;
    let body = json!({"jsonrpc": "2.0", "id": 77, "method": "tools/call",
        "params": {"name": "slow_pair", "arguments": {}}});
    let post = legacy_post(&c, &body).send();
    let call = tokio::spawn(tokio::time::timeout(
        std::time::Duration::from_secs(10),
        post,
    ));
    // Cancel once the slow step is running, not after a guessed delay.
    let mut running = false;
    for _ in 0..200 {
        running = w
            .workflow_audit()
            .iter()
            .any(|l| l["type"] == "vmcp_workflow_step_started" && l["target"]["step_id"] == "slow");
        if running {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert!(running, "the slow step never started");
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 77, "reason": "user pressed stop"}});
    let a = c.post_raw(c.session.clone(), cancel).await;
    assert_eq!(a.status, 202, "{}", a.text);
    let mut ended = None;
    for _ in 0..60 {
        ended = w.workflow_audit().into_iter().find(|l| {
            l["type"] == "vmcp_workflow_failed" && l["target"]["workflow_name"] == "slow_pair"
        });
        if ended.is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let ended = ended.expect("the workflow ended soon after the cancel");
    assert!(
        ended["metadata"]["extra"]["duration_ms"].as_u64().unwrap() < 4000,
        "not after the 5 s step: {ended}"
    );
    let steps: Vec<Value> = w
        .workflow_audit()
        .into_iter()
        .filter(|l| l["type"] == "vmcp_workflow_step_failed")
        .collect();
    assert_eq!(steps.len(), 2, "{steps:#?}");
    assert_eq!(steps[1]["target"]["step_id"], "after");
    assert_eq!(
        steps[1]["metadata"]["extra"]["error"],
        "cancelled by the client"
    );
    assert!(
        !w.calls_to("echo")
            .contains(&json!({"input": "after-cancel"})),
        "the step after the cancel reached its backend"
    );
    call.abort();
}

/// Cedar admits a composite by its own name; its steps are not admitted one by one, so a
/// composite can use tools the caller may not call directly.
#[tokio::test(flavor = "multi_thread")]
async fn authorization_admits_composites_by_their_own_names() {
    let auth = "incomingAuth:\n  type: anonymous\n  authz:\n    type: cedar\n    policies:\n      - 'permit(principal, action == Action::\"call_tool\", resource == Tool::\"typed_fetch\");'\n";
    let Some(w) = world_with(auth).await else {
        return;
    };
    let c = legacy_connect(&w.gw.url, json!({})).await;
    assert_eq!(c.tool_names().await, ["typed_fetch"]);
    let r = c.call("typed_fetch", json!({"source": "authz"})).await;
    assert_eq!(r["result"]["structuredContent"]["count"], 42, "{r}");
    let denied = c.call("echo_twice", json!({"message": "no"})).await;
    assert_eq!(denied["error"]["code"], 403, "{denied}");
    assert!(w.calls_to("echo").is_empty());
}
