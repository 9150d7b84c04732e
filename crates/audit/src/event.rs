//! What one audit line says, and how it is written: ToolHive's event types, outcomes and line
//! layout (`time`, `level`, `msg`, then the event), so their log pipelines read ours unchanged.

use std::net::SocketAddr;
use std::time::{Duration, SystemTime};

use serde_json::{Map, Value, json};
use vmcp_auth::Identity;

use crate::{AuditSettings, Scrubber};

/// The kinds of event, named as ToolHive names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// `initialize`.
    Initialize,
    /// `tools/call`.
    ToolCall,
    /// `tools/list`.
    ToolsList,
    /// `resources/read`.
    ResourceRead,
    /// `resources/list`.
    ResourcesList,
    /// `prompts/get`.
    PromptGet,
    /// `prompts/list`.
    PromptsList,
    /// `notifications/message`.
    Notification,
    /// `ping`.
    Ping,
    /// `logging/setLevel`.
    Logging,
    /// `completion/complete`.
    Completion,
    /// `notifications/roots/list_changed`.
    RootsListChanged,
    /// Any other MCP method.
    Request,
    /// A request whose body was not a JSON-RPC message (or that was refused before it was read).
    Http,
    /// A client opening its server-to-client event stream (GET).
    SseConnection,
    /// A composite tool's run started.
    WorkflowStarted,
    /// A composite tool's run completed.
    WorkflowCompleted,
    /// A composite tool's run failed.
    WorkflowFailed,
    /// A composite tool's run ran out of time.
    WorkflowTimedOut,
    /// A workflow step started.
    StepStarted,
    /// A workflow step completed.
    StepCompleted,
    /// A workflow step failed.
    StepFailed,
    /// A workflow step was skipped.
    StepSkipped,
    /// A backend served a definition that differs from its pin (`toolPinning`).
    DefinitionChanged,
    /// A changed definition was approved.
    DefinitionApproved,
}

impl EventType {
    /// The type of a request for MCP `method` (None: not parsed).
    pub fn of(method: Option<&str>) -> Self {
        match method {
            None => Self::Http,
            Some("initialize") => Self::Initialize,
            Some("tools/call") => Self::ToolCall,
            Some("tools/list") => Self::ToolsList,
            Some("resources/read") => Self::ResourceRead,
            Some("resources/list") => Self::ResourcesList,
            Some("prompts/get") => Self::PromptGet,
            Some("prompts/list") => Self::PromptsList,
            Some("notifications/message") => Self::Notification,
            Some("ping") => Self::Ping,
            Some("logging/setLevel") => Self::Logging,
            Some("completion/complete") => Self::Completion,
            Some("notifications/roots/list_changed") => Self::RootsListChanged,
            Some(_) => Self::Request,
        }
    }

    /// The name written as `type` (and accepted by `eventTypes`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Initialize => "mcp_initialize",
            Self::ToolCall => "mcp_tool_call",
            Self::ToolsList => "mcp_tools_list",
            Self::ResourceRead => "mcp_resource_read",
            Self::ResourcesList => "mcp_resources_list",
            Self::PromptGet => "mcp_prompt_get",
            Self::PromptsList => "mcp_prompts_list",
            Self::Notification => "mcp_notification",
            Self::Ping => "mcp_ping",
            Self::Logging => "mcp_logging",
            Self::Completion => "mcp_completion",
            Self::RootsListChanged => "mcp_roots_list_changed",
            Self::Request => "mcp_request",
            Self::Http => "http_request",
            Self::SseConnection => "sse_connection",
            Self::WorkflowStarted => "vmcp_workflow_started",
            Self::WorkflowCompleted => "vmcp_workflow_completed",
            Self::WorkflowFailed => "vmcp_workflow_failed",
            Self::WorkflowTimedOut => "vmcp_workflow_timed_out",
            Self::StepStarted => "vmcp_workflow_step_started",
            Self::StepCompleted => "vmcp_workflow_step_completed",
            Self::StepFailed => "vmcp_workflow_step_failed",
            Self::StepSkipped => "vmcp_workflow_step_skipped",
            Self::DefinitionChanged => "vmcp_definition_changed",
            Self::DefinitionApproved => "vmcp_definition_approved",
        }
    }

    /// Every type written.
    pub const ALL: [EventType; 25] = [
        Self::Initialize,
        Self::ToolCall,
        Self::ToolsList,
        Self::ResourceRead,
        Self::ResourcesList,
        Self::PromptGet,
        Self::PromptsList,
        Self::Notification,
        Self::Ping,
        Self::Logging,
        Self::Completion,
        Self::RootsListChanged,
        Self::Request,
        Self::Http,
        Self::SseConnection,
        Self::WorkflowStarted,
        Self::WorkflowCompleted,
        Self::WorkflowFailed,
        Self::WorkflowTimedOut,
        Self::StepStarted,
        Self::StepCompleted,
        Self::StepFailed,
        Self::StepSkipped,
        Self::DefinitionChanged,
        Self::DefinitionApproved,
    ];
}

