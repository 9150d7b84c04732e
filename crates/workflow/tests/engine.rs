//! The workflow engine against a scripted runner: ToolHive's composite-tool scenarios
//! (reference section 8.6) plus every step type, error policy, timeout and limit.

#![allow(clippy::unwrap_used, clippy::field_reassign_with_default)] // Test code: a panic is the report.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Map, Value, json};
use vmcp_workflow::{Event, Resume, Round, Runner, Workflow};

/// What a scripted tool does on each call.
type Behaviour = Box<dyn Fn(&Value, usize) -> Result<Value, String> + Send + Sync>;

#[derive(Default)]
struct Script {
    tools: HashMap<String, Behaviour>,
    schemas: HashMap<String, Value>,
    calls: Mutex<Vec<(String, Value)>>,
    counts: Mutex<HashMap<String, usize>>,
    elicit_answer: Option<Value>,
    elicit_delay: Option<Duration>,
    elicitations: Mutex<Vec<(String, Value)>>,
    events: Mutex<Vec<String>>,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    tool_delay: Option<Duration>,
}

impl Script {
    fn tool(
        mut self,
        name: &str,
        f: impl Fn(&Value, usize) -> Result<Value, String> + Send + Sync + 'static,
    ) -> Self {
        self.tools.insert(name.into(), Box::new(f));
        self
    }
    /// A tool returning `v` as structuredContent.
    fn returns(self, name: &str, v: Value) -> Self {
        self.tool(name, move |_, _| {
            Ok(json!({"content": [], "structuredContent": v.clone()}))
        })
    }
    fn calls(&self) -> Vec<(String, Value)> {
        self.calls.lock().unwrap().clone()
    }
    fn calls_to(&self, name: &str) -> Vec<Value> {
        self.calls()
            .into_iter()
            .filter(|(n, _)| n == name)
            .map(|(_, a)| a)
            .collect()
    }
}

impl Runner for Script {
    async fn call_tool(&self, tool: &str, arguments: Value) -> Result<Value, String> {
        let n = {
            let mut c = self.counts.lock().unwrap();
            let e = c.entry(tool.into()).or_default();
            *e += 1;
            *e
        };
        self.calls
            .lock()
            .unwrap()
            .push((tool.into(), arguments.clone()));
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_in_flight.fetch_max(now, Ordering::SeqCst);
        if let Some(d) = self.tool_delay {
            tokio::time::sleep(d).await;
        }
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        match self.tools.get(tool) {
            Some(f) => f(&arguments, n),
            None => Err(format!("no tool {tool}")),
        }
    }
    fn input_schema(&self, tool: &str) -> Option<&Value> {
        self.schemas.get(tool)
    }
    async fn elicit(&self, message: String, schema: Value) -> Result<Value, String> {
        self.elicitations.lock().unwrap().push((message, schema));
        if let Some(d) = self.elicit_delay {
            tokio::time::sleep(d).await;
        }
        self.elicit_answer
            .clone()
            .ok_or_else(|| "no answer scripted".into())
    }
    fn observe(&self, event: Event<'_>) {
        let line = match event {
            Event::StepStarted {
                step, kind, tool, ..
            } => {
                format!("start {step} {kind} {}", tool.unwrap_or("-"))
            }
            Event::StepEnded {
                step,
                status,
                done,
                total,
                retries,
                error,
                condition,
                ..
            } => {
                let mut l = format!("{status} {step} {done}/{total}");
                if retries > 0 {
                    l.push_str(&format!(" retries={retries}"));
                }
                if let Some(e) = error {
                    l.push_str(&format!(" error={e}"));
                }
                if let Some(c) = condition {
                    l.push_str(&format!(" condition={c}"));
                }
                l
            }
            Event::WorkflowStarted { name, params, .. } => format!("workflow {name} {params}"),
            Event::WorkflowEnded {
                name,
                status,
                steps,
                error,
                ..
            } => format!(
                "workflow {name} {status} steps={steps} error={}",
                error.unwrap_or("-")
            ),
        };
        self.events.lock().unwrap().push(line);
    }
}

fn workflow(yaml: &str) -> Workflow {
    let doc =
        format!("backends: [{{name: b, url: 'http://127.0.0.1:1/mcp'}}]\ncompositeTools:\n{yaml}");
    let config = vmcp_config::load_str(&doc, &|_| None).unwrap_or_else(|e| panic!("{e}\n{doc}"));
    Workflow::compile(&config.composite_tools[0]).expect("compiles")
}

