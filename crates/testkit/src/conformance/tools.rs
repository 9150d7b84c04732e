//! The conformance tools: their definitions for `tools/list` and their behaviour on
//! `tools/call`, the same in both eras (2026-07-28 drops `test_reconnection`, whose stream
//! resumption it removed, and adds the tools in `diagnostics`). Names and results are the ones
//! the suite's server scenarios ask for.

use std::time::Duration;

use serde_json::{Value, json};

use super::content::{audio, embedded_text, image, text, tool_error, tool_result};
use super::era::Era;
use super::exchange::Exchange;
use super::mrtr::{Interrupt, Question};
use super::{diagnostics, elicitation};
use crate::protocol::rpc::{RpcError, str_param};

/// Pause between the steps of the logging and progress tools.
const STEP: Duration = Duration::from_millis(50);

/// The `retry` delay `test_reconnection` gives the client before it closes the stream.
const RECONNECT_AFTER: Duration = Duration::from_millis(500);

/// `tools/list`: every tool of `era`, in a fixed order.
pub(crate) fn list(era: Era) -> Value {
    let mut tools = shared();
    if era == Era::Modern {
        tools.retain(|tool| tool["name"] != "test_reconnection");
        tools.extend(diagnostics::tools());
    }
    json!({ "tools": tools })
}

/// The tools both eras list.
fn shared() -> Vec<Value> {
    let no_args = json!({ "type": "object", "properties": {} });
    let one_string = |name: &str, description: &str| {
        json!({
            "type": "object",
            "properties": { name: { "type": "string", "description": description } },
            "required": [name]
        })
    };
    let tools = [
        tool(
            "test_simple_text",
            "Returns one text block.",
            no_args.clone(),
        ),
        tool(
            "test_image_content",
            "Returns one PNG image block.",
            no_args.clone(),
        ),
        tool(
            "test_audio_content",
            "Returns one WAV audio block.",
            no_args.clone(),
        ),
        tool(
            "test_embedded_resource",
            "Returns one embedded text resource.",
            no_args.clone(),
        ),
        tool(
            "test_multiple_content_types",
            "Returns a text, an image and an embedded resource.",
            no_args.clone(),
        ),
        tool(
            "test_tool_with_logging",
            "Sends three info log notifications while it runs.",
            no_args.clone(),
        ),
        tool(
            "test_tool_with_progress",
            "Reports progress 0, 50 and 100 of 100 when given a progress token.",
            no_args.clone(),
        ),
        tool(
            "test_error_handling",
            "Always fails with isError: true.",
            no_args.clone(),
        ),
        tool(
            "test_sampling",
            "Asks the client to sample an LLM with the given prompt.",
            one_string("prompt", "The prompt to send to the LLM"),
        ),
        tool(
            "test_elicitation",
            "Asks the user, through the client, for a username and an email.",
            one_string("message", "The message to show the user"),
        ),
        tool(
            "test_elicitation_sep1034_defaults",
            "Asks the user for fields that all have default values (SEP-1034).",
            no_args.clone(),
        ),
        tool(
            "test_elicitation_sep1330_enums",
            "Asks the user to pick from every kind of enum (SEP-1330).",
            no_args.clone(),
        ),
        tool(
            "test_reconnection",
            "Closes its SSE stream mid-call; the result comes once the client resumes it \
             with GET and Last-Event-ID (SEP-1699).",
            no_args,
        ),
        tool(
            "json_schema_2020_12_tool",
            "Tool with JSON Schema 2020-12 features",
            json_schema_2020_12(),
        ),
    ];
    tools.into()
}

/// A tool definition.
pub(crate) fn tool(name: &str, description: &str, input_schema: Value) -> Value {
    json!({ "name": name, "description": description, "inputSchema": input_schema })
}

/// An input schema using 2020-12 keywords a gateway must pass through untouched.
fn json_schema_2020_12() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": { "street": { "type": "string" }, "city": { "type": "string" } }
            }
        },
        "properties": {
            "name": { "type": "string" },
            "address": { "$ref": "#/$defs/address" },
            "contactMethod": { "type": "string", "enum": ["phone", "email"] },
            "phone": { "type": "string" },
            "email": { "type": "string" }
        },
        "allOf": [{ "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }] }],
        "if": {
            "properties": { "contactMethod": { "const": "phone" } },
            "required": ["contactMethod"]
        },
        "then": { "required": ["phone"] },
        "else": { "required": ["email"] },
        "additionalProperties": false
    })
}

