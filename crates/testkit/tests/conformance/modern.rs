//! The conformance fixture serving MCP 2026-07-28 ("Modern"), black-box: discovery and the
//! result envelope, request validation, Multi Round-Trip Requests, request-scoped progress and
//! logs, `subscriptions/listen`, and both eras from one process.

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use super::{Events, Session, WAIT, common};

/// A 2026-07-28 client of the in-process conformance fixture: stateless, every request
/// carrying its `_meta` and mirrored headers.
struct Modern {
    client: reqwest::Client,
    url: String,
    next_id: u64,
}

/// What one 2026-07-28 POST came back with.
struct Answer {
    status: u16,
    /// Notifications before the response (an SSE answer), in order.
    notes: Vec<Value>,
    response: Value,
}

impl Answer {
    fn result(&self) -> &Value {
        assert!(self.response.get("error").is_none(), "{}", self.response);
        &self.response["result"]
    }

    fn error_code(&self) -> i64 {
        self.response["error"]["code"].as_i64().unwrap()
    }
}

impl Modern {
    async fn start() -> Modern {
        let (url, _task) = vmcp_testkit::serve_conformance_in_process().await;
        Modern::at(&url)
    }

    fn at(url: &str) -> Modern {
        Modern {
            client: common::http_client(),
            url: url.to_owned(),
            next_id: 1,
        }
    }

    /// `_meta` of a request declaring `capabilities`.
    fn meta(capabilities: Value) -> Value {
        json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": { "name": "testkit-tests", "version": "0" },
            "io.modelcontextprotocol/clientCapabilities": capabilities
        })
    }

    /// POSTs `method` with `params` (whose `_meta` defaults to [`Modern::meta`] declaring every
    /// input capability) and the headers a conforming client sends, then `extra` headers
    /// (an empty value removes one).
    async fn send(
        &mut self,
        method: &str,
        mut params: Value,
        extra: &[(&str, &str)],
    ) -> reqwest::Response {
        let id = self.next_id;
        self.next_id += 1;
        if params.get("_meta").is_none() {
            params["_meta"] =
                Modern::meta(json!({ "sampling": {}, "elicitation": {}, "roots": {} }));
        }
        let mut headers = vec![
            ("content-type", "application/json".to_owned()),
            ("accept", "application/json, text/event-stream".to_owned()),
            ("mcp-protocol-version", "2026-07-28".to_owned()),
            ("mcp-method", method.to_owned()),
        ];
        if let Some(name) = params.get("name").or_else(|| params.get("uri")) {
            headers.push(("mcp-name", name.as_str().unwrap().to_owned()));
        }
        for (name, value) in extra {
            headers.retain(|(n, _)| n != name);
            if !value.is_empty() {
                headers.push((name, (*value).to_owned()));
            }
        }
        let body = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        let mut request = self.client.post(&self.url).body(body.to_string());
        for (name, value) in headers {
            request = request.header(name, value);
        }
        request.send().await.unwrap()
    }

    async fn call(&mut self, method: &str, params: Value) -> Answer {
        self.call_with(method, params, &[]).await
    }

    async fn call_with(&mut self, method: &str, params: Value, extra: &[(&str, &str)]) -> Answer {
        let response = self.send(method, params, extra).await;
        let status = response.status().as_u16();
        assert!(response.headers().get("mcp-session-id").is_none());
        let content_type = response.headers()["content-type"]
            .to_str()
            .unwrap()
            .to_owned();
        if content_type.starts_with("application/json") {
            let response = serde_json::from_str(&response.text().await.unwrap()).unwrap();
            return Answer {
                status,
                notes: Vec::new(),
                response,
            };
        }
        let mut events = Events::new(response);
        let mut notes = Vec::new();
        loop {
            let message = events.next_message().await;
            if message.get("method").is_some() {
                assert!(
                    message.get("id").is_none(),
                    "no requests on the stream: {message}"
                );
                notes.push(message);
            } else {
                return Answer {
                    status,
                    notes,
                    response: message,
                };
            }
        }
    }
}

#[tokio::test]
async fn modern_discover_and_lists_carry_the_result_envelope() {
    let mut modern = Modern::start().await;
    let discover = modern.call("server/discover", json!({})).await;
    assert_eq!(discover.status, 200);
    let result = discover.result();
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["supportedVersions"][0], "2026-07-28");
    assert!(result["capabilities"]["tools"].is_object());
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "vmcp-conformance-fixture"
    );
    assert!(result["ttlMs"].as_u64().is_some() && result["cacheScope"] == "public");

    let tools = modern.call("tools/list", json!({})).await;
    let names: Vec<&str> = tools.result()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"test_input_required_result_elicitation"));
    assert!(names.contains(&"test_simple_text"));
    assert!(
        !names.contains(&"test_reconnection"),
        "no stream resumption in 2026-07-28"
    );
    assert!(tools.result()["ttlMs"].is_u64());

    let call = modern
        .call(
            "tools/call",
            json!({ "name": "test_simple_text", "arguments": {} }),
        )
        .await;
    assert_eq!(call.result()["resultType"], "complete");
    assert!(
        call.result().get("ttlMs").is_none(),
        "tool results are not cacheable"
    );
}

