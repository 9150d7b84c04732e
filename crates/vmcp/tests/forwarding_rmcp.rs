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

mod common;

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{Gateway, http_backend};
use rmcp::{
    ClientHandler, ErrorData, RoleClient, RoleServer, ServerHandler, ServiceError, ServiceExt,
    model::{
        CallToolRequest, CallToolRequestParams, CallToolResponse, CallToolResult,
        CancelledNotificationParam, ClientCapabilities, ClientConfig, ClientRequest, ClientResult,
        CreateMessageRequestParams, CreateMessageResult, ElicitRequest, ElicitRequestParams,
        ElicitResult, ElicitationAction, GetPromptRequestParams, GetPromptResponse,
        GetPromptResult, Implementation, JsonObject, ListPromptsResult, ListResourcesResult,
        ListRootsResult, ListToolsResult, LoggingMessageNotificationParam, PaginatedRequestParams,
        ProgressNotificationParam, Prompt, ProtocolVersion, ReadResourceRequestParams,
        ReadResourceResponse, ReadResourceResult, Resource, ResourceContents,
        ResourceUpdatedNotificationParam, ServerCapabilities, ServerConfig, ServerRequest,
        SetLevelRequestParams, SubscribeRequestParams, Tool, UnsubscribeRequestParams,
    },
    service::{NotificationContext, PeerRequestOptions, RequestContext, RunningService},
    transport::{
        StreamableHttpClientTransport,
        streamable_http_client::StreamableHttpClientTransportConfig,
        streamable_http_server::{
            StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
        },
    },
};
use serde_json::{Value, json};

/// Upper bound for any single step (an rmcp call, a wait for a notification).
const STEP: Duration = Duration::from_secs(20);
/// How long to keep listening after the expected messages arrived, to catch unexpected extras.
const GRACE: Duration = Duration::from_millis(500);
/// Time for a fresh rmcp client to open its GET stream (list changes and resource updates ride
/// it; the gateway drops what it cannot deliver).
const GET_STREAM_SETTLE: Duration = Duration::from_millis(700);

async fn step<T>(what: &str, fut: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(STEP, fut)
        .await
        .unwrap_or_else(|_| panic!("{what}: nothing within {STEP:?}"))
}

fn obj(v: Value) -> JsonObject {
    match v {
        Value::Object(m) => m,
        other => panic!("expected a JSON object, got {other}"),
    }
}

fn from<T: rmcp::serde::de::DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("cannot decode {v}: {e}"))
}

// =============================================================================================
// The rmcp backend
// =============================================================================================

/// What the backend observed, shared between every rmcp session of one backend and the test.
struct Shared {
    extra_tools: Mutex<BTreeSet<String>>,
    extra_prompts: Mutex<BTreeSet<String>>,
    extra_resources: Mutex<BTreeSet<String>>,
    /// `("subscribe" | "unsubscribe", uri)` in arrival order.
    subscriptions: Mutex<Vec<(String, String)>>,
    /// The progress tokens the backend saw on tool calls (the gateway's, not the client's).
    seen_tokens: Mutex<Vec<Value>>,
    /// `logging/setLevel` levels the backend was asked for.
    levels: Mutex<Vec<String>>,
    /// `notifications/cancelled` the backend received.
    cancelled: Mutex<Vec<Value>>,
    /// What the client answered to `late_talk`'s unassociated elicitation (or the error).
    late_answers: Mutex<Vec<Value>>,
    slow_started: tokio::sync::Notify,
    slow_cancelled: tokio::sync::Notify,
    slow_saw_cancellation: AtomicBool,
    /// Both `combo` calls of the concurrency test meet here before talking back.
    barrier: tokio::sync::Barrier,
}

impl Shared {
    fn new() -> Arc<Self> {
        Arc::new(Shared {
            extra_tools: Mutex::default(),
            extra_prompts: Mutex::default(),
            extra_resources: Mutex::default(),
            subscriptions: Mutex::default(),
            seen_tokens: Mutex::default(),
            levels: Mutex::default(),
            cancelled: Mutex::default(),
            late_answers: Mutex::default(),
            slow_started: tokio::sync::Notify::new(),
            slow_cancelled: tokio::sync::Notify::new(),
            slow_saw_cancellation: AtomicBool::new(false),
            barrier: tokio::sync::Barrier::new(2),
        })
    }
}

#[derive(Clone)]
struct SdkBackendServer {
    shared: Arc<Shared>,
}

