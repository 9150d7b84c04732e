//! Interop with the official Rust MCP SDK (`rmcp`), used as an independent peer on both sides of
//! the gateway: an rmcp client talking to vmcp, and an rmcp server sitting behind vmcp as a
//! streamable-HTTP backend (session/SSE mode and stateless/JSON-response mode).

#![allow(clippy::unwrap_used)] // Test helpers: a panic is the failure report.
#![allow(missing_docs, unreachable_pub)]

mod common;

use std::time::Duration;

use common::{Gateway, http_backend, stdio_backend};
use rmcp::{
    ErrorData, Json, Peer, RoleClient, RoleServer, ServerHandler, ServiceError, ServiceExt,
    handler::server::{
        router::{prompt::PromptRouter, tool::ToolRouter},
        wrapper::Parameters,
    },
    model::{
        CallToolRequestParams, ClientConfig, ErrorCode, GetPromptRequestParams, Implementation,
        JsonObject, ListResourcesResult, PaginatedRequestParams, PromptMessage, ProtocolVersion,
        ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
        ResourceContents, Role, ServerCapabilities, ServerConfig,
    },
    prompt, prompt_handler, prompt_router,
    service::{RequestContext, RunningService},
    tool, tool_handler, tool_router,
    transport::{
        StreamableHttpClientTransport,
        streamable_http_client::StreamableHttpClientTransportConfig,
        streamable_http_server::{
            StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
        },
    },
};
use serde_json::{Value, json};

/// Every rmcp call below is bounded so that a hung gateway fails the test instead of the suite.
const STEP: Duration = Duration::from_secs(20);

async fn step<T>(what: &str, fut: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(STEP, fut)
        .await
        .unwrap_or_else(|_| panic!("{what}: no answer within {STEP:?}"))
}

// ---------------------------------------------------------------------------------------------
// rmcp client side
// ---------------------------------------------------------------------------------------------

type RmcpClient = RunningService<RoleClient, ClientConfig>;

/// Connects an rmcp client (streamable HTTP transport, legacy initialize handshake) to `url`.
async fn rmcp_connect(url: &str) -> RmcpClient {
    // Installs the ring crypto provider; reqwest is built without a default one.
    let http = vmcp_backend::http_client().expect("http client");
    let transport = StreamableHttpClientTransport::with_client(
        http,
        StreamableHttpClientTransportConfig::with_uri(url.to_string()),
    );
    let mut info = ClientConfig::default();
    info.client_info = Implementation::new("rmcp-interop-client", "1.0.0");
    step("rmcp initialize", info.serve(transport))
        .await
        .unwrap_or_else(|e| panic!("rmcp client could not initialize against {url}: {e}"))
}

fn args(v: Value) -> JsonObject {
    match v {
        Value::Object(m) => m,
        other => panic!("arguments must be an object, got {other}"),
    }
}

async fn call(
    client: &Peer<RoleClient>,
    tool: &str,
    arguments: Value,
) -> Result<Value, ServiceError> {
    let params = CallToolRequestParams::new(tool.to_string()).with_arguments(args(arguments));
    let result = step(&format!("tools/call {tool}"), client.call_tool(params)).await?;
    Ok(serde_json::to_value(&result).expect("serialize CallToolResult"))
}

async fn call_ok(client: &Peer<RoleClient>, tool: &str, arguments: Value) -> Value {
    let v = call(client, tool, arguments)
        .await
        .unwrap_or_else(|e| panic!("tools/call {tool} failed: {e}"));
    assert_ne!(
        v["isError"],
        json!(true),
        "tools/call {tool} returned isError: {v}"
    );
    v
}

fn first_text(result: &Value) -> &str {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content in {result}"))
}

