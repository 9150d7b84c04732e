//! The conformance fixture, black-box: its catalogue, what it sends on a POST's SSE stream
//! mid-call (sampling requests, logs, progress), SEP-1699 stream resumption, and its
//! Host/Origin/version checks, all 2025-11-25; the same fixture serving 2026-07-28 is tested in
//! `modern` (`tests/conformance/modern.rs`). The official suite itself runs in
//! `.ci/conformance.sh`.

#![allow(clippy::unwrap_used)] // Test helpers: a panic is the failure report.

mod common;
#[path = "conformance/modern.rs"]
mod modern;

use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

const WAIT: Duration = Duration::from_secs(10);

/// A session with the in-process conformance fixture.
struct Session {
    client: reqwest::Client,
    url: String,
    id: String,
    next_id: u64,
}

impl Session {
    /// Starts a fixture and initializes a session declaring `capabilities`.
    async fn start(capabilities: Value) -> Session {
        let (url, _task) = vmcp_testkit::serve_conformance_in_process().await;
        Self::initialize(&url, capabilities).await
    }

    async fn initialize(url: &str, capabilities: Value) -> Session {
        let client = common::http_client();
        let body = json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": capabilities,
                "clientInfo": { "name": "testkit-tests", "version": "0" }
            }
        });
        let response = client
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let id = response.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let answer = common::read_http_answer(response).await;
        assert_eq!(answer["result"]["protocolVersion"], "2025-11-25");
        Session {
            client,
            url: url.to_owned(),
            id,
            next_id: 1,
        }
    }

    async fn post(&self, body: &Value) -> reqwest::Response {
        self.client
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &self.id)
            .header("mcp-protocol-version", "2025-11-25")
            .body(body.to_string())
            .send()
            .await
            .unwrap()
    }

    /// Sends a request; returns the stream of its answer.
    async fn send(&mut self, method: &str, params: Value) -> (u64, Events) {
        let id = self.next_id;
        self.next_id += 1;
        let body = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        let response = self.post(&body).await;
        assert_eq!(response.status(), 200, "{method}");
        (id, Events::new(response))
    }

    /// Sends a request; returns every message before its answer, and the answer.
    async fn exchange(&mut self, method: &str, params: Value) -> (Vec<Value>, Value) {
        let (id, mut events) = self.send(method, params).await;
        let mut before = Vec::new();
        loop {
            let message = events.next_message().await;
            if message["id"] == id && message.get("method").is_none() {
                return (before, message);
            }
            before.push(message);
        }
    }

    async fn result(&mut self, method: &str, params: Value) -> Value {
        let (_, answer) = self.exchange(method, params).await;
        assert!(answer.get("error").is_none(), "{method}: {answer}");
        answer["result"].clone()
    }
}

/// The SSE events of one response, read as they arrive: `(id, data)`.
struct Events {
    body: futures_util::stream::BoxStream<'static, reqwest::Result<axum::body::Bytes>>,
    buffer: String,
}

impl Events {
    fn new(response: reqwest::Response) -> Events {
        let content_type = response.headers()["content-type"].to_str().unwrap();
        assert!(
            content_type.starts_with("text/event-stream"),
            "{content_type}"
        );
        Events {
            body: response.bytes_stream().boxed(),
            buffer: String::new(),
        }
    }

    /// The next event's `(id, data)`, or `None` once the stream has ended.
    async fn next(&mut self) -> Option<(Option<String>, String)> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let field = |name: &str| {
                    block
                        .lines()
                        .find_map(|line| line.strip_prefix(name))
                        .map(|value| value.trim_start().to_owned())
                };
                match field("data:") {
                    Some(data) => return Some((field("id:"), data)),
                    None => continue, // a keep-alive comment
                }
            }
            let chunk = tokio::time::timeout(WAIT, self.body.next())
                .await
                .unwrap()?;
            self.buffer
                .push_str(std::str::from_utf8(&chunk.unwrap()).unwrap());
        }
    }

    async fn next_message(&mut self) -> Value {
        let (_, data) = self.next().await.expect("stream ended before the answer");
        serde_json::from_str(&data).unwrap()
    }
}