const STATIC_TOOLS: &[&str] = &[
    "echo",
    "progress",
    "log",
    "late_talk",
    "wait",
    "elicit",
    "elicit_url",
    "sample",
    "roots",
    "slow",
    "combo",
    "mutate",
    "touch",
];
const HELLO: &str = "memo://sdk/hello";

fn tool(name: &str) -> Tool {
    let schema = obj(json!({"type": "object", "additionalProperties": true}));
    Tool::new(name.to_string(), format!("test tool {name}"), schema)
}

fn text_result(text: impl Into<String>) -> CallToolResult {
    from(json!({"content": [{"type": "text", "text": text.into()}]}))
}

fn json_result(v: Value) -> CallToolResult {
    text_result(v.to_string())
}

/// How a server-to-client request failed, as the tool reports it in its result.
fn describe_error(e: &ServiceError) -> Value {
    match e {
        ServiceError::McpError(err) => {
            json!({"error": {"code": err.code.0, "message": err.message.to_string()}})
        }
        other => json!({"error": {"code": null, "message": other.to_string()}}),
    }
}

fn arg<'a>(args: &'a JsonObject, key: &str) -> &'a str {
    args.get(key).and_then(Value::as_str).unwrap_or("")
}

impl SdkBackendServer {
    async fn elicit(&self, ctx: &RequestContext<RoleServer>, params: Value) -> Value {
        let params: ElicitRequestParams = from(params);
        match ctx
            .peer
            .send_request(ServerRequest::ElicitRequest(ElicitRequest::new(params)))
            .await
        {
            Ok(ClientResult::ElicitResult(r)) => {
                json!({"action": r.action, "content": r.content})
            }
            Ok(other) => {
                json!({"error": {"code": null, "message": format!("unexpected {other:?}")}})
            }
            Err(e) => describe_error(&e),
        }
    }

    async fn log(ctx: &RequestContext<RoleServer>, level: &str, data: Value) {
        let p: LoggingMessageNotificationParam =
            from(json!({"level": level, "logger": "sdk", "data": data}));
        let _ = ctx.peer.notify_logging_message(p).await;
    }

    async fn progress(
        ctx: &RequestContext<RoleServer>,
        token: &Value,
        n: u32,
        total: u32,
        message: &str,
    ) {
        let p: ProgressNotificationParam = from(json!({
            "progressToken": token, "progress": n, "total": total, "message": message
        }));
        let _ = ctx.peer.notify_progress(p).await;
    }

