//! The rmcp side of the era tests: [`EraServer`], an in-process rmcp streamable-HTTP backend that
//! speaks only 2026-07-28 (Modern, stateless), only up to 2025-11-25 (Legacy, sessions), or both
//! from one URL, and rmcp clients of either era with an answering handler ([`Answerer`]).

// Sampling/roots/logging are deprecated by rmcp (SEP-2577) but still part of the matrix.
#![allow(deprecated)]

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::{
    ClientHandler, ClientLifecycleMode, ClientServiceExt, ErrorData, Peer, RoleClient, RoleServer,
    ServerHandler, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
        ClientResult, CompleteRequestParams, CompleteResult, CreateMessageRequest,
        CreateMessageRequestParams, CreateMessageResult, ElicitRequest, ElicitRequestParams,
        ElicitResult, ElicitationAction, GetPromptRequestParams, GetPromptResponse,
        GetPromptResult, Implementation, InitializeRequestParams, InitializeResult, InputRequest,
        InputRequiredResult, ListPromptsResult, ListResourcesResult, ListRootsRequest,
        ListRootsResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
        ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
        ResourceUpdatedNotificationParam, ServerConfig, ServerRequest, SubscribeRequestMethod,
        SubscribeRequestParams, UnsubscribeRequestMethod, UnsubscribeRequestParams,
    },
    service::{NotificationContext, RequestContext, RunningService},
    transport::{
        StreamableHttpClientTransport,
        streamable_http_client::StreamableHttpClientTransportConfig,
        streamable_http_server::{
            StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
        },
    },
};
use serde_json::{Value, json};

use super::{CC, SI, from, step};
use crate::common::http;

// ---------------------------------------------------------------------------------------------
// The rmcp backend
// ---------------------------------------------------------------------------------------------

/// Which revision the rmcp backend speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendEra {
    /// Only 2024-11-05 .. 2025-11-25, with sessions.
    Legacy,
    /// Only 2026-07-28, stateless.
    Modern,
    /// Both, from the same URL: `initialize` opens a 2025-11-25 session, a request carrying
    /// 2026-07-28 per-request `_meta` is served statelessly. Each tool behaves per the request's
    /// revision, and it also has `sample`, `roots`, `progress` and resource subscriptions.
    Both,
}

/// How one tools/call reached the backend.
#[derive(Debug, Clone, PartialEq)]
pub struct Hop {
    pub tool: String,
    /// The request's revision as rmcp sees it: its `_meta` protocol version, else the session's.
    pub revision: Option<String>,
    /// The `Mcp-Session-Id` it came with (None: stateless).
    pub session: Option<String>,
    /// Whether rmcp read the `io.modelcontextprotocol/tasks` extension in the request's client
    /// capabilities.
    pub tasks: bool,
}

/// A server-to-client request a tool sent mid-call and what came back.
#[derive(Debug, Clone, PartialEq)]
pub struct Relayed {
    pub method: String,
    /// The session it was sent on.
    pub session: Option<String>,
    /// The client's answer, or the error text.
    pub answer: Result<Value, String>,
}

/// What the backend observed.
#[derive(Default)]
pub struct Seen {
    /// (tool, request `_meta`) of every tools/call.
    pub calls: Mutex<Vec<(String, Value)>>,
    /// (requestState, inputResponses) of every `ask` call.
    pub asks: Mutex<Vec<(Option<String>, Option<Value>)>>,
    /// What `ask` got back from a mid-call elicitation (Legacy): Ok(result) or Err(error text).
    pub elicited: Mutex<Vec<Result<Value, String>>>,
    /// Whether `grow` added the `extra` tool.
    pub grown: AtomicBool,
    /// How every tools/call arrived.
    pub hops: Mutex<Vec<Hop>>,
    /// The params of every `initialize` (one per session opened).
    pub sessions: Mutex<Vec<Value>>,
    /// `sampling/createMessage` and `roots/list` sent mid-call (Both).
    pub relayed: Mutex<Vec<Relayed>>,
    /// The progress token of every `progress` call (None: none given).
    pub progress_tokens: Mutex<Vec<Option<Value>>>,
    /// `("subscribe" | "unsubscribe", uri, session)` in arrival order (Both).
    pub subscriptions: Mutex<Vec<(String, String, Option<String>)>>,
    /// The sessions subscribed to each URI, to notify on [`SdkBackend::touch`].
    subscribers: Mutex<Vec<(String, Peer<RoleServer>)>>,
    /// The credentials each tools/list and tools/call came with.
    pub credentials: Mutex<Vec<Credential>>,
}