#[tokio::test]
async fn conformance_serves_every_name_the_suite_asks_for() {
    let mut session = Session::start(json!({})).await;
    let tools = session.result("tools/list", json!({})).await;
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    for name in [
        "test_simple_text",
        "test_image_content",
        "test_audio_content",
        "test_embedded_resource",
        "test_multiple_content_types",
        "test_tool_with_logging",
        "test_tool_with_progress",
        "test_error_handling",
        "test_sampling",
        "test_elicitation",
        "test_elicitation_sep1034_defaults",
        "test_elicitation_sep1330_enums",
        "test_reconnection",
        "json_schema_2020_12_tool",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    let audio = session
        .result("tools/call", json!({ "name": "test_audio_content" }))
        .await;
    assert_eq!(audio["content"][0]["mimeType"], "audio/wav");
    let error = session
        .result("tools/call", json!({ "name": "test_error_handling" }))
        .await;
    assert_eq!(error["isError"], true);

    let read = session
        .result(
            "resources/read",
            json!({ "uri": "test://template/123/data" }),
        )
        .await;
    assert!(
        read["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("123")
    );
    let (_, missing) = session
        .exchange("resources/read", json!({ "uri": "test://nope" }))
        .await;
    assert_eq!(missing["error"]["code"], -32602);
    assert_eq!(missing["error"]["data"]["uri"], "test://nope");

    let prompt = session
        .result(
            "prompts/get",
            json!({ "name": "test_prompt_with_arguments", "arguments": { "arg1": "a1", "arg2": "b2" } }),
        )
        .await;
    let text = prompt["messages"][0]["content"]["text"].as_str().unwrap();
    assert!(text.contains("a1") && text.contains("b2"), "{text}");
    let completion = session
        .result(
            "completion/complete",
            json!({
                "ref": { "type": "ref/prompt", "name": "test_prompt_with_arguments" },
                "argument": { "name": "arg1", "value": "par" }
            }),
        )
        .await;
    assert_eq!(
        completion["completion"]["values"],
        json!(["paris", "park", "party"])
    );
}

#[tokio::test]
async fn conformance_sampling_request_rides_the_post_stream_and_waits_for_the_answer() {
    let mut session = Session::start(json!({ "sampling": {} })).await;
    let (id, mut events) = session
        .send(
            "tools/call",
            json!({ "name": "test_sampling", "arguments": { "prompt": "hi?" } }),
        )
        .await;
    let request = events.next_message().await;
    assert_eq!(request["method"], "sampling/createMessage");
    assert_eq!(request["params"]["messages"][0]["content"]["text"], "hi?");
    let answer = json!({
        "jsonrpc": "2.0",
        "id": request["id"],
        "result": {
            "role": "assistant",
            "content": { "type": "text", "text": "hello" },
            "model": "test-model"
        }
    });
    assert_eq!(session.post(&answer).await.status(), 202);
    let result = events.next_message().await;
    assert_eq!(result["id"], id);
    assert_eq!(
        result["result"]["content"][0]["text"],
        "LLM response: hello"
    );
    assert!(
        events.next().await.is_none(),
        "the stream ends after the answer"
    );
}

#[tokio::test]
async fn conformance_elicitation_needs_the_client_capability() {
    let mut session = Session::start(json!({ "sampling": {} })).await;
    let (before, answer) = session
        .exchange(
            "tools/call",
            json!({ "name": "test_elicitation_sep1034_defaults" }),
        )
        .await;
    assert!(before.is_empty(), "no request sent: {before:?}");
    assert_eq!(answer["result"]["isError"], true);
}

#[tokio::test]
async fn conformance_logs_respect_set_level_and_progress_follows_the_token() {
    let mut session = Session::start(json!({})).await;
    let logging = json!({ "name": "test_tool_with_logging" });
    let (logs, _) = session.exchange("tools/call", logging.clone()).await;
    assert_eq!(logs.len(), 3, "{logs:?}");
    assert!(
        logs.iter()
            .all(|log| log["method"] == "notifications/message")
    );
    session
        .result("logging/setLevel", json!({ "level": "warning" }))
        .await;
    let (logs, _) = session.exchange("tools/call", logging).await;
    assert!(logs.is_empty(), "info logs are below warning: {logs:?}");

    let progress =
        json!({ "name": "test_tool_with_progress", "_meta": { "progressToken": "p-1" } });
    let (notes, _) = session.exchange("tools/call", progress).await;
    let steps: Vec<&Value> = notes.iter().map(|n| &n["params"]["progress"]).collect();
    assert_eq!(steps, [&json!(0), &json!(50), &json!(100)]);
    assert!(notes.iter().all(|n| n["params"]["progressToken"] == "p-1"));
    let (notes, _) = session
        .exchange("tools/call", json!({ "name": "test_tool_with_progress" }))
        .await;
    assert!(notes.is_empty(), "no token, no progress: {notes:?}");
}

#[tokio::test]
async fn conformance_reconnection_resumes_on_get_with_last_event_id() {
    let mut session = Session::start(json!({})).await;
    let (id, mut events) = session
        .send("tools/call", json!({ "name": "test_reconnection" }))
        .await;
    let (event_id, data) = events.next().await.unwrap();
    assert!(data.is_empty(), "a priming event: {data:?}");
    let event_id = event_id.expect("the priming event has an id");
    assert!(
        events.next().await.is_none(),
        "the POST stream closes mid-call"
    );

    let resumed = session
        .client
        .get(&session.url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session.id)
        .header("last-event-id", &event_id)
        .send()
        .await
        .unwrap();
    assert_eq!(resumed.status(), 200);
    let answer = Events::new(resumed).next_message().await;
    assert_eq!(answer["id"], id);
    assert_eq!(
        answer["result"]["content"][0]["text"],
        "Reconnection test completed successfully"
    );
}

#[tokio::test]
async fn conformance_refuses_foreign_host_origin_and_unknown_version() {
    let session = Session::start(json!({})).await;
    let ping = json!({ "jsonrpc": "2.0", "id": 1, "method": "ping" });
    let post = |header: &'static str, value: &'static str| {
        session
            .client
            .post(&session.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &session.id)
            .header(header, value)
            .body(ping.to_string())
            .send()
    };
    assert_eq!(
        post("host", "evil.example.com").await.unwrap().status(),
        403
    );
    assert_eq!(
        post("origin", "http://evil.example.com")
            .await
            .unwrap()
            .status(),
        403
    );
    assert_eq!(
        post("origin", "http://localhost:1234")
            .await
            .unwrap()
            .status(),
        200
    );
    assert_eq!(
        post("mcp-protocol-version", "1999-01-01")
            .await
            .unwrap()
            .status(),
        400
    );
}

#[tokio::test]
async fn conformance_binary_announces_its_address_and_serves() {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_vmcp-conformance-fixture"))
        .args(["--port", "0"])
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(WAIT, lines.next_line()).await.unwrap();
    let base = line.unwrap().unwrap();
    let base = base.strip_prefix("listening on ").expect("listening line");
    let mut session = Session::initialize(&format!("{base}/mcp"), json!({})).await;
    assert_eq!(session.result("ping", json!({})).await, json!({}));
}