    async fn run_tool(
        &self,
        name: &str,
        args: JsonObject,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let token = ctx
            .meta
            .get_progress_token()
            .map(|t| serde_json::to_value(t).unwrap());
        if let Some(t) = &token {
            self.shared.seen_tokens.lock().unwrap().push(t.clone());
        }
        let tag = arg(&args, "tag").to_string();
        match name {
            "echo" => Ok(text_result(arg(&args, "text"))),
            "progress" => {
                let Some(token) = token else {
                    return Ok(text_result("no progress token"));
                };
                for i in 1..=3 {
                    Self::progress(&ctx, &token, i, 3, &format!("step {i}")).await;
                }
                Ok(json_result(json!({"backendToken": token})))
            }
            "log" => {
                for level in ["debug", "info", "warning", "error"] {
                    Self::log(&ctx, level, json!({"level": level, "tag": tag})).await;
                }
                // rmcp sends log messages on the session's standalone (GET) stream, not on the
                // request's own stream: give them time to arrive while the call is in flight.
                tokio::time::sleep(Duration::from_millis(400)).await;
                Ok(text_result("logged"))
            }
            "late_talk" => {
                // A log message and an elicitation that belong to no request: sent after this call
                // has finished (from a spawned task, so rmcp puts them on the standalone stream).
                let peer = ctx.peer.clone();
                let shared = self.shared.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    let p: LoggingMessageNotificationParam = from(json!({
                        "level": "error", "logger": "sdk", "data": {"tag": tag, "late": true}
                    }));
                    let _ = peer.notify_logging_message(p).await;
                    let params: ElicitRequestParams = from(json!({
                        "mode": "form",
                        "message": format!("Late question ({tag})"),
                        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
                    }));
                    let answer = peer
                        .send_request(ServerRequest::ElicitRequest(ElicitRequest::new(params)))
                        .await;
                    let answer = match answer {
                        Ok(ClientResult::ElicitResult(r)) => {
                            json!({"action": r.action, "content": r.content})
                        }
                        Ok(other) => json!({"unexpected": format!("{other:?}")}),
                        Err(e) => describe_error(&e),
                    };
                    shared.late_answers.lock().unwrap().push(answer);
                });
                Ok(text_result("will talk later"))
            }
            "wait" => {
                let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(1000);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                Ok(text_result("waited"))
            }
            "elicit" => {
                let r = self
                    .elicit(
                        &ctx,
                        json!({
                            "mode": "form",
                            "message": format!("Who are you? ({tag})"),
                            "requestedSchema": {
                                "type": "object",
                                "properties": {"name": {"type": "string"}, "echo": {"type": "string"}},
                                "required": ["name"]
                            }
                        }),
                    )
                    .await;
                Ok(json_result(r))
            }
            "elicit_url" => {
                let r = self
                    .elicit(
                        &ctx,
                        json!({
                            "mode": "url",
                            "message": format!("Please sign in ({tag})"),
                            "url": format!("https://auth.example.com/consent?tag={tag}"),
                            "elicitationId": format!("elicit-{tag}")
                        }),
                    )
                    .await;
                Ok(json_result(r))
            }
            "sample" => {
                let params: CreateMessageRequestParams = from(json!({
                    "messages": [{"role": "user", "content": {"type": "text", "text": format!("What is 6x7? ({tag})")}}],
                    "maxTokens": 50
                }));
                let r = match ctx.peer.create_message(params).await {
                    Ok(r) => serde_json::to_value(r).unwrap(),
                    Err(e) => describe_error(&e),
                };
                Ok(json_result(r))
            }
            "roots" => {
                let r = match ctx.peer.list_roots().await {
                    Ok(r) => serde_json::to_value(r).unwrap(),
                    Err(e) => describe_error(&e),
                };
                Ok(json_result(r))
            }
            "slow" => {
                self.shared.slow_started.notify_one();
                tokio::select! {
                    _ = ctx.ct.cancelled() => {
                        self.shared.slow_saw_cancellation.store(true, Ordering::SeqCst);
                        self.shared.slow_cancelled.notify_one();
                        Ok(text_result("cancelled"))
                    }
                    _ = tokio::time::sleep(Duration::from_secs(30)) => Ok(text_result("finished")),
                }
            }
            "combo" => {
                if tokio::time::timeout(Duration::from_secs(10), self.shared.barrier.wait())
                    .await
                    .is_err()
                {
                    return Ok(text_result("the other combo call never arrived"));
                }
                if let Some(token) = &token {
                    Self::progress(&ctx, token, 1, 2, &format!("{tag} 1")).await;
                }
                Self::log(&ctx, "warning", json!({"tag": tag})).await;
                let answer = self
                    .elicit(
                        &ctx,
                        json!({
                            "mode": "form",
                            "message": format!("Who are you? ({tag})"),
                            "requestedSchema": {
                                "type": "object",
                                "properties": {"name": {"type": "string"}, "echo": {"type": "string"}},
                                "required": ["name"]
                            }
                        }),
                    )
                    .await;
                if let Some(token) = &token {
                    Self::progress(&ctx, token, 2, 2, &format!("{tag} 2")).await;
                }
                tokio::time::sleep(Duration::from_millis(400)).await;
                Ok(json_result(json!({"tag": tag, "answer": answer})))
            }
            "mutate" => {
                let kind = arg(&args, "kind");
                let op = arg(&args, "op");
                let item = arg(&args, "name").to_string();
                let set = match kind {
                    "tools" => &self.shared.extra_tools,
                    "prompts" => &self.shared.extra_prompts,
                    "resources" => &self.shared.extra_resources,
                    _ => return Ok(text_result(format!("unknown kind {kind}"))),
                };
                {
                    let mut set = set.lock().unwrap();
                    if op == "add" {
                        set.insert(item);
                    } else {
                        set.remove(&item);
                    }
                }
                let sent = match kind {
                    "tools" => ctx.peer.notify_tool_list_changed().await,
                    "prompts" => ctx.peer.notify_prompt_list_changed().await,
                    _ => ctx.peer.notify_resource_list_changed().await,
                };
                Ok(text_result(format!("{kind} {op}: {sent:?}")))
            }
            "touch" => {
                let p: ResourceUpdatedNotificationParam = from(json!({"uri": arg(&args, "uri")}));
                let sent = ctx.peer.notify_resource_updated(p).await;
                Ok(text_result(format!("touched: {sent:?}")))
            }
            other if self.shared.extra_tools.lock().unwrap().contains(other) => {
                Ok(text_result(format!("extra tool {other}")))
            }
            other => Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        }
    }
}