#[tokio::test]
async fn modern_rejects_malformed_requests_with_the_revision_errors() {
    let mut modern = Modern::start().await;
    let no_meta = json!({ "_meta": {} });
    let answer = modern.call("server/discover", no_meta).await;
    assert_eq!((answer.status, answer.error_code()), (400, -32602));
    assert_eq!(answer.response["id"], 1, "errors keep the request id");

    let wrong_header = modern
        .call_with(
            "tools/list",
            json!({}),
            &[("mcp-protocol-version", "2099-01-01")],
        )
        .await;
    assert_eq!(
        (wrong_header.status, wrong_header.error_code()),
        (400, -32020)
    );

    let mut meta = Modern::meta(json!({}));
    meta["io.modelcontextprotocol/protocolVersion"] = json!("v999");
    let unsupported = modern
        .call_with(
            "tools/list",
            json!({ "_meta": meta }),
            &[("mcp-protocol-version", "v999")],
        )
        .await;
    assert_eq!(
        (unsupported.status, unsupported.error_code()),
        (400, -32022)
    );
    assert_eq!(unsupported.response["error"]["data"]["requested"], "v999");

    for (header, value) in [("mcp-method", ""), ("mcp-method", "TOOLS/LIST")] {
        let answer = modern
            .call_with("tools/list", json!({}), &[(header, value)])
            .await;
        assert_eq!(
            (answer.status, answer.error_code()),
            (400, -32020),
            "{value:?}"
        );
    }
    let simple = json!({ "name": "test_simple_text" });
    for value in ["", "other_tool", "=?base64?dGVzdF9zaW1wbGVfdGV4dA?="] {
        let answer = modern
            .call_with("tools/call", simple.clone(), &[("mcp-name", value)])
            .await;
        assert_eq!(
            (answer.status, answer.error_code()),
            (400, -32020),
            "{value:?}"
        );
    }
    let encoded = "=?base64?dGVzdF9zaW1wbGVfdGV4dA==?=";
    let answer = modern
        .call_with("tools/call", simple, &[("mcp-name", encoded)])
        .await;
    assert_eq!(answer.status, 200);

    let header = json!({ "name": "test_custom_header", "arguments": { "region": "eu" } });
    let missing = modern.call("tools/call", header.clone()).await;
    assert_eq!((missing.status, missing.error_code()), (400, -32020));
    let mirrored = modern
        .call_with(
            "tools/call",
            header,
            &[("mcp-param-region", "=?base64?ZXU=?=")],
        )
        .await;
    assert_eq!(mirrored.result()["content"][0]["text"], "Region: eu");

    for removed in [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
    ] {
        let answer = modern.call(removed, json!({})).await;
        assert_eq!(
            (answer.status, answer.error_code()),
            (404, -32601),
            "{removed}"
        );
    }
    let get = modern
        .client
        .get(&modern.url)
        .header("accept", "text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .send()
        .await
        .unwrap();
    assert_eq!(get.status(), 405);
}

#[tokio::test]
async fn modern_questions_come_back_as_input_required_and_state_is_sealed() {
    let mut modern = Modern::start().await;
    let tool = "test_input_required_result_multi_round";
    let round1 = modern.call("tools/call", json!({ "name": tool })).await;
    let result = round1.result();
    assert_eq!(result["resultType"], "input_required");
    assert_eq!(
        result["inputRequests"]["step1"]["method"],
        "elicitation/create"
    );
    let state1 = result["requestState"].as_str().unwrap().to_owned();

    let answer =
        |field: &str, value: &str| json!({ "action": "accept", "content": { field: value } });
    let params = json!({ "name": tool, "inputResponses": { "step1": answer("name", "Alice") }, "requestState": state1 });
    let round2 = modern.call("tools/call", params).await;
    let state2 = round2.result()["requestState"].as_str().unwrap().to_owned();
    assert!(round2.result()["inputRequests"]["step2"].is_object());
    assert_ne!(state1, state2);

    let tampered = json!({ "name": tool, "inputResponses": { "step2": answer("color", "blue") }, "requestState": format!("{state2}x") });
    assert_eq!(
        modern.call("tools/call", tampered).await.error_code(),
        -32602
    );
    let params = json!({ "name": tool, "inputResponses": { "step2": answer("color", "blue") }, "requestState": state2 });
    let round3 = modern.call("tools/call", params).await;
    assert_eq!(
        round3.result()["content"][0]["text"],
        "Alice's favorite color is blue."
    );

    // The 2025-11-25 sampling tool asks the same question by retry, and only if it may.
    let sampling = json!({ "name": "test_sampling", "arguments": { "prompt": "hi?" } });
    let asked = modern.call("tools/call", sampling.clone()).await;
    let question = &asked.result()["inputRequests"]["sampling"];
    assert_eq!(question["params"]["messages"][0]["content"]["text"], "hi?");
    let mut retry = sampling.clone();
    retry["inputResponses"] = json!({ "sampling": {
        "role": "assistant", "content": { "type": "text", "text": "hello" }, "model": "m" } });
    let done = modern.call("tools/call", retry).await;
    assert_eq!(done.result()["content"][0]["text"], "LLM response: hello");
    let mut undeclared = sampling;
    undeclared["_meta"] = Modern::meta(json!({}));
    let refused = modern.call("tools/call", undeclared).await;
    assert_eq!((refused.status, refused.error_code()), (400, -32021));
    assert!(refused.response["error"]["data"]["requiredCapabilities"]["sampling"].is_object());
}

#[tokio::test]
async fn modern_progress_streams_and_logs_only_at_the_requested_level() {
    let mut modern = Modern::start().await;
    let mut progress = json!({ "name": "test_tool_with_progress" });
    progress["_meta"] = Modern::meta(json!({}));
    progress["_meta"]["progressToken"] = json!("p-1");
    let answer = modern.call("tools/call", progress).await;
    let steps: Vec<&Value> = answer
        .notes
        .iter()
        .map(|n| &n["params"]["progress"])
        .collect();
    assert_eq!(steps, [&json!(0), &json!(50), &json!(100)]);
    assert_eq!(answer.result()["resultType"], "complete");

    let logging = json!({ "name": "test_tool_with_logging" });
    let silent = modern.call("tools/call", logging.clone()).await;
    assert!(
        silent.notes.is_empty(),
        "no logLevel, no logs: {:?}",
        silent.notes
    );
    let mut verbose = logging;
    verbose["_meta"] = Modern::meta(json!({}));
    verbose["_meta"]["io.modelcontextprotocol/logLevel"] = json!("info");
    let logged = modern.call("tools/call", verbose).await;
    assert_eq!(logged.notes.len(), 3, "{:?}", logged.notes);
    assert!(
        logged
            .notes
            .iter()
            .all(|n| n["method"] == "notifications/message")
    );
}

#[tokio::test]
async fn modern_listen_acknowledges_then_relays_only_requested_changes() {
    let mut modern = Modern::start().await;
    let filter =
        json!({ "notifications": { "toolsListChanged": true, "resourcesListChanged": true } });
    let response = modern.send("subscriptions/listen", filter, &[]).await;
    assert_eq!(response.headers()["x-accel-buffering"], "no");
    let mut stream = Events::new(response);
    let ack = stream.next_message().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["notifications"],
        json!({ "toolsListChanged": true })
    );
    let subscription = ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"].clone();
    assert_eq!(subscription, 1);

    for trigger in ["test_trigger_prompt_change", "test_trigger_tool_change"] {
        modern
            .call("tools/call", json!({ "name": trigger }))
            .await
            .result();
    }
    let change = stream.next_message().await;
    assert_eq!(change["method"], "notifications/tools/list_changed");
    assert_eq!(
        change["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        subscription
    );
}

#[tokio::test]
async fn one_process_serves_both_eras_side_by_side() {
    let (url, _task) = vmcp_testkit::serve_conformance_in_process().await;
    let mut legacy = Session::initialize(&url, json!({})).await;
    let mut modern = Modern::at(&url);
    let legacy_tools = legacy.result("tools/list", json!({})).await;
    let modern_tools = modern.call("tools/list", json!({})).await;
    assert!(
        legacy_tools.get("resultType").is_none(),
        "2025-11-25 results stay as they were"
    );
    let legacy_names = legacy_tools["tools"].as_array().unwrap();
    assert!(
        legacy_names
            .iter()
            .any(|t| t["name"] == "test_reconnection")
    );
    assert!(
        legacy_names
            .iter()
            .all(|t| t["name"] != "test_input_required_result_elicitation")
    );
    assert_eq!(modern_tools.result()["resultType"], "complete");
    // A stray 2026-07-28 `_meta` key does not pull a 2025-11-25 session request over.
    let mut params = json!({});
    params["_meta"] = Modern::meta(json!({}));
    assert_eq!(legacy.result("ping", params).await, json!({}));
}

#[tokio::test]
async fn modern_is_switched_off_by_legacy_only() {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_vmcp-conformance-fixture"))
        .args(["--port", "0", "--legacy-only"])
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(WAIT, lines.next_line()).await.unwrap();
    let base = line.unwrap().unwrap();
    let base = base.strip_prefix("listening on ").expect("listening line");
    let mut modern = Modern::at(&format!("{base}/mcp"));
    let refused = modern.send("server/discover", json!({}), &[]).await;
    assert_eq!(refused.status(), 400, "2026-07-28 is not spoken");
    let mut session = Session::initialize(&format!("{base}/mcp"), json!({})).await;
    assert_eq!(session.result("ping", json!({})).await, json!({}));
}
