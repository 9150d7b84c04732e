//! The recording rmcp client: answers elicitation, sampling and roots, records every message.

#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::{
    ClientHandler, ErrorData, RoleClient, ServiceExt,
    model::{
        CallToolRequestParams, ClientCapabilities, ClientConfig, CreateMessageRequestParams,
        CreateMessageResult, ElicitRequestParams, ElicitResult, ElicitationAction, Implementation,
        ListRootsResult, LoggingMessageNotificationParam, ProgressNotificationParam,
        ResourceUpdatedNotificationParam, SetLevelRequestParams,
    },
    service::{NotificationContext, RequestContext, RunningService},
    transport::{
        StreamableHttpClientTransport, streamable_http_client::StreamableHttpClientTransportConfig,
    },
};
use serde_json::{Value, json};

/// Upper bound for any single step (an rmcp call, a wait for a notification).
use crate::scaffold::*;

// =============================================================================================
// The recording rmcp client
// =============================================================================================

/// One thing the gateway sent the client: a notification or a server-to-client request.
#[derive(Debug, Clone)]
pub(crate) struct Event {
    pub(crate) method: String,
    pub(crate) params: Value,
}

pub(crate) struct RecorderInner {
    pub(crate) name: String,
    pub(crate) capabilities: ClientCapabilities,
    /// How long the elicitation handler takes before answering.
    pub(crate) elicit_delay: Duration,
    pub(crate) events: Mutex<Vec<Event>>,
}

/// A client handler that answers elicitation, sampling and roots with values derived from its
/// own name, and records every notification and request it gets.
#[derive(Clone)]
pub(crate) struct Recorder(pub(crate) Arc<RecorderInner>);

pub(crate) fn all_capabilities() -> ClientCapabilities {
    from(json!({
        "elicitation": {"form": {}, "url": {}},
        "sampling": {},
        "roots": {"listChanged": true}
    }))
}

impl Recorder {
    pub(crate) fn new(name: &str, capabilities: ClientCapabilities) -> Self {
        Self::with_delay(name, capabilities, Duration::ZERO)
    }

    pub(crate) fn with_delay(
        name: &str,
        capabilities: ClientCapabilities,
        elicit_delay: Duration,
    ) -> Self {
        Recorder(Arc::new(RecorderInner {
            name: name.to_string(),
            capabilities,
            elicit_delay,
            events: Mutex::new(Vec::new()),
        }))
    }

    pub(crate) fn record(&self, method: &str, params: impl rmcp::serde::Serialize) {
        let params = serde_json::to_value(params).unwrap();
        self.0.events.lock().unwrap().push(Event {
            method: method.to_string(),
            params,
        });
    }

    pub(crate) fn events(&self) -> Vec<Event> {
        self.0.events.lock().unwrap().clone()
    }

    pub(crate) fn of(&self, method: &str) -> Vec<Value> {
        self.events()
            .into_iter()
            .filter(|e| e.method == method)
            .map(|e| e.params)
            .collect()
    }

