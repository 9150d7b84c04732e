//! Checks of the fixture's catalogue that hold on every transport.

use serde_json::{Value, json};

use super::{Conn, initialize_params};

/// Fixed tools before `forget_session` and the numbered ones.
pub(crate) const FIXED_TOOLS: usize = 8;

/// Initializes `conn` against a fixture named `name` and checks the answer.
pub(crate) async fn initialize(conn: &mut Conn, name: &str) {
    let result = conn.result("initialize", initialize_params()).await;
    assert_eq!(result["protocolVersion"], "2025-06-18");
    assert_eq!(result["serverInfo"]["name"], name);
    let capabilities = &result["capabilities"];
    assert_eq!(capabilities["tools"]["listChanged"], true);
    assert_eq!(capabilities["resources"]["listChanged"], true);
    assert_eq!(capabilities["prompts"]["listChanged"], true);
    assert!(capabilities["completions"].is_object() && capabilities["logging"].is_object());
}

/// Follows `nextCursor` through `method`, checking page sizes; returns every item of `key`.
pub(crate) async fn list_all(conn: &mut Conn, method: &str, key: &str) -> Vec<Value> {
    let mut items = Vec::new();
    let mut cursor: Option<Value> = None;
    loop {
        let params = cursor.map_or_else(|| json!({}), |c| json!({ "cursor": c }));
        let page = conn.result(method, params).await;
        let page_items = page[key].as_array().expect("items array");
        items.extend(page_items.iter().cloned());
        match page.get("nextCursor") {
            Some(next) => {
                assert_eq!(page_items.len(), 50, "full page before a cursor");
                assert!(next.is_string());
                cursor = Some(next.clone());
            }
            None => return items,
        }
    }
}

/// Everything a fixture named `name` started with `--tools <numbered>` must answer.
pub(crate) async fn check_all(conn: &mut Conn, name: &str, numbered: usize, forget: bool) {
    initialize(conn, name).await;
    tools(conn, name, numbered, forget).await;
    resources(conn, name).await;
    prompts_and_completion(conn, name).await;
    assert_eq!(conn.error_code("no/such/method", json!({})).await, -32601);
    assert_eq!(conn.result("ping", json!({})).await, json!({}));
    assert_eq!(
        conn.result("logging/setLevel", json!({ "level": "debug" }))
            .await,
        json!({})
    );
}

async fn tools(conn: &mut Conn, name: &str, numbered: usize, forget: bool) {
    let tools = list_all(conn, "tools/list", "tools").await;
    assert_eq!(tools.len(), FIXED_TOOLS + usize::from(forget) + numbered);
    let echo = tools
        .iter()
        .find(|t| t["name"] == "echo")
        .expect("echo listed");
    assert_eq!(echo["annotations"]["readOnlyHint"], true);
    assert_eq!(echo["inputSchema"]["required"], json!(["text"]));
    let add = tools
        .iter()
        .find(|t| t["name"] == "add")
        .expect("add listed");
    assert!(add["outputSchema"].is_object());
    if numbered > 0 {
        let last = format!("tool_{}", numbered - 1);
        assert!(tools.iter().any(|t| t["name"] == last.as_str()));
        let called = conn.call_tool(&last, json!({})).await;
        assert_eq!(called["content"][0]["text"], last.as_str());
    }

    let echoed = conn.call_tool("echo", json!({ "text": "hi there" })).await;
    assert_eq!(
        echoed["content"],
        json!([{ "type": "text", "text": "hi there" }])
    );
    let sum = conn.call_tool("add", json!({ "a": 2, "b": 3 })).await;
    assert_eq!(sum["content"][0]["text"], "5");
    assert_eq!(sum["structuredContent"], json!({ "sum": 5 }));
    let sum = conn.call_tool("add", json!({ "a": 0.5, "b": 2 })).await;
    assert_eq!(sum["structuredContent"], json!({ "sum": 2.5 }));
    assert_eq!(
        conn.call_tool("whoami", json!({})).await["content"][0]["text"],
        name
    );
    assert_eq!(
        conn.call_tool("sleep", json!({ "ms": 5 })).await["content"][0]["text"],
        "slept 5"
    );
    let failed = conn.call_tool("fail", json!({})).await;
    assert_eq!(
        (&failed["isError"], &failed["content"][0]["text"]),
        (&json!(true), &json!("fixture failure"))
    );

    let rpc_error = conn
        .request("tools/call", json!({ "name": "rpc_error" }))
        .await;
    assert_eq!(
        rpc_error["error"],
        json!({ "code": -32603, "message": "fixture rpc error" })
    );
    assert_eq!(
        conn.error_code("tools/call", json!({ "name": "nope" }))
            .await,
        -32602
    );
}

