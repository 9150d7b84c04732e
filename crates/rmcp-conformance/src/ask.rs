//! Asking the client (elicitation, sampling, roots) in both protocol revisions.
//!
//! * 2025-11-25 session: each question is a server-to-client request sent mid-call with
//!   [`Peer::send_request`]; rmcp routes it on the originating request's SSE stream.
//! * 2026-07-28 (stateless): server-to-client requests are gone; the handler answers with an
//!   [`InputRequiredResult`] and the client retries the request with `inputResponses` (and the
//!   echoed `requestState`) — Multi Round-Trip Requests, SEP-2322.
//!
//! Either way, asking needs the matching client capability (for 2026-07-28 the one the request
//! declares in its `_meta`), else `-32021` with `data.requiredCapabilities`.

// Sampling and roots are deprecated by SEP-2577 but still part of what the suite checks.
#![allow(deprecated)]

use std::collections::BTreeMap;
use std::hash::BuildHasher;
use std::sync::OnceLock;

use rmcp::model::{
    ClientCapabilities, CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema,
    InputRequest, InputRequiredResult, InputResponses, ListRootsRequest, ListRootsResult,
    ProtocolVersion, SamplingMessage, ServerRequest,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServiceError};
use serde_json::Value;

/// Whether the request is served the 2026-07-28 way (stateless, MRTR) rather than in a
/// 2025-11-25 session.
pub(crate) fn is_modern(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28)
}

/// One question for the client.
#[derive(Debug, Clone)]
pub(crate) enum Question {
    /// `elicitation/create` with a form.
    Elicit {
        message: String,
        schema: ElicitationSchema,
    },
    /// `sampling/createMessage` with one user text message.
    Sample { text: String, max_tokens: u32 },
    /// `roots/list`.
    Roots,
}

impl Question {
    pub(crate) fn elicit(message: impl Into<String>, schema: ElicitationSchema) -> Self {
        Question::Elicit {
            message: message.into(),
            schema,
        }
    }

    pub(crate) fn sample(text: impl Into<String>, max_tokens: u32) -> Self {
        Question::Sample {
            text: text.into(),
            max_tokens,
        }
    }

    /// The client capability answering needs.
    pub(crate) fn capability(&self) -> ClientCapabilities {
        let builder = ClientCapabilities::builder();
        match self {
            Question::Elicit { .. } => builder.enable_elicitation().build(),
            Question::Sample { .. } => builder.enable_sampling().build(),
            Question::Roots => builder.enable_roots().build(),
        }
    }

    /// Whether `declared` has the capability answering needs.
    pub(crate) fn allowed_by(&self, declared: Option<&ClientCapabilities>) -> bool {
        declared.is_some_and(|caps| match self {
            Question::Elicit { .. } => caps.elicitation.is_some(),
            Question::Sample { .. } => caps.sampling.is_some(),
            Question::Roots => caps.roots.is_some(),
        })
    }

    fn elicit_params(message: &str, schema: &ElicitationSchema) -> ElicitRequestParams {
        ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: message.to_string(),
            requested_schema: schema.clone(),
        }
    }

    fn sample_params(text: &str, max_tokens: u32) -> CreateMessageRequestParams {
        CreateMessageRequestParams::new(vec![SamplingMessage::user_text(text)], max_tokens)
    }

    /// The question as an entry of `inputRequests` (2026-07-28).
    fn input_request(&self) -> InputRequest {
        match self {
            Question::Elicit { message, schema } => {
                InputRequest::Elicitation(ElicitRequest::new(Self::elicit_params(message, schema)))
            }
            Question::Sample { text, max_tokens } => InputRequest::CreateMessage(
                CreateMessageRequest::new(Self::sample_params(text, *max_tokens)),
            ),
            Question::Roots => InputRequest::ListRoots(ListRootsRequest::default()),
        }
    }

    /// The question as a server-to-client request (2025-11-25).
    fn server_request(&self) -> ServerRequest {
        match self {
            Question::Elicit { message, schema } => ServerRequest::ElicitRequest(
                ElicitRequest::new(Self::elicit_params(message, schema)),
            ),
            Question::Sample { text, max_tokens } => ServerRequest::CreateMessageRequest(
                CreateMessageRequest::new(Self::sample_params(text, *max_tokens)),
            ),
            Question::Roots => ServerRequest::ListRootsRequest(ListRootsRequest::default()),
        }
    }

    /// Whether `answer` is the kind of result this question asks for.
    fn accepts(&self, answer: &Value) -> bool {
        let answer = answer.clone();
        match self {
            Question::Elicit { .. } => serde_json::from_value::<ElicitResult>(answer).is_ok(),
            Question::Sample { .. } => {
                serde_json::from_value::<CreateMessageResult>(answer).is_ok()
            }
            Question::Roots => serde_json::from_value::<ListRootsResult>(answer).is_ok(),
        }
    }
}

/// The client's answers by question key.
pub(crate) type Answers = BTreeMap<String, Value>;

/// What asking came to.
pub(crate) enum Asked {
    /// Every question is answered.
    Answered(Answers),
    /// 2026-07-28: some answers are missing; return this so the client retries with them.
    Pending(InputRequiredResult),
}

/// `-32021` for the first question the request's client cannot answer.
pub(crate) fn check_capabilities(
    context: &RequestContext<RoleServer>,
    questions: &[(&str, Question)],
) -> Result<(), ErrorData> {
    let declared = context.client_capabilities();
    match questions
        .iter()
        .find(|(_, q)| !q.allowed_by(declared.as_ref()))
    {
        Some((_, q)) => Err(ErrorData::missing_required_client_capability(
            q.capability(),
        )),
        None => Ok(()),
    }
}

