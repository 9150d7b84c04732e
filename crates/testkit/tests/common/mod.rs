//! A tiny MCP client over the fixture's three transports, and the catalogue checks every
//! transport must pass.

#![allow(dead_code)] // each test binary uses a different subset

pub(crate) mod catalogue;

use std::process::Stdio;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::mpsc;

pub(crate) const BIN: &str = env!("CARGO_BIN_EXE_vmcp-fixture");
const WAIT: Duration = Duration::from_secs(10);

/// A reqwest client (installs the ring provider: the workspace builds reqwest without one).
pub(crate) fn http_client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

pub(crate) fn initialize_params() -> Value {
    json!({
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": { "name": "testkit-tests", "version": "0" }
    })
}

/// One connection to a fixture, over any transport.
pub(crate) enum Conn {
    Stdio(Box<StdioConn>),
    Http(HttpConn),
    Sse(SseConn),
}

impl Conn {
    /// Sends a request and returns the whole JSON-RPC response.
    pub(crate) async fn request(&mut self, method: &str, params: Value) -> Value {
        match self {
            Conn::Stdio(conn) => conn.request(method, params).await,
            Conn::Http(conn) => conn.request(method, params).await,
            Conn::Sse(conn) => conn.request(method, params).await,
        }
    }

    /// `result` of a request that must succeed.
    pub(crate) async fn result(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params).await;
        assert!(
            response.get("error").is_none(),
            "{method} failed: {response}"
        );
        response["result"].clone()
    }

    /// `error.code` of a request that must fail.
    pub(crate) async fn error_code(&mut self, method: &str, params: Value) -> i64 {
        let response = self.request(method, params).await;
        response["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("no error: {response}"))
    }

    pub(crate) async fn call_tool(&mut self, name: &str, arguments: Value) -> Value {
        self.result(
            "tools/call",
            json!({ "name": name, "arguments": arguments }),
        )
        .await
    }
}

fn request_body(id: u64, method: &str, params: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
}

/// stdio: the child and its pipes.
pub(crate) struct StdioConn {
    pub(crate) child: Child,
    pub(crate) stdin: ChildStdin,
    pub(crate) lines: Lines<BufReader<ChildStdout>>,
    next_id: u64,
}

impl StdioConn {
    pub(crate) fn spawn(args: &[&str]) -> StdioConn {
        let mut child = tokio::process::Command::new(BIN)
            .args(["--transport", "stdio"])
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn vmcp-fixture");
        let stdin = child.stdin.take().expect("stdin");
        let lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        StdioConn {
            child,
            stdin,
            lines,
            next_id: 1,
        }
    }

    pub(crate) async fn send_line(&mut self, line: &str) {
        self.stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .expect("write stdin");
    }

    pub(crate) async fn next_line(&mut self) -> String {
        let line = tokio::time::timeout(WAIT, self.lines.next_line())
            .await
            .expect("timeout");
        line.expect("read stdout").expect("stdout closed")
    }

    async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send_line(&request_body(id, method, params).to_string())
            .await;
        loop {
            let line = self.next_line().await;
            let message: Value = serde_json::from_str(&line).expect("stdout line is JSON");
            if message["id"] == id {
                return message;
            }
        }
    }
}

/// Streamable HTTP: URL and the session id learnt at initialize.
pub(crate) struct HttpConn {
    pub(crate) client: reqwest::Client,
    pub(crate) url: String,
    pub(crate) session: Option<String>,
    next_id: u64,
}

impl HttpConn {
    pub(crate) fn new(url: &str) -> HttpConn {
        HttpConn {
            client: http_client(),
            url: url.to_owned(),
            session: None,
            next_id: 1,
        }
    }

    /// POSTs `body` with the MCP headers (and the session, if any).
    pub(crate) async fn post(&self, body: String) -> reqwest::Response {
        let mut request = self
            .client
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body);
        if let Some(session) = &self.session {
            request = request.header("mcp-session-id", session);
        }
        request.send().await.expect("POST")
    }

    async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let response = self
            .post(request_body(id, method, params).to_string())
            .await;
        assert_eq!(response.status(), 200, "{method}");
        if let Some(session) = response.headers().get("mcp-session-id") {
            self.session = Some(session.to_str().expect("ascii session id").to_owned());
        }
        read_http_answer(response).await
    }
}

