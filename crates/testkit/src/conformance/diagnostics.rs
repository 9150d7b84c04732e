//! The tools and the prompt only 2026-07-28 clients see: the ones the suite's Multi
//! Round-Trip Request scenarios (`input-required-result-*`) and its stateless-server, header
//! and subscription scenarios ask for by name. Each asks through the era-neutral
//! [`Exchange`], so the MRTR mechanics stay in `exchange` and `mrtr`.

use serde_json::{Value, json};

use super::content::{text, tool_error, tool_result};
use super::exchange::{Change, Exchange};
use super::mrtr::{Interrupt, Question};
use super::prompts::user;
use super::tools::{tool, with_logging};
use crate::protocol::rpc::RpcError;

/// Name of the prompt that asks for input before it can be rendered.
const INPUT_PROMPT: &str = "test_input_required_result_prompt";

/// The Modern-only tool definitions, appended to `tools/list`.
pub(crate) fn tools() -> Vec<Value> {
    let none = json!({ "type": "object", "properties": {} });
    let mut tools: Vec<Value> = [
        (
            "test_input_required_result_elicitation",
            "Asks for your name (elicitation), then greets you.",
        ),
        (
            "test_input_required_result_sampling",
            "Asks the client's LLM for the capital of France.",
        ),
        (
            "test_input_required_result_list_roots",
            "Asks the client for its roots and lists them.",
        ),
        (
            "test_input_required_result_request_state",
            "Asks for a confirmation and checks the echoed requestState.",
        ),
        (
            "test_input_required_result_multiple_inputs",
            "Asks for a name, a sampled greeting and the roots at once.",
        ),
        (
            "test_input_required_result_multi_round",
            "Asks for a name, then a colour, over two rounds.",
        ),
        (
            "test_input_required_result_tampered_state",
            "Asks for a confirmation; refuses a tampered requestState.",
        ),
        (
            "test_input_required_result_capabilities",
            "Asks only what the request's clientCapabilities allow.",
        ),
        (
            "test_missing_capability",
            "Needs the sampling client capability (-32021 without it).",
        ),
        (
            "test_streaming_elicitation",
            "Reports progress, then asks for a confirmation.",
        ),
        (
            "test_logging_tool",
            "Sends three info logs if the request set a log level.",
        ),
        (
            "test_trigger_tool_change",
            "Announces tools/list_changed to subscriptions/listen streams.",
        ),
        (
            "test_trigger_prompt_change",
            "Announces prompts/list_changed to subscriptions/listen streams.",
        ),
    ]
    .into_iter()
    .map(|(name, description)| tool(name, description, none.clone()))
    .collect();
    let region = json!({
        "type": "object",
        "properties": {
            "region": { "type": "string", "description": "Where to run", "x-mcp-header": "Region" }
        },
        "required": ["region"]
    });
    tools.push(tool(
        "test_custom_header",
        "Echoes `region`, which the client mirrors into Mcp-Param-Region.",
        region,
    ));
    tools
}

/// `tools/call` of a Modern-only tool; `None` if `name` is not one.
pub(crate) async fn call(
    name: &str,
    args: &Value,
    exchange: &Exchange<'_>,
) -> Option<Result<Value, Interrupt>> {
    let result = match name {
        "test_input_required_result_elicitation" => {
            let name = exchange
                .ask(ask_name("user_name", "What is your name?"))
                .await;
            accepted(name, "name").map(|name| say(&format!("Hello, {name}!")))
        }
        "test_input_required_result_sampling" => {
            let answer = exchange.ask(capital_question()).await;
            answer.map(|answer| say(&format!("LLM says: {}", sampled_text(&answer))))
        }
        "test_input_required_result_list_roots" => {
            let roots = exchange.ask(Question::roots("client_roots")).await;
            roots.map(|roots| say(&format!("Roots: {}", root_uris(&roots))))
        }
        "test_input_required_result_request_state"
        | "test_input_required_result_tampered_state" => confirm_with_state(exchange).await,
        "test_input_required_result_multiple_inputs" => multiple_inputs(exchange).await,
        "test_input_required_result_multi_round" => multi_round(exchange).await,
        "test_input_required_result_capabilities" => within_capabilities(exchange).await,
        "test_missing_capability" => exchange
            .require("sampling")
            .map(|()| say("The request declared the sampling capability.")),
        "test_streaming_elicitation" => {
            exchange.progress(1, 2, "Waiting for confirmation");
            let answer = exchange.ask(confirmation()).await;
            answer.map(|answer| say(&format!("Confirmed: {}", answer["content"]["ok"])))
        }
        "test_logging_tool" => Ok(with_logging(exchange).await),
        "test_trigger_tool_change" => {
            exchange.announce(Change::Tools);
            Ok(say("Announced notifications/tools/list_changed."))
        }
        "test_trigger_prompt_change" => {
            exchange.announce(Change::Prompts);
            Ok(say("Announced notifications/prompts/list_changed."))
        }
        "test_custom_header" => Ok(match args.get("region").and_then(Value::as_str) {
            Some(region) => say(&format!("Region: {region}")),
            None => tool_error("test_custom_header needs a string `region`"),
        }),
        _ => return None,
    };
    Some(result.or_else(|interrupt| match interrupt {
        Interrupt::Unanswered(why) => Ok(tool_error(&why)),
        other => Err(other),
    }))
}

/// The Modern-only prompt definition, appended to `prompts/list`.
pub(crate) fn prompt() -> Value {
    json!({
        "name": INPUT_PROMPT,
        "description": "Asks, through the client, what context to use before it is rendered"
    })
}

