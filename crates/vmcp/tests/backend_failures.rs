//! Backends that hang, lie, crash or are missing: each failure is a JSON-RPC error naming the
//! backend, bounded by the timeout, and never takes the other backends down. Also process
//! supervision (restart, per-session isolation, reaping) and graceful shutdown.

#![allow(clippy::unwrap_used)] // Test helpers: a panic is the failure report.

mod common;

use std::time::{Duration, Instant};

use common::{
    Client, Gateway, children_matching, eventually, http_backend, stdio_backend, text_of,
};
use serde_json::{Value, json};
use vmcp_testkit::FixtureProcess;

async fn notes_and_weather(extra_yaml: &str) -> (Gateway, Client, FixtureProcess) {
    let weather = FixtureProcess::spawn_http(&["--name", "weather"]).await;
    let yaml = format!(
        "name: fail\nbackends:\n{}{}{extra_yaml}",
        stdio_backend("notes", ""),
        http_backend("weather", &weather.url)
    );
    let gw = Gateway::start(&yaml);
    let c = Client::connect(&gw.url).await;
    (gw, c, weather)
}

fn assert_backend_error(v: &Value, backend: &str, kind: &str) {
    let err = &v["error"];
    assert_eq!(err["code"], -32603, "{v}");
    assert_eq!(err["data"]["backend"], backend, "{v}");
    assert_eq!(err["data"]["kind"], kind, "{v}");
    assert!(err["message"].as_str().unwrap().contains(backend), "{v}");
}