async fn tool_names(client: &RmcpClient) -> Vec<String> {
    let tools = step("tools/list", client.list_all_tools())
        .await
        .expect("tools/list");
    let mut names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread")]
async fn rmcp_client_lists_and_calls_through_gateway() {
    let weather = vmcp_testkit::FixtureProcess::spawn_http(&["--name", "weather"]).await;
    let yaml = format!(
        "name: interop\nbackends:\n{}{}",
        stdio_backend("notes", ""),
        http_backend("weather", &weather.url)
    );
    let gw = Gateway::start(&yaml);
    let client = rmcp_connect(&gw.url).await;

    // Server identity as the SDK parsed it from the initialize result.
    let peer = client
        .peer_info()
        .expect("rmcp client has the server's info after initialize");
    let server = peer
        .server_info
        .as_ref()
        .expect("initialize result carries serverInfo");
    assert_eq!(server.name, "vmcp", "serverInfo: {server:?}");
    assert_eq!(
        server.title.as_deref(),
        Some("interop"),
        "serverInfo: {server:?}"
    );
    assert!(
        peer.capabilities.tools.is_some(),
        "tools capability: {:?}",
        peer.capabilities
    );
    assert!(
        peer.capabilities.prompts.is_some(),
        "prompts capability: {:?}",
        peer.capabilities
    );
    // rmcp offers its newest revision; the gateway settles on its newest legacy one.
    assert_eq!(
        peer.protocol_version,
        ProtocolVersion::V_2025_11_25,
        "{peer:?}"
    );

    // Aggregated, prefixed tools, including the deliberate `whoami` collision.
    let names = tool_names(&client).await;
    for expected in [
        "notes_whoami",
        "weather_whoami",
        "notes_echo",
        "weather_echo",
        "notes_add",
        "weather_add",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} missing from {names:?}"
        );
    }
    assert!(
        !names.iter().any(|n| n == "whoami"),
        "unprefixed tool leaked: {names:?}"
    );

    // Each half of the collision reaches its own backend.
    let w = call_ok(&client, "weather_whoami", json!({})).await;
    assert_eq!(first_text(&w), "weather", "{w}");
    let n = call_ok(&client, "notes_whoami", json!({})).await;
    assert_eq!(first_text(&n), "notes", "{n}");

    // Structured content survives the round trip.
    let sum = call_ok(&client, "notes_add", json!({"a": 2, "b": 40})).await;
    assert_eq!(sum["structuredContent"], json!({"sum": 42}), "{sum}");
    assert_eq!(first_text(&sum), "42", "{sum}");

    let echo = call_ok(&client, "weather_echo", json!({"text": "héllo ✓"})).await;
    assert_eq!(first_text(&echo), "héllo ✓", "{echo}");

    // A templated resource of the stdio backend.
    let read = step(
        "resources/read",
        client.read_resource(ReadResourceRequestParams::new("fixture://notes/items/42")),
    )
    .await
    .expect("resources/read");
    let read = serde_json::to_value(&read).expect("serialize");
    assert_eq!(
        read["contents"][0]["uri"], "fixture://notes/items/42",
        "{read}"
    );
    assert_eq!(read["contents"][0]["text"], "item 42 of notes", "{read}");

    // A prompt of the HTTP backend.
    let prompt = step(
        "prompts/get",
        client.get_prompt(
            GetPromptRequestParams::new("weather_greet")
                .with_arguments(args(json!({"name": "Ada"}))),
        ),
    )
    .await
    .expect("prompts/get");
    let prompt = serde_json::to_value(&prompt).expect("serialize");
    assert_eq!(prompt["messages"][0]["role"], "user", "{prompt}");
    assert_eq!(
        prompt["messages"][0]["content"]["text"], "Hello, Ada! (from weather)",
        "{prompt}"
    );

    // Completion routed by the prefixed prompt name.
    let values = step(
        "completion/complete",
        client.complete_prompt_simple("notes_greet", "name", "al"),
    )
    .await
    .expect("completion/complete");
    assert_eq!(values, vec!["alice".to_string(), "albert".to_string()]);

    // An unknown tool is a JSON-RPC error (-32602), not a result.
    match call(&client, "nope_nothing", json!({})).await {
        Err(ServiceError::McpError(e)) => {
            assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{e:?}");
            assert!(e.message.contains("nope_nothing"), "{e:?}");
        }
        other => panic!("unknown tool should be a JSON-RPC error, got {other:?}"),
    }

    // The session is still usable after the error.
    let again = call_ok(&client, "weather_whoami", json!({})).await;
    assert_eq!(first_text(&again), "weather");

    step("rmcp client close", client.cancel())
        .await
        .expect("client shutdown");
}

// ---------------------------------------------------------------------------------------------
// rmcp server side
// ---------------------------------------------------------------------------------------------

#[derive(Debug, rmcp::serde::Deserialize, rmcp::schemars::JsonSchema)]
#[serde(crate = "rmcp::serde")]
#[schemars(crate = "rmcp::schemars")]
struct TextArgs {
    /// The text to work on.
    text: String,
}

#[derive(Debug, rmcp::serde::Serialize, rmcp::schemars::JsonSchema)]
#[serde(crate = "rmcp::serde")]
#[schemars(crate = "rmcp::schemars")]
struct WordCount {
    words: usize,
}

const SDK_RESOURCE: &str = "memo://sdk/hello";