async fn resources(conn: &mut Conn, name: &str) {
    let listed = list_all(conn, "resources/list", "resources").await;
    let uris: Vec<&str> = listed.iter().filter_map(|r| r["uri"].as_str()).collect();
    let readme = format!("fixture://{name}/readme");
    assert_eq!(uris, [readme.as_str(), "fixture://shared/info"]);
    let templates = list_all(conn, "resources/templates/list", "resourceTemplates").await;
    let template = format!("fixture://{name}/items/{{id}}");
    assert_eq!(templates[0]["uriTemplate"], template.as_str());

    let read = |uri: &str| json!({ "uri": uri });
    let contents = conn.result("resources/read", read(&readme)).await["contents"].clone();
    assert_eq!(contents[0]["text"], format!("readme of {name}").as_str());
    assert_eq!(contents[0]["uri"], readme.as_str());
    let shared = conn
        .result("resources/read", read("fixture://shared/info"))
        .await;
    assert_eq!(
        shared["contents"][0]["text"],
        format!("shared from {name}").as_str()
    );
    let item = conn
        .result(
            "resources/read",
            read(&format!("fixture://{name}/items/42")),
        )
        .await;
    assert_eq!(
        item["contents"][0]["text"],
        format!("item 42 of {name}").as_str()
    );
    let missing = conn
        .request("resources/read", read("fixture://nowhere/x"))
        .await;
    assert_eq!(missing["error"]["code"], -32002);
    assert_eq!(missing["error"]["data"]["uri"], "fixture://nowhere/x");
}

async fn prompts_and_completion(conn: &mut Conn, name: &str) {
    let prompts = list_all(conn, "prompts/list", "prompts").await;
    assert_eq!(prompts[0]["name"], "greet");
    assert_eq!(prompts[0]["arguments"][0]["required"], true);
    let got = conn
        .result(
            "prompts/get",
            json!({ "name": "greet", "arguments": { "name": "Ann" } }),
        )
        .await;
    let expected = json!([{
        "role": "user",
        "content": { "type": "text", "text": format!("Hello, Ann! (from {name})") }
    }]);
    assert_eq!(got["messages"], expected);
    assert_eq!(
        conn.error_code("prompts/get", json!({ "name": "greet" }))
            .await,
        -32602
    );
    assert_eq!(
        conn.error_code("prompts/get", json!({ "name": "nope" }))
            .await,
        -32602
    );

    let complete = |reference: Value, argument: &str, value: &str| json!({ "ref": reference, "argument": { "name": argument, "value": value } });
    let prompt_ref = json!({ "type": "ref/prompt", "name": "greet" });
    let names = conn
        .result("completion/complete", complete(prompt_ref, "name", "al"))
        .await;
    assert_eq!(names["completion"]["values"], json!(["alice", "albert"]));
    let uri = format!("fixture://{name}/items/{{id}}");
    let resource_ref = json!({ "type": "ref/resource", "uri": uri });
    let ids = conn
        .result("completion/complete", complete(resource_ref, "id", "4"))
        .await;
    assert_eq!(ids["completion"]["values"], json!(["42"]));
}
