//! The host/worker round trip, end to end, through the crate's `vmcp-script-worker` binary.
#![allow(clippy::unwrap_used, missing_docs)]

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use vmcp_codemode::worker::run_in_worker;
use vmcp_codemode::{Job, Outcome, ToolInfo};

const WORKER: &str = env!("CARGO_BIN_EXE_vmcp-script-worker");

fn job(script: &str) -> Job {
    Job {
        script: script.to_owned(),
        data: serde_json::Map::new(),
        tools: ["echo", "slow", "fail"]
            .iter()
            .map(|n| ToolInfo {
                name: (*n).to_owned(),
                description: format!("the {n} tool"),
            })
            .collect(),
        step_limit: 100_000,
        parallel_max_concurrency: 10,
    }
}

/// A fake gateway: `echo` answers its arguments, `slow` sleeps 100 ms first (counting how many
/// run at once), `fail` is denied.
#[derive(Clone, Default)]
struct Gateway {
    calls: Arc<AtomicUsize>,
    in_flight: Arc<AtomicUsize>,
    max_in_flight: Arc<AtomicUsize>,
}

impl Gateway {
    fn on_call(
        &self,
    ) -> impl FnMut(String, Value) -> std::pin::Pin<Box<dyn Future<Output = Result<Value, String>> + Send>>
    {
        let gw = self.clone();
        move |name, arguments| {
            let gw = gw.clone();
            Box::pin(async move {
                gw.calls.fetch_add(1, Ordering::SeqCst);
                let text = |t: String| json!({ "content": [{ "type": "text", "text": t }] });
                match name.as_str() {
                    "echo" => Ok(text(arguments.to_string())),
                    "slow" => {
                        let now = gw.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                        gw.max_in_flight.fetch_max(now, Ordering::SeqCst);
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        gw.in_flight.fetch_sub(1, Ordering::SeqCst);
                        Ok(json!({ "structuredContent": { "result": arguments["arg0"].clone() } }))
                    }
                    _ => Err("call denied by authorization policy".to_owned()),
                }
            })
        }
    }
}

async fn run(job: &Job, gw: &Gateway, timeout: Duration) -> Outcome {
    run_in_worker(Path::new(WORKER), &[], job, gw.on_call(), timeout).await
}

#[tokio::test]
async fn round_trip_with_sequential_and_parallel_calls() {
    let gw = Gateway::default();
    let mut j = job("a = echo(1, k=\"v\")\nprint(\"got\", a[\"k\"])\n\
         r = parallel([lambda: slow(1), lambda: slow(2), lambda: slow(3)])\n\
         return {\"a\": a, \"r\": r, \"d\": d}");
    j.data
        .insert("d".into(), json!({ "nested": [1, 2.5, null] }));
    let outcome = run(&j, &gw, Duration::from_secs(30)).await;
    assert_eq!(
        outcome,
        Outcome::Ok {
            value: json!({ "a": { "arg0": 1, "k": "v" }, "r": [1, 2, 3], "d": { "nested": [1, 2.5, null] } }),
            logs: vec!["got v".into()],
        }
    );
    assert_eq!(gw.calls.load(Ordering::SeqCst), 4);
    assert!(
        gw.max_in_flight.load(Ordering::SeqCst) >= 2,
        "parallel calls did not overlap"
    );
}

#[tokio::test]
async fn parallel_respects_max_concurrency() {
    let gw = Gateway::default();
    let mut j = job(
        "return parallel([lambda: slow(1), lambda: slow(2), lambda: slow(3), lambda: slow(4)])",
    );
    j.parallel_max_concurrency = 2;
    let outcome = run(&j, &gw, Duration::from_secs(30)).await;
    assert!(
        matches!(outcome, Outcome::Ok { ref value, .. } if *value == json!([1, 2, 3, 4])),
        "{outcome:?}"
    );
    assert_eq!(gw.max_in_flight.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn errors_come_back_as_messages() {
    let gw = Gateway::default();
    let outcome = run(&job("return fail()"), &gw, Duration::from_secs(30)).await;
    match outcome {
        Outcome::Err(e) => {
            assert!(
                e.starts_with("script execution failed: script.star:2:12: "),
                "{e}"
            );
            assert!(e.ends_with("call denied by authorization policy"), "{e}");
        }
        other => panic!("{other:?}"),
    }
    let outcome = run(&job("return ("), &gw, Duration::from_secs(30)).await;
    assert!(
        matches!(outcome, Outcome::Err(ref e) if e.starts_with("script execution failed: script.star:")),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn memory_bomb_kills_only_the_worker() {
    let gw = Gateway::default();
    let outcome = run(
        &job("return [0] * 2000000000"),
        &gw,
        Duration::from_secs(30),
    )
    .await;
    assert_eq!(
        outcome,
        Outcome::Err("script execution failed: script exceeded its memory limit".into())
    );
    // The heap check catches slow growth before the address-space limit.
    let outcome = run(
        &job("s = \"x\" * 1000000\nl = []\nfor i in range(400):\n    l.append(s + str(i))\nreturn len(l)"),
        &gw,
        Duration::from_secs(30),
    )
    .await;
    assert!(
        matches!(outcome, Outcome::Err(ref e) if e.contains("exceeded its memory limit")),
        "{outcome:?}"
    );
    // And this process is fine: the next script runs.
    let outcome = run(&job("return 1"), &gw, Duration::from_secs(30)).await;
    assert_eq!(
        outcome,
        Outcome::Ok {
            value: json!(1),
            logs: vec![]
        }
    );
}

#[tokio::test]
async fn wall_clock_ends_a_runaway_statement() {
    let gw = Gateway::default();
    // One statement, 10^10 iterations: no statement boundary for the step hook.
    let started = Instant::now();
    let outcome = run(
        &job("return len([1 for a in range(100000) for b in range(100000)])"),
        &gw,
        Duration::from_secs(2),
    )
    .await;
    assert_eq!(
        outcome,
        Outcome::Err("script execution failed: script exceeded its 2s time limit".into())
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test]
async fn missing_worker_binary_is_an_error() {
    let gw = Gateway::default();
    let outcome = run_in_worker(
        Path::new("/nonexistent/worker"),
        &[],
        &job("return 1"),
        gw.on_call(),
        Duration::from_secs(5),
    )
    .await;
    assert!(
        matches!(outcome, Outcome::Err(ref e) if e.contains("cannot start the script worker")),
        "{outcome:?}"
    );
}
