//! The rmcp side of the era tests: [`EraServer`], an in-process rmcp streamable-HTTP backend that
//! speaks only 2026-07-28 (Modern, stateless) or only up to 2025-11-25 (Legacy, sessions), and
//! rmcp clients of either era with an answering handler ([`Answerer`]).

// Sampling/roots/logging are deprecated by rmcp (SEP-2577) but still part of the matrix.
#![allow(deprecated)]

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::{
    ClientHandler, ClientLifecycleMode, ClientServiceExt, ErrorData, RoleClient, RoleServer,
    ServerHandler, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
        ClientResult, CompleteRequestParams, CompleteResult, ElicitRequest, ElicitRequestParams,
        ElicitResult, ElicitationAction, GetPromptRequestParams, GetPromptResponse,
        GetPromptResult, Implementation, InputRequest, InputRequiredResult, ListPromptsResult,
        ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
        ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ServerConfig,
        ServerRequest,
    },
    service::{RequestContext, RunningService},
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
}

/// An rmcp server: tools `echo`, `whoami`, `ask` (elicitation: MRTR when Modern, mid-call when
/// Legacy), `spy`, `grow`, and `tool_0..tool_{N-1}`; prompt `greet`; resource
/// `memo://<name>/hello`; completions for `greet`'s `name`.
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
        if self.seen.grown.load(Ordering::SeqCst) {
            v.push(tool_def("extra", "Appears after grow", json!({}), &[]));
        }
        v.extend(
            (0..self.numbered).map(|i| tool_def(&format!("tool_{i}"), "Trivial", json!({}), &[])),
        );
        v
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
        match self.era {
            BackendEra::Modern => {
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
                                &question,
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
            BackendEra::Legacy => {
                let params: ElicitRequestParams = from(Self::elicitation(&question));
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
        let caps = from(json!({
            "tools": {"listChanged": true},
            "prompts": {},
            "resources": {},
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
        }
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let all = self.tool_defs();
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
            .calls
            .lock()
            .unwrap()
            .push((tool.clone(), meta.clone()));
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

/// A client handler answering elicitation with `{"name": <its name>}` and recording each request.
#[derive(Clone)]
pub struct Answerer {
    pub name: String,
    pub caps: ClientCapabilities,
    pub asked: Arc<Mutex<Vec<Value>>>,
}

impl Answerer {
    pub fn new(name: &str, caps: Value) -> Self {
        Answerer {
            name: name.to_string(),
            caps: from(caps),
            asked: Arc::new(Mutex::new(Vec::new())),
        }
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
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({"name": self.name})))
    }
}

pub type RmcpClient = RunningService<RoleClient, Answerer>;

fn transport(url: &str) -> StreamableHttpClientTransport<reqwest::Client> {
    StreamableHttpClientTransport::with_client(
        http(),
        StreamableHttpClientTransportConfig::with_uri(url.to_string()),
    )
}

/// An rmcp client using the `initialize` handshake (Legacy).
pub async fn rmcp_legacy(url: &str, handler: Answerer) -> RmcpClient {
    step("rmcp legacy initialize", handler.serve(transport(url)))
        .await
        .unwrap_or_else(|e| panic!("rmcp legacy client could not connect to {url}: {e}"))
}

/// An rmcp client using `server/discover` and per-request metadata (Modern), no fallback.
pub async fn rmcp_modern(url: &str, handler: Answerer) -> RmcpClient {
    let mode = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    step(
        "rmcp modern discover",
        handler.serve_with_lifecycle(transport(url), mode),
    )
    .await
    .unwrap_or_else(|e| panic!("rmcp modern client could not connect to {url}: {e}"))
}