/// Asks `questions` (key, question) of the client.
///
/// 2025-11-25: sends each one now and waits for the answer. 2026-07-28: takes the answers from
/// the retry's `inputResponses`; any missing, or of the wrong kind, is asked (again) with an
/// [`InputRequiredResult`] carrying `state` as its `requestState`.
pub(crate) async fn ask(
    context: &RequestContext<RoleServer>,
    responses: Option<&InputResponses>,
    questions: Vec<(&str, Question)>,
    state: Option<String>,
) -> Result<Asked, ErrorData> {
    check_capabilities(context, &questions)?;
    if !is_modern(context) {
        let mut answers = Answers::new();
        for (key, question) in questions {
            let answer = context
                .peer
                .send_request(question.server_request())
                .await
                .map_err(service_error)?;
            let answer = serde_json::to_value(answer)
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
            answers.insert(key.to_string(), answer);
        }
        return Ok(Asked::Answered(answers));
    }
    let mut answers = Answers::new();
    let mut missing = BTreeMap::new();
    for (key, question) in questions {
        match responses.and_then(|r| r.get(key)) {
            Some(answer) if question.accepts(answer) => {
                answers.insert(key.to_string(), answer.clone());
            }
            _ => {
                missing.insert(key.to_string(), question.input_request());
            }
        }
    }
    if missing.is_empty() {
        Ok(Asked::Answered(answers))
    } else {
        Ok(Asked::Pending(InputRequiredResult::new(
            Some(missing),
            state,
        )))
    }
}

fn service_error(error: ServiceError) -> ErrorData {
    match error {
        ServiceError::McpError(e) => e,
        other => ErrorData::internal_error(format!("asking the client failed: {other}"), None),
    }
}

// --- Reading answers ---------------------------------------------------------------------------

/// `action=<action>, content=<json>` of an elicitation answer.
pub(crate) fn describe_elicitation(answer: &Value) -> String {
    let action = answer["action"].as_str().unwrap_or("unknown");
    let content = if action == "accept" {
        answer.get("content").cloned().unwrap_or(Value::Null)
    } else {
        Value::Null
    };
    format!("action={action}, content={content}")
}

/// The string `field` of an accepted elicitation answer.
pub(crate) fn accepted_field(answer: &Value, field: &str) -> Result<String, String> {
    let accepted = serde_json::from_value::<ElicitResult>(answer.clone())
        .ok()
        .filter(|r| r.action == ElicitationAction::Accept);
    accepted
        .and_then(|r| r.content)
        .and_then(|c| c.get(field).and_then(Value::as_str).map(str::to_string))
        .ok_or_else(|| format!("elicitation not accepted (no string `{field}`)"))
}

/// The text a sampling answer carries (its content may be one block or a list).
pub(crate) fn sampled_text(answer: &Value) -> String {
    match serde_json::from_value::<CreateMessageResult>(answer.clone()) {
        Ok(result) => result
            .message
            .content
            .iter()
            .filter_map(|block| block.as_text().map(|t| t.text.clone()))
            .collect::<Vec<_>>()
            .join(" "),
        Err(_) => String::new(),
    }
}

/// The root URIs of a `roots/list` answer, comma-separated.
pub(crate) fn root_uris(answer: &Value) -> String {
    match serde_json::from_value::<ListRootsResult>(answer.clone()) {
        Ok(result) => result
            .roots
            .iter()
            .map(|root| root.uri.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        Err(_) => String::new(),
    }
}

// --- requestState integrity -----------------------------------------------------------------

/// Seals `payload` as a `requestState`: `payload.tag`, the tag a keyed SipHash of the payload
/// under keys drawn at process start.
///
/// rmcp's own `RequestStateCodec` (HMAC-SHA256) sits behind its `request-state` feature, which
/// the feature set this crate shares with vmcp's dev-dependency does not enable. The echoed
/// state is untrusted input (SEP-2322), so this keyed hash stands in for it: enough to detect a
/// client that altered the state, not a cryptographic MAC.
pub(crate) fn seal(payload: &str) -> String {
    format!("{payload}.{:016x}", tag(payload))
}

/// The payload of a sealed `requestState`, or `-32602` if it fails verification.
pub(crate) fn open(state: &str) -> Result<String, ErrorData> {
    let verified = state.rsplit_once('.').and_then(|(payload, tag_hex)| {
        let given = u64::from_str_radix(tag_hex, 16).ok()?;
        (tag_hex.len() == 16 && given == tag(payload)).then(|| payload.to_string())
    });
    verified.ok_or_else(|| {
        ErrorData::invalid_params(
            "requestState failed integrity verification",
            Some(serde_json::json!({"requestState": state})),
        )
    })
}

fn tag(payload: &str) -> u64 {
    static KEYS: OnceLock<std::collections::hash_map::RandomState> = OnceLock::new();
    KEYS.get_or_init(std::collections::hash_map::RandomState::new)
        .hash_one(payload)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_state_opens_and_tampering_is_refused() {
        let sealed = seal(r#"{"step":"confirm"}"#);
        assert_eq!(open(&sealed).ok().as_deref(), Some(r#"{"step":"confirm"}"#));
        assert!(open(&format!("{sealed}-TAMPERED")).is_err());
        assert!(open(&sealed.replace("confirm", "confirn")).is_err());
        assert!(open("no-tag").is_err());
    }
}
