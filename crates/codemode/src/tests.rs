#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};

use crate::sanitize::bind_names;
use crate::{
    Job, Outcome, TOO_MANY_STEPS, ToolHost, ToolInfo, result_content, run, sanitize_tool_name,
};

/// Answers by tool name and records every call and every `parallel` round.
#[derive(Default)]
struct FakeHost {
    calls: Vec<(String, Value)>,
    batches: Vec<Vec<String>>,
}

fn text(t: &str) -> Value {
    json!({ "content": [{ "type": "text", "text": t }] })
}

impl ToolHost for FakeHost {
    fn call(&mut self, name: &str, arguments: Value) -> Result<Value, String> {
        self.calls.push((name.to_owned(), arguments.clone()));
        match name {
            "echo" | "my-tool.v2" | "2fast" | "if" => Ok(text(&arguments.to_string())),
            "text" => Ok(text("hello world")),
            "add" => {
                let a = arguments["arg0"].as_i64().unwrap_or(0);
                let b = arguments["arg1"].as_i64().unwrap_or(0);
                Ok(text(&(a + b).to_string()))
            }
            "fail" => {
                Ok(json!({ "isError": true, "content": [{ "type": "text", "text": "boom" }] }))
            }
            "fail_silent" => Ok(json!({ "isError": true, "content": [] })),
            "structured" => Ok(json!({ "structuredContent": { "result": [1, 2] }, "content": [] })),
            "structured_obj" => Ok(json!({ "structuredContent": { "a": 1, "b": 2 } })),
            "empty" => Ok(json!({ "content": [] })),
            "denied" => Err("call denied by authorization policy".to_owned()),
            _ => Err(format!("no such tool {name}")),
        }
    }

    fn call_batch(&mut self, calls: Vec<(String, Value)>) -> Vec<Result<Value, String>> {
        self.batches
            .push(calls.iter().map(|(n, _)| n.clone()).collect());
        calls.into_iter().map(|(n, a)| self.call(&n, a)).collect()
    }
}

const TOOLS: &[&str] = &[
    "echo",
    "text",
    "add",
    "fail",
    "fail_silent",
    "structured",
    "structured_obj",
    "empty",
    "denied",
    "my-tool.v2",
    "2fast",
    "if",
];

fn job(script: &str) -> Job {
    Job {
        script: script.to_owned(),
        data: serde_json::Map::new(),
        tools: TOOLS
            .iter()
            .map(|n| ToolInfo {
                name: (*n).to_owned(),
                description: String::new(),
            })
            .collect(),
        step_limit: 100_000,
        parallel_max_concurrency: 10,
    }
}

fn run_job(job: &Job) -> (Outcome, FakeHost) {
    let mut host = FakeHost::default();
    let outcome = run(job, &mut host);
    (outcome, host)
}

fn ok(script: &str) -> Value {
    match run_job(&job(script)).0 {
        Outcome::Ok { value, .. } => value,
        Outcome::Err(e) => panic!("script failed: {e}"),
    }
}

fn err_of(job: &Job) -> String {
    match run_job(job).0 {
        Outcome::Ok { value, .. } => panic!("script succeeded with {value}"),
        Outcome::Err(e) => e,
    }
}

fn err(script: &str) -> String {
    err_of(&job(script))
}

#[test]
fn top_level_return_and_none() {
    assert_eq!(
        ok("x = 1 + 2\nreturn {\"x\": x, \"l\": [1, (2, 3)], \"n\": None, \"f\": 1.5}"),
        json!({ "x": 3, "l": [1, [2, 3]], "n": null, "f": 1.5 })
    );
    assert_eq!(ok("x = 1"), Value::Null);
}

#[test]
fn wrapping_matches_toolhive() {
    assert_eq!(
        crate::engine::wrap_script("x = 1\nreturn x"),
        "def __main__():\n    x = 1\n    return x\n__result__ = __main__()\n"
    );
}

#[test]
fn print_is_collected_and_shaped_like_toolhive() {
    let (outcome, _) = run_job(&job("print(\"a\")\nprint(\"b\", 1)\nreturn [1]"));
    assert_eq!(
        outcome,
        Outcome::Ok {
            value: json!([1]),
            logs: vec!["a".into(), "b 1".into()]
        }
    );
    assert_eq!(
        result_content(&outcome),
        json!({ "content": [
            { "type": "text", "text": "[1]" },
            { "type": "text", "text": "Script logs:\na\nb 1" },
        ] })
    );
    assert_eq!(
        result_content(&Outcome::Ok {
            value: Value::Null,
            logs: vec![]
        }),
        json!({ "content": [{ "type": "text", "text": "null" }] })
    );
    assert_eq!(
        result_content(&Outcome::Err("script execution failed: x".into())),
        json!({ "isError": true, "content": [{ "type": "text", "text": "script execution failed: x" }] })
    );
}

#[test]
fn print_output_is_capped() {
    let e = err("for i in range(2000):\n    print(\"x\" * 1000)");
    assert!(
        e.starts_with("script execution failed: ") && e.contains("print output exceeds 1 MiB"),
        "{e}"
    );
}