    /// Waits (bounded) until at least `n` events of `method` arrived, then a grace period for
    /// unexpected extras; returns them all.
    pub(crate) async fn wait_for(&self, method: &str, n: usize) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.of(method).len() < n {
            if Instant::now() > deadline {
                panic!(
                    "{}: expected {n} × {method} within 10s, got {:#?}",
                    self.0.name,
                    self.events()
                );
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        tokio::time::sleep(GRACE).await;
        self.of(method)
    }
}

impl ClientHandler for Recorder {
    fn get_info(&self) -> ClientConfig {
        let mut config = ClientConfig::default();
        config.capabilities = self.0.capabilities.clone();
        config.client_info = Implementation::new(self.0.name.clone(), "1.0.0");
        config
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.record("elicitation/create", &request);
        tokio::time::sleep(self.0.elicit_delay).await;
        Ok(match request {
            ElicitRequestParams::FormElicitationParams { message, .. } => {
                ElicitResult::new(ElicitationAction::Accept)
                    .with_content(json!({"name": self.0.name, "echo": message}))
            }
            ElicitRequestParams::UrlElicitationParams { .. } => {
                ElicitResult::new(ElicitationAction::Accept)
            }
            _ => ElicitResult::new(ElicitationAction::Decline),
        })
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let asked = serde_json::to_value(&params).unwrap();
        self.record("sampling/createMessage", &params);
        let question = asked["messages"][0]["content"]["text"]
            .as_str()
            .or_else(|| asked["messages"][0]["content"][0]["text"].as_str())
            .unwrap_or("?")
            .to_string();
        Ok(from(json!({
            "model": format!("{}-model", self.0.name),
            "role": "assistant",
            "content": {"type": "text", "text": format!("{} answers: {question}", self.0.name)},
            "stopReason": "endTurn"
        })))
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        self.record("roots/list", json!({}));
        let name = &self.0.name;
        Ok(from(json!({"roots": [
            {"uri": format!("file:///work/{name}/alpha"), "name": "alpha"},
            {"uri": format!("file:///work/{name}/beta")}
        ]})))
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.record("notifications/progress", params);
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.record("notifications/message", params);
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.record("notifications/resources/updated", params);
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.record("notifications/tools/list_changed", json!({}));
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.record("notifications/prompts/list_changed", json!({}));
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.record("notifications/resources/list_changed", json!({}));
    }
}

pub(crate) type Client = RunningService<RoleClient, Recorder>;

/// Connects an rmcp client (streamable HTTP, legacy initialize) with `recorder` as its handler.
pub(crate) async fn connect(url: &str, recorder: &Recorder) -> Client {
    // Installs the ring crypto provider; reqwest is built without a default one.
    let http = vmcp_backend::http_client().expect("http client");
    let transport = StreamableHttpClientTransport::with_client(
        http,
        StreamableHttpClientTransportConfig::with_uri(url.to_string()),
    );
    step("rmcp initialize", recorder.clone().serve(transport))
        .await
        .unwrap_or_else(|e| panic!("rmcp client could not initialize against {url}: {e}"))
}

/// Calls `tool` and returns the result as JSON.
pub(crate) async fn call(client: &Client, tool: &str, args: Value) -> Value {
    let params = CallToolRequestParams::new(tool.to_string()).with_arguments(obj(args));
    let r = step(&format!("tools/call {tool}"), client.call_tool(params))
        .await
        .unwrap_or_else(|e| panic!("tools/call {tool} failed: {e}"));
    let v = serde_json::to_value(&r).unwrap();
    assert_ne!(v["isError"], json!(true), "{tool} returned isError: {v}");
    v
}

pub(crate) fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content in {result}"))
        .to_string()
}

/// Calls `tool` whose text result is JSON, and decodes it.
pub(crate) async fn call_json(client: &Client, tool: &str, args: Value) -> Value {
    let r = call(client, tool, args).await;
    let t = text(&r);
    serde_json::from_str(&t).unwrap_or_else(|e| panic!("{tool} result is not JSON ({e}): {t}"))
}

pub(crate) async fn tool_names(client: &Client) -> Vec<String> {
    let tools = step("tools/list", client.list_all_tools())
        .await
        .expect("tools/list");
    tools.iter().map(|t| t.name.to_string()).collect()
}

pub(crate) async fn set_level(client: &Client, level: &str) {
    step(
        "logging/setLevel",
        client.set_level(from::<SetLevelRequestParams>(json!({"level": level}))),
    )
    .await
    .expect("logging/setLevel");
}

/// Progress notifications in increasing `progress` order.
pub(crate) fn by_progress(mut v: Vec<Value>) -> Vec<Value> {
    v.sort_by(|a, b| {
        a["progress"]
            .as_f64()
            .partial_cmp(&b["progress"].as_f64())
            .unwrap()
    });
    v
}

/// Log messages in increasing severity.
pub(crate) fn by_severity(mut v: Vec<Value>) -> Vec<Value> {
    const ORDER: [&str; 8] = [
        "debug",
        "info",
        "notice",
        "warning",
        "error",
        "critical",
        "alert",
        "emergency",
    ];
    v.sort_by_key(|m| ORDER.iter().position(|l| m["level"] == *l));
    v
}

/// The JSON-RPC messages of an SSE body, in order.
pub(crate) fn sse_messages(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim_start()).ok())
        .collect()
}
