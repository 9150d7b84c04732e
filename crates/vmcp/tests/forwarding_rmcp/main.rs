//! Mid-call forwarding through the gateway, with the official Rust MCP SDK (`rmcp`) on both sides:
//! an in-process rmcp streamable-HTTP backend (stateful, SSE responses) whose tools send progress,
//! log messages, elicitation / sampling / roots requests, list changes and resource updates, and
//! rmcp clients whose handlers answer those requests and record everything they are sent.
//!
//! Every wait is bounded, so a gateway that hangs fails the test instead of the suite.

#![allow(clippy::unwrap_used)] // Test helpers: a panic is the failure report.
#![allow(missing_docs, unreachable_pub)]
// Sampling, roots, logging and resources/subscribe are deprecated by the SDK (SEP-2577), but they
// are exactly what the 2025-11-25 revision forwards.
#![allow(deprecated)]

mod backend;
#[path = "../common/mod.rs"]
mod common;
mod recorder;
mod scaffold;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rmcp::{
    model::{
        CallToolRequest, CallToolRequestParams, ClientCapabilities, ClientRequest,
        SubscribeRequestParams, UnsubscribeRequestParams,
    },
    service::PeerRequestOptions,
};
use serde_json::{Value, json};

use scaffold::*;

// =============================================================================================
// Tests
// =============================================================================================

#[tokio::test(flavor = "multi_thread")]
async fn progress_reaches_the_caller_with_its_own_token() {
    let (sdk, gw) = setup("").await;
    let rec = Recorder::new("alice", all_capabilities());
    let client = connect(&gw.url, &rec).await;

    // rmcp puts a fresh progress token on every request; keep the handle to know which.
    let params = CallToolRequestParams::new("sdk_progress").with_arguments(obj(json!({})));
    let handle = step(
        "send tools/call",
        client.send_cancellable_request(
            ClientRequest::CallToolRequest(CallToolRequest::new(params)),
            PeerRequestOptions::no_options(),
        ),
    )
    .await
    .expect("send tools/call");
    let client_token = serde_json::to_value(&handle.progress_token).unwrap();
    let result = step("tools/call sdk_progress", handle.await_response())
        .await
        .expect("tools/call sdk_progress");
    let result = serde_json::to_value(result).unwrap();
    let backend_view: Value = serde_json::from_str(&text(&result)).unwrap();

    // rmcp runs each notification handler in its own task, so arrival order is not observable
    // here (the raw SSE check below covers order).
    let got = by_progress(rec.wait_for("notifications/progress", 3).await);
    let expected: Vec<Value> = (1..=3)
        .map(|i| {
            json!({"progressToken": client_token, "progress": f64::from(i), "total": 3.0,
                   "message": format!("step {i}")})
        })
        .collect();
    assert_eq!(got, expected, "progress as the client saw it");

    // The backend saw a gateway-issued token, so the client's token was mapped back (not merely
    // passed through).
    assert_ne!(
        backend_view["backendToken"], client_token,
        "the gateway should rewrite the progress token on the backend hop"
    );
    assert_eq!(
        sdk.shared.seen_tokens.lock().unwrap().last(),
        Some(&backend_view["backendToken"])
    );
    client.cancel().await.ok();

    // On the wire: a raw client's string token, the progress in order, then the answer.
    let raw = common::Client::connect(&gw.url).await;
    let answer = step(
        "raw tools/call sdk_progress",
        raw.post_raw(
            raw.session.clone(),
            json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
                "name": "sdk_progress", "arguments": {}, "_meta": {"progressToken": "mine-9"}}}),
        ),
    )
    .await;
    let messages = sse_messages(&answer.text);
    let methods: Vec<&str> = messages
        .iter()
        .map(|m| m["method"].as_str().unwrap_or("<answer>"))
        .collect();
    assert_eq!(
        methods,
        [
            "notifications/progress",
            "notifications/progress",
            "notifications/progress",
            "<answer>"
        ],
        "{}",
        answer.text
    );
    for (i, m) in messages[..3].iter().enumerate() {
        let n = i as u32 + 1;
        assert_eq!(
            m["params"],
            json!({"progressToken": "mine-9", "progress": f64::from(n), "total": 3.0, "message": format!("step {n}")}),
            "{}",
            answer.text
        );
    }
    assert_eq!(messages[3]["id"], 9, "{}", answer.text);
}

