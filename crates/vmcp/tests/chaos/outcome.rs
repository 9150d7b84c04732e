//! What one answer was: good, an error (with the text that should name the failing part), an
//! answer meant for another request (wrong content or wrong id), a lost session, or nothing
//! before the client's deadline.

use serde_json::{Value, json};

use crate::common::Answer;

/// How one request ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The answer echoed this request's own token, under its own id.
    Ok,
    /// A JSON-RPC error, a tool error, an HTTP error status or a transport failure; the text is
    /// what a client would read to learn what failed.
    Error(String),
    /// Under the right id, content that is not this request's (another request's answer).
    Mismatched(String),
    /// An answer under another id.
    WrongId(String),
    /// 404: the gateway no longer knows the session.
    SessionLost(String),
    /// Nothing before the client's hard deadline.
    Hung,
}

/// Judges the answer to a `tools/call` of an echo tool sent with `id` and text `token`; every
/// token of the scenario starts with `family`, so an error carrying another request's token (its
/// content, inside an error message) is told apart from one that names a failure.
pub(crate) fn of_call(id: u64, token: &str, family: &str, a: &Answer) -> Outcome {
    match judge(id, token, a) {
        Outcome::Error(text) if carries_another(&text, token, family) => Outcome::Mismatched(text),
        outcome => outcome,
    }
}

/// Whether `text` holds a token of the family other than `token`.
fn carries_another(text: &str, token: &str, family: &str) -> bool {
    text.replace(token, "").contains(family)
}

fn judge(id: u64, token: &str, a: &Answer) -> Outcome {
    if a.status == 404 {
        return Outcome::SessionLost(a.text.clone());
    }
    if a.status != 200 {
        return Outcome::Error(http_error(a));
    }
    if a.body.is_null() {
        return Outcome::Error(format!("HTTP 200 without a JSON-RPC answer: {}", a.text));
    }
    if a.body.get("id") != Some(&json!(id)) {
        return Outcome::WrongId(a.text.clone());
    }
    if let Some(e) = a.body.get("error") {
        return Outcome::Error(e.to_string());
    }
    let result = &a.body["result"];
    if result["isError"] == Value::Bool(true) {
        return Outcome::Error(result.to_string());
    }
    match result["content"][0]["text"].as_str() {
        Some(text) if text == token => Outcome::Ok,
        _ => Outcome::Mismatched(a.text.clone()),
    }
}

/// An HTTP-level error as a client reads it: status, the challenge's `error_description` (where
/// auth failures explain themselves; not the whole header, whose realm always names the issuer)
/// and body.
pub(crate) fn http_error(a: &Answer) -> String {
    let challenge = a
        .headers
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let description = challenge
        .split_once("error_description=\"")
        .map_or_else(String::new, |(_, rest)| unquote(rest));
    format!("HTTP {}: {description} {}", a.status, a.text)
}

/// The rest of an RFC 9110 quoted-string whose opening quote is already consumed: up to the
/// closing quote, with `\x` read as `x`.
fn unquote(rest: &str) -> String {
    let mut out = String::new();
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => break,
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    out
}

/// Whether `text` names one of `parts` (case-insensitive).
pub(crate) fn names_any(text: &str, parts: &[String]) -> bool {
    let text = text.to_lowercase();
    parts.iter().any(|p| text.contains(&p.to_lowercase()))
}

/// Whether `text` says the tool does not exist, which an agent reads as "stop trying".
pub(crate) fn says_unknown_tool(text: &str) -> bool {
    text.to_lowercase().contains("unknown tool")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: u16, body: Value) -> Answer {
        Answer {
            status,
            headers: Default::default(),
            text: body.to_string(),
            body,
        }
    }

    fn echoed(id: u64, text: &str) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}})
    }

    fn of_call(id: u64, token: &str, a: &Answer) -> Outcome {
        super::of_call(id, token, "t-", a)
    }

    #[test]
    fn a_challenge_description_is_read_past_its_escaped_quotes() {
        let mut a = answer(503, json!({}));
        a.headers.insert(
            "www-authenticate",
            r#"Bearer error="temporarily_unavailable", error_description="key \"k2\" unknown; signing keys down""#
                .parse()
                .unwrap(),
        );
        assert_eq!(
            http_error(&a),
            r#"HTTP 503: key "k2" unknown; signing keys down {}"#
        );
    }

    #[test]
    fn each_kind_of_answer_is_told_apart() {
        assert_eq!(
            of_call(7, "t-7", &answer(200, echoed(7, "t-7"))),
            Outcome::Ok
        );
        assert!(matches!(
            of_call(7, "t-7", &answer(200, echoed(7, "t-8"))),
            Outcome::Mismatched(_)
        ));
        assert!(matches!(
            of_call(7, "t-7", &answer(200, echoed(8, "t-7"))),
            Outcome::WrongId(_)
        ));
        assert!(matches!(
            of_call(7, "t-7", &answer(404, Value::Null)),
            Outcome::SessionLost(_)
        ));
        // Another request's content inside an error is delivered to the wrong request; this
        // request's own is not.
        let leak = |text: &str| {
            json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32603,
            "message": format!("backend svc1: protocol violation: got {text}")}})
        };
        assert!(matches!(
            of_call(7, "t-7", &answer(200, leak("t-8"))),
            Outcome::Mismatched(_)
        ));
        assert!(matches!(
            of_call(7, "t-7", &answer(200, leak("t-7"))),
            Outcome::Error(_)
        ));
        let unavailable = json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32603,
            "message": "tool svc1_echo is unavailable: its backend svc1 is unhealthy",
            "data": {"kind": "unavailable"}}});
        match of_call(7, "t-7", &answer(200, unavailable)) {
            Outcome::Error(text) => {
                assert!(names_any(&text, &["SVC1".into()]));
                assert!(!says_unknown_tool(&text));
            }
            other => panic!("{other:?}"),
        }
        let unknown = json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32602, "message": "Unknown tool: svc1_echo"}});
        match of_call(7, "t-7", &answer(200, unknown)) {
            Outcome::Error(text) => assert!(says_unknown_tool(&text)),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            of_call(7, "t-7", &answer(503, json!({"error": "session storage unavailable"}))),
            Outcome::Error(t) if t.contains("session storage")
        ));
    }
}
