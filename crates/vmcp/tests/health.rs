//! Backend health through the binary: active checks and call failures drive ToolHive's states;
//! an unhealthy backend is withdrawn (every kind of list, with list_changed) and comes back the
//! same way; the circuit breaker fails fast and closes again; a refused credential reads
//! unauthenticated; checks never re-initialise a live stdio process; one slow and one dead
//! backend do not slow the others.

#![allow(clippy::unwrap_used)] // Test helpers: a panic is the failure report.

mod common;

use std::time::{Duration, Instant};

use common::eras::{
    Answerer, BackendEra, ModernClient, SseReader, backend_status, rmcp_legacy, spawn_sdk,
};
use common::{Client, Gateway, children_matching, eventually, http_backend, stdio_backend};
use serde_json::{Value, json};
use vmcp_testkit::{FaultMode, FaultProxy, FixtureProcess};

/// Fast checks so transitions happen within a test, with a timeout a loaded 2-core machine
/// still meets for a healthy backend.
const FAST_CHECKS: &str = "operational:\n  failureHandling:\n    healthCheckInterval: 500ms\n    healthCheckTimeout: 450ms\n    unhealthyThreshold: 2\n    partialFailureMode: best_effort\n";

/// The list_changed methods that arrive within `wait`.
async fn changes(events: &mut SseReader, wait: Duration) -> Vec<String> {
    let mut seen = Vec::new();
    let until = Instant::now() + wait;
    while let Some(left) = until.checked_duration_since(Instant::now()) {
        match events.try_next(left).await {
            Some(e) => seen.push(e["method"].as_str().unwrap_or_default().to_owned()),
            None => break,
        }
    }
    seen
}