#[tokio::test(flavor = "multi_thread")]
async fn hanging_backend_times_out_and_others_keep_serving() {
    let (_gw, c, _w) =
        notes_and_weather("operational:\n  timeouts:\n    perWorkload:\n      notes: 1s\n").await;
    let slow = c.clone();
    let started = Instant::now();
    let hang = tokio::spawn(async move { slow.call("notes_sleep", json!({"ms": 10_000})).await });
    // The other backend answers while notes hangs.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        text_of(&c.call("weather_echo", json!({"text": "alive"})).await),
        "alive"
    );
    let v = hang.await.unwrap();
    let took = started.elapsed();
    assert_backend_error(&v, "notes", "timeout");
    assert!(took < Duration::from_secs(5), "took {took:?}");
    // And notes itself still works for quick calls.
    assert_eq!(
        text_of(&c.call("notes_echo", json!({"text": "ok"})).await),
        "ok"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn garbage_from_http_backend_is_a_protocol_error() {
    let (_gw, c, _w) = notes_and_weather("").await;
    assert_backend_error(
        &c.call("weather_garbage", json!({})).await,
        "weather",
        "protocol",
    );
    assert_eq!(
        text_of(&c.call("weather_echo", json!({"text": "fine"})).await),
        "fine"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn garbage_from_stdio_backend_is_bounded_by_the_timeout() {
    let (_gw, c, _w) =
        notes_and_weather("operational:\n  timeouts:\n    perWorkload:\n      notes: 1s\n").await;
    let v = c.call("notes_garbage", json!({})).await;
    assert_backend_error(&v, "notes", "timeout");
    assert_eq!(
        text_of(&c.call("notes_echo", json!({"text": "after"})).await),
        "after"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn backend_json_rpc_errors_and_tool_errors_pass_through() {
    let (_gw, c, _w) = notes_and_weather("").await;
    let v = c.call("notes_rpc_error", json!({})).await;
    assert_eq!(v["error"]["code"], -32603);
    assert_eq!(v["error"]["message"], "fixture rpc error");
    assert_eq!(v["error"]["data"]["backend"], "notes");
    let v = c.call("weather_fail", json!({})).await;
    assert_eq!(v["result"]["isError"], true);
    assert_eq!(text_of(&v), "fixture failure");
}

#[tokio::test(flavor = "multi_thread")]
async fn stdio_backend_crash_mid_call_is_reported_and_restarted() {
    let (gw, c, _w) = notes_and_weather("").await;
    let before = children_matching(gw.pid(), "--name notes");
    assert_eq!(before.len(), 1, "one shared notes process");
    let v = c.call("notes_crash", json!({})).await;
    assert_backend_error(&v, "notes", "exited");
    assert_eq!(
        text_of(&c.call("weather_echo", json!({"text": "unaffected"})).await),
        "unaffected"
    );
    let back = eventually(Duration::from_secs(10), || {
        let c = c.clone();
        async move { text_of(&c.call("notes_echo", json!({"text": "back"})).await) == "back" }
    })
    .await;
    assert!(back, "notes was not restarted");
    let after = children_matching(gw.pid(), "--name notes");
    assert_eq!(after.len(), 1, "exactly one notes process after restart");
    assert_ne!(before, after, "a new process replaced the crashed one");
}

#[tokio::test(flavor = "multi_thread")]
async fn http_backend_exiting_mid_call_is_reported() {
    let (_gw, c, _w) = notes_and_weather("").await;
    let v = c.call("weather_crash", json!({})).await;
    assert_backend_error(&v, "weather", "unavailable");
    assert_eq!(
        text_of(&c.call("notes_echo", json!({"text": "still"})).await),
        "still"
    );
}

fn refused_url() -> String {
    // Bind then drop: nothing listens on this port afterwards.
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    format!("http://127.0.0.1:{port}/mcp")
}

#[tokio::test(flavor = "multi_thread")]
async fn partial_failure_fail_mode_refuses_sessions_with_503() {
    let yaml = format!(
        "name: pf\nbackends:\n{}{}",
        stdio_backend("notes", ""),
        http_backend("down", &refused_url())
    );
    let gw = Gateway::start(&yaml);
    let a = Client::new(&gw.url)
        .post_raw(None, json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}))
        .await;
    assert_eq!(a.status, 503);
    assert!(
        a.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("backend down"),
        "{}",
        a.text
    );
    let ready = common::http()
        .get(format!("{}/readyz", gw.base))
        .send()
        .await
        .unwrap();
    assert_eq!(ready.status().as_u16(), 503);
}

#[tokio::test(flavor = "multi_thread")]
async fn partial_failure_best_effort_serves_the_healthy_backends() {
    let yaml = format!(
        "name: pf\nbackends:\n{}{}operational:\n  failureHandling:\n    partialFailureMode: best_effort\n",
        stdio_backend("notes", ""),
        http_backend("down", &refused_url())
    );
    let gw = Gateway::start(&yaml);
    let c = Client::connect(&gw.url).await;
    let names = c.tool_names().await;
    assert!(
        names.iter().all(|n| n.starts_with("notes_")) && !names.is_empty(),
        "{names:?}"
    );
    let status = gw.status().await;
    let down = status["backends"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "down")
        .unwrap()
        .clone();
    assert_ne!(down["health"], "healthy");
    assert!(
        down["lastError"].as_str().is_some_and(|e| !e.is_empty()),
        "{down}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn discovery_past_its_budget_is_504() {
    // A "backend" that accepts connections and never answers.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let _hold = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = listener.accept().await {
            held.push(s);
        }
    });
    let yaml = format!(
        "name: slow\nbackends:\n{}server:\n  discoveryTimeout: 1s\n",
        http_backend("mute", &url)
    );
    let gw = Gateway::start(&yaml);
    let started = Instant::now();
    let a = Client::new(&gw.url)
        .post_raw(None, json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}))
        .await;
    assert_eq!(a.status, 504, "{}", a.text);
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test(flavor = "multi_thread")]
async fn per_session_isolation_gives_each_session_its_own_process_and_reaps_it() {
    let yaml = format!(
        "name: iso\nbackends:\n{}",
        stdio_backend("iso", "    isolation: perSession\n")
    );
    let gw = Gateway::start(&yaml);
    let a = Client::connect(&gw.url).await;
    let b = Client::connect(&gw.url).await;
    let base = children_matching(gw.pid(), "--name iso").len();
    assert_eq!(
        text_of(&a.call("iso_echo", json!({"text": "a"})).await),
        "a"
    );
    assert_eq!(
        text_of(&b.call("iso_echo", json!({"text": "b"})).await),
        "b"
    );
    assert_eq!(children_matching(gw.pid(), "--name iso").len(), base + 2);
    // Calls from the same session reuse its process.
    assert_eq!(text_of(&a.call("iso_whoami", json!({})).await), "iso");
    assert_eq!(children_matching(gw.pid(), "--name iso").len(), base + 2);
    assert_eq!(a.delete().await, 200);
    let reaped = eventually(Duration::from_secs(5), || async {
        children_matching(gw.pid(), "--name iso").len() == base + 1
    })
    .await;
    assert!(reaped, "the ended session's process was not reaped");
}