/// The JSON-RPC message of a 200 answer, whether JSON or one SSE event.
pub(crate) async fn read_http_answer(response: reqwest::Response) -> Value {
    let content_type = response.headers()["content-type"]
        .to_str()
        .expect("ascii")
        .to_owned();
    let body = response.text().await.expect("body");
    if content_type.starts_with("text/event-stream") {
        let events = parse_events(&body);
        assert_eq!(events.len(), 1, "one event per answer: {body:?}");
        assert_eq!(events[0].0, "message");
        serde_json::from_str(&events[0].1).expect("event data is JSON")
    } else {
        assert!(
            content_type.starts_with("application/json"),
            "{content_type}"
        );
        serde_json::from_str(&body).expect("body is JSON")
    }
}

/// `(event, data)` of every complete event in `text`; comments skipped.
pub(crate) fn parse_events(text: &str) -> Vec<(String, String)> {
    text.split("\n\n")
        .filter_map(|block| {
            let mut event = String::from("message");
            let mut data = None;
            for line in block.lines() {
                if let Some(value) = line.strip_prefix("event: ") {
                    event = value.to_owned();
                } else if let Some(value) = line.strip_prefix("data: ") {
                    data = Some(value.to_owned());
                }
            }
            data.map(|data| (event, data))
        })
        .collect()
}

/// Legacy HTTP+SSE: the POST endpoint and the events arriving on the stream.
pub(crate) struct SseConn {
    pub(crate) client: reqwest::Client,
    pub(crate) endpoint: String,
    pub(crate) events: mpsc::UnboundedReceiver<(String, String)>,
    next_id: u64,
}

impl SseConn {
    /// Opens `GET sse_url` and waits for the `endpoint` event.
    pub(crate) async fn open(sse_url: &str) -> SseConn {
        let client = http_client();
        let response = client
            .get(sse_url)
            .header("accept", "text/event-stream")
            .send()
            .await
            .expect("GET /sse");
        assert_eq!(response.status(), 200);
        let (sender, mut events) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut body = response.bytes_stream();
            let mut buffer = String::new();
            while let Some(Ok(chunk)) = body.next().await {
                buffer.push_str(std::str::from_utf8(&chunk).expect("utf-8"));
                while let Some(end) = buffer.find("\n\n") {
                    let block: String = buffer.drain(..end + 2).collect();
                    for event in parse_events(&block) {
                        let _ = sender.send(event);
                    }
                }
            }
        });
        let (event, data) = recv(&mut events).await;
        assert_eq!(event, "endpoint");
        assert!(data.starts_with("/messages?sessionId="), "{data}");
        let origin = sse_url.strip_suffix("/sse").expect("url ends with /sse");
        SseConn {
            client,
            endpoint: format!("{origin}{data}"),
            events,
            next_id: 1,
        }
    }

    pub(crate) async fn post(&self, body: String) -> reqwest::Response {
        let request = self
            .client
            .post(&self.endpoint)
            .header("content-type", "application/json");
        request.body(body).send().await.expect("POST /messages")
    }

    pub(crate) async fn next_event(&mut self) -> (String, String) {
        recv(&mut self.events).await
    }

    async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let response = self
            .post(request_body(id, method, params).to_string())
            .await;
        assert_eq!(response.status(), 202, "{method}");
        loop {
            let (event, data) = self.next_event().await;
            assert_eq!(event, "message");
            let message: Value = serde_json::from_str(&data).expect("event data is JSON");
            if message["id"] == id {
                return message;
            }
        }
    }
}

async fn recv(events: &mut mpsc::UnboundedReceiver<(String, String)>) -> (String, String) {
    tokio::time::timeout(WAIT, events.recv())
        .await
        .expect("timeout")
        .expect("stream closed")
}

/// Spawns `vmcp-fixture --transport <transport> --port 0 <args>`; returns it and its base URL.
pub(crate) async fn spawn_listening(transport: &str, args: &[&str]) -> (Child, String) {
    let mut child = tokio::process::Command::new(BIN)
        .args(["--transport", transport, "--port", "0"])
        .args(args)
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn vmcp-fixture");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let line = tokio::time::timeout(WAIT, lines.next_line())
        .await
        .expect("timeout");
    let line = line.expect("read").expect("a line");
    let base = line
        .strip_prefix("listening on ")
        .expect("listening line")
        .to_owned();
    (child, base)
}