#[test]
fn step_limit_stops_loops_through_before_stmt_hook() {
    // Guards the hidden `Evaluator::before_stmt_for_dap`: if it stopped working, this would
    // run 10^6 statements and succeed.
    let mut j =
        job("n = 0\nfor i in range(1000):\n    for k in range(1000):\n        n += 1\nreturn n");
    j.step_limit = 10_000;
    let e = err_of(&j);
    assert!(
        e.starts_with("script execution failed: ") && e.contains(TOO_MANY_STEPS),
        "{e}"
    );
    // Below the limit, the same shape finishes.
    j.script =
        "n = 0\nfor i in range(10):\n    for k in range(10):\n        n += 1\nreturn n".into();
    assert!(matches!(run_job(&j).0, Outcome::Ok { value, .. } if value == json!(100)));
}

#[test]
fn recursion_is_bounded() {
    let e = err("def f(n):\n    return f(n + 1)\nreturn f(0)");
    assert!(e.starts_with("script execution failed: "), "{e}");
    assert!(e.to_lowercase().contains("stack"), "{e}");
}

#[test]
fn range_override_replaces_the_builtin() {
    let mut j = job("return len(range(1001))");
    j.step_limit = 1000;
    let e = err_of(&j);
    assert!(
        e.contains("range of 1001 elements exceeds the script step limit (1000)"),
        "{e}"
    );
    j.script =
        "return [len(range(1000)), list(range(10, 0, -3)), type(range(2)), len(range(5, 1))]"
            .into();
    assert!(
        matches!(run_job(&j).0, Outcome::Ok { value, .. } if value == json!([1000, [10, 7, 4, 1], "range", 0]))
    );
    // The standard range would accept this at once.
    j.script = "return len(range(0, 2000000000, 1))".into();
    assert!(err_of(&j).contains("exceeds the script step limit"));
    j.script = "return range(1, 2, 0)".into();
    assert!(err_of(&j).contains("cannot be zero"));
}

#[test]
fn load_is_refused_with_toolhive_message() {
    assert_eq!(
        err("load(\"foo.star\", \"x\")\nreturn 1"),
        "script execution failed: load(\"foo.star\") is not permitted in scripts"
    );
}

#[test]
fn syntax_errors_are_engine_failures_with_a_position() {
    let e = err("return (");
    assert!(
        e.starts_with("script execution failed: script.star:"),
        "{e}"
    );
}

#[test]
fn data_keys_are_variables_and_conflicts_are_refused() {
    let mut j = job("return n * len(items)");
    j.data.insert("n".into(), json!(2));
    j.data.insert("items".into(), json!([1, 2, 3]));
    assert!(matches!(run_job(&j).0, Outcome::Ok { value, .. } if value == json!(6)));
    for key in [
        "len",
        "echo",
        "my_tool_v2",
        "call_tool",
        "parallel",
        "print",
        "range",
    ] {
        let mut j = job("return 1");
        j.data.insert(key.into(), json!(1));
        assert_eq!(
            err_of(&j),
            format!("data argument \"{key}\" conflicts with a builtin or tool name")
        );
    }
}

#[test]
fn tools_by_function_and_by_call_tool() {
    let (outcome, host) = run_job(&job(
        "return [echo(1, \"a\", k=True), call_tool(\"echo\", index=5), add(2, 3)]",
    ));
    assert_eq!(
        outcome,
        Outcome::Ok {
            value: json!([{ "arg0": 1, "arg1": "a", "k": true }, { "index": 5 }, 5]),
            logs: vec![]
        }
    );
    assert_eq!(
        host.calls[0],
        (
            "echo".to_owned(),
            json!({ "arg0": 1, "arg1": "a", "k": true })
        )
    );
    assert_eq!(host.calls.len(), 3);
    assert!(host.batches.is_empty());
}

#[test]
fn sanitised_names_and_keywords() {
    let (outcome, host) = run_job(&job(
        "return [my_tool_v2(x=1), _2fast(), call_tool(\"if\"), call_tool(\"my-tool.v2\")]",
    ));
    assert!(matches!(outcome, Outcome::Ok { .. }), "{outcome:?}");
    let names: Vec<&str> = host.calls.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["my-tool.v2", "2fast", "if", "my-tool.v2"]);
    assert_eq!(sanitize_tool_name("my-tool.v2"), "my_tool_v2");
    assert_eq!(sanitize_tool_name("2fast"), "_2fast");
    assert_eq!(sanitize_tool_name("héllo world"), "h_llo_world");
    let tools: Vec<ToolInfo> = ["a-b", "a.b", "if", "", "call_tool", "ok"]
        .iter()
        .map(|n| ToolInfo {
            name: (*n).into(),
            description: String::new(),
        })
        .collect();
    assert_eq!(
        bind_names(&tools),
        [
            Some("a_b".to_owned()),
            None,
            None,
            None,
            None,
            Some("ok".to_owned())
        ]
    );
}

#[test]
fn call_tool_errors() {
    assert_eq!(
        err("return call_tool(1)"),
        "script execution failed: script.star:2:12: call_tool: first argument must be a string, got int"
    );
    assert!(err("return call_tool(\"nope\")").ends_with("call_tool: unknown tool \"nope\""));
    // A sanitised name is not a tool name.
    assert!(
        err("return call_tool(\"my_tool_v2\")").ends_with("call_tool: unknown tool \"my_tool_v2\"")
    );
}