/// How a request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// 2xx (or 3xx).
    Success,
    /// 401 or 403.
    Denied,
    /// Any other 4xx.
    Failure,
    /// 5xx.
    Error,
    /// 2xx whose JSON-RPC answer is an error.
    ApplicationError,
}

impl Outcome {
    /// The name written as `outcome`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::Denied => "denied",
            Self::Failure => "failure",
            Self::Error => "error",
            Self::ApplicationError => "application_error",
        }
    }
}

/// What the edge learned about one HTTP request while serving it.
#[derive(Debug, Clone, Default)]
pub struct HttpEvent {
    /// When the request arrived.
    pub started: Option<SystemTime>,
    /// How long it took, up to the end of its response body.
    pub duration: Duration,
    /// `GET`, `POST`, `DELETE`...
    pub http_method: String,
    /// The URL path.
    pub endpoint: String,
    /// The JSON-RPC method, once the body parsed.
    pub method: Option<String>,
    /// The tool or prompt name, or resource URI, the request is about.
    pub target: Option<String>,
    /// The backend that served it.
    pub backend: Option<String>,
    /// The caller, once authenticated.
    pub identity: Option<Identity>,
    /// The TCP peer.
    pub peer: Option<SocketAddr>,
    /// `User-Agent`.
    pub user_agent: Option<String>,
    /// `X-Request-ID`.
    pub request_id: Option<String>,
    /// `X-Forwarded-For` as sent: a claim of the client (or a proxy), not a verified address.
    pub forwarded_for: Option<String>,
    /// The MCP revision of the request.
    pub protocol_version: Option<String>,
    /// The HTTP status answered.
    pub status: u16,
    /// The JSON-RPC error answered, if any.
    pub error: Option<(i64, String)>,
    /// The request body, when request data is kept.
    pub request: Option<bytes::Bytes>,
    /// The start of the response body, when response data is kept.
    pub response: Option<Vec<u8>>,
    /// The response body's size in bytes.
    pub response_size: u64,
    /// A GET that opened an event stream.
    pub stream_open: bool,
}

impl HttpEvent {
    /// The event's type.
    pub fn event_type(&self) -> EventType {
        if self.stream_open {
            EventType::SseConnection
        } else {
            EventType::of(self.method.as_deref())
        }
    }

    /// The event's outcome, from the status and the JSON-RPC error.
    pub fn outcome(&self, detect_application_errors: bool) -> Outcome {
        match self.status {
            401 | 403 => Outcome::Denied,
            400..=499 => Outcome::Failure,
            500.. => Outcome::Error,
            _ if detect_application_errors && self.error.is_some() => Outcome::ApplicationError,
            _ => Outcome::Success,
        }
    }

    fn target_type(&self) -> &'static str {
        match self.method.as_deref() {
            Some("tools/call") => "tool",
            Some("prompts/get") => "prompt",
            Some("resources/read" | "resources/subscribe" | "resources/unsubscribe") => "resource",
            _ => "endpoint",
        }
    }
}

/// Longest `jsonrpc_error_message` kept, in characters.
const ERROR_MESSAGE_CHARS: usize = 256;

/// Writes one JSON object key by key straight into the line (building `Value` maps first cost
/// more than the rest of the line together).
pub(crate) struct Obj<'b> {
    buf: &'b mut Vec<u8>,
    first: bool,
}

impl<'b> Obj<'b> {
    pub(crate) fn open(buf: &'b mut Vec<u8>) -> Self {
        buf.push(b'{');
        Self { buf, first: true }
    }

    pub(crate) fn key(&mut self, key: &str) -> &mut Vec<u8> {
        if !self.first {
            self.buf.push(b',');
        }
        self.first = false;
        push_str(self.buf, key);
        self.buf.push(b':');
        self.buf
    }

