//! The in-process rmcp backend whose tools send progress, logs, elicitation, sampling and roots
//! requests, list changes and resource updates.

#![allow(dead_code)]

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::{
    ErrorData, RoleServer, ServerHandler, ServiceError,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, CancelledNotificationParam,
        ClientResult, CreateMessageRequestParams, ElicitRequest, ElicitRequestParams,
        GetPromptRequestParams, GetPromptResponse, GetPromptResult, Implementation, JsonObject,
        ListPromptsResult, ListResourcesResult, ListToolsResult, LoggingMessageNotificationParam,
        PaginatedRequestParams, ProgressNotificationParam, Prompt, ProtocolVersion,
        ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
        ResourceContents, ResourceUpdatedNotificationParam, ServerCapabilities, ServerConfig,
        ServerRequest, SetLevelRequestParams, SubscribeRequestParams, Tool,
        UnsubscribeRequestParams,
    },
    service::{NotificationContext, RequestContext},
    transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    },
};
use serde_json::{Value, json};

use crate::common::{Gateway, http_backend};

/// Upper bound for any single step (an rmcp call, a wait for a notification).
use crate::scaffold::*;

// =============================================================================================
// The rmcp backend
// =============================================================================================

/// What the backend observed, shared between every rmcp session of one backend and the test.
pub(crate) struct Shared {
    pub(crate) extra_tools: Mutex<BTreeSet<String>>,
    pub(crate) extra_prompts: Mutex<BTreeSet<String>>,
    pub(crate) extra_resources: Mutex<BTreeSet<String>>,
    /// `("subscribe" | "unsubscribe", uri)` in arrival order.
    pub(crate) subscriptions: Mutex<Vec<(String, String)>>,
    /// The progress tokens the backend saw on tool calls (the gateway's, not the client's).
    pub(crate) seen_tokens: Mutex<Vec<Value>>,
    /// `logging/setLevel` levels the backend was asked for.
    pub(crate) levels: Mutex<Vec<String>>,
    /// `notifications/cancelled` the backend received.
    pub(crate) cancelled: Mutex<Vec<Value>>,
    /// What the client answered to `late_talk`'s unassociated elicitation (or the error).
    pub(crate) late_answers: Mutex<Vec<Value>>,
    pub(crate) slow_started: tokio::sync::Notify,
    pub(crate) slow_cancelled: tokio::sync::Notify,
    pub(crate) slow_saw_cancellation: AtomicBool,
    /// Both `combo` calls of the concurrency test meet here before talking back.
    pub(crate) barrier: tokio::sync::Barrier,
}

impl Shared {
    pub(crate) fn new() -> Arc<Self> {
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
pub(crate) struct SdkBackendServer {
    pub(crate) shared: Arc<Shared>,
}

pub(crate) const STATIC_TOOLS: &[&str] = &[
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
pub(crate) const HELLO: &str = "memo://sdk/hello";

pub(crate) fn tool(name: &str) -> Tool {
    let schema = obj(json!({"type": "object", "additionalProperties": true}));
    Tool::new(name.to_string(), format!("test tool {name}"), schema)
}

pub(crate) fn text_result(text: impl Into<String>) -> CallToolResult {
    from(json!({"content": [{"type": "text", "text": text.into()}]}))
}

pub(crate) fn json_result(v: Value) -> CallToolResult {
    text_result(v.to_string())
}

/// How a server-to-client request failed, as the tool reports it in its result.
pub(crate) fn describe_error(e: &ServiceError) -> Value {
    match e {
        ServiceError::McpError(err) => {
            json!({"error": {"code": err.code.0, "message": err.message.to_string()}})
        }
        other => json!({"error": {"code": null, "message": other.to_string()}}),
    }
}

pub(crate) fn arg<'a>(args: &'a JsonObject, key: &str) -> &'a str {
    args.get(key).and_then(Value::as_str).unwrap_or("")
}

impl SdkBackendServer {
    pub(crate) async fn elicit(&self, ctx: &RequestContext<RoleServer>, params: Value) -> Value {
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

    pub(crate) async fn log(ctx: &RequestContext<RoleServer>, level: &str, data: Value) {
        let p: LoggingMessageNotificationParam =
            from(json!({"level": level, "logger": "sdk", "data": data}));
        let _ = ctx.peer.notify_logging_message(p).await;
    }

    pub(crate) async fn progress(
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

    pub(crate) async fn run_tool(
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
pub(crate) struct SdkBackend {
    pub(crate) url: String,
    pub(crate) shared: Arc<Shared>,
    pub(crate) task: tokio::task::JoinHandle<()>,
}

impl Drop for SdkBackend {
    fn drop(&mut self) {
        self.task.abort();
    }
}

pub(crate) async fn spawn_backend() -> SdkBackend {
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
pub(crate) async fn setup(server_yaml: &str) -> (SdkBackend, Gateway) {
    let sdk = spawn_backend().await;
    let yaml = format!(
        "name: forwarding\nbackends:\n{}{server_yaml}",
        http_backend("sdk", &sdk.url)
    );
    let gw = Gateway::start(&yaml);
    (sdk, gw)
}

/// Waits (bounded) until the backend recorded `n` cancellation notifications; returns them.
pub(crate) async fn backend_cancellations(shared: &Shared, n: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let got = shared.cancelled.lock().unwrap().clone();
        if got.len() >= n || Instant::now() > deadline {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
