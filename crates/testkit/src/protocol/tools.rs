//! The fixture's tools: their definitions for `tools/list` and their behaviour on `tools/call`.
//!
//! Several tools misbehave on purpose (`fail`, `rpc_error`, `crash`, `garbage`,
//! `forget_session`); what that means on the wire is up to each transport, so they
//! return an [`Effect`] rather than acting themselves.

use std::time::Duration;

use serde_json::{Number, Value, json};

use super::Effect;
use super::page::paginate;
use super::rpc::RpcError;

/// The tool catalogue of one fixture.
pub(crate) struct Tools {
    server_name: String,
    definitions: Vec<Value>,
    forget_session: bool,
    numbered: usize,
    late_talk: bool,
}

impl Tools {
    /// Tools for the server `server_name`; `forget_session` only where there are sessions to
    /// forget (stateful http), `numbered` extra trivial tools `tool_0..`.
    pub(crate) fn new(
        server_name: &str,
        forget_session: bool,
        numbered: usize,
        late_talk: bool,
    ) -> Self {
        let mut definitions = vec![
            json!({
                "name": "echo",
                "title": "Echo",
                "description": "Returns the given text unchanged.",
                "inputSchema": {
                    "type": "object",
                    "properties": { "text": { "type": "string", "description": "Text to echo back" } },
                    "required": ["text"]
                },
                "annotations": { "readOnlyHint": true }
            }),
            simple("whoami", "Returns the name of this fixture server."),
            json!({
                "name": "add",
                "description": "Adds two numbers.",
                "inputSchema": {
                    "type": "object",
                    "properties": { "a": { "type": "number" }, "b": { "type": "number" } },
                    "required": ["a", "b"]
                },
                "outputSchema": {
                    "type": "object",
                    "properties": { "sum": { "type": "number" } },
                    "required": ["sum"]
                }
            }),
            json!({
                "name": "sleep",
                "description": "Waits `ms` milliseconds, then answers.",
                "inputSchema": {
                    "type": "object",
                    "properties": { "ms": { "type": "integer", "minimum": 0 } },
                    "required": ["ms"]
                }
            }),
            simple("fail", "Returns a tool result with isError: true."),
            simple("rpc_error", "Answers with a JSON-RPC error -32603."),
            simple(
                "crash",
                "Exits the server process with status 3 without answering.",
            ),
            simple("garbage", "Answers with bytes that are not JSON."),
        ];
        if forget_session {
            definitions.push(simple(
                "forget_session",
                "Answers, then forgets every session so the next request gets 404.",
            ));
        }
        if late_talk {
            definitions.push(json!({
                "name": "talk_later",
                "description": "Answers at once, then sends a log message with `tag` `ms` milliseconds later, outside any request.",
                "inputSchema": {
                    "type": "object",
                    "properties": { "tag": { "type": "string" }, "ms": { "type": "integer", "minimum": 0 } },
                    "required": ["tag", "ms"]
                }
            }));
        }
        definitions.extend((0..numbered).map(|i| simple(&format!("tool_{i}"), "A trivial tool.")));
        Self {
            server_name: server_name.to_owned(),
            definitions,
            forget_session,
            numbered,
            late_talk,
        }
    }

    /// `tools/list`.
    pub(crate) fn list(&self, params: &Value) -> Result<Value, RpcError> {
        paginate(&self.definitions, params, "tools")
    }

    /// `tools/call`.
    pub(crate) async fn call(&self, params: &Value) -> Result<Effect, RpcError> {
        let name = super::rpc::str_param(params, "name")?;
        let empty = Value::Object(Default::default());
        let args = params.get("arguments").unwrap_or(&empty);
        let effect = match name {
            "echo" => match args.get("text").and_then(Value::as_str) {
                Some(text) => Effect::Result(text_result(text)),
                None => Effect::Result(error_result("echo needs a string `text`")),
            },
            "whoami" => Effect::Result(text_result(&self.server_name)),
            "add" => Effect::Result(add(args)),
            "sleep" => match args.get("ms").and_then(Value::as_u64) {
                Some(ms) => {
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    Effect::Result(text_result(&format!("slept {ms}")))
                }
                None => Effect::Result(error_result("sleep needs a non-negative integer `ms`")),
            },
            "fail" => Effect::Result(error_result("fixture failure")),
            "rpc_error" => return Err(RpcError::internal("fixture rpc error")),
            "crash" => Effect::Crash,
            "talk_later" if self.late_talk => {
                let tag = args.get("tag").cloned().unwrap_or(Value::Null);
                let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(0);
                let note = json!({"jsonrpc": "2.0", "method": "notifications/message",
                    "params": {"level": "error", "logger": "fixture", "data": {"tag": tag, "late": true}}});
                Effect::Later(
                    text_result("will talk later"),
                    Duration::from_millis(ms),
                    note,
                )
            }
            "garbage" => Effect::Garbage,
            "forget_session" if self.forget_session => {
                Effect::ForgetSessions(text_result("sessions forgotten"))
            }
            other => match numbered_index(other).filter(|i| *i < self.numbered) {
                Some(_) => Effect::Result(text_result(other)),
                None => return Err(RpcError::invalid_params(format!("Unknown tool: {other}"))),
            },
        };
        Ok(effect)
    }
}

/// A tool that takes no arguments.
fn simple(name: &str, description: &str) -> Value {
    json!({
        "name": name,
        "description": description,
        "inputSchema": { "type": "object", "properties": {} }
    })
}

fn numbered_index(name: &str) -> Option<usize> {
    name.strip_prefix("tool_")?.parse().ok()
}

fn text_result(text: &str) -> Value {
    json!({ "content": [{ "type": "text", "text": text }], "isError": false })
}

fn error_result(text: &str) -> Value {
    json!({ "content": [{ "type": "text", "text": text }], "isError": true })
}

/// `add`: integer sum when both are integers (so "5", not "5.0"), float sum otherwise.
fn add(args: &Value) -> Value {
    let (Some(a), Some(b)) = (args.get("a"), args.get("b")) else {
        return error_result("add needs numbers `a` and `b`");
    };
    let sum = match (a.as_i64(), b.as_i64()) {
        (Some(a), Some(b)) if a.checked_add(b).is_some() => Number::from(a + b),
        _ => match (a.as_f64(), b.as_f64()) {
            (Some(a), Some(b)) => match Number::from_f64(a + b) {
                Some(sum) => sum,
                None => return error_result("sum is not a finite number"),
            },
            _ => return error_result("add needs numbers `a` and `b`"),
        },
    };
    json!({
        "content": [{ "type": "text", "text": sum.to_string() }],
        "structuredContent": { "sum": sum },
        "isError": false
    })
}