fn args(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

fn failed(result: &Value) -> bool {
    result["isError"] == json!(true)
}

#[tokio::test]
async fn scenario_1_sequential_echo() {
    let wf = workflow(
        r#"
  - name: echo_twice
    description: Echo twice
    parameters: {type: object, properties: {message: {type: string}}, required: [message]}
    steps:
      - id: first_echo
        tool: b.echo
        arguments: {input: "{{ .params.message }}"}
      - id: second_echo
        tool: b.echo
        dependsOn: [first_echo]
        arguments: {input: "{{ .steps.first_echo.output.text }}"}
"#,
    );
    let s = Script::default().tool("b.echo", |a, _| {
        Ok(json!({"content": [{"type": "text", "text": a["input"]}]}))
    });
    let r = wf
        .call(&s, args(json!({"message": "hellocomposite"})))
        .await;
    assert!(!failed(&r), "{r}");
    assert!(text(&r).contains("hellocomposite"), "{r}");
    assert_eq!(
        s.calls_to("b.echo"),
        vec![json!({"input": "hellocomposite"}); 2]
    );
    assert_eq!(r["structuredContent"], json!({"text": "hellocomposite"}));
}

#[tokio::test]
async fn scenario_2_typed_output_is_sorted_and_coerced() {
    let wf = workflow(
        r#"
  - name: typed
    description: d
    steps:
      - {id: fetch, tool: data.fetch, arguments: {source: "{{.params.source}}"}}
    output:
      properties:
        message: {type: string, description: m, value: "{{.steps.fetch.output.text}}"}
        count: {type: integer, description: c, value: "{{.steps.fetch.output.count}}"}
        success: {type: boolean, description: s, value: "{{.steps.fetch.output.success}}"}
        score: {type: number, description: s, value: "{{.steps.fetch.output.score}}"}
"#,
    );
    let s = Script::default().returns(
        "data.fetch",
        json!({"text": "Data fetched successfully", "count": "42", "success": "true", "score": "95.5"}),
    );
    let r = wf.call(&s, args(json!({"source": "api"}))).await;
    assert_eq!(s.calls_to("data.fetch"), vec![json!({"source": "api"})]);
    assert_eq!(
        r["structuredContent"],
        json!({"count": 42, "message": "Data fetched successfully", "score": 95.5, "success": true})
    );
    assert_eq!(
        text(&r),
        r#"{"count":42,"message":"Data fetched successfully","score":95.5,"success":true}"#
    );
}

#[tokio::test]
async fn scenario_3_output_defaults() {
    let wf = workflow(
        r#"
  - name: defaults
    description: d
    steps: [{id: get, tool: b.get}]
    output:
      properties:
        id: {type: string, description: i, value: "{{.steps.get.output.id}}"}
        status: {type: string, description: s, value: "{{.steps.get.output.status}}", default: unknown}
        priority: {type: integer, description: p, value: "{{.steps.get.output.priority}}", default: 1}
        enabled: {type: boolean, description: e, value: "{{.steps.get.output.enabled}}", default: false}
"#,
    );
    let s = Script::default().returns("b.get", json!({"id": "rec123"}));
    let r = wf.call(&s, Map::new()).await;
    assert_eq!(
        text(&r),
        r#"{"enabled":false,"id":"rec123","priority":1,"status":"unknown"}"#
    );
}

#[tokio::test]
async fn scenario_4_json_strings_become_objects_and_arrays() {
    let wf = workflow(
        r#"
  - name: js
    description: d
    steps: [{id: get, tool: b.get}]
    output:
      properties:
        metadata: {type: object, description: m, value: "{{.steps.get.output.metadata_json}}"}
        tags: {type: array, description: t, value: "{{.steps.get.output.tags_json}}"}
"#,
    );
    let s = Script::default().returns(
        "b.get",
        json!({"metadata_json": "{\"version\": \"1.0\", \"author\": \"system\"}",
               "tags_json": "[\"important\",\"reviewed\",\"approved\"]"}),
    );
    let r = wf.call(&s, Map::new()).await;
    assert_eq!(
        r["structuredContent"],
        json!({"metadata": {"author": "system", "version": "1.0"}, "tags": ["important", "reviewed", "approved"]})
    );
}

const CONDITIONAL: &str = r#"
  - name: cond
    description: d
    parameters: {type: object, properties: {run_step: {type: boolean}, message: {type: string}}}
    steps:
      - id: conditional_step
        tool: b.echo
        condition: "{{.params.run_step}}"
        arguments: {input: "{{.params.message}}"}
        defaultResults: {output: default_value_when_skipped}
    output:
      properties:
        result: {type: string, description: r, value: "{{.steps.conditional_step.output.output}}"}
"#;

#[tokio::test]
async fn scenario_5_conditional_skip_uses_default_results() {
    let wf = workflow(CONDITIONAL);
    let s = Script::default().tool("b.echo", |a, _| {
        Ok(json!({"content": [], "structuredContent": {"output": a["input"]}}))
    });
    let r = wf
        .call(&s, args(json!({"run_step": false, "message": "hi"})))
        .await;
    assert!(text(&r).contains("default_value_when_skipped"), "{r}");
    assert!(s.calls().is_empty());
    let r = wf
        .call(&s, args(json!({"run_step": true, "message": "hi"})))
        .await;
    assert_eq!(r["structuredContent"], json!({"result": "hi"}));
}

#[tokio::test]
async fn scenario_6_multi_step_aggregation_coerces_rendered_numbers() {
    let wf = workflow(
        r#"
  - name: agg
    description: d
    parameters: {type: object, properties: {label: {type: string}}}
    steps:
      - {id: create, tool: github.create_issue}
      - {id: label, tool: github.add_label, dependsOn: [create], arguments: {issue: "{{.steps.create.output.number}}", label: "{{.params.label}}"}}
    output:
      properties:
        issue_number: {type: integer, description: n, value: "{{.steps.create.output.number}}"}
        issue_url: {type: string, description: u, value: "{{.steps.create.output.url}}"}
        label_added: {type: boolean, description: l, value: "{{.steps.label.output.success}}"}
        label_name: {type: string, description: l, value: "{{.params.label}}"}
"#,
    );
    let mut s = Script::default()
        .returns(
            "github.create_issue",
            json!({"number": 456, "url": "https://github.com/org/repo/issues/456"}),
        )
        .returns("github.add_label", json!({"success": "true"}));
    s.schemas.insert(
        "github.add_label".into(),
        json!({"type": "object", "properties": {"issue": {"type": "integer"}}}),
    );
    let r = wf.call(&s, args(json!({"label": "bug"}))).await;
    assert_eq!(
        s.calls_to("github.add_label"),
        vec![json!({"issue": 456, "label": "bug"})]
    );
    assert_eq!(
        r["structuredContent"],
        json!({"issue_number": 456, "issue_url": "https://github.com/org/repo/issues/456", "label_added": true, "label_name": "bug"})
    );
}

#[tokio::test(start_paused = true)]
async fn scenario_7_retry_after_a_transport_error() {
    let wf = workflow(
        r#"
  - name: retry
    description: d
    steps:
      - {id: flaky, tool: b.flaky, onError: {action: retry, retryCount: 2, retryDelay: 10ms}}
    output:
      properties:
        result: {type: string, description: r, value: "{{.steps.flaky.output.data}}"}
"#,
    );
    let s = Script::default().tool("b.flaky", |_, n| {
        if n == 1 {
            Err("connection reset".into())
        } else {
            Ok(json!({"content": [], "structuredContent": {"data": "success_after_retry"}}))
        }
    });
    let r = wf.call(&s, Map::new()).await;
    assert_eq!(
        r["structuredContent"],
        json!({"result": "success_after_retry"})
    );
    assert_eq!(s.calls_to("b.flaky").len(), 2);
}

#[tokio::test(start_paused = true)]
async fn retries_are_capped_and_the_error_says_how_many() {
    let wf = workflow(
        r#"
  - name: retry
    description: d
    steps:
      - {id: down, tool: b.down, onError: {action: retry, retryCount: 1000000, retryDelay: 1ms}}
"#,
    );
    let s = Script::default().tool("b.down", |_, _| {
        Ok(json!({"isError": true, "content": [{"type": "text", "text": "still down"}]}))
    });
    let r = wf.call(&s, Map::new()).await;
    assert!(failed(&r));
    assert_eq!(s.calls_to("b.down").len(), 11, "one call and ten retries");
    assert_eq!(
        text(&r),
        "Workflow execution failed: step \"down\" failed: still down (after 10 retries)"
    );
    let events = s.events.lock().unwrap();
    assert!(
        events
            .contains(&"failed down 1/1 retries=10 error=still down (after 10 retries)".to_owned()),
        "{events:?}"
    );
    assert_eq!(
        events.last().unwrap(),
        "workflow retry failed steps=1 error=step \"down\" failed: still down (after 10 retries)"
    );
}

const FOR_EACH: &str = r#"
  - name: scan
    description: d
    steps:
      - {id: get_packages, tool: b.list}
      - id: scan
        type: forEach
        dependsOn: [get_packages]
        collection: "{{json .steps.get_packages.output.packages}}"
        itemVar: pkg
        maxIterations: 5
        step:
          type: tool
          tool: osv.query_vulnerability
          arguments: {package_name: "{{.forEach.pkg.name}}", n: "{{.forEach.index}}"}
"#;

#[tokio::test]
async fn scenario_8_for_each_over_a_step_output() {
    let wf = workflow(FOR_EACH);
    let s = Script::default()
        .returns(
            "b.list",
            json!({"packages": [{"name": "openssl"}, {"name": "curl"}, {"name": "zlib"}]}),
        )
        .tool("osv.query_vulnerability", |a, _| {
            Ok(json!({"content": [], "structuredContent": {"vulns": 0, "for": a["package_name"]}}))
        });
    let r = wf.call(&s, Map::new()).await;
    assert!(!failed(&r), "{r}");
    let mut calls = s.calls_to("osv.query_vulnerability");
    calls.sort_by_key(|c| c["n"].as_str().unwrap_or_default().to_owned());
    assert_eq!(
        calls,
        vec![
            json!({"package_name": "openssl", "n": "0"}),
            json!({"package_name": "curl", "n": "1"}),
            json!({"package_name": "zlib", "n": "2"}),
        ]
    );
    let out = &r["structuredContent"];
    assert_eq!(
        (
            out["count"].clone(),
            out["completed"].clone(),
            out["failed"].clone()
        ),
        (json!(3), json!(3), json!(0))
    );
    assert_eq!(out["iterations"][1]["item"], json!({"name": "curl"}));
    assert_eq!(out["iterations"][1]["output"]["for"], json!("curl"));
}

#[tokio::test]
async fn for_each_variants_empty_too_many_and_not_an_array() {
    let wf = workflow(FOR_EACH);
    let s = Script::default().returns("b.list", json!({"packages": []}));
    let r = wf.call(&s, Map::new()).await;
    assert_eq!(
        r["structuredContent"],
        json!({"count": 0, "completed": 0, "failed": 0, "iterations": []})
    );

    let six: Vec<Value> = (0..6).map(|i| json!({"name": format!("p{i}")})).collect();
    let s = Script::default().returns("b.list", json!({"packages": six}));
    let r = wf.call(&s, Map::new()).await;
    assert!(
        failed(&r) && text(&r).contains("collection size 6 exceeds maxIterations 5"),
        "{r}"
    );
    assert!(s.calls_to("osv.query_vulnerability").is_empty());

    let s = Script::default().returns("b.list", json!({"packages": "not-json"}));
    let r = wf.call(&s, Map::new()).await;
    assert!(
        failed(&r) && text(&r).contains("must resolve to a JSON array"),
        "{r}"
    );
}

#[tokio::test]
async fn for_each_over_a_json_string_and_continue_on_failed_iterations() {
    let wf = workflow(
        r#"
  - name: each
    description: d
    steps:
      - {id: get_list, tool: b.list}
      - id: each
        type: forEach
        dependsOn: [get_list]
        collection: "{{.steps.get_list.output.items}}"
        maxParallel: 1
        onError: {action: continue}
        step: {type: tool, tool: b.work, arguments: {x: "{{.forEach.item}}"}}
"#,
    );
    let s = Script::default()
        .returns("b.list", json!({"items": "[\"a\",\"b\",\"c\"]"}))
        .tool("b.work", |a, _| {
            if a["x"] == "b" {
                Err("b is broken".into())
            } else {
                Ok(json!({"content": [], "structuredContent": {"ok": a["x"]}}))
            }
        });
    let r = wf.call(&s, Map::new()).await;
    assert!(!failed(&r), "{r}");
    let out = &r["structuredContent"];
    assert_eq!(
        (
            out["count"].clone(),
            out["completed"].clone(),
            out["failed"].clone()
        ),
        (json!(3), json!(2), json!(1))
    );
    assert_eq!(out["iterations"][1]["error"], json!("b is broken"));
}

const ELICIT: &str = r#"
  - name: deploy
    description: d
    steps:
      - id: confirm
        type: elicitation
        message: "Deploy where? ({{.params.app}})"
        schema: {type: object, properties: {environment: {type: string, enum: [staging, production]}}}
        ONDECLINE
      - {id: deploy, tool: b.deploy_tool, dependsOn: [confirm], condition: "{{eq .steps.confirm.output.action \"accept\"}}", arguments: {env: "{{.steps.confirm.output.content.environment}}"}, defaultResults: {}}
"#;

fn elicit_workflow(handlers: &str) -> Workflow {
    workflow(&ELICIT.replace("ONDECLINE", handlers))
}

#[tokio::test]
async fn scenario_9_elicitation_accept_decline_cancel() {
    let wf = elicit_workflow("");
    let mut s = Script::default().returns("b.deploy_tool", json!({"deployed": true}));
    s.elicit_answer = Some(json!({"action": "accept", "content": {"environment": "production"}}));
    let r = wf.call(&s, args(json!({"app": "web"}))).await;
    assert!(!failed(&r), "{r}");
    assert_eq!(
        s.calls_to("b.deploy_tool"),
        vec![json!({"env": "production"})]
    );
    assert_eq!(s.elicitations.lock().unwrap()[0].0, "Deploy where? (web)");

    s.elicit_answer = Some(json!({"action": "decline"}));
    let r = wf.call(&s, Map::new()).await;
    assert_eq!(
        text(&r),
        "Workflow execution failed: step \"confirm\" failed: elicitation request was declined by user"
    );

    let wf = elicit_workflow("onDecline: {action: continue}");
    let r = wf.call(&s, Map::new()).await;
    assert!(!failed(&r), "{r}");
    assert_eq!(
        s.calls_to("b.deploy_tool").len(),
        1,
        "the condition skipped deploy"
    );

    let wf = elicit_workflow("onCancel: {action: skip_remaining}");
    s.elicit_answer = Some(json!({"action": "cancel"}));
    let r = wf.call(&s, Map::new()).await;
    assert!(!failed(&r), "{r}");
    assert_eq!(
        r["structuredContent"],
        json!({"action": "cancel", "skipped": true})
    );
}

#[tokio::test]
async fn skip_remaining_skips_the_remaining_steps_even_when_they_would_run() {
    let wf = workflow(
        r#"
  - name: ask
    description: d
    steps:
      - {id: confirm, type: elicitation, message: ok?, schema: {type: object, properties: {ok: {type: boolean}}}, onDecline: {action: skip_remaining}}
      - {id: act, tool: b.act, dependsOn: [confirm]}
"#,
    );
    let mut s = Script::default().returns("b.act", json!({}));
    s.elicit_answer = Some(json!({"action": "decline"}));
    let r = wf.call(&s, Map::new()).await;
    assert!(!failed(&r), "{r}");
    assert!(
        s.calls().is_empty(),
        "ToolHive would call b.act here; the name says skip"
    );
    assert!(
        s.events
            .lock()
            .unwrap()
            .contains(&"skipped act 2/2".to_owned())
    );
}

#[tokio::test(start_paused = true)]
async fn an_unanswered_elicitation_times_out_as_a_cancel() {
    let wf = workflow(
        r#"
  - name: ask
    description: d
    steps:
      - {id: confirm, type: elicitation, message: ok?, timeout: 1s, schema: {type: object, properties: {ok: {type: boolean}}}}
"#,
    );
    let mut s = Script::default();
    s.elicit_delay = Some(Duration::from_secs(3600));
    s.elicit_answer = Some(json!({"action": "accept", "content": {}}));
    let r = wf.call(&s, Map::new()).await;
    assert!(text(&r).ends_with("elicitation request timed out"), "{r}");
}

#[tokio::test]
async fn scenario_10_parallel_fan_in_renders_missing_fields_as_no_value() {
    let wf = workflow(
        r#"
  - name: fan
    description: d
    steps:
      - {id: echo_backend1, tool: a.echo, arguments: {input: one}}
      - {id: echo_backend2, tool: b.echo, arguments: {input: two}}
      - id: combine_results
        tool: a.echo
        dependsOn: [echo_backend1, echo_backend2]
        arguments: {input: "Combined: [{{ .steps.echo_backend1.result }}] + [{{ .steps.echo_backend2.result }}]"}
"#,
    );
    let mut s = Script::default()
        .tool("a.echo", |a, _| {
            Ok(json!({"content": [{"type": "text", "text": a["input"]}]}))
        })
        .tool("b.echo", |a, _| {
            Ok(json!({"content": [{"type": "text", "text": a["input"]}]}))
        });
    s.tool_delay = Some(Duration::from_millis(50));
    let r = wf.call(&s, Map::new()).await;
    assert_eq!(
        s.max_in_flight.load(Ordering::SeqCst),
        2,
        "the two independent steps overlap"
    );
    assert_eq!(
        s.calls_to("a.echo").last().unwrap(),
        &json!({"input": "Combined: [<no value>] + [<no value>]"})
    );
    assert!(!failed(&r));
}

#[tokio::test]
async fn continue_on_error_records_the_failure_and_runs_dependents() {
    let wf = workflow(
        r#"
  - name: c
    description: d
    steps:
      - {id: bad, tool: b.bad, onError: {action: continue}, defaultResults: {v: fallback}}
      - {id: next, tool: b.echo, dependsOn: [bad], arguments: {v: "{{.steps.bad.output.v}}", s: "{{.steps.bad.status}}", e: "{{.steps.bad.error}}"}}
"#,
    );
    let s = Script::default()
        .tool("b.bad", |_, _| Err("exploded".into()))
        .tool("b.echo", |a, _| {
            Ok(json!({"content": [], "structuredContent": a.clone()}))
        });
    let r = wf.call(&s, Map::new()).await;
    assert_eq!(
        r["structuredContent"],
        json!({"v": "fallback", "s": "failed", "e": "exploded"})
    );
}

#[tokio::test]
async fn an_aborting_failure_cancels_running_siblings_and_names_the_step() {
    let wf = workflow(
        r#"
  - name: c
    description: d
    steps:
      - {id: slow, tool: b.slow}
      - {id: bad, tool: b.bad}
      - {id: after, tool: b.slow, dependsOn: [slow, bad]}
"#,
    );
    let s = Script::default()
        .tool("b.slow", |_, _| Ok(json!({"content": []})))
        .tool("b.bad", |_, _| {
            Ok(json!({"isError": true, "content": [], "structuredContent": {"error": "quota"}}))
        });
    let r = wf.call(&s, Map::new()).await;
    assert_eq!(
        text(&r),
        "Workflow execution failed: step \"bad\" failed: quota"
    );
    assert!(s.calls_to("b.slow").len() <= 1, "`after` never ran");
}

#[tokio::test(start_paused = true)]
async fn step_and_workflow_timeouts() {
    let wf = workflow(
        r#"
  - name: t
    description: d
    steps:
      - {id: hang, tool: b.hang, timeout: 2s}
"#,
    );
    let mut s = Script::default().returns("b.hang", json!({}));
    s.tool_delay = Some(Duration::from_secs(3600));
    let r = wf.call(&s, Map::new()).await;
    assert_eq!(
        text(&r),
        "Workflow execution failed: step \"hang\" failed: timed out after 2s"
    );

    let wf = workflow(
        r#"
  - name: t
    description: d
    timeout: 1s
    steps:
      - {id: hang, tool: b.hang}
"#,
    );
    let r = wf.call(&s, Map::new()).await;
    assert_eq!(text(&r), "Workflow execution failed: workflow timed out");
    assert_eq!(
        s.events.lock().unwrap().last().unwrap(),
        "workflow t timed_out steps=1 error=workflow timed out"
    );
}

#[tokio::test]
async fn conditions_must_render_a_boolean_and_params_get_defaults() {
    let wf = workflow(
        r#"
  - name: c
    description: d
    parameters: {type: object, properties: {env: {type: string, default: staging}}}
    steps:
      - {id: s, tool: b.echo, condition: "{{.params.env}}"}
"#,
    );
    let s = Script::default().returns("b.echo", json!({}));
    let r = wf.call(&s, Map::new()).await;
    assert_eq!(
        text(&r),
        "Workflow execution failed: step \"s\" failed: condition must render true or false, got \"staging\""
    );
    let wf = workflow(
        r#"
  - name: c
    description: d
    parameters: {type: object, properties: {env: {type: string, default: staging}}}
    steps:
      - {id: s, tool: b.echo, condition: "{{eq .params.env \"staging\"}}", arguments: {env: "{{.params.env}}"}, defaultResults: {}}
"#,
    );
    let r = wf.call(&s, Map::new()).await;
    assert!(!failed(&r), "{r}");
    assert_eq!(s.calls_to("b.echo"), vec![json!({"env": "staging"})]);
}

#[tokio::test]
async fn without_output_the_last_completed_step_is_the_result_and_null_is_null() {
    let wf = workflow(
        r#"
  - name: c
    description: d
    steps:
      - {id: s, tool: b.off, condition: "{{eq 1 2}}"}
"#,
    );
    let s = Script::default();
    let r = wf.call(&s, Map::new()).await;
    assert_eq!(text(&r), "null");
    assert!(r.get("structuredContent").is_none());
}

#[tokio::test]
async fn workflow_context_is_visible_to_templates() {
    let wf = workflow(
        r#"
  - name: c
    description: d
    steps:
      - {id: s, tool: b.echo, arguments: {count: "{{.workflow.step_count}}", status: "{{.workflow.status}}", id: "{{len .workflow.id}}"}}
"#,
    );
    let s = Script::default().tool("b.echo", |a, _| {
        Ok(json!({"content": [], "structuredContent": a.clone()}))
    });
    let r = wf.call(&s, Map::new()).await;
    assert_eq!(
        r["structuredContent"],
        json!({"count": "1", "status": "pending", "id": "32"})
    );
}

#[tokio::test]
async fn required_output_fields_must_be_produced() {
    let wf = workflow(
        r#"
  - name: c
    description: d
    steps: [{id: s, tool: b.get}]
    output:
      properties:
        url: {type: string, description: u, value: "{{.steps.s.output.url}}"}
      required: [url]
"#,
    );
    let s = Script::default().returns("b.get", json!({}));
    let r = wf.call(&s, Map::new()).await;
    assert!(failed(&r));
    assert!(
        text(&r).contains("output property \"url\": its value is missing"),
        "{r}"
    );
}

#[tokio::test]
async fn progress_events_come_per_step() {
    let wf = workflow(
        r#"
  - name: c
    description: d
    steps:
      - {id: a, tool: b.x}
      - {id: b, tool: b.x, dependsOn: [a]}
"#,
    );
    let s = Script::default().returns("b.x", json!({}));
    wf.call(&s, Map::new()).await;
    assert_eq!(
        *s.events.lock().unwrap(),
        vec![
            "workflow c {}",
            "start a tool b.x",
            "completed a 1/2",
            "start b tool b.x",
            "completed b 2/2",
            "workflow c completed steps=2 error=-"
        ]
    );
}

const ROUNDS: &str = r#"
  - name: deploy
    description: d
    steps:
      - {id: build, tool: b.build}
      - {id: lint, tool: b.lint}
      - id: confirm
        type: elicitation
        dependsOn: [build]
        message: "Deploy build {{.steps.build.output.n}}?"
        schema: {type: object, properties: {env: {type: string}}}
        onDecline: {action: skip_remaining}
      - {id: deploy, tool: b.deploy, dependsOn: [confirm, lint], arguments: {env: "{{.steps.confirm.output.content.env}}", n: "{{.steps.build.output.n}}"}}
"#;

fn rounds_script() -> Script {
    Script::default()
        .returns("b.build", json!({"n": 7}))
        .returns("b.lint", json!({"ok": true}))
        .tool("b.deploy", |a, _| {
            Ok(json!({"content": [], "structuredContent": a.clone()}))
        })
}

#[tokio::test]
async fn in_rounds_the_workflow_stops_at_the_question_and_resumes_without_rerunning_steps() {
    let wf = workflow(ROUNDS);
    let s = rounds_script();
    let Round::NeedsInput {
        requests,
        state,
        expires_in,
    } = wf.call_in_rounds(&s, Map::new(), None).await
    else {
        panic!("expected a question")
    };
    assert_eq!(
        Value::Object(requests),
        json!({"confirm": {"method": "elicitation/create", "params": {"mode": "form",
            "message": "Deploy build 7?", "requestedSchema": {"type": "object", "properties": {"env": {"type": "string"}}}}}})
    );
    assert_eq!(expires_in, Duration::from_secs(300));
    assert_eq!(s.calls_to("b.build").len(), 1);
    assert_eq!(
        s.calls_to("b.lint").len(),
        1,
        "independent steps run before the round ends"
    );
    assert!(s.calls_to("b.deploy").is_empty());

    // Round two: the answer comes with the state; build and lint do not run again.
    let resume = Resume {
        state: state.clone(),
        answers: args(json!({"confirm": {"action": "accept", "content": {"env": "prod"}}})),
        ..Default::default()
    };
    let Round::Done(r) = wf.call_in_rounds(&s, Map::new(), Some(&resume)).await else {
        panic!("expected the end")
    };
    assert_eq!(
        r["structuredContent"],
        json!({"env": "prod", "n": "7"}),
        "{r}"
    );
    assert_eq!(s.calls_to("b.build").len(), 1);
    assert_eq!(s.calls_to("b.lint").len(), 1);
    let events = s.events.lock().unwrap().clone();
    assert_eq!(
        events
            .iter()
            .filter(|e| e.starts_with("workflow deploy"))
            .count(),
        2,
        "one start and one end over both rounds: {events:?}"
    );

    // A decline with skip_remaining skips deploy.
    let resume = Resume {
        state: state.clone(),
        answers: args(json!({"confirm": {"action": "decline"}})),
        ..Default::default()
    };
    let Round::Done(r) = wf.call_in_rounds(&s, Map::new(), Some(&resume)).await else {
        panic!("expected the end")
    };
    assert!(r.get("isError").is_none(), "{r}");
    assert_eq!(s.calls_to("b.deploy").len(), 1);

    // No answer for the question: it is asked again, nothing reruns.
    let resume = Resume {
        state: state.clone(),
        ..Default::default()
    };
    assert!(matches!(
        wf.call_in_rounds(&s, Map::new(), Some(&resume)).await,
        Round::NeedsInput { .. }
    ));
    assert_eq!(s.calls_to("b.build").len(), 1);
}

#[tokio::test]
async fn in_rounds_a_workflow_without_questions_just_runs() {
    let wf = workflow("  - name: plain\n    description: d\n    steps: [{id: a, tool: b.build}]\n");
    let s = rounds_script();
    let Round::Done(r) = wf.call_in_rounds(&s, Map::new(), None).await else {
        panic!("no question to ask")
    };
    assert_eq!(r["structuredContent"], json!({"n": 7}));
}

#[tokio::test]
async fn in_rounds_steps_that_do_not_wait_on_the_question_run_in_the_first_round() {
    let wf = workflow(
        r#"
  - name: r
    description: d
    steps:
      - {id: ask, type: elicitation, message: m, schema: {type: object, properties: {ok: {type: boolean}}}}
      - {id: first, tool: b.build}
      - {id: second, tool: b.lint, dependsOn: [first]}
      - {id: gated, tool: b.deploy, dependsOn: [ask]}
"#,
    );
    let s = rounds_script();
    let Round::NeedsInput { requests, .. } = wf.call_in_rounds(&s, Map::new(), None).await else {
        panic!("expected a question")
    };
    assert!(requests.contains_key("ask"));
    assert_eq!(s.calls_to("b.build").len(), 1);
    assert_eq!(
        s.calls_to("b.lint").len(),
        1,
        "a chain independent of the question runs"
    );
    assert!(s.calls_to("b.deploy").is_empty());
}

#[tokio::test]
async fn in_rounds_only_asked_questions_take_answers_and_late_answers_time_out() {
    let wf = workflow(
        r#"
  - name: gates
    description: d
    steps:
      - {id: first, type: elicitation, message: one, schema: {type: object, properties: {ok: {type: boolean}}}}
      - {id: build, tool: b.build, dependsOn: [first]}
      - {id: approve, type: elicitation, dependsOn: [build], message: two, schema: {type: object, properties: {ok: {type: boolean}}}}
      - {id: deploy, tool: b.deploy, dependsOn: [approve]}
"#,
    );
    let s = rounds_script();
    let Round::NeedsInput { state, .. } = wf.call_in_rounds(&s, Map::new(), None).await else {
        panic!("first question")
    };
    // The client answers the second gate before being shown it: that answer is ignored.
    let resume = Resume {
        state: state.clone(),
        answers: args(
            json!({"first": {"action": "accept", "content": {"ok": true}},
            "approve": {"action": "accept", "content": {"ok": true}}}),
        ),
        ..Default::default()
    };
    let Round::NeedsInput { requests, .. } = wf.call_in_rounds(&s, Map::new(), Some(&resume)).await
    else {
        panic!("the second gate must still be asked")
    };
    assert!(requests.contains_key("approve"), "{requests:?}");
    assert!(s.calls_to("b.deploy").is_empty());
    // An answer after the question's time: the step times out (no onCancel: the run fails).
    let late = Resume {
        state,
        timed_out: true,
        ..Default::default()
    };
    let Round::Done(r) = wf.call_in_rounds(&s, Map::new(), Some(&late)).await else {
        panic!("ends")
    };
    assert_eq!(
        text(&r),
        "Workflow execution failed: step \"first\" failed: elicitation request timed out"
    );
}

#[tokio::test]
async fn skip_remaining_leaves_the_output_of_skipped_steps_null() {
    let wf = workflow(
        r#"
  - name: partial
    description: d
    steps:
      - {id: confirm, type: elicitation, message: go?, schema: {type: object, properties: {ok: {type: boolean}}}, onDecline: {action: skip_remaining}}
      - {id: deploy, tool: b.deploy, dependsOn: [confirm]}
    output:
      properties:
        url: {type: string, description: u, value: "{{.steps.deploy.output.url}}"}
        answer: {type: string, description: a, value: "{{.steps.confirm.output.action}}"}
      required: [url]
"#,
    );
    let mut s = rounds_script();
    s.elicit_answer = Some(json!({"action": "decline"}));
    let r = wf.call(&s, Map::new()).await;
    assert_eq!(
        r["structuredContent"],
        json!({"url": null, "answer": "decline"}),
        "{r}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_for_each_timeout_bounds_all_its_iterations() {
    let wf = workflow(
        r#"
  - name: each
    description: d
    steps:
      - id: each
        type: forEach
        collection: "[1,2,3,4]"
        maxParallel: 1
        timeout: 3s
        step: {type: tool, tool: b.slow, timeout: 2s}
"#,
    );
    let mut s = Script::default().returns("b.slow", json!({}));
    s.tool_delay = Some(Duration::from_millis(1400));
    let r = wf.call(&s, Map::new()).await;
    assert_eq!(
        text(&r),
        "Workflow execution failed: step \"each\" failed: timed out after 3s"
    );
    assert_eq!(
        s.calls_to("b.slow").len(),
        3,
        "the fourth would start after 4.2 s"
    );
}

#[tokio::test]
async fn in_rounds_skip_remaining_also_skips_questions_still_pending() {
    let wf = workflow(
        r#"
  - name: two
    description: d
    steps:
      - {id: stop, type: elicitation, message: stop?, schema: {type: object, properties: {ok: {type: boolean}}}, onDecline: {action: skip_remaining}}
      - {id: q2, type: elicitation, message: more?, schema: {type: object, properties: {ok: {type: boolean}}}}
"#,
    );
    let s = rounds_script();
    let Round::NeedsInput {
        requests, state, ..
    } = wf.call_in_rounds(&s, Map::new(), None).await
    else {
        panic!("two questions")
    };
    assert_eq!(requests.len(), 2);
    let resume = Resume {
        state,
        answers: args(json!({"stop": {"action": "decline"}})),
        ..Default::default()
    };
    let Round::Done(r) = wf.call_in_rounds(&s, Map::new(), Some(&resume)).await else {
        panic!("skip_remaining ends the run; q2 is not asked again")
    };
    assert!(r.get("isError").is_none(), "{r}");
    let events = s.events.lock().unwrap().clone();
    assert!(events.contains(&"skipped q2 2/2".to_owned()), "{events:?}");
}