/// The credential headers one request carried.
#[derive(Debug, Clone)]
pub struct Credential {
    /// `tools/list` or the called tool's name.
    pub what: String,
    /// The `Authorization` header.
    pub authorization: Option<String>,
    /// The `X-Api-Key` header.
    pub api_key: Option<String>,
    /// The `X-Tenant` header (a client header the config may pass through).
    pub tenant: Option<String>,
}

impl Credential {
    /// The claims of the bearer token, when it is a JWT (decoded, not verified).
    pub fn claims(&self) -> Option<Value> {
        use base64::Engine;
        let token = self.authorization.as_deref()?.strip_prefix("Bearer ")?;
        let payload = token.split('.').nth(1)?;
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(payload)
            .ok()?;
        serde_json::from_slice(&bytes).ok()
    }
}

fn credential_of(what: &str, context: &RequestContext<RoleServer>) -> Credential {
    let header = |name: &str| {
        context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|p| p.headers.get(name))
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    Credential {
        what: what.to_string(),
        authorization: header("authorization"),
        api_key: header("x-api-key"),
        tenant: header("x-tenant"),
    }
}

impl Seen {
    pub fn metas_of(&self, tool: &str) -> Vec<Value> {
        self.calls
            .lock()
            .unwrap()
            .iter()
            .filter(|(t, _)| t == tool)
            .map(|(_, m)| m.clone())
            .collect()
    }

    pub fn hops_of(&self, tool: &str) -> Vec<Hop> {
        self.hops
            .lock()
            .unwrap()
            .iter()
            .filter(|h| h.tool == tool)
            .cloned()
            .collect()
    }
}

/// The `Mcp-Session-Id` a request came with.
fn session_of(context: &RequestContext<RoleServer>) -> Option<String> {
    context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|p| p.headers.get("mcp-session-id"))
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// An rmcp server: tools `echo`, `whoami`, `ask` (elicitation: MRTR when Modern, mid-call when
/// Legacy), `spy`, `grow`, and `tool_0..tool_{N-1}`; prompt `greet`; resource
/// `memo://<name>/hello`; completions for `greet`'s `name`. When [`BackendEra::Both`], also
/// `sample` and `roots` (mid-call, sessions only), `progress`, and resource subscriptions.
#[derive(Clone)]
pub struct EraServer {
    pub name: String,
    pub era: BackendEra,
    pub numbered: usize,
    pub seen: Arc<Seen>,
}

/// Page size of the backend's own tools/list.
pub const BACKEND_PAGE: usize = 500;
/// The values `greet`'s `name` completes from.
pub const NAMES: [&str; 3] = ["alice", "albert", "bob"];

fn tool_def(name: &str, description: &str, props: Value, required: &[&str]) -> Value {
    json!({"name": name, "description": description,
        "inputSchema": {"type": "object", "properties": props, "required": required}})
}

/// rmcp leaves `resultType` unset on results built by deserializing (its constructors set it), and
/// a 2026-07-28 result without it reads as a session-based answer; so every result names it.
fn result<T: rmcp::serde::de::DeserializeOwned>(mut v: Value) -> T {
    v["resultType"] = json!("complete");
    from(v)
}

fn text_result(text: &str) -> CallToolResult {
    result(json!({"content": [{"type": "text", "text": text}]}))
}

impl EraServer {
    pub fn resource_uri(&self) -> String {
        format!("memo://{}/hello", self.name)
    }

