//! Aggregation through the real gateway in front of real fixture processes (stdio, Streamable
//! HTTP, HTTP+SSE): conflict strategies, filters, overrides, name translation on calls, resource
//! and template routing, prompts and completions.

#![allow(clippy::unwrap_used)] // Test helpers: a panic is the failure report.

mod common;

use common::{Client, Gateway, http_backend, stdio_backend, text_of};
use serde_json::json;
use vmcp_testkit::FixtureProcess;

/// A stdio backend "notes" and an HTTP backend "weather": both have `echo` and `whoami`.
async fn two_backends(aggregation: &str) -> (Gateway, Client, FixtureProcess) {
    let weather = FixtureProcess::spawn_http(&["--name", "weather"]).await;
    let yaml = format!(
        "name: agg\nbackends:\n{}{}aggregation:\n{aggregation}",
        stdio_backend("notes", ""),
        http_backend("weather", &weather.url)
    );
    let gw = Gateway::start(&yaml);
    let c = Client::connect(&gw.url).await;
    (gw, c, weather)
}

#[tokio::test(flavor = "multi_thread")]
async fn prefix_strategy_prefixes_and_translates_names_on_calls() {
    let (_gw, c, _w) = two_backends("  conflictResolution: prefix\n").await;
    let names = c.tool_names().await;
    for n in [
        "notes_echo",
        "notes_whoami",
        "weather_echo",
        "weather_whoami",
        "weather_forget_session",
    ] {
        assert!(names.contains(&n.to_string()), "{n} missing from {names:?}");
    }
    assert!(!names.contains(&"echo".to_string()));
    // Backends in sorted order, each one's tools in the order it lists them (the fixture lists
    // echo, then whoami, first), as a client connected to it directly sees them.
    let backends: Vec<&str> = names.iter().map(|n| n.split('_').next().unwrap()).collect();
    let mut grouped = backends.clone();
    grouped.sort();
    assert_eq!(
        backends, grouped,
        "grouped by backend in sorted order: {names:?}"
    );
    for backend in ["notes", "weather"] {
        let own: Vec<&str> = names
            .iter()
            .filter_map(|n| n.strip_prefix(&format!("{backend}_")))
            .collect();
        assert_eq!(
            own[..2],
            ["echo", "whoami"],
            "{backend} keeps its own order: {own:?}"
        );
    }
    assert_eq!(text_of(&c.call("notes_whoami", json!({})).await), "notes");
    assert_eq!(
        text_of(&c.call("weather_whoami", json!({})).await),
        "weather"
    );
    let add = c.call("weather_add", json!({"a": 2, "b": 3})).await;
    assert_eq!(add["result"]["structuredContent"]["sum"], 5);
    // Lossless: the backend's tool fields pass through.
    let list = c.ok("tools/list", json!({})).await;
    let echo = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "notes_echo")
        .unwrap();
    assert_eq!(echo["annotations"]["readOnlyHint"], true);
    assert!(echo["inputSchema"]["properties"]["text"].is_object());
}