/// A small MCP server written with rmcp's macros: two tools, one prompt, one resource.
#[derive(Debug, Clone)]
struct SdkServer {
    tool_router: ToolRouter<Self>,
    prompt_router: PromptRouter<Self>,
}

impl SdkServer {
    fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
            prompt_router: Self::prompt_router(),
        }
    }
}

#[tool_router]
impl SdkServer {
    #[tool(description = "Reverses the text")]
    fn reverse(&self, Parameters(TextArgs { text }): Parameters<TextArgs>) -> String {
        text.chars().rev().collect()
    }

    #[tool(description = "Counts the whitespace-separated words of the text")]
    fn count_words(&self, Parameters(TextArgs { text }): Parameters<TextArgs>) -> Json<WordCount> {
        Json(WordCount {
            words: text.split_whitespace().count(),
        })
    }
}

#[prompt_router]
impl SdkServer {
    #[prompt(name = "shout", description = "Asks for the text in capitals")]
    async fn shout(
        &self,
        Parameters(TextArgs { text }): Parameters<TextArgs>,
    ) -> Vec<PromptMessage> {
        vec![PromptMessage::new_text(Role::User, text.to_uppercase())]
    }
}

#[tool_handler(router = self.tool_router)]
#[prompt_handler(router = self.prompt_router)]
impl ServerHandler for SdkServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("rmcp-sdk-backend", "1.0.0"))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![Resource::new(
            SDK_RESOURCE,
            "hello",
        )]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if request.uri != SDK_RESOURCE {
            return Err(ErrorData::resource_not_found("no such resource", None));
        }
        Ok(
            ReadResourceResult::new(vec![ResourceContents::text("hello from rmcp", request.uri)])
                .into(),
        )
    }
}

/// The rmcp server, served by axum on 127.0.0.1:0 inside the test process; aborted on drop.
struct SdkBackend {
    url: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for SdkBackend {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn spawn_sdk_backend(config: StreamableHttpServerConfig) -> SdkBackend {
    let service: StreamableHttpService<SdkServer, LocalSessionManager> =
        StreamableHttpService::new(|| Ok(SdkServer::new()), Default::default(), config);
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
        task,
    }
}

/// Drives an rmcp client through a gateway fronting `sdk` (the rmcp server) and a stdio fixture.
async fn exercise_sdk_behind_gateway(sdk: &SdkBackend) {
    let yaml = format!(
        "name: sdk-interop\nbackends:\n{}{}",
        http_backend("sdk", &sdk.url),
        stdio_backend("notes", "")
    );
    let gw = Gateway::start(&yaml);
    let client = rmcp_connect(&gw.url).await;

    let names = tool_names(&client).await;
    assert!(
        names.iter().any(|n| n == "sdk_reverse"),
        "sdk_reverse missing: {names:?}"
    );
    assert!(
        names.iter().any(|n| n == "sdk_count_words"),
        "sdk_count_words missing: {names:?}"
    );
    assert!(
        names.iter().any(|n| n == "notes_whoami"),
        "notes_whoami missing: {names:?}"
    );
    assert!(
        !names.iter().any(|n| n == "reverse" || n == "count_words"),
        "unprefixed sdk tool leaked: {names:?}"
    );

    // The rmcp-generated input schema is passed through.
    let tools = step("tools/list", client.list_all_tools())
        .await
        .expect("tools/list");
    let reverse = tools
        .iter()
        .find(|t| t.name == "sdk_reverse")
        .expect("sdk_reverse");
    let schema = Value::Object((*reverse.input_schema).clone());
    assert_eq!(
        schema["properties"]["text"]["type"], "string",
        "schema: {schema}"
    );
    assert_eq!(reverse.description.as_deref(), Some("Reverses the text"));

    let r = call_ok(&client, "sdk_reverse", json!({"text": "gateway"})).await;
    assert_eq!(first_text(&r), "yawetag", "{r}");

    let c = call_ok(
        &client,
        "sdk_count_words",
        json!({"text": "one two  three"}),
    )
    .await;
    assert_eq!(c["structuredContent"], json!({"words": 3}), "{c}");

    // Bad arguments: rmcp's server rejects them; the gateway must relay an error, not hang.
    match call(&client, "sdk_reverse", json!({"nottext": 1})).await {
        Err(ServiceError::McpError(e)) => {
            assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{e:?}");
        }
        Ok(v) => assert_eq!(v["isError"], json!(true), "bad arguments should fail: {v}"),
        Err(other) => panic!("bad arguments: unexpected transport failure {other}"),
    }

    // Prompt and resource of the rmcp backend.
    let prompts = step("prompts/list", client.list_all_prompts())
        .await
        .expect("prompts/list");
    let pnames: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert!(pnames.contains(&"sdk_shout"), "{pnames:?}");
    assert!(pnames.contains(&"notes_greet"), "{pnames:?}");
    let p = step(
        "prompts/get",
        client.get_prompt(
            GetPromptRequestParams::new("sdk_shout").with_arguments(args(json!({"text": "quiet"}))),
        ),
    )
    .await
    .expect("prompts/get sdk_shout");
    let p = serde_json::to_value(&p).expect("serialize");
    assert_eq!(p["messages"][0]["content"]["text"], "QUIET", "{p}");

    let resources = step("resources/list", client.list_all_resources())
        .await
        .expect("resources/list");
    assert!(
        resources.iter().any(|r| r.uri == SDK_RESOURCE),
        "{resources:?}"
    );
    let read = step(
        "resources/read",
        client.read_resource(ReadResourceRequestParams::new(SDK_RESOURCE)),
    )
    .await
    .expect("resources/read sdk");
    let read = serde_json::to_value(&read).expect("serialize");
    assert_eq!(read["contents"][0]["text"], "hello from rmcp", "{read}");

    // The stdio fixture next to it still works.
    let n = call_ok(&client, "notes_whoami", json!({})).await;
    assert_eq!(first_text(&n), "notes", "{n}");
    let e = call_ok(&client, "notes_echo", json!({"text": "still here"})).await;
    assert_eq!(first_text(&e), "still here", "{e}");

    // Several calls in flight at once through the one gateway session to the rmcp backend.
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..8 {
        let peer = client.peer().clone();
        calls.spawn(async move {
            let word = format!("w{i}x");
            let v = call_ok(&peer, "sdk_reverse", json!({"text": word})).await;
            assert_eq!(
                first_text(&v),
                word.chars().rev().collect::<String>(),
                "{v}"
            );
        });
    }
    step("concurrent sdk calls", calls.join_all()).await;

    // The raw client agrees with the rmcp client on the names.
    let raw = common::Client::connect(&gw.url).await;
    let raw_names = raw.tool_names().await;
    assert!(
        raw_names.iter().any(|n| n == "sdk_reverse"),
        "{raw_names:?}"
    );
    assert_eq!(
        common::text_of(&raw.call("sdk_reverse", json!({"text": "abc"})).await),
        "cba"
    );

    step("rmcp client close", client.cancel())
        .await
        .expect("client shutdown");
}

/// A raw `initialize` straight at an rmcp backend (not through the gateway).
async fn probe_initialize(url: &str) -> common::Answer {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"}
    }});
    let answer = common::Client::new(url).post_raw(None, init).await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    answer
}