    /// Every tool this backend lists right now, in its own order.
    pub fn tool_defs(&self) -> Vec<Value> {
        let mut v = vec![
            tool_def(
                "echo",
                "Returns the text",
                json!({"text": {"type": "string"}}),
                &["text"],
            ),
            tool_def("whoami", "Returns the backend's name", json!({}), &[]),
            tool_def(
                "ask",
                "Asks the user who asks",
                json!({"question": {"type": "string"}}),
                &["question"],
            ),
            tool_def("spy", "Returns the request _meta it saw", json!({}), &[]),
            tool_def("grow", "Adds the tool `extra`", json!({}), &[]),
        ];
        if self.era == BackendEra::Both {
            v.push(tool_def(
                "sample",
                "Asks the client's model (mid-call, sessions only)",
                json!({"question": {"type": "string"}}),
                &["question"],
            ));
            v.push(tool_def(
                "roots",
                "Lists the client's roots (mid-call, sessions only)",
                json!({}),
                &[],
            ));
            v.push(tool_def(
                "progress",
                "Reports three steps of progress",
                json!({}),
                &[],
            ));
        }
        if self.seen.grown.load(Ordering::SeqCst) {
            v.push(tool_def("extra", "Appears after grow", json!({}), &[]));
        }
        v.extend(
            (0..self.numbered).map(|i| tool_def(&format!("tool_{i}"), "Trivial", json!({}), &[])),
        );
        v
    }

    /// Whether a request is answered the 2026-07-28 way (input_required, no mid-call requests).
    fn in_modern(&self, context: &RequestContext<RoleServer>) -> bool {
        match self.era {
            BackendEra::Legacy => false,
            BackendEra::Modern => true,
            BackendEra::Both => context
                .protocol_version()
                .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str()),
        }
    }

    /// A server-to-client request sent mid-call (Both: only on a session), recorded; the tool's
    /// result is the client's answer as JSON text.
    async fn relay(
        &self,
        method: &str,
        context: &RequestContext<RoleServer>,
        request: ServerRequest,
    ) -> Result<CallToolResponse, ErrorData> {
        if self.in_modern(context) {
            return Ok(
                CallToolResult::error(vec![rmcp::model::ContentBlock::text(format!(
                    "{method} needs a session"
                ))])
                .into(),
            );
        }
        let answer = match context.peer.send_request(request).await {
            Ok(r) => Ok(serde_json::to_value(&r).unwrap()),
            Err(e) => Err(e.to_string()),
        };
        self.seen.relayed.lock().unwrap().push(Relayed {
            method: method.to_string(),
            session: session_of(context),
            answer: answer.clone(),
        });
        Ok(match answer {
            Ok(v) => text_result(&v.to_string()).into(),
            Err(e) => CallToolResult::error(vec![rmcp::model::ContentBlock::text(e)]).into(),
        })
    }

    fn elicitation(question: &str) -> Value {
        json!({
            "message": format!("Who asks {question:?}?"),
            "requestedSchema": {
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"]
            }
        })
    }

    async fn ask(
        &self,
        request: &CallToolRequestParams,
        args: &Value,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let question = args["question"].as_str().unwrap_or("?").to_string();
        self.seen.asks.lock().unwrap().push((
            request.request_state.clone(),
            request
                .input_responses
                .as_ref()
                .map(|r| serde_json::to_value(r).unwrap()),
        ));
        if self.in_modern(context) {
            self.ask_in_band(request, &question, context)
        } else {
            self.ask_mid_call(&question, context).await
        }
    }

    /// 2026-07-28: input_required (MRTR), then the answer from `inputResponses`.
    fn ask_in_band(
        &self,
        request: &CallToolRequestParams,
        question: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let declared = context
            .client_capabilities()
            .is_some_and(|c| c.elicitation.is_some());
        if !declared {
            return Err(ErrorData::missing_required_client_capability(from(
                json!({"elicitation": {}}),
            )));
        }
        let state = format!("ask:{question}");
        match request.request_state.as_deref() {
            None => {
                let mut reqs = BTreeMap::new();
                reqs.insert(
                    "who".to_string(),
                    InputRequest::Elicitation(ElicitRequest::new(from(Self::elicitation(
                        question,
                    )))),
                );
                Ok(InputRequiredResult::new(Some(reqs), Some(state)).into())
            }
            Some(s) if s == state => {
                let who = request
                    .input_responses
                    .as_ref()
                    .and_then(|r| r.get("who"))
                    .cloned()
                    .unwrap_or(Value::Null);
                if who["action"] != "accept" {
                    return Ok(text_result(&format!("{question} -> declined")).into());
                }
                let name = who["content"]["name"].as_str().unwrap_or("?");
                Ok(text_result(&format!("{question} -> {name}")).into())
            }
            Some(other) => Err(ErrorData::invalid_params(
                format!("unexpected requestState {other:?}"),
                None,
            )),
        }
    }

    /// A session: `elicitation/create` sent mid-call.
    async fn ask_mid_call(
        &self,
        question: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let params: ElicitRequestParams = from(Self::elicitation(question));
        let outcome = context
            .peer
            .send_request(ServerRequest::ElicitRequest(ElicitRequest::new(params)))
            .await;
        match outcome {
            Ok(ClientResult::ElicitResult(r)) => {
                let v = serde_json::to_value(&r).unwrap();
                self.seen.elicited.lock().unwrap().push(Ok(v.clone()));
                let name = v["content"]["name"].as_str().unwrap_or("?");
                Ok(text_result(&format!("{question} -> {name}")).into())
            }
            Ok(other) => {
                let e = format!("unexpected {other:?}");
                self.seen.elicited.lock().unwrap().push(Err(e.clone()));
                Ok(CallToolResult::error(vec![rmcp::model::ContentBlock::text(e)]).into())
            }
            Err(e) => {
                self.seen.elicited.lock().unwrap().push(Err(e.to_string()));
                Ok(
                    CallToolResult::error(vec![rmcp::model::ContentBlock::text(format!(
                        "elicitation failed: {e}"
                    ))])
                    .into(),
                )
            }
        }
    }
}