    pub(crate) fn str(&mut self, key: &str, value: &str) {
        push_str(self.key(key), value);
    }

    pub(crate) fn raw(&mut self, key: &str, value: &str) {
        self.key(key).extend_from_slice(value.as_bytes());
    }

    pub(crate) fn value(&mut self, key: &str, value: &Value) {
        let buf = self.key(key);
        let _ = serde_json::to_writer(buf, value);
    }

    pub(crate) fn object(&mut self, key: &str) -> Obj<'_> {
        Obj::open(self.key(key))
    }

    pub(crate) fn close(self) {
        self.buf.push(b'}');
    }
}

fn push_str(buf: &mut Vec<u8>, s: &str) {
    let _ = serde_json::to_writer(buf, s);
}

/// The fields every line starts with, in ToolHive's key order: time, level, msg, then the
/// event's id, type, time, outcome and component.
pub(crate) fn head(
    out: &mut Obj<'_>,
    stamp: &str,
    kind: EventType,
    outcome: Outcome,
    component: &str,
) {
    out.str("time", stamp);
    out.str("level", "AUDIT");
    out.str("msg", "audit_event");
    out.str("audit_id", &uuid_v4());
    out.str("type", kind.name());
    out.str("logged_at", stamp);
    out.str("outcome", outcome.name());
    out.str("component", component);
}

/// A `source` of a local component (`vmcp-composer`, `vmcp-pins`), with no extra fields.
pub(crate) fn local_source(out: &mut Obj<'_>, value: &str) {
    let mut source = out.object("source");
    source.str("type", "local");
    source.str("value", value);
    source.object("extra").close();
    source.close();
}

/// The line for `e` (newline included).
pub(crate) fn line(e: &HttpEvent, s: &AuditSettings, scrub: &Scrubber) -> Vec<u8> {
    let redact = scrub.for_caller(e.identity.as_ref().and_then(|i| i.token.as_ref()));
    let stamp = vmcp_proto::time::rfc3339_nanos(SystemTime::now());
    let mut buf = Vec::with_capacity(640);
    let mut out = Obj::open(&mut buf);
    head(
        &mut out,
        &stamp,
        e.event_type(),
        e.outcome(s.detect_application_errors),
        &s.component,
    );

    let mut source = out.object("source");
    source.str("type", "network");
    source.str(
        "value",
        &e.peer.map(|p| p.ip().to_string()).unwrap_or_default(),
    );
    let mut extra = source.object("extra");
    for (key, v) in [
        ("user_agent", &e.user_agent),
        ("request_id", &e.request_id),
        ("forwarded_for", &e.forwarded_for),
    ] {
        if let Some(v) = v {
            extra.str(key, &redact.text(v));
        }
    }
    extra.close();
    source.close();

    subjects(&mut out, e.identity.as_ref());

    let mut target = out.object("target");
    target.str("endpoint", &e.endpoint);
    target.str("method", e.method.as_deref().unwrap_or(&e.http_method));
    if let Some(name) = &e.target {
        target.str("name", &redact.text(name));
    }
    target.str("type", e.target_type());
    target.close();

    let mut metadata = out.object("metadata");
    let mut extra = metadata.object("extra");
    let millis = u64::try_from(e.duration.as_millis()).unwrap_or(u64::MAX);
    extra.raw("duration_ms", &millis.to_string());
    extra.str("transport", "http");
    if let Some(v) = &e.protocol_version {
        extra.str("protocol_version", v);
    }
    if s.include_response_data {
        extra.raw("response_size_bytes", &e.response_size.to_string());
    }
    if let Some(b) = &e.backend {
        extra.str("backend_name", b);
    }
    if let Some((code, message)) = &e.error {
        extra.raw("jsonrpc_error_code", &code.to_string());
        let message: String = redact
            .text(message)
            .chars()
            .take(ERROR_MESSAGE_CHARS)
            .collect();
        extra.str("jsonrpc_error_message", &message);
    }
    extra.close();
    metadata.close();

    let request = e.request.as_ref().filter(|_| s.include_request_data);
    let response = e.response.as_ref().filter(|_| s.include_response_data);
    if request.is_some() || response.is_some() {
        let mut data = out.object("data");
        if let Some(body) = request {
            data.value("request", &redact.data(body, s.max_data_size));
        }
        if let Some(body) = response {
            data.value("response", &redact.data(body, s.max_data_size));
        }
        data.close();
    }
    if let Some(chain) = e
        .identity
        .as_ref()
        .and_then(|i| delegation(&i.claims, s.max_delegation_depth))
    {
        out.value("delegation", &chain);
    }
    out.close();
    buf.push(b'\n');
    buf
}