async fn names(c: &Client, method: &str, key: &str, field: &str) -> Vec<String> {
    c.ok(method, json!({}))
        .await
        .get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|v| v[field].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

async fn wait_health(base: &str, name: &str, want: &[&str]) -> Value {
    let mut last = Value::Null;
    let deadline = Instant::now() + Duration::from_secs(15);
    while Instant::now() < deadline {
        last = backend_status(base, name).await;
        if want.contains(&last["health"].as_str().unwrap_or_default()) {
            return last;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{name} never became {want:?}: {last}");
}

struct World {
    gw: Gateway,
    weather: FaultProxy,
    _fixture: FixtureProcess,
}

async fn world(extra: &str) -> World {
    let fixture = FixtureProcess::spawn_http(&["--name", "weather"]).await;
    let weather = FaultProxy::start(&fixture.url).await;
    let yaml = format!(
        "name: health\nbackends:\n{}{}{FAST_CHECKS}{extra}",
        stdio_backend("notes", ""),
        http_backend("weather", &weather.url),
    );
    let gw = Gateway::start(&yaml);
    World {
        gw,
        weather,
        _fixture: fixture,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unhealthy_backend_is_withdrawn_from_every_list_and_comes_back() {
    // A composite that uses weather's tool leaves and comes back with it.
    let w = world(
        "compositeTools:\n  - name: forecast_twice\n    description: Echo through weather\n    steps:\n      - {id: a, tool: weather.echo, arguments: {text: hi}}\n",
    )
    .await;
    let composite = "forecast_twice".to_owned();
    let c = Client::connect(&w.gw.url).await;
    let modern = ModernClient::new(&w.gw.url);
    let mut events = common::eras::legacy_stream(&c).await;
    let weather_tools = |tools: &[String]| tools.iter().any(|t| t.starts_with("weather_"));
    assert!(weather_tools(&c.tool_names().await));
    assert!(c.tool_names().await.contains(&composite));
    let resources_before = names(&c, "resources/list", "resources", "uri").await;
    let templates_before = names(
        &c,
        "resources/templates/list",
        "resourceTemplates",
        "uriTemplate",
    )
    .await;
    let prompts_before = c.prompt_names().await;
    assert!(prompts_before.iter().any(|p| p.starts_with("weather_")));

    w.weather.set(FaultMode::Refuse);
    let down = wait_health(&w.gw.base, "weather", &["unhealthy"]).await;
    assert!(down["consecutiveFailures"].as_u64().unwrap() >= 2, "{down}");
    assert!(
        down["lastError"].as_str().is_some_and(|e| !e.is_empty()),
        "{down}"
    );
    assert!(
        down["lastTransition"].is_string() && down["lastCheck"].is_string(),
        "{down}"
    );
    // Every kind changes, and the session is told about each.
    let told = changes(&mut events, Duration::from_secs(3)).await;
    for kind in ["tools", "resources", "prompts"] {
        assert!(
            told.contains(&format!("notifications/{kind}/list_changed")),
            "{kind} not announced: {told:?}"
        );
    }
    assert!(!weather_tools(&c.tool_names().await));
    assert!(!c.tool_names().await.contains(&composite));
    assert!(
        !c.prompt_names()
            .await
            .iter()
            .any(|p| p.starts_with("weather_"))
    );
    let resources = names(&c, "resources/list", "resources", "uri").await;
    assert!(resources.len() < resources_before.len(), "{resources:?}");
    let templates = names(
        &c,
        "resources/templates/list",
        "resourceTemplates",
        "uriTemplate",
    )
    .await;
    assert!(templates.len() < templates_before.len(), "{templates:?}");
    // A 2026-07-28 client sees the same catalog.
    let listed = modern.ok("tools/list", json!({})).await;
    let modern_names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(modern_names.iter().any(|n| n.starts_with("notes_")));
    assert!(!modern_names.iter().any(|n| n.starts_with("weather_")));
    // A call to the withdrawn tool is told its backend is unavailable, since when, and when to
    // retry, on both revisions (an agent told "unknown tool" stops trying).
    let r = c.call("weather_echo", json!({"text": "x"})).await;
    assert_unavailable(&r["error"], &down);
    let m = modern
        .request(
            "tools/call",
            json!({"name": "weather_echo", "arguments": {"text": "x"}}),
        )
        .await;
    assert_unavailable(&m.body["error"], &down);
    let unknown = c.call("weather_nonesuch", json!({})).await;
    assert!(
        unknown["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("unknown tool")),
        "{unknown}"
    );
    // The healthy backend keeps serving meanwhile.
    let r = c.call("notes_echo", json!({"text": "still here"})).await;
    assert_eq!(r["result"]["content"][0]["text"], "still here", "{r}");

    w.weather.set(FaultMode::Pass);
    let back = wait_health(&w.gw.base, "weather", &["degraded", "healthy"]).await;
    assert_eq!(back["consecutiveFailures"], 0, "{back}");
    let told = changes(&mut events, Duration::from_secs(3)).await;
    assert!(
        told.contains(&"notifications/tools/list_changed".to_owned()),
        "return not announced: {told:?}"
    );
    assert!(weather_tools(&c.tool_names().await));
    assert!(c.tool_names().await.contains(&composite));
    assert_eq!(
        names(&c, "resources/list", "resources", "uri").await,
        resources_before
    );
    assert_eq!(c.prompt_names().await, prompts_before);
    let r = c.call("weather_echo", json!({"text": "back"})).await;
    assert_eq!(r["result"]["content"][0]["text"], "back", "{r}");
    assert!(
        w.gw.logs().contains("backend health changed"),
        "transitions are logged"
    );
}

/// The error of a call to `weather_echo` while weather is withdrawn, given its status `down`.
fn assert_unavailable(error: &Value, down: &Value) {
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("weather_echo is unavailable") && message.contains("backend weather"),
        "{error}"
    );
    assert_eq!(error["data"]["kind"], "unavailable", "{error}");
    assert_eq!(error["data"]["health"], "unhealthy", "{error}");
    assert_eq!(
        error["data"]["unavailableSince"], down["lastTransition"],
        "{error}"
    );
    assert!(
        error["data"]["retryAfterSeconds"]
            .as_u64()
            .is_some_and(|s| s >= 1),
        "{error}"
    );
}

/// A caller the policy does not let see a withdrawn tool hears exactly what an unknown name
/// gets (no oracle), while one who may see it is told it is unavailable.
#[tokio::test(flavor = "multi_thread")]
async fn only_callers_who_may_see_a_withdrawn_tool_hear_it_is_unavailable() {
    let w = world(
        "incomingAuth:\n  type: anonymous\n  authz:\n    type: cedar\n    policies:\n      - 'permit(principal, action, resource == Tool::\"weather_echo\");'\n      - 'permit(principal, action, resource in Backend::\"notes\");'\n",
    )
    .await;
    let c = Client::connect(&w.gw.url).await;
    let before = c.call("weather_sleep", json!({})).await;
    let unknown_before = c.call("weather_nonesuch", json!({})).await;
    assert_eq!(before["error"], unknown_before["error"], "{before}");
    w.weather.set(FaultMode::Refuse);
    let down = wait_health(&w.gw.base, "weather", &["unhealthy"]).await;
    // The session's catalog follows the withdrawal.
    let deadline = Instant::now() + Duration::from_secs(10);
    let r = loop {
        let r = c.call("weather_echo", json!({"text": "x"})).await;
        if r["error"]["data"]["kind"] == "unavailable" || Instant::now() > deadline {
            break r;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_unavailable(&r["error"], &down);
    let hidden = c.call("weather_sleep", json!({})).await;
    let unknown = c.call("weather_nonesuch", json!({})).await;
    assert_eq!(hidden["error"], unknown["error"], "{hidden}");
    assert_eq!(hidden["error"], before["error"], "{hidden}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_circuit_breaker_fails_fast_while_open_and_closes_after_a_good_probe() {
    let w = world(
        "    circuitBreaker:\n      enabled: true\n      failureThreshold: 2\n      timeout: 10s\n",
    )
    .await;
    let c = Client::connect(&w.gw.url).await;
    assert_eq!(
        backend_status(&w.gw.base, "weather").await["circuitState"],
        "closed"
    );
    w.weather.set(FaultMode::Refuse);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let s = backend_status(&w.gw.base, "weather").await;
        if s["circuitState"] == "open" {
            break;
        }
        assert!(Instant::now() < deadline, "circuit never opened: {s}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // While open, checks are skipped: the last check's time (second precision) stays put.
    let opened = backend_status(&w.gw.base, "weather").await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let later = backend_status(&w.gw.base, "weather").await;
    assert_eq!(later["circuitState"], "open", "{later}");
    assert_eq!(
        opened["lastCheck"], later["lastCheck"],
        "checks skipped while open"
    );
    // A call gets a fast, clear refusal (the tool is unavailable, or the circuit refuses it).
    let started = Instant::now();
    let r = c.call("weather_echo", json!({"text": "x"})).await;
    let message = r["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        message.contains("circuit open") || message.contains("is unavailable"),
        "{r}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "not fast: {:?}",
        started.elapsed()
    );

    w.weather.set(FaultMode::Pass);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let s = backend_status(&w.gw.base, "weather").await;
        if s["circuitState"] == "closed" && s["health"] != "unhealthy" {
            break;
        }
        assert!(Instant::now() < deadline, "circuit never closed: {s}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let back = eventually(Duration::from_secs(5), || {
        let c = c.clone();
        async move {
            let r = c.call("weather_echo", json!({"text": "closed"})).await;
            r["result"]["content"][0]["text"] == "closed"
        }
    })
    .await;
    assert!(back, "calls flow again once the circuit closes");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_credential_reads_unauthenticated_and_is_withdrawn() {
    let w = world("").await;
    let c = Client::connect(&w.gw.url).await;
    assert!(
        c.tool_names()
            .await
            .iter()
            .any(|t| t.starts_with("weather_"))
    );
    w.weather.set(FaultMode::Unauthorized);
    // Checks alone see the 401s (auth failures are not a call's operational failure).
    let s = wait_health(&w.gw.base, "weather", &["unauthenticated"]).await;
    assert!(s["consecutiveFailures"].as_u64().unwrap() >= 2, "{s}");
    let gone = eventually(Duration::from_secs(5), || {
        let c = c.clone();
        async move {
            !c.tool_names()
                .await
                .iter()
                .any(|t| t.starts_with("weather_"))
        }
    })
    .await;
    assert!(gone, "an unauthenticated backend is withdrawn");
}

#[tokio::test(flavor = "multi_thread")]
async fn checks_never_restart_or_reinitialise_a_live_stdio_backend() {
    let log = common::temp_path("methods");
    let env = format!(
        "    env:\n      {}: {:?}\n",
        vmcp_testkit::METHOD_LOG_ENV,
        log.display().to_string()
    );
    let yaml = format!(
        "name: health\nbackends:\n{}{FAST_CHECKS}",
        stdio_backend("notes", &env)
    );
    let gw = Gateway::start(&yaml);
    let c = Client::connect(&gw.url).await;
    let r = c.call("notes_echo", json!({"text": "x"})).await;
    assert_eq!(r["result"]["content"][0]["text"], "x", "{r}");
    let before = children_matching(gw.pid(), "notes");
    assert_eq!(before.len(), 1, "one notes process: {before:?}");
    // Six check intervals.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let s = backend_status(&gw.base, "notes").await;
    assert_eq!(s["health"], "healthy", "{s}");
    assert_eq!(children_matching(gw.pid(), "notes"), before, "same process");
    // What the process received: one initialize, then pings (the checks).
    let methods = std::fs::read_to_string(&log).unwrap();
    let count = |m: &str| methods.lines().filter(|l| *l == m).count();
    assert_eq!(count("initialize"), 1, "{methods}");
    assert!(count("ping") >= 5, "checks are pings: {methods}");
    let _ = std::fs::remove_file(&log);
}

#[tokio::test(flavor = "multi_thread")]
async fn flapping_is_damped_to_one_announcement_per_window() {
    // Threshold 1 and a 1 s debounce window (the check interval).
    let fixture = FixtureProcess::spawn_http(&["--name", "weather"]).await;
    let weather = FaultProxy::start(&fixture.url).await;
    let yaml = format!(
        "name: health\nbackends:\n{}{}operational:\n  failureHandling:\n    healthCheckInterval: 1s\n    healthCheckTimeout: 500ms\n    unhealthyThreshold: 1\n    partialFailureMode: best_effort\n",
        stdio_backend("notes", ""),
        http_backend("weather", &weather.url),
    );
    let gw = Gateway::start(&yaml);
    let c = Client::connect(&gw.url).await;
    let mut events = common::eras::legacy_stream(&c).await;
    // Calls are passive checks: each failure withdraws, each success brings back, 20 flips in 2 s.
    let flapping = Instant::now();
    for i in 0..20 {
        let mode = if i % 2 == 0 {
            FaultMode::Refuse
        } else {
            FaultMode::Pass
        };
        weather.set(mode);
        let _ = c.call("weather_echo", json!({"text": "x"})).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    weather.set(FaultMode::Pass);
    let window = flapping.elapsed();
    let told = changes(&mut events, Duration::from_secs(3)).await;
    let tools_told = told
        .iter()
        .filter(|m| *m == "notifications/tools/list_changed")
        .count();
    // One leading announcement plus at most one per 1 s window (and the settling one).
    let bound = window.as_secs() as usize + 3;
    assert!(
        tools_told <= bound,
        "{tools_told} tools/list_changed in {window:?}: {told:?}"
    );
    // Settled: weather is served again.
    let back = eventually(Duration::from_secs(5), || {
        let c = c.clone();
        async move {
            c.tool_names()
                .await
                .iter()
                .any(|t| t.starts_with("weather_"))
        }
    })
    .await;
    assert!(back);
}

/// Median of `samples`: one scheduler pause on a loaded 2-core machine moves a p99 of 20
/// samples, never a median.
fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// Session creations and calls to the healthy backends, timed.
async fn measure(url: &str) -> (Duration, Duration) {
    let mut sessions = Vec::new();
    let mut calls = Vec::new();
    for _ in 0..20 {
        let started = Instant::now();
        let c = Client::connect(url).await;
        sessions.push(started.elapsed());
        for tool in ["notes_echo", "weather_echo"] {
            for _ in 0..5 {
                let started = Instant::now();
                let r = c.call(tool, json!({"text": "t"})).await;
                calls.push(started.elapsed());
                assert_eq!(r["result"]["content"][0]["text"], "t", "{r}");
            }
        }
        c.delete().await;
    }
    (median(sessions), median(calls))
}

#[tokio::test(flavor = "multi_thread")]
async fn one_slow_and_one_dead_backend_do_not_slow_the_others() {
    let weather = FixtureProcess::spawn_http(&["--name", "weather"]).await;
    let slow_fixture = FixtureProcess::spawn_http(&["--name", "slow"]).await;
    let slow = FaultProxy::start(&slow_fixture.url).await;
    slow.set(FaultMode::Delay(Duration::from_secs(25)));
    // A port nothing listens on.
    let dead_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let checks = "operational:\n  failureHandling:\n    healthCheckInterval: 500ms\n    healthCheckTimeout: 400ms\n    unhealthyThreshold: 2\n    partialFailureMode: best_effort\nserver:\n  discoveryTimeout: 2s\n";
    let baseline = Gateway::start(&format!(
        "name: base\nbackends:\n{}{}{checks}",
        stdio_backend("notes", ""),
        http_backend("weather", &weather.url)
    ));
    let (base_sessions, base_calls) = measure(&baseline.url).await;

    let gw = Gateway::start(&format!(
        "name: mixed\nbackends:\n{}{}{}{}{checks}",
        stdio_backend("notes", ""),
        http_backend("weather", &weather.url),
        http_backend("slow", &slow.url),
        http_backend("dead", &format!("http://127.0.0.1:{dead_port}/mcp")),
    ));
    // Sessions from the start: the first aggregation is bounded by the discovery budget (2 s),
    // far below the slow backend's 25 s.
    let first = Instant::now();
    let c = Client::connect(&gw.url).await;
    assert!(
        first.elapsed() < Duration::from_secs(5),
        "first session {:?}",
        first.elapsed()
    );
    let tools = c.tool_names().await;
    assert!(tools.iter().any(|t| t.starts_with("weather_")), "{tools:?}");
    assert!(
        !tools
            .iter()
            .any(|t| t.starts_with("slow_") || t.starts_with("dead_"))
    );
    let (sessions, calls) = measure(&gw.url).await;
    // Waiting on the slow backend would cost its 25 s delay or the 2 s discovery budget; the
    // bound is well under both and well over scheduling noise.
    let bound = |base: Duration| base * 3 + Duration::from_millis(500);
    assert!(
        sessions <= bound(base_sessions),
        "session creation median {sessions:?} vs {base_sessions:?} without the bad backends"
    );
    assert!(
        calls <= bound(base_calls),
        "call median {calls:?} vs {base_calls:?} without the bad backends"
    );
    for (name, states) in [("slow", ["unhealthy"]), ("dead", ["unhealthy"])] {
        wait_health(&gw.base, name, &states).await;
    }
}

async fn rmcp_tools(client: &common::eras::RmcpClient) -> Vec<String> {
    client
        .list_all_tools()
        .await
        .expect("tools/list")
        .iter()
        .map(|t| t.name.to_string())
        .collect()
}

/// Independent peers on both sides: an rmcp (official Rust SDK) server is the backend that goes
/// away and comes back, and an rmcp client is told both times.
#[tokio::test(flavor = "multi_thread")]
async fn an_rmcp_client_is_told_when_an_rmcp_backend_goes_and_comes_back() {
    let sdk = spawn_sdk("sdk", BackendEra::Legacy, 0).await;
    let proxy = FaultProxy::start(&sdk.url).await;
    let yaml = format!(
        "name: health\nbackends:\n{}{}{FAST_CHECKS}",
        stdio_backend("notes", ""),
        http_backend("sdk", &proxy.url),
    );
    let gw = Gateway::start(&yaml);
    let peer = Answerer::new("peer", json!({}));
    let client = rmcp_legacy(&gw.url, peer.clone()).await;
    gw.wait_streams(1).await;
    assert!(rmcp_tools(&client).await.contains(&"sdk_echo".to_owned()));

    proxy.set(FaultMode::Refuse);
    peer.wait_for("notifications/tools/list_changed", 1).await;
    let tools = rmcp_tools(&client).await;
    assert!(!tools.iter().any(|t| t.starts_with("sdk_")), "{tools:?}");
    assert!(tools.contains(&"notes_echo".to_owned()), "{tools:?}");

    proxy.set(FaultMode::Pass);
    peer.wait_for("notifications/tools/list_changed", 2).await;
    assert!(rmcp_tools(&client).await.contains(&"sdk_echo".to_owned()));
    let s = backend_status(&gw.base, "sdk").await;
    assert!(
        ["healthy", "degraded"].contains(&s["health"].as_str().unwrap()),
        "{s}"
    );
}
