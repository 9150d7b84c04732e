//! Helpers for the client-era x backend-era tests (`era_matrix.rs`, `era_elicitation.rs`,
//! `era_affinity.rs`, `modern_edge.rs`):
//!
//! * [`ModernClient`]: raw MCP 2026-07-28 requests (headers + per-request `_meta`) over HTTP;
//! * [`SseReader`]: incremental SSE reading (a Legacy tools/call that elicits, a listen stream);
//! * [`legacy_connect`], [`legacy_list_all`], [`legacy_call_answering`]: raw Legacy helpers, the
//!   last answering server-to-client requests on the fly;
//! * [`backend_revision`], [`backend_status`]: what `/status` says a backend speaks;
//! * [`setup`]: the gateway in front of backends of one era; [`setup_both`]: in front of one
//!   backend serving both;
//! * `sdk`: the rmcp backend ([`EraServer`], [`spawn_sdk`]) and rmcp clients of either era.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use super::{Answer, Client, Gateway, JSON_AND_SSE, decode, http, http_backend};

mod sdk;
pub use sdk::*;

/// MCP 2026-07-28.
pub const MODERN: &str = "2026-07-28";
/// The newest session-based revision.
pub const LEGACY: &str = "2025-11-25";
pub const PV: &str = "io.modelcontextprotocol/protocolVersion";
pub const CI: &str = "io.modelcontextprotocol/clientInfo";
pub const CC: &str = "io.modelcontextprotocol/clientCapabilities";
pub const SI: &str = "io.modelcontextprotocol/serverInfo";
pub const SUB: &str = "io.modelcontextprotocol/subscriptionId";
pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// Upper bound of any single wait in these tests.
pub const STEP: Duration = Duration::from_secs(20);

pub async fn step<T>(what: &str, fut: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(STEP, fut)
        .await
        .unwrap_or_else(|_| panic!("{what}: nothing within {STEP:?}"))
}

pub fn from<T: rmcp::serde::de::DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("cannot decode {v}: {e}"))
}

// ---------------------------------------------------------------------------------------------
// Mcp-Name sentinel encoding (independent of the gateway's own implementation)
// ---------------------------------------------------------------------------------------------

/// Standard, padded base64 (RFC 4648 §4).
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `=?base64?…?=` of `name`.
pub fn sentinel(name: &str) -> String {
    format!("=?base64?{}?=", base64(name.as_bytes()))
}

/// The `Mcp-Name` header value for `name`: raw when it is plain visible ASCII, else the sentinel.
pub fn mcp_name(name: &str) -> String {
    let plain = !name.is_empty()
        && name.bytes().all(|b| (0x21..=0x7e).contains(&b))
        && !(name.starts_with("=?base64?") && name.ends_with("?="));
    if plain {
        name.to_string()
    } else {
        sentinel(name)
    }
}

// ---------------------------------------------------------------------------------------------
// Raw Modern client
// ---------------------------------------------------------------------------------------------

/// A raw MCP 2026-07-28 client: every request self-contained (headers + `_meta`), no session.
pub struct ModernClient {
    pub http: reqwest::Client,
    pub url: String,
    /// `clientCapabilities` sent with every request.
    pub caps: Value,
    next: AtomicUsize,
}

impl ModernClient {
    pub fn new(url: &str) -> Self {
        Self::with_caps(url, json!({}))
    }

    pub fn with_caps(url: &str, caps: Value) -> Self {
        ModernClient {
            http: http(),
            url: url.to_string(),
            caps,
            next: AtomicUsize::new(1000),
        }
    }

