use serde_json::{Value, json};

use super::{Fixture, Outcome};
use crate::FixtureOptions;

fn fixture(opts: FixtureOptions) -> Fixture {
    Fixture::new(&opts, true)
}

async fn answer(fixture: &Fixture, method: &str, params: Value) -> Value {
    let message = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
    match fixture.handle(&message).await {
        Outcome::Reply(response) => response,
        other => panic!("expected a reply, got {other:?}"),
    }
}

#[tokio::test]
async fn initialize_falls_back_to_newest_version() {
    let fixture = fixture(FixtureOptions::default());
    let answer = answer(
        &fixture,
        "initialize",
        json!({ "protocolVersion": "1999-01-01" }),
    )
    .await;
    assert_eq!(answer["result"]["protocolVersion"], "2025-11-25");
    let answer = super::Fixture::initialize(&fixture, &json!({ "protocolVersion": "2024-11-05" }));
    assert_eq!(answer["protocolVersion"], "2024-11-05");
}

#[tokio::test]
async fn switched_off_capabilities_are_absent_and_unknown_methods() {
    let opts = FixtureOptions {
        resources: false,
        prompts: false,
        ..FixtureOptions::default()
    };
    let fixture = fixture(opts);
    let init = answer(&fixture, "initialize", json!({})).await;
    assert!(init["result"]["capabilities"].get("resources").is_none());
    assert!(init["result"]["capabilities"].get("prompts").is_none());
    for method in [
        "resources/list",
        "resources/read",
        "prompts/list",
        "prompts/get",
    ] {
        assert_eq!(
            answer(&fixture, method, json!({})).await["error"]["code"],
            -32601,
            "{method}"
        );
    }
}

#[tokio::test]
async fn invalid_cursor_is_invalid_params() {
    let fixture = fixture(FixtureOptions::default());
    let answer = answer(&fixture, "tools/list", json!({ "cursor": "bogus" })).await;
    assert_eq!(answer["error"]["code"], -32602);
}

#[tokio::test]
async fn exactly_one_full_page_has_no_cursor() {
    let fixture = fixture(FixtureOptions {
        tools: 41,
        ..FixtureOptions::default()
    });
    let only = answer(&fixture, "tools/list", json!({})).await["result"].clone();
    assert_eq!(only["tools"].as_array().map(Vec::len), Some(50));
    assert!(only.get("nextCursor").is_none());
}

#[tokio::test]
async fn last_page_has_no_cursor() {
    // 8 fixed + forget_session + 42 numbered = 51 tools: a full page, then one.
    let fixture = fixture(FixtureOptions {
        tools: 42,
        ..FixtureOptions::default()
    });
    let first = answer(&fixture, "tools/list", json!({})).await["result"].clone();
    assert_eq!(first["tools"].as_array().map(Vec::len), Some(50));
    let cursor = first["nextCursor"].clone();
    let second =
        answer(&fixture, "tools/list", json!({ "cursor": cursor })).await["result"].clone();
    assert_eq!(second["tools"].as_array().map(Vec::len), Some(1));
    assert!(second.get("nextCursor").is_none());
}

#[tokio::test]
async fn notifications_and_responses_are_accepted_silently() {
    let fixture = fixture(FixtureOptions::default());
    let note = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    assert_eq!(fixture.handle(&note).await, Outcome::Accepted);
    let response = json!({ "jsonrpc": "2.0", "id": 4, "result": {} });
    assert_eq!(fixture.handle(&response).await, Outcome::Accepted);
    let Outcome::Reply(invalid) = fixture.handle(&json!([1, 2])).await else {
        panic!()
    };
    assert_eq!(invalid["error"]["code"], -32600);
}

#[tokio::test]
async fn misbehaving_tools_report_their_effect() {
    let fixture = fixture(FixtureOptions::default());
    let call = |name: &str| json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": name } });
    assert_eq!(fixture.handle(&call("crash")).await, Outcome::Crash);
    assert_eq!(fixture.handle(&call("garbage")).await, Outcome::Garbage);
    assert!(matches!(
        fixture.handle(&call("forget_session")).await,
        Outcome::ReplyThenForgetSessions(_)
    ));
    let sessionless = Fixture::new(&FixtureOptions::default(), false);
    let Outcome::Reply(unknown) = sessionless.handle(&call("forget_session")).await else {
        panic!()
    };
    assert_eq!(unknown["error"]["code"], -32602);
}