#[tokio::test(flavor = "multi_thread")]
async fn per_session_process_cap_is_enforced_with_a_clear_error() {
    let yaml = format!(
        "name: iso\nbackends:\n{}server:\n  maxPerSessionProcesses: 2\n",
        stdio_backend("iso", "    isolation: perSession\n")
    );
    let gw = Gateway::start(&yaml);
    // Discovery holds one connection; the first session takes the second.
    let a = Client::connect(&gw.url).await;
    assert_eq!(
        text_of(&a.call("iso_echo", json!({"text": "a"})).await),
        "a"
    );
    let b = Client::connect(&gw.url).await;
    let v = b.call("iso_echo", json!({"text": "b"})).await;
    assert_eq!(v["error"]["data"]["backend"], "iso", "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("limit"),
        "{v}"
    );
    assert!(children_matching(gw.pid(), "--name iso").len() <= 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_drains_in_flight_calls_and_reaps_children() {
    let log = common::temp_path("methods");
    let env = format!(
        "    env:\n      {}: {:?}\n",
        vmcp_testkit::METHOD_LOG_ENV,
        log.display().to_string()
    );
    let mut gw = Gateway::start(&format!(
        "name: fail\nbackends:\n{}",
        stdio_backend("notes", &env)
    ));
    let c = Client::connect(&gw.url).await;
    let children = children_matching(gw.pid(), "vmcp-fixture");
    assert!(!children.is_empty());
    let slow = c.clone();
    let call = tokio::spawn(async move { slow.call("notes_sleep", json!({"ms": 700})).await });
    // Terminate once the backend has the call, not after a guessed delay.
    let reached = eventually(Duration::from_secs(10), || async {
        std::fs::read_to_string(&log).is_ok_and(|m| m.lines().any(|l| l == "tools/call"))
    })
    .await;
    assert!(reached, "the call never reached the backend");
    let _ = std::fs::remove_file(&log);
    let status = tokio::task::spawn_blocking(move || {
        let s = gw.terminate();
        (s, gw)
    });
    let v = call.await.unwrap();
    assert_eq!(text_of(&v), "slept 700", "the in-flight call finished: {v}");
    let (status, _gw) = status.await.unwrap();
    assert!(status.success(), "{status:?}");
    for pid in children {
        assert!(
            !std::path::Path::new(&format!("/proc/{pid}")).exists(),
            "child {pid} survived the gateway"
        );
    }
}

/// A replica whose backend is down at startup is not ready, and turns ready by itself when the
/// backend comes up: behind a Kubernetes Service no client would reach it to retry.
#[tokio::test(flavor = "multi_thread")]
async fn readyz_turns_ready_without_a_client_once_a_backend_down_at_startup_is_up() {
    let fixture = FixtureProcess::spawn_http(&["--name", "late"]).await;
    let late = vmcp_testkit::FaultProxy::start(&fixture.url).await;
    late.set(vmcp_testkit::FaultMode::Refuse);
    let yaml = format!("name: pf\nbackends:\n{}", http_backend("late", &late.url));
    let gw = Gateway::start(&yaml);
    let ready = || async {
        common::http()
            .get(format!("{}/readyz", gw.base))
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(ready().await, 503);
    late.set(vmcp_testkit::FaultMode::Pass);
    let turned = eventually(Duration::from_secs(20), || async { ready().await == 200 }).await;
    assert!(
        turned,
        "readyz stayed 503 after the backend came up:\n{}",
        gw.logs()
    );
}