    pub fn next_id(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed) as u64
    }

    /// The `_meta` of a well-formed request.
    pub fn meta(&self) -> Value {
        json!({PV: MODERN, CI: {"name": "raw-modern", "version": "1.0.0"}, CC: self.caps})
    }

    /// A well-formed request body with a fresh id: `params` plus our `_meta` (merged into any
    /// `_meta` already in `params`).
    pub fn body(&self, method: &str, params: Value) -> Value {
        let mut params = if params.is_object() {
            params
        } else {
            json!({})
        };
        let mut meta = params
            .get("_meta")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        for (k, v) in self.meta().as_object().unwrap() {
            meta.insert(k.clone(), v.clone());
        }
        params["_meta"] = Value::Object(meta);
        json!({"jsonrpc": "2.0", "id": self.next_id(), "method": method, "params": params})
    }

    /// The headers a well-formed request for `body` carries.
    pub fn headers(body: &Value) -> Vec<(String, String)> {
        let method = body["method"].as_str().unwrap_or_default().to_string();
        let mut h = vec![
            ("mcp-protocol-version".to_string(), MODERN.to_string()),
            ("mcp-method".to_string(), method.clone()),
        ];
        let target = match method.as_str() {
            "tools/call" | "prompts/get" => body["params"]["name"].as_str(),
            "resources/read" => body["params"]["uri"].as_str(),
            _ => None,
        };
        if let Some(t) = target {
            h.push(("mcp-name".to_string(), mcp_name(t)));
        }
        h
    }

    /// POSTs `body` with exactly `headers` (plus Content-Type and Accept).
    pub async fn send(&self, body: &Value, headers: &[(String, String)]) -> Answer {
        self.send_bytes(serde_json::to_vec(body).unwrap(), headers)
            .await
    }

    pub async fn send_bytes(&self, body: Vec<u8>, headers: &[(String, String)]) -> Answer {
        let mut req = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", JSON_AND_SSE)
            .body(body);
        for (k, v) in headers {
            req = req.header(k.as_str(), v.as_str());
        }
        let resp = step("modern POST", req.send()).await.expect("POST");
        step("modern answer body", decode(resp)).await
    }

    /// A well-formed request.
    pub async fn request(&self, method: &str, params: Value) -> Answer {
        let body = self.body(method, params);
        let a = self.send(&body, &Self::headers(&body)).await;
        if a.body.get("id").is_some() {
            assert_eq!(a.body["id"], body["id"], "answer id mismatch: {}", a.text);
        }
        a
    }

    /// A well-formed request that must succeed with HTTP 200; returns the result.
    pub async fn ok(&self, method: &str, params: Value) -> Value {
        let a = self.request(method, params).await;
        assert_eq!(a.status, 200, "{method}: {}", a.text);
        assert!(a.body.get("error").is_none(), "{method} failed: {}", a.text);
        assert!(a.body["result"].is_object(), "{method}: {}", a.text);
        a.body["result"].clone()
    }

    /// Every item of a list verb, following `nextCursor`; also returns each page's length.
    pub async fn list_all(&self, method: &str, key: &str) -> (Vec<Value>, Vec<usize>) {
        let mut items = Vec::new();
        let mut pages = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..20 {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let r = self.ok(method, params).await;
            assert_eq!(r["resultType"], "complete", "{r}");
            let page = r[key].as_array().unwrap_or_else(|| panic!("{key}: {r}"));
            pages.push(page.len());
            items.extend(page.iter().cloned());
            match r.get("nextCursor") {
                None => return (items, pages),
                Some(Value::String(c)) if !c.is_empty() => cursor = Some(c.clone()),
                Some(other) => panic!("nextCursor must be a non-empty string or absent: {other}"),
            }
        }
        panic!("{method}: more than 20 pages");
    }
}

/// Asserts the Modern envelope of a successful result: `resultType` complete and the gateway's
/// own serverInfo, and no other reserved `_meta` key.
pub fn assert_modern_envelope(result: &Value) {
    assert_eq!(result["resultType"], "complete", "{result}");
    assert_eq!(result["_meta"][SI]["name"], "vmcp", "{result}");
    assert_only_our_reserved_keys(result);
}