/// `subjects`: who called, from the token's claims (`anonymous` without one).
pub(crate) fn subjects(out: &mut Obj<'_>, identity: Option<&Identity>) {
    let claim = |name: &str| {
        identity
            .and_then(|i| i.claim_str(name))
            .filter(|s| !s.is_empty())
    };
    let mut m = out.object("subjects");
    if let Some(sub) = identity.and_then(|i| i.subject.as_deref()) {
        m.str("user_id", sub);
    }
    let user = claim("name")
        .or_else(|| claim("preferred_username"))
        .or_else(|| claim("email"))
        .unwrap_or("anonymous");
    m.str("user", user);
    for key in ["client_name", "client_version"] {
        if let Some(v) = claim(key) {
            m.str(key, v);
        }
    }
    m.close();
}

/// `delegation`: the RFC 8693 `act` chain of the token, outermost actor first, at most `depth`
/// links (`truncated` says when more were cut).
pub(crate) fn delegation(claims: &Map<String, Value>, depth: usize) -> Option<Value> {
    let mut chain = Vec::new();
    let mut act = claims.get("act")?;
    let mut truncated = false;
    loop {
        if chain.len() == depth {
            truncated = true;
            break;
        }
        let mut link = Map::new();
        for key in ["sub", "iss", "client_id"] {
            if let Some(v) = act.get(key).and_then(Value::as_str) {
                link.insert(key.into(), v.into());
            }
        }
        chain.push(Value::Object(link));
        match act.get("act") {
            Some(next) if next.is_object() => act = next,
            _ => break,
        }
    }
    Some(json!({ "chain": chain, "truncated": truncated }))
}

/// A random (version 4) UUID.
pub(crate) fn uuid_v4() -> String {
    let mut b = vmcp_proto::unique::unique_bits();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(36);
    for (i, x) in b.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push('-');
        }
        out.push(char::from(HEX[usize::from(x >> 4)]));
        out.push(char::from(HEX[usize::from(x & 0x0f)]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_follow_status_then_the_jsonrpc_error() {
        let mut e = HttpEvent {
            status: 200,
            ..HttpEvent::default()
        };
        assert_eq!(e.outcome(true), Outcome::Success);
        e.error = Some((-32602, "bad".into()));
        assert_eq!(e.outcome(true), Outcome::ApplicationError);
        assert_eq!(e.outcome(false), Outcome::Success);
        for (status, outcome) in [
            (401, Outcome::Denied),
            (403, Outcome::Denied),
            (404, Outcome::Failure),
            (413, Outcome::Failure),
            (500, Outcome::Error),
            (503, Outcome::Error),
        ] {
            e.status = status;
            assert_eq!(e.outcome(true), outcome, "{status}");
        }
    }

    #[test]
    fn method_names_map_to_toolhive_types() {
        assert_eq!(EventType::of(Some("tools/call")).name(), "mcp_tool_call");
        assert_eq!(EventType::of(Some("server/discover")).name(), "mcp_request");
        assert_eq!(EventType::of(None).name(), "http_request");
    }

    #[test]
    fn delegation_is_cut_at_the_configured_depth() {
        let claims = json!({"act": {"sub": "a", "act": {"sub": "b", "act": {"sub": "c"}}}});
        let Value::Object(claims) = claims else {
            unreachable!()
        };
        let d = delegation(&claims, 2).expect("chain");
        assert_eq!(d["chain"], json!([{"sub": "a"}, {"sub": "b"}]));
        assert_eq!(d["truncated"], true);
        let d = delegation(&claims, 10).expect("chain");
        assert_eq!(d["chain"].as_array().map(Vec::len), Some(3));
        assert_eq!(d["truncated"], false);
    }

    #[test]
    fn ids_are_version_4_uuids() {
        let id = uuid_v4();
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "4");
        assert!(matches!(&id[19..20], "8" | "9" | "a" | "b"));
        assert_ne!(id, uuid_v4());
    }
}