#[tokio::test(flavor = "multi_thread")]
async fn custom_prefix_format() {
    let (_gw, c, _w) =
        two_backends("  conflictResolutionConfig:\n    prefixFormat: \"{workload}.\"\n").await;
    let names = c.tool_names().await;
    assert!(names.contains(&"notes.echo".to_string()), "{names:?}");
    assert_eq!(
        text_of(&c.call("weather.whoami", json!({})).await),
        "weather"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn priority_strategy_keeps_bare_names_and_first_listed_wins() {
    let agg = "  conflictResolution: priority\n  conflictResolutionConfig:\n    priorityOrder: [weather, notes]\n";
    let (_gw, c, _w) = two_backends(agg).await;
    let names = c.tool_names().await;
    assert!(names.contains(&"whoami".to_string()));
    assert!(names.contains(&"forget_session".to_string()));
    assert!(!names.iter().any(|n| n.starts_with("notes_")), "{names:?}");
    assert_eq!(text_of(&c.call("whoami", json!({})).await), "weather");
    // Prompts of listed backends keep bare names; the higher priority wins the collision.
    assert_eq!(c.prompt_names().await, vec!["greet".to_string()]);
    let p = c
        .ok(
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ann"}}),
        )
        .await;
    assert!(
        p["messages"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("from weather")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn priority_with_unlisted_backend_prefixes_its_prompts() {
    let agg =
        "  conflictResolution: priority\n  conflictResolutionConfig:\n    priorityOrder: [notes]\n";
    let (_gw, c, _w) = two_backends(agg).await;
    let mut prompts = c.prompt_names().await;
    prompts.sort();
    assert_eq!(
        prompts,
        vec!["greet".to_string(), "weather_greet".to_string()]
    );
    assert_eq!(text_of(&c.call("whoami", json!({})).await), "notes");
}

#[tokio::test(flavor = "multi_thread")]
async fn manual_strategy_with_overrides() {
    let agg = r#"  conflictResolution: manual
  tools:
    - workload: weather
      overrides:
        echo:
          name: weather_echo
          description: Echo, but from the weather service
          annotations:
            title: Weather echo
            destructiveHint: false
        whoami:
          name: who_is_weather
        add: {name: w_add}
        sleep: {name: w_sleep}
        fail: {name: w_fail}
        rpc_error: {name: w_rpc_error}
        crash: {name: w_crash}
        garbage: {name: w_garbage}
"#;
    let (_gw, c, _w) = two_backends(agg).await;
    let list = c.ok("tools/list", json!({})).await;
    let tools = list["tools"].as_array().unwrap();
    let find = |n: &str| tools.iter().find(|t| t["name"] == n).cloned();
    let renamed = find("weather_echo").expect("override name");
    assert_eq!(renamed["description"], "Echo, but from the weather service");
    assert_eq!(renamed["annotations"]["title"], "Weather echo");
    assert_eq!(renamed["annotations"]["destructiveHint"], false);
    assert_eq!(
        renamed["annotations"]["readOnlyHint"], true,
        "unset annotation fields are kept"
    );
    assert!(find("echo").is_some());
    assert_eq!(
        text_of(&c.call("who_is_weather", json!({})).await),
        "weather"
    );
    assert_eq!(text_of(&c.call("whoami", json!({})).await), "notes");
    assert_eq!(
        text_of(&c.call("weather_echo", json!({"text": "hi"})).await),
        "hi"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn manual_strategy_with_unresolved_conflicts_refuses_discovery_with_503() {
    let agg =
        "  conflictResolution: manual\n  tools:\n    - workload: weather\n      filter: [echo]\n";
    let weather = FixtureProcess::spawn_http(&["--name", "weather"]).await;
    let yaml = format!(
        "name: agg\nbackends:\n{}{}aggregation:\n{agg}",
        stdio_backend("notes", ""),
        http_backend("weather", &weather.url)
    );
    let gw = Gateway::start(&yaml);
    let c = Client::new(&gw.url);
    let a = c
        .post_raw(None, json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}))
        .await;
    assert_eq!(a.status, 503);
    let msg = a.body["error"]["message"].as_str().unwrap();
    assert!(msg.contains("echo [notes, weather]"), "{msg}");
}

#[tokio::test(flavor = "multi_thread")]
async fn filters_hide_tools_from_lists_but_keep_them_routable() {
    let agg = r#"  tools:
    - workload: notes
      filter: [echo, add]
    - workload: weather
      excludeAll: true
"#;
    let (_gw, c, _w) = two_backends(agg).await;
    let mut names = c.tool_names().await;
    names.sort();
    assert_eq!(
        names,
        vec!["notes_add".to_string(), "notes_echo".to_string()]
    );
    // Hidden tools stay routable.
    assert_eq!(
        text_of(&c.call("weather_whoami", json!({})).await),
        "weather"
    );
    assert_eq!(text_of(&c.call("notes_whoami", json!({})).await), "notes");
    // Filters do not touch prompts or resources.
    assert_eq!(c.prompt_names().await.len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn default_visibility_deny_advertises_only_listed_backends() {
    let agg = "  defaultToolVisibility: deny\n  tools:\n    - workload: weather\n";
    let (_gw, c, _w) = two_backends(agg).await;
    let names = c.tool_names().await;
    assert!(names.iter().all(|n| n.starts_with("weather_")), "{names:?}");
    assert!(!names.is_empty());
    assert_eq!(
        text_of(
            &c.call("notes_echo", json!({"text": "still routable"}))
                .await
        ),
        "still routable"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn exclude_all_tools_hides_every_backend_tool() {
    let (_gw, c, _w) = two_backends("  excludeAllTools: true\n").await;
    assert!(c.tool_names().await.is_empty());
    assert_eq!(
        text_of(&c.call("notes_echo", json!({"text": "x"})).await),
        "x"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn resources_templates_are_never_rewritten_and_route_by_uri() {
    let (_gw, c, _w) = two_backends("  conflictResolution: prefix\n").await;
    let res = c.ok("resources/list", json!({})).await;
    let uris: Vec<&str> = res["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        uris,
        vec![
            "fixture://notes/readme",
            "fixture://shared/info",
            "fixture://weather/readme"
        ]
    );
    // The duplicate goes to the first backend in sorted order: notes.
    let shared = c
        .ok("resources/read", json!({"uri": "fixture://shared/info"}))
        .await;
    assert_eq!(shared["contents"][0]["text"], "shared from notes");
    let readme = c
        .ok("resources/read", json!({"uri": "fixture://weather/readme"}))
        .await;
    assert_eq!(readme["contents"][0]["text"], "readme of weather");
    let templates = c.ok("resources/templates/list", json!({})).await;
    let t: Vec<&str> = templates["resourceTemplates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uriTemplate"].as_str().unwrap())
        .collect();
    assert_eq!(
        t,
        vec!["fixture://notes/items/{id}", "fixture://weather/items/{id}"]
    );
    let item = c
        .ok(
            "resources/read",
            json!({"uri": "fixture://weather/items/7"}),
        )
        .await;
    assert_eq!(item["contents"][0]["text"], "item 7 of weather");
    assert_eq!(item["contents"][0]["uri"], "fixture://weather/items/7");
    let item = c
        .ok("resources/read", json!({"uri": "fixture://notes/items/42"}))
        .await;
    assert_eq!(item["contents"][0]["text"], "item 42 of notes");
}

#[tokio::test(flavor = "multi_thread")]
async fn prompts_are_prefixed_and_translated_and_completions_route_by_ref() {
    let (_gw, c, _w) = two_backends("  conflictResolution: prefix\n").await;
    let mut prompts = c.prompt_names().await;
    prompts.sort();
    assert_eq!(
        prompts,
        vec!["notes_greet".to_string(), "weather_greet".to_string()]
    );
    let p = c
        .ok(
            "prompts/get",
            json!({"name": "notes_greet", "arguments": {"name": "Bo"}}),
        )
        .await;
    assert_eq!(
        p["messages"][0]["content"]["text"],
        "Hello, Bo! (from notes)"
    );
    let comp = c
        .ok("completion/complete", json!({"ref": {"type": "ref/prompt", "name": "weather_greet"}, "argument": {"name": "name", "value": "al"}}))
        .await;
    assert_eq!(comp["completion"]["values"], json!(["alice", "albert"]));
    let comp = c
        .ok("completion/complete", json!({"ref": {"type": "ref/resource", "uri": "fixture://notes/items/{id}"}, "argument": {"name": "id", "value": "4"}}))
        .await;
    assert_eq!(comp["completion"]["values"], json!(["42"]));
    // An unroutable ref gets an empty completion, not an error.
    let comp = c
        .ok("completion/complete", json!({"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "x", "value": ""}}))
        .await;
    assert_eq!(comp["completion"]["values"], json!([]));
}

#[tokio::test(flavor = "multi_thread")]
async fn sse_transport_backend_and_sse_response_backend() {
    let old = FixtureProcess::spawn_sse(&["--name", "legacy"]).await;
    let streaming = FixtureProcess::spawn_http(&["--name", "streamy", "--sse-responses"]).await;
    let yaml = format!(
        "name: agg\nbackends:\n  - name: legacy\n    transport: sse\n    url: {}\n{}",
        old.url,
        http_backend("streamy", &streaming.url)
    );
    let gw = Gateway::start(&yaml);
    let c = Client::connect(&gw.url).await;
    assert_eq!(text_of(&c.call("legacy_whoami", json!({})).await), "legacy");
    assert_eq!(
        text_of(&c.call("streamy_whoami", json!({})).await),
        "streamy"
    );
    let r = c
        .ok("resources/read", json!({"uri": "fixture://legacy/readme"}))
        .await;
    assert_eq!(r["contents"][0]["text"], "readme of legacy");
}

#[tokio::test(flavor = "multi_thread")]
async fn backend_pagination_is_followed_and_client_pages_are_served() {
    // The fixture pages its lists by 50; 120 extra tools force several backend pages.
    let big = FixtureProcess::spawn_http(&["--name", "big", "--tools", "1200"]).await;
    let gw = Gateway::start(&format!(
        "name: agg\nbackends:\n{}",
        http_backend("big", &big.url)
    ));
    let c = Client::connect(&gw.url).await;
    let first = c.ok("tools/list", json!({})).await;
    let page1 = first["tools"].as_array().unwrap().len();
    assert_eq!(page1, 1000);
    let cursor = first["nextCursor"]
        .as_str()
        .expect("a second page")
        .to_string();
    let second = c.ok("tools/list", json!({"cursor": cursor})).await;
    let page2 = second["tools"].as_array().unwrap().len();
    assert_eq!(page1 + page2, 1200 + 9);
    assert!(second.get("nextCursor").is_none());
    assert_eq!(
        text_of(&c.call("big_tool_1199", json!({})).await),
        "tool_1199"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn http_backend_session_is_reinitialised_after_404() {
    let (_gw, c, _w) = two_backends("  conflictResolution: prefix\n").await;
    assert_eq!(
        text_of(&c.call("weather_forget_session", json!({})).await),
        "sessions forgotten"
    );
    assert_eq!(
        text_of(&c.call("weather_echo", json!({"text": "again"})).await),
        "again"
    );
}