/// No reserved `_meta` key but the gateway's serverInfo (and the end-to-end pass-through pair).
pub fn assert_only_our_reserved_keys(result: &Value) {
    if let Some(meta) = result.get("_meta").and_then(Value::as_object) {
        for k in meta.keys() {
            assert!(
                !k.starts_with("io.modelcontextprotocol/")
                    || k == SI
                    || k == "io.modelcontextprotocol/related-task"
                    || k == "io.modelcontextprotocol/model-immediate-response",
                "reserved key {k} leaked into {result}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// SSE reading
// ---------------------------------------------------------------------------------------------

/// Opens a Legacy session's GET stream (with the session's bearer token, if any).
pub async fn legacy_stream(c: &Client) -> SseReader {
    let mut req = http()
        .get(&c.url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", c.session.clone().unwrap())
        .header("mcp-protocol-version", c.version.clone());
    if let Some(token) = &c.bearer {
        req = req.bearer_auth(token);
    }
    let resp = req.send().await.unwrap();
    assert_eq!(resp.status(), 200);
    SseReader::new(resp)
}

/// Reads `data:` events of a streamed response one at a time.
pub struct SseReader {
    resp: reqwest::Response,
    buf: String,
    /// Comment lines (`: …`) seen so far.
    pub comments: usize,
}

impl SseReader {
    pub fn new(resp: reqwest::Response) -> Self {
        SseReader {
            resp,
            buf: String::new(),
            comments: 0,
        }
    }

    /// The next event's JSON, None when the stream ends; panics after `timeout`.
    pub async fn next(&mut self, timeout: Duration) -> Option<Value> {
        tokio::time::timeout(timeout, self.next_inner())
            .await
            .unwrap_or_else(|_| panic!("no SSE event within {timeout:?}; pending: {:?}", self.buf))
    }

    /// The next event, or None if nothing arrives within `wait` (or the stream ends).
    pub async fn try_next(&mut self, wait: Duration) -> Option<Value> {
        tokio::time::timeout(wait, self.next_inner())
            .await
            .ok()
            .flatten()
    }

    async fn next_inner(&mut self) -> Option<Value> {
        loop {
            let normalized = self.buf.replace("\r\n", "\n");
            if let Some(end) = normalized.find("\n\n") {
                let event = normalized[..end].to_string();
                self.buf = normalized[end + 2..].to_string();
                let mut data = Vec::new();
                for line in event.lines() {
                    if line.starts_with(':') {
                        self.comments += 1;
                    } else if let Some(d) = line.strip_prefix("data:") {
                        data.push(d.strip_prefix(' ').unwrap_or(d).to_string());
                    }
                }
                if data.is_empty() {
                    continue;
                }
                let joined = data.join("\n");
                if joined.trim().is_empty() {
                    continue; // a priming event
                }
                return Some(serde_json::from_str(&joined).unwrap_or_else(|e| {
                    panic!("SSE data is not JSON ({e}): {joined}");
                }));
            }
            match self.resp.chunk().await {
                Ok(Some(c)) => self.buf.push_str(&String::from_utf8_lossy(&c)),
                _ => return None,
            }
        }
    }
}

/// A POST of `body` on `client`'s session, accepting JSON or SSE; the caller sends it.
pub fn legacy_post(client: &Client, body: &Value) -> reqwest::RequestBuilder {
    client
        .http
        .post(&client.url)
        .header("content-type", "application/json")
        .header("accept", JSON_AND_SSE)
        .header(
            "mcp-session-id",
            client.session.clone().expect("connected client"),
        )
        .header("mcp-protocol-version", &client.version)
        .json(body)
}

/// A raw Legacy tools/call whose server-to-client requests (elicitation, sampling, …) are answered
/// with `answer(request)` as they arrive on the POST's SSE stream. Returns the requests seen and
/// the final JSON-RPC response.
pub async fn legacy_call_answering(
    client: &Client,
    tool: &str,
    args: Value,
    answer: impl Fn(&Value) -> Value,
) -> (Vec<Value>, Value) {
    let id = 777_000 + client_next(client);
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": args}});
    let session = client.session.clone().expect("connected client");
    let resp = step("legacy tools/call POST", legacy_post(client, &body).send())
        .await
        .expect("POST");
    assert_eq!(resp.status().as_u16(), 200);
    let ctype = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    if !ctype.starts_with("text/event-stream") {
        let a = decode(resp).await;
        return (Vec::new(), a.body);
    }
    let mut sse = SseReader::new(resp);
    let mut requests = Vec::new();
    loop {
        let Some(msg) = sse.next(STEP).await else {
            panic!("stream ended before the answer to {id}; requests seen: {requests:?}");
        };
        if msg.get("method").is_some() && msg.get("id").is_some() {
            let reply = json!({"jsonrpc": "2.0", "id": msg["id"], "result": answer(&msg)});
            requests.push(msg);
            let a = step("answer", client.post_raw(Some(session.clone()), reply)).await;
            assert_eq!(a.status, 202, "answer to a relayed request: {}", a.text);
        } else if msg.get("id") == Some(&json!(id)) {
            return (requests, msg);
        }
    }
}

/// A raw Legacy client that declared `caps` at initialize.
pub async fn legacy_connect(url: &str, caps: Value) -> Client {
    step("initialize", Client::connect_with(url, LEGACY, caps)).await
}

/// Every item of a Legacy list verb, following `nextCursor`; also each page's length.
pub async fn legacy_list_all(c: &Client, method: &str, key: &str) -> (Vec<Value>, Vec<usize>) {
    let mut items = Vec::new();
    let mut pages = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..20 {
        let params = match &cursor {
            Some(cur) => json!({"cursor": cur}),
            None => json!({}),
        };
        let r = step(method, c.ok(method, params)).await;
        let page = r[key].as_array().unwrap_or_else(|| panic!("{key}: {r}"));
        pages.push(page.len());
        items.extend(page.iter().cloned());
        match r.get("nextCursor") {
            None => return (items, pages),
            Some(Value::String(cur)) if !cur.is_empty() => cursor = Some(cur.clone()),
            Some(other) => panic!("nextCursor must be a non-empty string or absent: {other}"),
        }
    }
    panic!("{method}: more than 20 pages");
}

fn client_next(_c: &Client) -> u64 {
    static N: AtomicUsize = AtomicUsize::new(0);
    N.fetch_add(1, Ordering::Relaxed) as u64
}

// ---------------------------------------------------------------------------------------------
// /status
// ---------------------------------------------------------------------------------------------

/// `/status`'s entry of backend `name`.
pub async fn backend_status(base: &str, name: &str) -> Value {
    let status: Value = step("GET /status", http().get(format!("{base}/status")).send())
        .await
        .expect("status")
        .json()
        .await
        .expect("status JSON");
    status["backends"]
        .as_array()
        .and_then(|bs| bs.iter().find(|b| b["name"] == name).cloned())
        .unwrap_or_else(|| panic!("no backend {name} in {status}"))
}

/// `/status`'s `mcpRevision` of backend `name`, once the gateway knows it (bounded wait).
pub async fn backend_revision(base: &str, name: &str) -> Option<String> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let b = backend_status(base, name).await;
        if let Some(r) = b["mcpRevision"].as_str() {
            return Some(r.to_string());
        }
        if tokio::time::Instant::now() > deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

// ---------------------------------------------------------------------------------------------
// The matrix's gateway
// ---------------------------------------------------------------------------------------------

/// A revision family, of a client or of a backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    Legacy,
    Modern,
}

/// The gateway in front of backends of one era.
pub struct Setup {
    pub gw: Gateway,
    pub sdk: SdkBackend,
}

/// A stdio backend running the repo's fixture with `tools` extra numbered tools.
pub fn fixture_yaml(name: &str, tools: usize) -> String {
    let bin = vmcp_testkit::fixture_bin();
    format!(
        "  - name: {name}\n    transport: stdio\n    command: {bin:?}\n    args: [\"--transport\", \"stdio\", \"--name\", \"{name}\", \"--tools\", \"{tools}\"]\n",
        bin = bin.display().to_string()
    )
}

/// A gateway named `era-matrix`. Legacy backends: the fixture (`fx`, stdio, `fx_tools` numbered
/// tools) and rmcp pinned to 2025-11-25 (`sdk`). Modern backend: rmcp serving only 2026-07-28
/// (`sdk`, `sdk_tools` numbered tools). `/status` must show the classification.
pub async fn setup(backend: Era, fx_tools: usize, sdk_tools: usize) -> Setup {
    let era = match backend {
        Era::Legacy => BackendEra::Legacy,
        Era::Modern => BackendEra::Modern,
    };
    let sdk = spawn_sdk("sdk", era, sdk_tools).await;
    let mut yaml = format!(
        "name: era-matrix\nbackends:\n{}",
        http_backend("sdk", &sdk.url)
    );
    if backend == Era::Legacy {
        yaml.push_str(&fixture_yaml("fx", fx_tools));
    }
    let gw = Gateway::start(&yaml);
    let expected = match backend {
        Era::Legacy => LEGACY,
        Era::Modern => MODERN,
    };
    assert_eq!(
        backend_revision(&gw.base, "sdk").await.as_deref(),
        Some(expected),
        "/status: the gateway classified the rmcp backend wrongly\n{}",
        gw.logs()
    );
    if backend == Era::Legacy {
        assert_eq!(
            backend_revision(&gw.base, "fx").await.as_deref(),
            Some(LEGACY)
        );
    }
    Setup { gw, sdk }
}

/// A gateway named `era-affinity` in front of one rmcp backend (`sdk`) serving both 2025-11-25
/// sessions and 2026-07-28 stateless requests from one URL.
pub async fn setup_both() -> Setup {
    let sdk = spawn_sdk("sdk", BackendEra::Both, 0).await;
    let yaml = format!(
        "name: era-affinity\nbackends:\n{}",
        http_backend("sdk", &sdk.url)
    );
    let gw = Gateway::start(&yaml);
    Setup { gw, sdk }
}