/// `prompts/get` of the Modern-only prompt; `None` if `name` is not it.
pub(crate) async fn get_prompt(
    name: &str,
    exchange: &Exchange<'_>,
) -> Option<Result<Value, Interrupt>> {
    if name != INPUT_PROMPT {
        return None;
    }
    let question = ask_for(
        "user_context",
        "What context should the prompt use?",
        "context",
    );
    let context = accepted(exchange.ask(question).await, "context");
    let result = context.map(|context| {
        let message = user(text(&format!("Answer using this context: {context}")));
        json!({ "messages": [message] })
    });
    Some(result.map_err(|interrupt| match interrupt {
        Interrupt::Unanswered(why) => RpcError::invalid_params(why).into(),
        other => other,
    }))
}

/// Requires this tool's own `requestState` on the retry: a retry without it is asked again.
async fn confirm_with_state(exchange: &Exchange<'_>) -> Result<Value, Interrupt> {
    let stated = exchange.state().is_some_and(|s| s["step"] == "confirm");
    if !stated {
        exchange.require("elicitation")?;
        return Err(Interrupt::asking(
            &[confirmation()],
            json!({ "step": "confirm" }),
        ));
    }
    let answer = exchange.ask(confirmation()).await?;
    Ok(say(&format!(
        "state-ok: requestState verified, ok={}",
        answer["content"]["ok"]
    )))
}

async fn multiple_inputs(exchange: &Exchange<'_>) -> Result<Value, Interrupt> {
    let greeting = json!({
        "messages": [{ "role": "user", "content": { "type": "text", "text": "Generate a greeting" } }],
        "maxTokens": 50
    });
    let answers = exchange
        .ask_all(vec![
            ask_name("user_name", "What is your name?"),
            Question::sample("greeting", greeting),
            Question::roots("client_roots"),
        ])
        .await?;
    let name = &answers[0]["content"]["name"];
    Ok(say(&format!(
        "name={name}, greeting={:?}, roots={}",
        sampled_text(&answers[1]),
        root_uris(&answers[2])
    )))
}

/// Round 1 asks a name; round 2 keeps it in the state and asks a colour; round 3 answers.
async fn multi_round(exchange: &Exchange<'_>) -> Result<Value, Interrupt> {
    let known = exchange
        .state()
        .and_then(|s| s["name"].as_str())
        .map(str::to_owned);
    let name = match known {
        Some(name) => name,
        None => {
            let name = exchange
                .ask(ask_name("step1", "Step 1: What is your name?"))
                .await;
            match accepted(name, "name") {
                Ok(name) => name,
                Err(interrupt) => return Err(interrupt.keeping(json!({ "round": 1 }))),
            }
        }
    };
    let colour = ask_for("step2", "Step 2: What is your favorite color?", "color");
    let colour = accepted(exchange.ask(colour).await, "color")
        .map_err(|interrupt| interrupt.keeping(json!({ "round": 2, "name": name })))?;
    Ok(say(&format!("{name}'s favorite color is {colour}.")))
}

async fn within_capabilities(exchange: &Exchange<'_>) -> Result<Value, Interrupt> {
    let questions: Vec<Question> = [
        capital_question(),
        ask_name("user_name", "What is your name?"),
        Question::roots("client_roots"),
    ]
    .into_iter()
    .filter(|q| exchange.client_supports(q.capability()))
    .collect();
    let asked = questions.len();
    exchange.ask_all(questions).await?;
    Ok(say(&format!(
        "Answered {asked} question(s) the client can answer."
    )))
}

fn say(message: &str) -> Value {
    tool_result(vec![text(message)])
}

/// An elicitation for one required string field.
fn ask_for(key: &'static str, message: &str, field: &str) -> Question {
    Question::elicit(
        key,
        json!({
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": { field: { "type": "string" } },
                "required": [field]
            }
        }),
    )
}

fn ask_name(key: &'static str, message: &str) -> Question {
    ask_for(key, message, "name")
}

fn confirmation() -> Question {
    Question::elicit(
        "confirm",
        json!({
            "message": "Please confirm",
            "requestedSchema": {
                "type": "object",
                "properties": { "ok": { "type": "boolean" } },
                "required": ["ok"]
            }
        }),
    )
}

fn capital_question() -> Question {
    Question::sample(
        "capital_question",
        json!({
            "messages": [{
                "role": "user",
                "content": { "type": "text", "text": "What is the capital of France?" }
            }],
            "maxTokens": 100
        }),
    )
}

/// The string `field` of an accepted elicitation; a declined one becomes a tool error.
fn accepted(answer: Result<Value, Interrupt>, field: &str) -> Result<String, Interrupt> {
    let answer = answer?;
    match (answer["action"].as_str(), answer["content"][field].as_str()) {
        (Some("accept"), Some(value)) => Ok(value.to_owned()),
        (action, _) => Err(Interrupt::Unanswered(format!(
            "elicitation not accepted (action {action:?}, no string `{field}`)"
        ))),
    }
}

fn sampled_text(answer: &Value) -> String {
    match answer["content"]["text"].as_str() {
        Some(text) => text.to_owned(),
        None => answer["content"].to_string(),
    }
}

fn root_uris(answer: &Value) -> String {
    let roots = answer["roots"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let uris: Vec<&str> = roots.iter().filter_map(|r| r["uri"].as_str()).collect();
    uris.join(", ")
}
