//! What one audit line says, and how it is written: ToolHive's event types, outcomes and line
//! layout (`time`, `level`, `msg`, then the event), so their log pipelines read ours unchanged.

use std::net::SocketAddr;
use std::time::{Duration, SystemTime};

use serde_json::{Map, Value, json};
use vmcp_auth::Identity;

use crate::{AuditSettings, Scrubber, time};

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
        }
    }

    /// Every type written for HTTP requests.
    pub const ALL: [EventType; 15] = [
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

/// The line for `e` (newline included).
pub(crate) fn line(e: &HttpEvent, s: &AuditSettings, scrub: &Scrubber) -> Vec<u8> {
    let now = SystemTime::now();
    let redact = scrub.for_caller(e.identity.as_ref().and_then(|i| i.token.as_ref()));
    let mut source_extra = Map::new();
    if let Some(ua) = &e.user_agent {
        source_extra.insert("user_agent".into(), redact.text(ua).into());
    }
    if let Some(id) = &e.request_id {
        source_extra.insert("request_id".into(), redact.text(id).into());
    }
    if let Some(xff) = &e.forwarded_for {
        source_extra.insert("forwarded_for".into(), redact.text(xff).into());
    }
    let mut target = Map::new();
    target.insert("endpoint".into(), e.endpoint.clone().into());
    let method = e.method.clone().unwrap_or_else(|| e.http_method.clone());
    target.insert("method".into(), method.into());
    if let Some(name) = &e.target {
        target.insert("name".into(), redact.text(name).into());
    }
    target.insert("type".into(), e.target_type().into());

    let mut extra = Map::new();
    extra.insert(
        "duration_ms".into(),
        json!(u64::try_from(e.duration.as_millis()).unwrap_or(u64::MAX)),
    );
    extra.insert("transport".into(), "http".into());
    if let Some(v) = &e.protocol_version {
        extra.insert("protocol_version".into(), v.clone().into());
    }
    if s.include_response_data {
        extra.insert("response_size_bytes".into(), json!(e.response_size));
    }
    if let Some(b) = &e.backend {
        extra.insert("backend_name".into(), b.clone().into());
    }
    if let Some((code, message)) = &e.error {
        extra.insert("jsonrpc_error_code".into(), json!(code));
        let message: String = redact
            .text(message)
            .chars()
            .take(ERROR_MESSAGE_CHARS)
            .collect();
        extra.insert("jsonrpc_error_message".into(), message.into());
    }

    // The top level keeps ToolHive's key order whatever serde_json's map ordering is.
    let mut out: Vec<(&str, Value)> = Vec::with_capacity(16);
    let stamp = time::rfc3339_nanos(now);
    out.push(("time", stamp.clone().into()));
    out.push(("level", "AUDIT".into()));
    out.push(("msg", "audit_event".into()));
    out.push(("audit_id", uuid_v4().into()));
    out.push(("type", e.event_type().name().into()));
    out.push(("logged_at", stamp.into()));
    out.push((
        "outcome",
        e.outcome(s.detect_application_errors).name().into(),
    ));
    out.push(("component", s.component.clone().into()));
    out.push((
        "source",
        json!({
            "type": "network",
            "value": e.peer.map(|p| p.ip().to_string()).unwrap_or_default(),
            "extra": source_extra,
        }),
    ));
    out.push(("subjects", subjects(e.identity.as_ref())));
    out.push(("target", Value::Object(target)));
    out.push(("metadata", json!({ "extra": extra })));
    let mut data = Map::new();
    if s.include_request_data
        && let Some(body) = &e.request
    {
        data.insert("request".into(), redact.data(body, s.max_data_size));
    }
    if s.include_response_data
        && let Some(body) = &e.response
    {
        data.insert("response".into(), redact.data(body, s.max_data_size));
    }
    if !data.is_empty() {
        out.push(("data", Value::Object(data)));
    }
    if let Some(chain) = e
        .identity
        .as_ref()
        .and_then(|i| delegation(&i.claims, s.max_delegation_depth))
    {
        out.push(("delegation", chain));
    }
    let mut bytes = Vec::with_capacity(512);
    bytes.push(b'{');
    for (i, (key, value)) in out.iter().enumerate() {
        if i > 0 {
            bytes.push(b',');
        }
        let _ = serde_json::to_writer(&mut bytes, key);
        bytes.push(b':');
        let _ = serde_json::to_writer(&mut bytes, value);
    }
    bytes.extend_from_slice(b"}\n");
    bytes
}

/// `subjects`: who called, from the token's claims (`anonymous` without one).
fn subjects(identity: Option<&Identity>) -> Value {
    let mut m = Map::new();
    let claim = |name: &str| {
        identity
            .and_then(|i| i.claim_str(name))
            .filter(|s| !s.is_empty())
    };
    if let Some(sub) = identity.and_then(|i| i.subject.as_deref()) {
        m.insert("user_id".into(), sub.into());
    }
    let user = claim("name")
        .or_else(|| claim("preferred_username"))
        .or_else(|| claim("email"))
        .unwrap_or("anonymous");
    m.insert("user".into(), user.into());
    for key in ["client_name", "client_version"] {
        if let Some(v) = claim(key) {
            m.insert(key.into(), v.into());
        }
    }
    Value::Object(m)
}

/// `delegation`: the RFC 8693 `act` chain of the token, outermost actor first, at most `depth`
/// links (`truncated` says when more were cut).
fn delegation(claims: &Map<String, Value>, depth: usize) -> Option<Value> {
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
fn uuid_v4() -> String {
    let mut b = [0u8; 16];
    if getrandom::fill(&mut b).is_err() {
        // No entropy source: an id unique within this process still serves as a key.
        let n = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        b = n.to_le_bytes();
    }
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
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