/// `tools/call`.
///
/// # Errors
///
/// -32602 for an unknown tool or a request without a tool name; 2026-07-28: a question the
/// retry has not answered yet (`input_required`) or needs an undeclared capability (-32021).
/// Everything else, including bad arguments and a 2025-11-25 client that cannot or will not
/// answer, is a tool result with `isError: true`.
pub(crate) async fn call(params: &Value, exchange: &Exchange<'_>) -> Result<Value, Interrupt> {
    let name = str_param(params, "name")?;
    let args = params.get("arguments").unwrap_or(&Value::Null);
    let modern = exchange.era() == Era::Modern;
    if modern && let Some(result) = diagnostics::call(name, args, exchange).await {
        return result;
    }
    let result = match name {
        "test_simple_text" => {
            tool_result(vec![text("This is a simple text response for testing.")])
        }
        "test_image_content" => tool_result(vec![image()]),
        "test_audio_content" => tool_result(vec![audio()]),
        "test_embedded_resource" => tool_result(vec![embedded_text(
            "test://embedded-resource",
            "text/plain",
            "This is an embedded resource content.",
        )]),
        "test_multiple_content_types" => tool_result(vec![
            text("Multiple content types test:"),
            image(),
            embedded_text(
                "test://mixed-content-resource",
                "application/json",
                r#"{"test":"data","value":123}"#,
            ),
        ]),
        "test_tool_with_logging" => with_logging(exchange).await,
        "test_tool_with_progress" => with_progress(exchange).await,
        "test_error_handling" => tool_error("This tool intentionally returns an error for testing"),
        "test_sampling" => sampling(args, exchange).await?,
        "test_elicitation" => match args.get("message").and_then(Value::as_str) {
            Some(message) => {
                elicit(
                    exchange,
                    "User response",
                    elicitation::user_details(message),
                )
                .await?
            }
            None => tool_error("test_elicitation needs a string `message`"),
        },
        "test_elicitation_sep1034_defaults" => {
            elicit(
                exchange,
                "Elicitation completed",
                elicitation::with_defaults(),
            )
            .await?
        }
        "test_elicitation_sep1330_enums" => {
            elicit(exchange, "Elicitation completed", elicitation::with_enums()).await?
        }
        "test_reconnection" if !modern => reconnection(exchange).await,
        "json_schema_2020_12_tool" => {
            tool_result(vec![text(&format!("Received arguments: {args}"))])
        }
        other => return Err(unknown(other).into()),
    };
    Ok(result)
}

/// -32602 for a tool this server does not have.
fn unknown(name: &str) -> RpcError {
    RpcError::invalid_params(format!("Unknown tool: {name}"))
}

/// Sends three `info` logs while it runs (they reach a 2026-07-28 client only if its request
/// set a log level).
pub(crate) async fn with_logging(exchange: &Exchange<'_>) -> Value {
    exchange.log("info", "Tool execution started");
    tokio::time::sleep(STEP).await;
    exchange.log("info", "Tool processing data");
    tokio::time::sleep(STEP).await;
    exchange.log("info", "Tool execution completed");
    tool_result(vec![text("Tool with logging executed successfully")])
}

async fn with_progress(exchange: &Exchange<'_>) -> Value {
    exchange.progress(0, 100, "Started");
    tokio::time::sleep(STEP).await;
    exchange.progress(50, 100, "Half way");
    tokio::time::sleep(STEP).await;
    exchange.progress(100, 100, "Done");
    tool_result(vec![text("Tool with progress executed successfully")])
}

/// `test_reconnection`: pause the stream, then answer on the resumed one.
async fn reconnection(exchange: &Exchange<'_>) -> Value {
    if !exchange.pause_stream(RECONNECT_AFTER) {
        return tool_error("test_reconnection needs its answer streamed as SSE");
    }
    tokio::time::sleep(STEP).await;
    tool_result(vec![text("Reconnection test completed successfully")])
}

/// `test_sampling`: one `sampling/createMessage` with the `prompt` argument.
async fn sampling(args: &Value, exchange: &Exchange<'_>) -> Result<Value, Interrupt> {
    let Some(prompt) = args.get("prompt").and_then(Value::as_str) else {
        return Ok(tool_error("test_sampling needs a string `prompt`"));
    };
    let request = json!({
        "messages": [{ "role": "user", "content": { "type": "text", "text": prompt } }],
        "maxTokens": 100
    });
    let answer = exchange.ask(Question::sample("sampling", request)).await;
    reported(answer, "sampling failed", |answer| {
        let content = answer.get("content").unwrap_or(&Value::Null);
        let reply = match content.get("text").and_then(Value::as_str) {
            Some(reply) => reply.to_owned(),
            None => content.to_string(),
        };
        tool_result(vec![text(&format!("LLM response: {reply}"))])
    })
}

/// One `elicitation/create`; the result text is `<label>: action=..., content={...}`.
async fn elicit(exchange: &Exchange<'_>, label: &str, request: Value) -> Result<Value, Interrupt> {
    let answer = exchange.ask(Question::elicit("elicitation", request)).await;
    reported(answer, "elicitation failed", |answer| {
        tool_result(vec![text(&format!(
            "{label}: {}",
            elicitation::describe(&answer)
        ))])
    })
}

/// The tool result built from a question's `answer`; a question the client could not or would
/// not answer (2025-11-25) becomes a tool error saying why, after `failed`; other interrupts
/// stop the request.
///
/// # Errors
///
/// Any interrupt but [`Interrupt::Unanswered`].
pub(crate) fn reported(
    answer: Result<Value, Interrupt>,
    failed: &str,
    result: impl FnOnce(Value) -> Value,
) -> Result<Value, Interrupt> {
    match answer {
        Ok(answer) => Ok(result(answer)),
        Err(Interrupt::Unanswered(why)) => Ok(tool_error(&format!("{failed}: {why}"))),
        Err(interrupt) => Err(interrupt),
    }
}