fn content_type(answer: &common::Answer) -> String {
    answer
        .headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn rmcp_server_behind_gateway() {
    // rmcp's default: stateful sessions (Mcp-Session-Id) and SSE-framed POST responses.
    let sdk = spawn_sdk_backend(StreamableHttpServerConfig::default()).await;

    // Sanity: this backend really answers with an SSE stream and a session id, so the test below
    // covers the SSE path (including rmcp's priming event) of the gateway's HTTP backend client.
    let probe = probe_initialize(&sdk.url).await;
    let ctype = content_type(&probe);
    assert!(
        ctype.starts_with("text/event-stream"),
        "content-type {ctype}: {}",
        probe.text
    );
    assert!(
        probe.headers.get("mcp-session-id").is_some(),
        "no session id: {:?}",
        probe.headers
    );
    assert_eq!(
        probe.body["result"]["serverInfo"]["name"], "rmcp-sdk-backend",
        "{}",
        probe.text
    );

    exercise_sdk_behind_gateway(&sdk).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn rmcp_stateless_json_server_behind_gateway() {
    // Stateless (no Mcp-Session-Id) and `application/json` POST responses.
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None);
    let sdk = spawn_sdk_backend(config).await;

    // Sanity: this backend really answers initialize with plain JSON and no session id, so the
    // test below covers the JSON path of the gateway's HTTP backend client.
    let probe = probe_initialize(&sdk.url).await;
    let ctype = content_type(&probe);
    assert!(
        ctype.starts_with("application/json"),
        "content-type {ctype}: {}",
        probe.text
    );
    assert!(
        probe.headers.get("mcp-session-id").is_none(),
        "stateless mode issued a session"
    );
    assert_eq!(
        probe.body["result"]["serverInfo"]["name"], "rmcp-sdk-backend",
        "{}",
        probe.text
    );

    exercise_sdk_behind_gateway(&sdk).await;
}