/// The reserved keys the backend puts in its tools/call `_meta` (the gateway must replace them).
pub fn forged_result_meta() -> Value {
    json!({
        SI: {"name": "evil-backend", "version": "6.6.6"},
        CC: {"sampling": {}},
        "io.modelcontextprotocol/subscriptionId": "forged",
        "example.com/trace": "trace-1"
    })
}

impl ServerHandler for EraServer {
    fn get_info(&self) -> ServerConfig {
        let resources = if self.era == BackendEra::Both {
            json!({"subscribe": true})
        } else {
            json!({})
        };
        let caps = from(json!({
            "tools": {"listChanged": true},
            "prompts": {},
            "resources": resources,
            "completions": {}
        }));
        ServerConfig::new(caps).with_server_info(Implementation::new(self.name.clone(), "1.0.0"))
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        match self.era {
            BackendEra::Legacy => {
                Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
            }
            BackendEra::Modern => Cow::Borrowed(&[ProtocolVersion::V_2026_07_28]),
            // 2024-11-05 .. 2026-07-28: the session-based ones through `initialize`.
            BackendEra::Both => {
                Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2026_07_28))
            }
        }
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        self.seen
            .sessions
            .lock()
            .unwrap()
            .push(serde_json::to_value(&request).unwrap());
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if self.era != BackendEra::Both {
            return Err(ErrorData::method_not_found::<SubscribeRequestMethod>());
        }
        let session = session_of(&context);
        self.seen.subscriptions.lock().unwrap().push((
            "subscribe".into(),
            request.uri.clone(),
            session,
        ));
        self.seen
            .subscribers
            .lock()
            .unwrap()
            .push((request.uri, context.peer));
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if self.era != BackendEra::Both {
            return Err(ErrorData::method_not_found::<UnsubscribeRequestMethod>());
        }
        self.seen.subscriptions.lock().unwrap().push((
            "unsubscribe".into(),
            request.uri.clone(),
            session_of(&context),
        ));
        self.seen
            .subscribers
            .lock()
            .unwrap()
            .retain(|(uri, _)| *uri != request.uri);
        Ok(())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let credential = credential_of("tools/list", &context);
        let mut all = self.tool_defs();
        // What a caller's credential surfaces: a tool of its own, named after the token's subject.
        if let Some(sub) = credential
            .claims()
            .and_then(|c| c["sub"].as_str().map(str::to_string))
        {
            all.insert(
                0,
                tool_def(
                    &format!("for_{sub}"),
                    "Only for this subject",
                    json!({}),
                    &[],
                ),
            );
        }
        self.seen.credentials.lock().unwrap().push(credential);
        let start: usize = request
            .and_then(|r| r.cursor)
            .map(|c| {
                c.parse()
                    .map_err(|_| ErrorData::invalid_params("bad cursor", None))
            })
            .transpose()?
            .unwrap_or(0);
        let end = (start + BACKEND_PAGE).min(all.len());
        let mut page = json!({"tools": all[start.min(end)..end]});
        if end < all.len() {
            page["nextCursor"] = json!(end.to_string());
        }
        Ok(result(page))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let meta = serde_json::to_value(&context.meta).unwrap();
        let tool = request.name.to_string();
        self.seen
            .credentials
            .lock()
            .unwrap()
            .push(credential_of(&tool, &context));
        self.seen
            .calls
            .lock()
            .unwrap()
            .push((tool.clone(), meta.clone()));
        self.seen.hops.lock().unwrap().push(Hop {
            tool: tool.clone(),
            revision: context.protocol_version().map(|v| v.as_str().to_string()),
            session: session_of(&context),
            tasks: context
                .client_capabilities()
                .is_some_and(|c| c.supports_tasks()),
        });
        let both = self.era == BackendEra::Both;
        let args = Value::Object(request.arguments.clone().unwrap_or_default());
        match tool.as_str() {
            "echo" => {
                let text = args["text"].as_str().unwrap_or_default();
                Ok(result::<CallToolResult>(json!({
                    "content": [{"type": "text", "text": text}],
                    "structuredContent": {"echoed": text, "by": self.name},
                    "_meta": forged_result_meta()
                }))
                .into())
            }
            "whoami" => Ok(text_result(&self.name).into()),
            "spy" => Ok(result::<CallToolResult>(json!({
                "content": [{"type": "text", "text": meta.to_string()}],
                "structuredContent": {"meta": meta}
            }))
            .into()),
            "ask" => self.ask(&request, &args, &context).await,
            "grow" => {
                self.seen.grown.store(true, Ordering::SeqCst);
                let _ = context.peer.notify_tool_list_changed().await;
                Ok(text_result("grown").into())
            }
            "extra" if self.seen.grown.load(Ordering::SeqCst) => Ok(text_result("extra").into()),
            t if t.starts_with("for_") => Ok(text_result(t).into()),
            "sample" if both => {
                let question = args["question"].as_str().unwrap_or("?");
                let params: CreateMessageRequestParams = from(json!({
                    "messages": [{"role": "user", "content": {"type": "text", "text": question}}],
                    "maxTokens": 50
                }));
                let request =
                    ServerRequest::CreateMessageRequest(CreateMessageRequest::new(params));
                self.relay("sampling/createMessage", &context, request)
                    .await
            }
            "roots" if both => {
                let request = ServerRequest::ListRootsRequest(ListRootsRequest::default());
                self.relay("roots/list", &context, request).await
            }
            "progress" if both => {
                let token = context
                    .meta
                    .get_progress_token()
                    .map(|t| serde_json::to_value(t).unwrap());
                self.seen
                    .progress_tokens
                    .lock()
                    .unwrap()
                    .push(token.clone());
                if let Some(token) = &token {
                    for i in 1..=3 {
                        let p: ProgressNotificationParam = from(json!({
                            "progressToken": token, "progress": i, "total": 3,
                            "message": format!("step {i}")
                        }));
                        let _ = context.peer.notify_progress(p).await;
                    }
                }
                Ok(text_result(&json!({"backendToken": token}).to_string()).into())
            }
            other => match other
                .strip_prefix("tool_")
                .and_then(|n| n.parse::<usize>().ok())
            {
                Some(i) if i < self.numbered => Ok(text_result(other).into()),
                _ => Err(ErrorData::invalid_params(
                    format!("Unknown tool: {other}"),
                    None,
                )),
            },
        }
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(result(json!({"prompts": [{
            "name": "greet",
            "description": "Greets someone",
            "arguments": [{"name": "name", "required": true}]
        }]})))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if request.name != "greet" {
            return Err(ErrorData::invalid_params(
                format!("Unknown prompt: {}", request.name),
                None,
            ));
        }
        let who = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("name"))
            .and_then(Value::as_str)
            .unwrap_or("nobody")
            .to_string();
        let r: GetPromptResult = result(json!({
            "description": "A greeting",
            "messages": [{"role": "user", "content": {"type": "text",
                "text": format!("Hello, {who}! (from {})", self.name)}}]
        }));
        Ok(r.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(result(
            json!({"resources": [{"uri": self.resource_uri(), "name": "hello"}]}),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if request.uri != self.resource_uri() {
            return Err(ErrorData::resource_not_found("no such resource", None));
        }
        let r: ReadResourceResult = result(json!({"contents": [{
            "uri": request.uri, "mimeType": "text/plain", "text": format!("hello from {}", self.name)
        }]}));
        Ok(r.into())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let req = serde_json::to_value(&request).unwrap();
        let prefix = req["argument"]["value"].as_str().unwrap_or_default();
        let values: Vec<&str> =
            if req["ref"]["name"] == "greet" && req["argument"]["name"] == "name" {
                NAMES
                    .iter()
                    .copied()
                    .filter(|n| n.starts_with(prefix))
                    .collect()
            } else {
                Vec::new()
            };
        Ok(result(
            json!({"completion": {"values": values, "total": values.len(), "hasMore": false}}),
        ))
    }
}

/// The rmcp backend served by axum on 127.0.0.1:0 in this process; aborted on drop.
pub struct SdkBackend {
    pub url: String,
    pub server: EraServer,
    task: tokio::task::JoinHandle<()>,
}

impl SdkBackend {
    pub fn seen(&self) -> &Seen {
        &self.server.seen
    }

    /// Sends `notifications/resources/updated` for `uri` to every session subscribed to it, as
    /// a server whose resource changed does (outside any request); returns how many were sent.
    pub async fn touch(&self, uri: &str) -> usize {
        let peers: Vec<Peer<RoleServer>> = self
            .seen()
            .subscribers
            .lock()
            .unwrap()
            .iter()
            .filter(|(u, _)| u == uri)
            .map(|(_, p)| p.clone())
            .collect();
        let mut sent = 0;
        for peer in peers {
            let p: ResourceUpdatedNotificationParam = from(json!({"uri": uri}));
            if peer.notify_resource_updated(p).await.is_ok() {
                sent += 1;
            }
        }
        sent
    }
}

impl Drop for SdkBackend {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Starts an [`EraServer`] named `name` speaking `era`, with `numbered` extra tools.
pub async fn spawn_sdk(name: &str, era: BackendEra, numbered: usize) -> SdkBackend {
    let server = EraServer {
        name: name.to_string(),
        era,
        numbered,
        seen: Arc::new(Seen::default()),
    };
    let config = match era {
        // Sessions and SSE-framed answers, as rmcp's default.
        BackendEra::Legacy => StreamableHttpServerConfig::default(),
        // Stateless: only per-request metadata.
        BackendEra::Modern => StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_sse_keep_alive(None),
        // Sessions for `initialize`; rmcp serves 2026-07-28 requests statelessly regardless.
        BackendEra::Both => StreamableHttpServerConfig::default().with_legacy_session_mode(true),
    };
    let factory = server.clone();
    let service: StreamableHttpService<EraServer, LocalSessionManager> =
        StreamableHttpService::new(move || Ok(factory.clone()), Default::default(), config);
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
        server,
        task,
    }
}

// ---------------------------------------------------------------------------------------------
// rmcp clients
// ---------------------------------------------------------------------------------------------

/// A client handler answering elicitation with `{"name": <its name>}`, sampling with
/// `<name>-model` saying `<name> answers: <question>`, roots/list with `file:///work/<name>`, and
/// recording each request (elicitation in `asked`, everything in `events`, notifications too).
#[derive(Clone)]
pub struct Answerer {
    pub name: String,
    pub caps: ClientCapabilities,
    pub asked: Arc<Mutex<Vec<Value>>>,
    /// (method, params) of every request and notification the client got, in arrival order.
    pub events: Arc<Mutex<Vec<(String, Value)>>>,
}

impl Answerer {
    pub fn new(name: &str, caps: Value) -> Self {
        Answerer {
            name: name.to_string(),
            caps: from(caps),
            asked: Arc::new(Mutex::new(Vec::new())),
            events: Arc::new(Mutex::new(Vec::new())),
        }
    }

    fn record(&self, method: &str, params: impl rmcp::serde::Serialize) {
        let params = serde_json::to_value(params).unwrap();
        self.events
            .lock()
            .unwrap()
            .push((method.to_string(), params));
    }

    /// The params of every `method` received so far.
    pub fn of(&self, method: &str) -> Vec<Value> {
        self.events
            .lock()
            .unwrap()
            .iter()
            .filter(|(m, _)| m == method)
            .map(|(_, p)| p.clone())
            .collect()
    }

    /// Waits (bounded) until `n` of `method` arrived; returns them all.
    pub async fn wait_for(&self, method: &str, n: usize) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
        while self.of(method).len() < n {
            if tokio::time::Instant::now() > deadline {
                panic!(
                    "{}: expected {n} x {method} within 10s, got {:?}",
                    self.name,
                    self.events.lock().unwrap()
                );
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        self.of(method)
    }
}

impl ClientHandler for Answerer {
    fn get_info(&self) -> ClientConfig {
        let mut config = ClientConfig::default();
        config.capabilities = self.caps.clone();
        config.client_info = Implementation::new(self.name.clone(), "1.0.0");
        config
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.asked
            .lock()
            .unwrap()
            .push(serde_json::to_value(&request).unwrap());
        self.record("elicitation/create", &request);
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({"name": self.name})))
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
            "model": format!("{}-model", self.name),
            "role": "assistant",
            "content": {"type": "text", "text": format!("{} answers: {question}", self.name)},
            "stopReason": "endTurn"
        })))
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        self.record("roots/list", json!({}));
        Ok(from(
            json!({"roots": [{"uri": format!("file:///work/{}", self.name), "name": "work"}]}),
        ))
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.record("notifications/progress", params);
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
}