#[tokio::test(flavor = "multi_thread")]
async fn log_messages_are_filtered_to_the_client_level() {
    // rmcp sends a tool's log messages on the session's GET stream rather than on the request's
    // own stream; on a shared connection nothing there can be attributed to a client for certain,
    // so this backend gets a connection per client session, whose GET stream belongs to it.
    let (sdk, gw) = setup("    isolation: perSession\n").await;

    // A client at `warning` gets warning and error only.
    let rec = Recorder::new("alice", all_capabilities());
    let client = connect(&gw.url, &rec).await;
    set_level(&client, "warning").await;
    // The (only) session's level is passed on to the logging backend; its tool logs every level
    // regardless, so the filtering below is the gateway's.
    let deadline = Instant::now() + Duration::from_secs(10);
    while sdk.shared.levels.lock().unwrap().is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(*sdk.shared.levels.lock().unwrap(), ["warning"]);
    let r = call(&client, "sdk_log", json!({"tag": "alice"})).await;
    assert_eq!(text(&r), "logged");
    let got = by_severity(rec.wait_for("notifications/message", 2).await);
    let levels: Vec<&str> = got.iter().map(|m| m["level"].as_str().unwrap()).collect();
    assert_eq!(levels, ["warning", "error"], "{got:#?}");
    assert_eq!(got[0]["data"], json!({"level": "warning", "tag": "alice"}));
    assert_eq!(got[0]["logger"], "sdk");
    assert_eq!(got[1]["data"], json!({"level": "error", "tag": "alice"}));
    client.cancel().await.ok();

    // A client that never set a level gets the default, info and up.
    let rec = Recorder::new("bob", all_capabilities());
    let client = connect(&gw.url, &rec).await;
    call(&client, "sdk_log", json!({"tag": "bob"})).await;
    let got = by_severity(rec.wait_for("notifications/message", 3).await);
    let levels: Vec<&str> = got.iter().map(|m| m["level"].as_str().unwrap()).collect();
    assert_eq!(levels, ["info", "warning", "error"], "{got:#?}");
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn elicitation_round_trips_form_mode() {
    let (_sdk, gw) = setup("").await;
    let rec = Recorder::new("alice", all_capabilities());
    let client = connect(&gw.url, &rec).await;

    let r = call_json(&client, "sdk_elicit", json!({"tag": "t1"})).await;
    assert_eq!(
        r,
        json!({"action": "accept", "content": {"name": "alice", "echo": "Who are you? (t1)"}}),
        "the tool's view of the client's answer"
    );
    let asked = rec.of("elicitation/create");
    assert_eq!(asked.len(), 1, "{asked:#?}");
    assert_eq!(asked[0]["mode"], "form");
    assert_eq!(asked[0]["message"], "Who are you? (t1)");
    assert_eq!(
        asked[0]["requestedSchema"]["properties"]["name"]["type"],
        "string"
    );
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn elicitation_url_mode() {
    let (_sdk, gw) = setup("").await;
    let rec = Recorder::new("alice", all_capabilities());
    let client = connect(&gw.url, &rec).await;

    let r = call_json(&client, "sdk_elicit_url", json!({"tag": "u1"})).await;
    assert_eq!(r, json!({"action": "accept", "content": null}));
    let asked = rec.of("elicitation/create");
    assert_eq!(asked.len(), 1, "{asked:#?}");
    assert_eq!(asked[0]["mode"], "url");
    assert_eq!(asked[0]["url"], "https://auth.example.com/consent?tag=u1");
    assert_eq!(asked[0]["elicitationId"], "elicit-u1");
    assert_eq!(asked[0]["message"], "Please sign in (u1)");
    client.cancel().await.ok();

    // A client that declared form mode only is not asked in URL mode; the backend gets an error.
    let rec = Recorder::new("formonly", from(json!({"elicitation": {"form": {}}})));
    let client = connect(&gw.url, &rec).await;
    let r = call_json(&client, "sdk_elicit_url", json!({"tag": "u2"})).await;
    assert_eq!(r["error"]["code"], -32601, "{r}");
    assert!(
        r["error"]["message"].as_str().unwrap().contains("url"),
        "{r}"
    );
    assert!(rec.of("elicitation/create").is_empty());
    // ...while form mode still works for it.
    let r = call_json(&client, "sdk_elicit", json!({"tag": "f2"})).await;
    assert_eq!(r["content"]["name"], "formonly", "{r}");
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn sampling_round_trips() {
    let (_sdk, gw) = setup("").await;
    let rec = Recorder::new("alice", all_capabilities());
    let client = connect(&gw.url, &rec).await;

    let r = call_json(&client, "sdk_sample", json!({"tag": "s1"})).await;
    assert_eq!(r["model"], "alice-model", "{r}");
    assert_eq!(r["role"], "assistant", "{r}");
    assert_eq!(r["stopReason"], "endTurn", "{r}");
    let answer = r["content"]["text"]
        .as_str()
        .or_else(|| r["content"][0]["text"].as_str());
    assert_eq!(answer, Some("alice answers: What is 6x7? (s1)"), "{r}");
    let asked = rec.of("sampling/createMessage");
    assert_eq!(asked.len(), 1, "{asked:#?}");
    assert_eq!(asked[0]["maxTokens"], 50);
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn roots_round_trip() {
    let (_sdk, gw) = setup("").await;
    let rec = Recorder::new("alice", all_capabilities());
    let client = connect(&gw.url, &rec).await;

    let r = call_json(&client, "sdk_roots", json!({})).await;
    assert_eq!(
        r["roots"],
        json!([
            {"uri": "file:///work/alice/alpha", "name": "alpha"},
            {"uri": "file:///work/alice/beta"}
        ]),
        "{r}"
    );
    assert_eq!(rec.of("roots/list").len(), 1);
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn undeclared_capability_gets_an_error_not_a_hang() {
    let (_sdk, gw) = setup("").await;
    let rec = Recorder::new("plain", ClientCapabilities::default());
    let client = connect(&gw.url, &rec).await;

    for (tool, capability) in [
        ("sdk_elicit", "elicitation"),
        ("sdk_sample", "sampling"),
        ("sdk_roots", "roots"),
    ] {
        let started = Instant::now();
        let r = call_json(&client, tool, json!({"tag": "x"})).await;
        let took = started.elapsed();
        assert!(
            took < Duration::from_secs(5),
            "{tool} took {took:?}: the backend waited instead of getting an error"
        );
        assert_eq!(r["error"]["code"], -32601, "{tool}: {r}");
        let message = r["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(capability),
            "{tool}: error should name the {capability} capability: {message}"
        );
    }
    assert!(
        rec.events().is_empty(),
        "the client was asked anyway: {:#?}",
        rec.events()
    );
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn unanswered_elicitation_times_out_clearly() {
    let (_sdk, gw) = setup("server:\n  clientRequestTimeout: 1s\n").await;
    let delay = Duration::from_secs(4);
    let rec = Recorder::with_delay("sleepy", all_capabilities(), delay);
    let client = connect(&gw.url, &rec).await;

    let started = Instant::now();
    let r = call_json(&client, "sdk_elicit", json!({"tag": "late"})).await;
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(3),
        "the call took {took:?}; the gateway should give up after 1s, not wait for the client"
    );
    assert!(
        took >= Duration::from_millis(900),
        "the call took only {took:?}"
    );
    assert_eq!(r["error"]["code"], -32603, "{r}");
    let message = r["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("elicitation/create") && message.contains("1s"),
        "{message}"
    );
    assert_eq!(rec.of("elicitation/create").len(), 1);

    // The late answer is ignored and the session keeps working.
    tokio::time::sleep(delay).await;
    let e = call(&client, "sdk_echo", json!({"text": "still here"})).await;
    assert_eq!(text(&e), "still here");
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread")]

async fn cancellation_reaches_the_backend() {
    let (sdk, gw) = setup("").await;
    let rec = Recorder::new("alice", all_capabilities());
    let client = connect(&gw.url, &rec).await;

    let params = CallToolRequestParams::new("sdk_slow").with_arguments(obj(json!({})));
    let handle = step(
        "send tools/call",
        client.send_cancellable_request(
            ClientRequest::CallToolRequest(CallToolRequest::new(params)),
            PeerRequestOptions::no_options(),
        ),
    )
    .await
    .expect("send tools/call");
    step("the slow tool starts", sdk.shared.slow_started.notified()).await;
    assert!(!sdk.shared.slow_saw_cancellation.load(Ordering::SeqCst));

    step(
        "notifications/cancelled",
        handle.cancel(Some("the user gave up".into())),
    )
    .await
    .expect("send notifications/cancelled");
    tokio::time::timeout(
        Duration::from_secs(10),
        sdk.shared.slow_cancelled.notified(),
    )
    .await
    .unwrap_or_else(|_| {
        panic!(
            "the backend tool never saw its cancellation token fire; backend got {:?}; gateway log:\n{}",
            sdk.shared.cancelled.lock().unwrap(),
            gw.logs()
        )
    });
    assert!(sdk.shared.slow_saw_cancellation.load(Ordering::SeqCst));
    // ...because the gateway sent it notifications/cancelled for its own request id.
    let cancels = backend_cancellations(&sdk.shared, 1).await;
    assert_eq!(cancels.len(), 1, "{cancels:#?}");
    assert!(cancels[0]["requestId"].is_number(), "{cancels:#?}");

    // The session is still fine.
    let e = call(&client, "sdk_echo", json!({"text": "next"})).await;
    assert_eq!(text(&e), "next");
    client.cancel().await.ok();
}

/// The same cancellation from a raw HTTP client that keeps its POST open until it is answered
/// (rmcp, above, also drops the POST of the request it cancels).
#[tokio::test(flavor = "multi_thread")]
async fn cancellation_reaches_the_backend_while_the_post_stays_open() {
    let (sdk, gw) = setup("").await;
    let client = common::Client::connect(&gw.url).await;
    let call = {
        let client = client.clone();
        tokio::spawn(async move {
            client
                .post_raw(
                    client.session.clone(),
                    json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                           "params": {"name": "sdk_slow", "arguments": {}}}),
                )
                .await
        })
    };
    step("the slow tool starts", sdk.shared.slow_started.notified()).await;
    let n = client
        .post_raw(
            client.session.clone(),
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": 7, "reason": "the user gave up"}}),
        )
        .await;
    assert_eq!(n.status, 202, "{}", n.text);
    tokio::time::timeout(
        Duration::from_secs(10),
        sdk.shared.slow_cancelled.notified(),
    )
    .await
    .unwrap_or_else(|_| {
        panic!(
            "the backend tool never saw its cancellation token fire; backend got {:?}",
            sdk.shared.cancelled.lock().unwrap()
        )
    });
    let cancels = backend_cancellations(&sdk.shared, 1).await;
    assert_eq!(cancels.len(), 1, "{cancels:#?}");
    assert!(cancels[0]["requestId"].is_number(), "{cancels:#?}");
    // The cancelled call is answered (an error) rather than left hanging.
    let answer = step("the cancelled call's answer", call).await.unwrap();
    assert_eq!(answer.status, 200, "{}", answer.text);
}

#[tokio::test(flavor = "multi_thread")]
async fn two_concurrent_clients_never_see_each_others_messages() {
    let (_sdk, gw) = setup("").await;
    let alice = Recorder::new("alice", all_capabilities());
    let bob = Recorder::new("bob", all_capabilities());
    let a = connect(&gw.url, &alice).await;
    let b = connect(&gw.url, &bob).await;
    // Both at the same level, so a log delivered to the wrong one would show.
    set_level(&a, "debug").await;
    set_level(&b, "debug").await;

    // Same request sequence on both, so their rmcp progress tokens collide on purpose.
    let send = |client: &Client, tag: &str| {
        let params =
            CallToolRequestParams::new("sdk_combo").with_arguments(obj(json!({"tag": tag})));
        let peer = client.peer().clone();
        async move {
            let handle = peer
                .send_cancellable_request(
                    ClientRequest::CallToolRequest(CallToolRequest::new(params)),
                    PeerRequestOptions::no_options(),
                )
                .await
                .expect("send combo");
            let token = serde_json::to_value(&handle.progress_token).unwrap();
            let r = handle.await_response().await.expect("combo");
            (token, serde_json::to_value(r).unwrap())
        }
    };
    let ((ta, ra), (tb, rb)) = step("two concurrent combo calls", async {
        tokio::join!(send(&a, "alice"), send(&b, "bob"))
    })
    .await;

    for (name, rec, token, result) in [("alice", &alice, ta, ra), ("bob", &bob, tb, rb)] {
        let r: Value = serde_json::from_str(&text(&result)).unwrap();
        assert_eq!(r["tag"], name, "{r}");
        assert_eq!(
            r["answer"],
            json!({"action": "accept", "content": {"name": name, "echo": format!("Who are you? ({name})")}}),
            "{name}'s backend call must be answered by {name}"
        );
        let asked = rec.of("elicitation/create");
        assert_eq!(asked.len(), 1, "{name}: {asked:#?}");
        assert_eq!(asked[0]["message"], format!("Who are you? ({name})"));

        let progress = by_progress(rec.wait_for("notifications/progress", 2).await);
        let expected: Vec<Value> = (1..=2)
            .map(|i| {
                json!({"progressToken": token, "progress": f64::from(i), "total": 2.0,
                       "message": format!("{name} {i}")})
            })
            .collect();
        assert_eq!(progress, expected, "{name}'s progress");

        // rmcp sends logs on the backend session's shared GET stream; while both calls are in
        // flight the gateway cannot attribute them and drops them. Whatever arrives must be own.
        for log in rec.of("notifications/message") {
            assert_eq!(log["data"]["tag"], name, "{name} got a foreign log: {log}");
        }
    }
    a.cancel().await.ok();
    b.cancel().await.ok();
}

/// What a backend sends outside any request (a log message, an elicitation) must not go to
/// whichever other client's call happens to be the only one in flight on the shared connection.
#[tokio::test(flavor = "multi_thread")]

async fn messages_outside_any_request_are_not_delivered_to_another_clients_call() {
    let (sdk, gw) = setup("").await;
    let alice = Recorder::new("alice", all_capabilities());
    let bob = Recorder::new("bob", all_capabilities());
    let a = connect(&gw.url, &alice).await;
    let b = connect(&gw.url, &bob).await;

    // Alice's call returns at once; its tool logs and elicits 500 ms later, outside any request.
    assert_eq!(
        text(&call(&a, "sdk_late_talk", json!({"tag": "alice-secret"})).await),
        "will talk later"
    );
    // Meanwhile Bob's call is the only one in flight on the shared backend connection.
    assert_eq!(
        text(&call(&b, "sdk_wait", json!({"ms": 1500})).await),
        "waited"
    );
    tokio::time::sleep(GRACE).await;
    let leaked_logs = bob.of("notifications/message");
    let leaked_questions = bob.of("elicitation/create");
    let late_answers = sdk.shared.late_answers.lock().unwrap().clone();
    assert!(
        leaked_logs.is_empty() && leaked_questions.is_empty(),
        "bob received alice's tool's messages: logs {leaked_logs:#?}, elicitations \
         {leaked_questions:#?}; the backend got the answers {late_answers:#?}"
    );
    a.cancel().await.ok();
    b.cancel().await.ok();
}

/// Adds then removes one item of `kind` at the backend; the client must be told each time and
/// see the change when it lists again.
async fn list_change_round_trip<F, Fut>(kind: &str, item: &str, list: F)
where
    F: Fn(Client) -> Fut,
    Fut: std::future::Future<Output = (Client, Vec<String>)>,
{
    let (_sdk, gw) = setup("").await;
    let rec = Recorder::new("alice", all_capabilities());
    let client = connect(&gw.url, &rec).await;
    let watcher = Recorder::new("watcher", all_capabilities());
    let other = connect(&gw.url, &watcher).await;
    gw.wait_streams(2).await;

    let notice = format!("notifications/{kind}/list_changed");
    let (client, before) = list(client).await;
    let advertised = advertised_name(kind, item);
    assert!(
        !before.contains(&advertised),
        "{advertised} listed too early: {before:?}"
    );

    call(
        &client,
        "sdk_mutate",
        json!({"kind": kind, "op": "add", "name": item}),
    )
    .await;
    rec.wait_for(&notice, 1).await;
    let (client, after_add) = list(client).await;
    assert!(
        after_add.contains(&advertised),
        "{advertised} missing after the backend added it: {after_add:?}"
    );
    if kind == "tools" {
        assert!(
            !after_add.contains(&item.to_string()),
            "unprefixed {item} leaked: {after_add:?}"
        );
    }

    call(
        &client,
        "sdk_mutate",
        json!({"kind": kind, "op": "remove", "name": item}),
    )
    .await;
    let notices = rec.wait_for(&notice, 2).await;
    assert_eq!(notices.len(), 2, "one {notice} per change");
    let (client, after_remove) = list(client).await;
    assert!(
        !after_remove.contains(&advertised),
        "{advertised} still listed after the backend removed it: {after_remove:?}"
    );
    // Every live session hears about it, not only the one whose call caused it.
    assert_eq!(watcher.of(&notice).len(), 2, "{:#?}", watcher.events());
    // Only the kind that changed is announced.
    let announced: Vec<String> = rec
        .events()
        .into_iter()
        .filter(|e| e.method.ends_with("/list_changed"))
        .map(|e| e.method)
        .collect();
    assert_eq!(announced, [notice.clone(), notice]);
    client.cancel().await.ok();
    other.cancel().await.ok();
}

fn advertised_name(kind: &str, item: &str) -> String {
    match kind {
        "resources" => format!("memo://sdk/extra/{item}"),
        _ => format!("sdk_{item}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn tool_list_changes_reach_the_client_additions_and_removals() {
    list_change_round_trip("tools", "extra_a", |c| async move {
        let names = tool_names(&c).await;
        (c, names)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_added_at_runtime_is_callable_under_its_prefixed_name() {
    let (_sdk, gw) = setup("").await;
    let rec = Recorder::new("alice", all_capabilities());
    let client = connect(&gw.url, &rec).await;
    gw.wait_streams(1).await;
    call(
        &client,
        "sdk_mutate",
        json!({"kind": "tools", "op": "add", "name": "extra_b"}),
    )
    .await;
    rec.wait_for("notifications/tools/list_changed", 1).await;
    let r = call(&client, "sdk_extra_b", json!({})).await;
    assert_eq!(text(&r), "extra tool extra_b");
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn prompt_list_changes_reach_the_client_additions_and_removals() {
    list_change_round_trip("prompts", "extra_p", |c| async move {
        let prompts = step("prompts/list", c.list_all_prompts())
            .await
            .expect("prompts/list");
        let names = prompts.iter().map(|p| p.name.clone()).collect();
        (c, names)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn resource_list_changes_reach_the_client_additions_and_removals() {
    list_change_round_trip("resources", "extra_r", |c| async move {
        let resources = step("resources/list", c.list_all_resources())
            .await
            .expect("resources/list");
        let uris = resources.iter().map(|r| r.uri.clone()).collect();
        (c, uris)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn resource_subscription_updates_reach_the_subscriber_only() {
    let (sdk, gw) = setup("").await;
    let sub = Recorder::new("subscriber", all_capabilities());
    let bystander = Recorder::new("bystander", all_capabilities());
    let a = connect(&gw.url, &sub).await;
    let b = connect(&gw.url, &bystander).await;
    gw.wait_streams(2).await;

    let caps = a.peer_info().expect("server info");
    let resources = serde_json::to_value(&caps.capabilities.resources).unwrap();
    assert_eq!(resources["subscribe"], true, "{resources}");

    step(
        "resources/subscribe",
        a.subscribe(from::<SubscribeRequestParams>(json!({"uri": HELLO}))),
    )
    .await
    .expect("resources/subscribe");
    assert_eq!(
        *sdk.shared.subscriptions.lock().unwrap(),
        vec![("subscribe".to_string(), HELLO.to_string())],
        "the subscription reaches the owning backend"
    );

    // The bystander's call makes the backend announce the change; only the subscriber hears.
    call(&b, "sdk_touch", json!({"uri": HELLO})).await;
    let updates = sub.wait_for("notifications/resources/updated", 1).await;
    assert_eq!(updates, vec![json!({"uri": HELLO})]);
    assert!(
        bystander.of("notifications/resources/updated").is_empty(),
        "{:#?}",
        bystander.events()
    );

    step(
        "resources/unsubscribe",
        a.unsubscribe(from::<UnsubscribeRequestParams>(json!({"uri": HELLO}))),
    )
    .await
    .expect("resources/unsubscribe");
    assert_eq!(
        sdk.shared.subscriptions.lock().unwrap().last(),
        Some(&("unsubscribe".to_string(), HELLO.to_string())),
        "the last unsubscribe reaches the backend"
    );
    call(&b, "sdk_touch", json!({"uri": HELLO})).await;
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(
        sub.of("notifications/resources/updated").len(),
        1,
        "an update after unsubscribing was delivered: {:#?}",
        sub.events()
    );
    assert!(bystander.of("notifications/resources/updated").is_empty());
    a.cancel().await.ok();
    b.cancel().await.ok();
}