#[test]
fn inner_results() {
    assert_eq!(ok("return text()"), json!("hello world"));
    assert_eq!(ok("return structured()"), json!([1, 2]));
    assert_eq!(ok("return structured_obj()"), json!({ "a": 1, "b": 2 }));
    assert_eq!(ok("return empty()"), Value::Null);
    let e = err("x = fail()\nreturn x");
    assert!(
        e.starts_with("script execution failed: ") && e.ends_with("boom"),
        "{e}"
    );
    assert!(err("return fail_silent()").ends_with("tool execution error"));
    assert!(err("return denied()").ends_with("call denied by authorization policy"));
}

#[test]
fn parallel_runs_in_rounds_and_keeps_order() {
    let script = "def third():\n    a = echo(j=2)\n    print(\"third\")\n    return [a, echo(j=3)]\n\
                  def first():\n    print(\"first\")\n    return echo(i=1)\n\
                  return parallel([first, lambda: add(1, 2), third])";
    let (outcome, host) = run_job(&job(script));
    assert_eq!(
        outcome,
        Outcome::Ok {
            value: json!([{ "i": 1 }, 3, [{ "j": 2 }, { "j": 3 }]]),
            logs: vec!["first".into(), "third".into()],
        }
    );
    assert_eq!(
        host.batches,
        vec![vec!["echo", "add", "echo"], vec!["echo"]]
    );
    assert_eq!(host.calls.len(), 4);
}

#[test]
fn parallel_detects_non_determinism_and_refuses_nesting() {
    let script = "counter = [0]\ndef f():\n    counter[0] += 1\n    return echo(n=counter[0])\n\
                  return parallel([f])";
    let e = err(script);
    assert!(
        e.ends_with("parallel: callable 0 is not deterministic"),
        "{e}"
    );
    let e = err("return parallel([lambda: parallel([lambda: 1])])");
    assert!(
        e.ends_with("parallel: nested parallel calls are not supported"),
        "{e}"
    );
    let e = err("return parallel(1)");
    assert!(
        e.ends_with("parallel: argument must be a list of callables, got int"),
        "{e}"
    );
}

#[test]
fn parallel_first_error_by_index_after_all_finish() {
    let (outcome, host) = run_job(&job(
        "return parallel([lambda: echo(a=1), lambda: fail(), lambda: denied()])",
    ));
    match outcome {
        Outcome::Err(e) => assert!(e.ends_with("boom"), "{e}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(host.batches, vec![vec!["echo", "fail", "denied"]]);
    assert_eq!(ok("return parallel([])"), json!([]));
}

#[test]
fn conversions() {
    assert_eq!(
        ok("return [1 << 70, -(1 << 63), 1 << 63, -(1 << 70)]"),
        json!([
            "1180591620717411303424",
            -9_223_372_036_854_775_808_i64,
            "9223372036854775808",
            "-1180591620717411303424"
        ])
    );
    assert_eq!(
        ok("return {1: \"a\", (1, 2): \"b\", None: 3}"),
        json!({ "1": "a", "(1, 2)": "b", "None": 3 })
    );
    let v = ok("def g():\n    pass\nreturn [str(g) == [g][0] or True, range(3), float(\"inf\")]");
    assert_eq!(v[1], json!("range(3)"));
    assert_eq!(v[2], json!("+inf"));
    let mut j = job("return [type(f), type(g), type(h), type(u), u, f]");
    j.data.insert("f".into(), json!(3.0));
    j.data.insert("g".into(), json!(1e300));
    j.data.insert("h".into(), json!(2.5));
    j.data.insert("u".into(), json!(u64::MAX));
    assert!(matches!(run_job(&j).0, Outcome::Ok { value, .. }
        if value == json!(["int", "float", "float", "int", "18446744073709551615", 3])));
}

#[test]
fn nesting_deeper_than_the_cap_is_refused_both_ways() {
    let e = err("x = []\nfor i in range(200):\n    x = [x]\nreturn x");
    assert!(e.contains("nested more than 128 levels"), "{e}");
    // 126 nested lists inside the top one: 127 containers, the most allowed.
    let v = ok("x = []\nfor i in range(126):\n    x = [x]\nreturn x");
    assert!(serde_json::from_str::<Value>(&v.to_string()).is_ok());
    assert!(
        err("x = []\nfor i in range(127):\n    x = [x]\nreturn x").contains("nested more than")
    );
    // Arguments too.
    assert!(
        err("x = {}\nfor i in range(200):\n    x = {\"a\": x}\nreturn echo(x)")
            .contains("nested more than")
    );
    // And data coming in.
    let mut deep = json!(1);
    for _ in 0..200 {
        deep = json!([deep]);
    }
    let mut j = job("return 1");
    j.data.insert("d".into(), deep);
    let e = err_of(&j);
    assert!(
        e.starts_with("data argument \"d\": value is nested more than 128"),
        "{e}"
    );
}