impl ServerHandler for SdkBackendServer {
    /// A 2025-11-25 (session-based) server: that is the revision whose mid-call server-to-client
    /// traffic the gateway forwards (2026-07-28 forbids server-to-client requests).
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
    }

    fn get_info(&self) -> ServerConfig {
        let caps: ServerCapabilities = from(json!({
            "tools": {"listChanged": true},
            "prompts": {"listChanged": true},
            "resources": {"listChanged": true, "subscribe": true},
            "logging": {}
        }));
        ServerConfig::new(caps)
            .with_server_info(Implementation::new("rmcp-forwarding-backend", "1.0.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut tools: Vec<Tool> = STATIC_TOOLS.iter().map(|n| tool(n)).collect();
        tools.extend(
            self.shared
                .extra_tools
                .lock()
                .unwrap()
                .iter()
                .map(|n| tool(n)),
        );
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.clone().unwrap_or_default();
        self.run_tool(&request.name, args, context)
            .await
            .map(Into::into)
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let mut prompts = vec![Prompt::new("greet", Some("static prompt"), None)];
        prompts.extend(
            self.shared
                .extra_prompts
                .lock()
                .unwrap()
                .iter()
                .map(|n| Prompt::new(n.clone(), Some("dynamic prompt"), None)),
        );
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let known = request.name == "greet"
            || self
                .shared
                .extra_prompts
                .lock()
                .unwrap()
                .contains(&request.name);
        if !known {
            return Err(ErrorData::invalid_params("no such prompt", None));
        }
        let r: GetPromptResult = from(json!({"messages": [
            {"role": "user", "content": {"type": "text", "text": format!("prompt {}", request.name)}}
        ]}));
        Ok(r.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let mut resources = vec![Resource::new(HELLO, "hello")];
        resources.extend(
            self.shared
                .extra_resources
                .lock()
                .unwrap()
                .iter()
                .map(|n| Resource::new(format!("memo://sdk/extra/{n}"), n.clone())),
        );
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let extra = request
            .uri
            .strip_prefix("memo://sdk/extra/")
            .is_some_and(|n| self.shared.extra_resources.lock().unwrap().contains(n));
        if request.uri != HELLO && !extra {
            return Err(ErrorData::resource_not_found("no such resource", None));
        }
        let text = format!("contents of {}", request.uri);
        Ok(ReadResourceResult::new(vec![ResourceContents::text(text, request.uri)]).into())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.shared
            .subscriptions
            .lock()
            .unwrap()
            .push(("subscribe".into(), request.uri));
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.shared
            .subscriptions
            .lock()
            .unwrap()
            .push(("unsubscribe".into(), request.uri));
        Ok(())
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let level = serde_json::to_value(request.level).unwrap();
        self.shared
            .levels
            .lock()
            .unwrap()
            .push(level.as_str().unwrap_or_default().to_string());
        Ok(())
    }

    async fn on_cancelled(
        &self,
        notification: CancelledNotificationParam,
        _context: NotificationContext<RoleServer>,
    ) {
        self.shared
            .cancelled
            .lock()
            .unwrap()
            .push(serde_json::to_value(notification).unwrap());
    }
}

/// The rmcp backend served by axum on 127.0.0.1:0 in this process; aborted on drop.
struct SdkBackend {
    url: String,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for SdkBackend {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn spawn_backend() -> SdkBackend {
    let shared = Shared::new();
    let for_sessions = shared.clone();
    // rmcp's default: stateful sessions and SSE-framed POST responses.
    let service: StreamableHttpService<SdkBackendServer, LocalSessionManager> =
        StreamableHttpService::new(
            move || {
                Ok(SdkBackendServer {
                    shared: for_sessions.clone(),
                })
            },
            Default::default(),
            StreamableHttpServerConfig::default(),
        );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("local addr");
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    SdkBackend {
        url: format!("http://{addr}/mcp"),
        shared,
        task,
    }
}

/// The rmcp backend (as `sdk`) behind a freshly started gateway.
async fn setup(server_yaml: &str) -> (SdkBackend, Gateway) {
    let sdk = spawn_backend().await;
    let yaml = format!(
        "name: forwarding\nbackends:\n{}{server_yaml}",
        http_backend("sdk", &sdk.url)
    );
    let gw = Gateway::start(&yaml);
    (sdk, gw)
}

/// Waits (bounded) until the backend recorded `n` cancellation notifications; returns them.
async fn backend_cancellations(shared: &Shared, n: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let got = shared.cancelled.lock().unwrap().clone();
        if got.len() >= n || Instant::now() > deadline {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

// =============================================================================================
// The recording rmcp client
// =============================================================================================

/// One thing the gateway sent the client: a notification or a server-to-client request.
#[derive(Debug, Clone)]
struct Event {
    method: String,
    params: Value,
}

struct RecorderInner {
    name: String,
    capabilities: ClientCapabilities,
    /// How long the elicitation handler takes before answering.
    elicit_delay: Duration,
    events: Mutex<Vec<Event>>,
}

/// A client handler that answers elicitation, sampling and roots with values derived from its
/// own name, and records every notification and request it gets.
#[derive(Clone)]
struct Recorder(Arc<RecorderInner>);

fn all_capabilities() -> ClientCapabilities {
    from(json!({
        "elicitation": {"form": {}, "url": {}},
        "sampling": {},
        "roots": {"listChanged": true}
    }))
}

impl Recorder {
    fn new(name: &str, capabilities: ClientCapabilities) -> Self {
        Self::with_delay(name, capabilities, Duration::ZERO)
    }

    fn with_delay(name: &str, capabilities: ClientCapabilities, elicit_delay: Duration) -> Self {
        Recorder(Arc::new(RecorderInner {
            name: name.to_string(),
            capabilities,
            elicit_delay,
            events: Mutex::new(Vec::new()),
        }))
    }

    fn record(&self, method: &str, params: impl rmcp::serde::Serialize) {
        let params = serde_json::to_value(params).unwrap();
        self.0.events.lock().unwrap().push(Event {
            method: method.to_string(),
            params,
        });
    }

    fn events(&self) -> Vec<Event> {
        self.0.events.lock().unwrap().clone()
    }

    fn of(&self, method: &str) -> Vec<Value> {
        self.events()
            .into_iter()
            .filter(|e| e.method == method)
            .map(|e| e.params)
            .collect()
    }

    /// Waits (bounded) until at least `n` events of `method` arrived, then a grace period for
    /// unexpected extras; returns them all.
    async fn wait_for(&self, method: &str, n: usize) -> Vec<Value> {
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

type Client = RunningService<RoleClient, Recorder>;

/// Connects an rmcp client (streamable HTTP, legacy initialize) with `recorder` as its handler.
async fn connect(url: &str, recorder: &Recorder) -> Client {
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
async fn call(client: &Client, tool: &str, args: Value) -> Value {
    let params = CallToolRequestParams::new(tool.to_string()).with_arguments(obj(args));
    let r = step(&format!("tools/call {tool}"), client.call_tool(params))
        .await
        .unwrap_or_else(|e| panic!("tools/call {tool} failed: {e}"));
    let v = serde_json::to_value(&r).unwrap();
    assert_ne!(v["isError"], json!(true), "{tool} returned isError: {v}");
    v
}

fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content in {result}"))
        .to_string()
}

/// Calls `tool` whose text result is JSON, and decodes it.
async fn call_json(client: &Client, tool: &str, args: Value) -> Value {
    let r = call(client, tool, args).await;
    let t = text(&r);
    serde_json::from_str(&t).unwrap_or_else(|e| panic!("{tool} result is not JSON ({e}): {t}"))
}

async fn tool_names(client: &Client) -> Vec<String> {
    let tools = step("tools/list", client.list_all_tools())
        .await
        .expect("tools/list");
    tools.iter().map(|t| t.name.to_string()).collect()
}

async fn set_level(client: &Client, level: &str) {
    step(
        "logging/setLevel",
        client.set_level(from::<SetLevelRequestParams>(json!({"level": level}))),
    )
    .await
    .expect("logging/setLevel");
}

/// Progress notifications in increasing `progress` order.
fn by_progress(mut v: Vec<Value>) -> Vec<Value> {
    v.sort_by(|a, b| {
        a["progress"]
            .as_f64()
            .partial_cmp(&b["progress"].as_f64())
            .unwrap()
    });
    v
}

/// Log messages in increasing severity.
fn by_severity(mut v: Vec<Value>) -> Vec<Value> {
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
fn sse_messages(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim_start()).ok())
        .collect()
}

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
    tokio::time::sleep(GET_STREAM_SETTLE).await;

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
    tokio::time::sleep(GET_STREAM_SETTLE).await;
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
    tokio::time::sleep(GET_STREAM_SETTLE).await;

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