pub type RmcpClient = RunningService<RoleClient, Answerer>;

fn transport(url: &str, token: Option<&str>) -> StreamableHttpClientTransport<reqwest::Client> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    StreamableHttpClientTransport::with_client(http(), config)
}

/// An rmcp client using the `initialize` handshake (Legacy).
pub async fn rmcp_legacy(url: &str, handler: Answerer) -> RmcpClient {
    rmcp_legacy_as(url, None, handler).await
}

/// Like [`rmcp_legacy`], sending `token` as a bearer token.
pub async fn rmcp_legacy_as(url: &str, token: Option<&str>, handler: Answerer) -> RmcpClient {
    step(
        "rmcp legacy initialize",
        handler.serve(transport(url, token)),
    )
    .await
    .unwrap_or_else(|e| panic!("rmcp legacy client could not connect to {url}: {e}"))
}

/// An rmcp client using `server/discover` and per-request metadata (Modern), no fallback.
pub async fn rmcp_modern(url: &str, handler: Answerer) -> RmcpClient {
    rmcp_modern_as(url, None, handler).await
}

/// Like [`rmcp_modern`], sending `token` as a bearer token.
pub async fn rmcp_modern_as(url: &str, token: Option<&str>, handler: Answerer) -> RmcpClient {
    let mode = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    step(
        "rmcp modern discover",
        handler.serve_with_lifecycle(transport(url, token), mode),
    )
    .await
    .unwrap_or_else(|e| panic!("rmcp modern client could not connect to {url}: {e}"))
}
