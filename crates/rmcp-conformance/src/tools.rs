//! The `test_*` tools the suite's server scenarios call, on rmcp's `#[tool_router]`.

// Logging and sampling are deprecated by rmcp (SEP-2577) but are what the scenarios check.
#![allow(deprecated)]

use std::sync::Arc;
use std::time::Duration;

use rmcp::handler::server::tool::{InputResponses, RequestState};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    AudioContent, BooleanSchema, CallToolResponse, CallToolResult, ConstTitle, ContentBlock,
    ElicitationSchema, EnumSchema, InputRequiredResult, IntegerSchema, JsonObject,
    LegacyEnumSchema, NumberSchema, PrimitiveSchemaDefinition, ProgressNotificationParam,
    ResourceContents, StringSchema, TitledItems, TitledMultiSelectEnumSchema,
};
use rmcp::schemars::JsonSchema;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, tool, tool_router};
use serde::Deserialize;
use serde_json::json;

use crate::ask::{
    Asked, Question, accepted_field, ask, describe_elicitation, is_modern, open, root_uris,
    sampled_text, seal,
};
use crate::media;
use crate::server::{Conformance, WATCHED};

/// Pause between the steps of the logging and progress tools.
const STEP: Duration = Duration::from_millis(50);

fn text(text: impl Into<String>) -> CallToolResponse {
    CallToolResult::success(vec![ContentBlock::text(text)]).into()
}

fn tool_error(message: impl Into<String>) -> CallToolResponse {
    CallToolResult::error(vec![ContentBlock::text(message)]).into()
}

// --- Schemas -----------------------------------------------------------------------------------

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(crate) struct ElicitationArgs {
    /// The message to show the user
    message: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(crate) struct SamplingArgs {
    /// The prompt to send to the LLM
    prompt: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(crate) struct RegionArgs {
    /// Where to run; a 2026-07-28 client mirrors it into the `Mcp-Param-Region` header
    #[schemars(extend("x-mcp-header" = "Region"))]
    region: String,
}

/// The input schema of `json_schema_2020_12_tool`, advertised verbatim.
fn json_schema_2020_12() -> Arc<JsonObject> {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    });
    match schema {
        serde_json::Value::Object(map) => Arc::new(map),
        _ => Arc::default(),
    }
}

fn user_details() -> ElicitationSchema {
    ElicitationSchema::builder()
        .required_string_property("username", |s| s.description("User's response"))
        .required_string_property("email", |s| s.description("User's email address"))
        .build_unchecked()
}

/// SEP-1034: a default for every primitive type.
fn defaulted_profile() -> ElicitationSchema {
    let status = EnumSchema::builder(strings(&["active", "inactive", "pending"]))
        .description("User status")
        .with_default("active")
        .map(|b| b.build());
    let mut builder = ElicitationSchema::builder()
        .property(
            "name",
            PrimitiveSchemaDefinition::String(
                StringSchema::new()
                    .description("User name")
                    .with_default("John Doe"),
            ),
        )
        .property(
            "age",
            PrimitiveSchemaDefinition::Integer(
                IntegerSchema::new()
                    .description("User age")
                    .with_default(30),
            ),
        )
        .property(
            "score",
            PrimitiveSchemaDefinition::Number(
                NumberSchema::new()
                    .description("User score")
                    .with_default(95.5),
            ),
        )
        .property(
            "verified",
            PrimitiveSchemaDefinition::Boolean(
                BooleanSchema::new()
                    .description("Verification status")
                    .with_default(true),
            ),
        );
    if let Ok(status) = status {
        builder = builder.optional_enum_schema("status", status);
    }
    builder.build_unchecked()
}

/// SEP-1330: every kind of enum.
fn enum_choices() -> ElicitationSchema {
    let untitled_single = EnumSchema::builder(strings(&["option1", "option2", "option3"]))
        .description("Untitled single-select")
        .build();
    let titled_single = EnumSchema::builder(strings(&["value1", "value2", "value3"]))
        .description("Titled single-select")
        .enum_titles(strings(&["First Option", "Second Option", "Third Option"]))
        .map(|b| b.build());
    let mut legacy = LegacyEnumSchema::new(strings(&["opt1", "opt2", "opt3"]));
    legacy.description = Some("Legacy titled single-select (enumNames)".into());
    legacy.enum_names = Some(strings(&["Option One", "Option Two", "Option Three"]));
    let untitled_multi = EnumSchema::builder(strings(&["option1", "option2", "option3"]))
        .description("Untitled multi-select")
        .multiselect()
        .build();
    let titled_multi = TitledMultiSelectEnumSchema::new(TitledItems::new(vec![
        ConstTitle::new("value1", "First Choice"),
        ConstTitle::new("value2", "Second Choice"),
        ConstTitle::new("value3", "Third Choice"),
    ]))
    .with_description("Titled multi-select");
    let mut builder = ElicitationSchema::builder()
        .optional_enum_schema("untitledSingle", untitled_single)
        .optional_enum_schema("legacyEnum", EnumSchema::Legacy(legacy))
        .optional_enum_schema("untitledMulti", untitled_multi)
        .optional_enum_schema(
            "titledMulti",
            EnumSchema::Multi(rmcp::model::MultiSelectEnumSchema::Titled(titled_multi)),
        );
    if let Ok(titled_single) = titled_single {
        builder = builder.optional_enum_schema("titledSingle", titled_single);
    }
    builder.build_unchecked()
}

fn strings(values: &[&str]) -> Vec<String> {
    values.iter().map(|v| v.to_string()).collect()
}

fn one_string(field: &str) -> ElicitationSchema {
    ElicitationSchema::builder()
        .required_string(field)
        .build_unchecked()
}

fn confirmation() -> ElicitationSchema {
    ElicitationSchema::builder()
        .required_bool_property("ok", |b| b)
        .build_unchecked()
}

fn name_question(message: &str) -> Question {
    Question::elicit(message, one_string("name"))
}

fn capital_question() -> Question {
    Question::sample("What is the capital of France?", 100)
}

// --- Asking, in both revisions -----------------------------------------------------------------

/// Asks one question (key `key`) and returns the answer, or the `input_required` result to
/// return (2026-07-28).
async fn ask_one(
    context: &RequestContext<RoleServer>,
    responses: Option<&rmcp::model::InputResponses>,
    key: &str,
    question: Question,
) -> Result<Result<serde_json::Value, InputRequiredResult>, ErrorData> {
    Ok(
        match ask(context, responses, vec![(key, question)], None).await? {
            Asked::Answered(mut answers) => Ok(answers.remove(key).unwrap_or_default()),
            Asked::Pending(pending) => Err(pending),
        },
    )
}

/// The confirmation round trip of the request-state tools: round 1 asks with a sealed
/// `requestState`; the retry must echo it, unaltered (else -32602).
async fn confirm_with_state(
    context: &RequestContext<RoleServer>,
    responses: Option<&rmcp::model::InputResponses>,
    state: Option<String>,
) -> Result<CallToolResponse, ErrorData> {
    let question = vec![(
        "confirm",
        Question::elicit("Please confirm", confirmation()),
    )];
    if !is_modern(context) {
        if let Asked::Answered(_) = ask(context, responses, question, None).await? {
            return Ok(text(
                "state-ok: no requestState needed on a 2025-11-25 session",
            ));
        }
        return Err(ErrorData::internal_error("unanswered question", None));
    }
    let sealed = seal(r#"{"step":"confirm"}"#);
    let Some(echoed) = state else {
        // First round: the answers of a retry that lost its state are not trusted either.
        return match ask(context, None, question, Some(sealed)).await? {
            Asked::Pending(pending) => Ok(pending.into()),
            Asked::Answered(_) => Err(ErrorData::internal_error("nothing was asked", None)),
        };
    };
    open(&echoed)?;
    match ask(context, responses, question, Some(sealed)).await? {
        Asked::Pending(pending) => Ok(pending.into()),
        Asked::Answered(answers) => {
            let ok = answers
                .get("confirm")
                .filter(|a| a["action"] == "accept")
                .and_then(|a| a["content"]["ok"].as_bool())
                .unwrap_or(false);
            Ok(text(format!("state-ok: requestState verified, ok={ok}")))
        }
    }
}

// --- The tools ---------------------------------------------------------------------------------

#[tool_router(vis = "pub(crate)")]
impl Conformance {
    #[tool(description = "Returns one text block.")]
    fn test_simple_text(&self) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::text(
            "This is a simple text response for testing.",
        )])
    }

    #[tool(description = "Returns one PNG image block.")]
    fn test_image_content(&self) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::image(media::png_base64(), "image/png")])
    }

    #[tool(description = "Returns one WAV audio block.")]
    fn test_audio_content(&self) -> CallToolResult {
        let audio = AudioContent::new(media::wav_base64(), "audio/wav");
        CallToolResult::success(vec![ContentBlock::Audio(audio)])
    }

    #[tool(description = "Returns one embedded text resource.")]
    fn test_embedded_resource(&self) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::resource(ResourceContents::text(
            "This is an embedded resource content.",
            "test://embedded-resource",
        ))])
    }

    #[tool(description = "Returns a text, an image and an embedded resource.")]
    fn test_multiple_content_types(&self) -> CallToolResult {
        CallToolResult::success(vec![
            ContentBlock::text("Multiple content types test:"),
            ContentBlock::image(media::png_base64(), "image/png"),
            ContentBlock::resource(
                ResourceContents::text(
                    r#"{"test":"data","value":123}"#,
                    "test://mixed-content-resource",
                )
                .with_mime_type("application/json"),
            ),
        ])
    }

    #[tool(description = "Always fails with isError: true.")]
    fn test_error_handling(&self) -> CallToolResult {
        CallToolResult::error(vec![ContentBlock::text(
            "This tool intentionally returns an error for testing",
        )])
    }

    #[tool(description = "Sends three info log notifications while it runs.")]
    async fn test_tool_with_logging(&self, context: RequestContext<RoleServer>) -> CallToolResult {
        self.log_steps(&context).await
    }

    #[tool(
        description = "Sends three info logs, if the request asked for logs (2026-07-28: _meta logLevel)."
    )]
    async fn test_logging_tool(&self, context: RequestContext<RoleServer>) -> CallToolResult {
        self.log_steps(&context).await
    }

    #[tool(description = "Reports progress 0, 50 and 100 of 100 when given a progress token.")]
    async fn test_tool_with_progress(&self, context: RequestContext<RoleServer>) -> CallToolResult {
        let token = context.meta.get_progress_token();
        for (i, (progress, message)) in [(0.0, "Started"), (50.0, "Half way"), (100.0, "Done")]
            .into_iter()
            .enumerate()
        {
            if i > 0 {
                tokio::time::sleep(STEP).await;
            }
            if let Some(token) = &token {
                let param = ProgressNotificationParam::new(token.clone(), progress)
                    .with_total(100.0)
                    .with_message(message);
                let _ = context.peer.notify_progress(param).await;
            }
        }
        CallToolResult::success(vec![ContentBlock::text(
            "Tool with progress executed successfully",
        )])
    }

    #[tool(description = "Asks the user, through the client, for a username and an email.")]
    async fn test_elicitation(
        &self,
        Parameters(args): Parameters<ElicitationArgs>,
        InputResponses(responses): InputResponses,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let question = Question::elicit(args.message, user_details());
        Ok(
            match ask_one(&context, responses.as_ref(), "answer", question).await? {
                Ok(answer) => text(format!("User response: {}", describe_elicitation(&answer))),
                Err(pending) => pending.into(),
            },
        )
    }

    #[tool(description = "Asks the user for fields that all have default values (SEP-1034).")]
    async fn test_elicitation_sep1034_defaults(
        &self,
        InputResponses(responses): InputResponses,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let question = Question::elicit(
            "Please review these details; every field has a default.",
            defaulted_profile(),
        );
        Ok(
            match ask_one(&context, responses.as_ref(), "answer", question).await? {
                Ok(answer) => text(format!(
                    "Elicitation completed: {}",
                    describe_elicitation(&answer)
                )),
                Err(pending) => pending.into(),
            },
        )
    }

    #[tool(description = "Asks the user to pick from every kind of enum (SEP-1330).")]
    async fn test_elicitation_sep1330_enums(
        &self,
        InputResponses(responses): InputResponses,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let question = Question::elicit("Please pick from each kind of list.", enum_choices());
        Ok(
            match ask_one(&context, responses.as_ref(), "answer", question).await? {
                Ok(answer) => text(format!(
                    "Elicitation completed: {}",
                    describe_elicitation(&answer)
                )),
                Err(pending) => pending.into(),
            },
        )
    }

    #[tool(description = "Asks the client to sample an LLM with the given prompt.")]
    async fn test_sampling(
        &self,
        Parameters(args): Parameters<SamplingArgs>,
        InputResponses(responses): InputResponses,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let question = Question::sample(args.prompt, 100);
        Ok(
            match ask_one(&context, responses.as_ref(), "reply", question).await? {
                Ok(answer) => text(format!("LLM response: {}", sampled_text(&answer))),
                Err(pending) => pending.into(),
            },
        )
    }

    #[tool(description = "Needs the client's sampling capability (-32021 without it).")]
    async fn test_missing_capability(
        &self,
        InputResponses(responses): InputResponses,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        Ok(
            match ask_one(&context, responses.as_ref(), "reply", capital_question()).await? {
                Ok(answer) => text(format!("LLM says: {}", sampled_text(&answer))),
                Err(pending) => pending.into(),
            },
        )
    }

    // --- Multi Round-Trip Requests with the keys the 2026-07-28 scenarios name ---------------

    #[tool(description = "Asks for your name (elicitation), then greets you.")]
    async fn test_input_required_result_elicitation(
        &self,
        InputResponses(responses): InputResponses,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let question = name_question("What is your name?");
        Ok(
            match ask_one(&context, responses.as_ref(), "user_name", question).await? {
                Ok(answer) => match accepted_field(&answer, "name") {
                    Ok(name) => text(format!("Hello, {name}!")),
                    Err(e) => tool_error(e),
                },
                Err(pending) => pending.into(),
            },
        )
    }

    #[tool(description = "Asks the client's LLM for the capital of France.")]
    async fn test_input_required_result_sampling(
        &self,
        InputResponses(responses): InputResponses,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let key = "capital_question";
        Ok(
            match ask_one(&context, responses.as_ref(), key, capital_question()).await? {
                Ok(answer) => text(format!("LLM says: {}", sampled_text(&answer))),
                Err(pending) => pending.into(),
            },
        )
    }

    #[tool(description = "Asks the client for its roots and lists them.")]
    async fn test_input_required_result_list_roots(
        &self,
        InputResponses(responses): InputResponses,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let key = "client_roots";
        Ok(
            match ask_one(&context, responses.as_ref(), key, Question::Roots).await? {
                Ok(answer) => text(format!("Roots: {}", root_uris(&answer))),
                Err(pending) => pending.into(),
            },
        )
    }

    #[tool(description = "Asks for a confirmation and checks the echoed requestState.")]
    async fn test_input_required_result_request_state(
        &self,
        InputResponses(responses): InputResponses,
        RequestState(state): RequestState,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        confirm_with_state(&context, responses.as_ref(), state).await
    }

    #[tool(description = "Asks for a confirmation; a tampered requestState is refused (-32602).")]
    async fn test_input_required_result_tampered_state(
        &self,
        InputResponses(responses): InputResponses,
        RequestState(state): RequestState,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        confirm_with_state(&context, responses.as_ref(), state).await
    }

    #[tool(description = "Asks for a name, a sampled greeting and the roots at once.")]
    async fn test_input_required_result_multiple_inputs(
        &self,
        InputResponses(responses): InputResponses,
        RequestState(state): RequestState,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if let Some(state) = &state {
            open(state)?;
        }
        let questions = vec![
            ("user_name", name_question("What is your name?")),
            ("greeting", Question::sample("Generate a greeting", 50)),
            ("client_roots", Question::Roots),
        ];
        let sealed = seal(r#"{"asked":["client_roots","greeting","user_name"]}"#);
        Ok(
            match ask(&context, responses.as_ref(), questions, Some(sealed)).await? {
                Asked::Pending(pending) => pending.into(),
                Asked::Answered(answers) => {
                    let get = |k: &str| answers.get(k).cloned().unwrap_or_default();
                    match accepted_field(&get("user_name"), "name") {
                        Ok(name) => text(format!(
                            "name={name}, greeting={}, roots={}",
                            sampled_text(&get("greeting")),
                            root_uris(&get("client_roots"))
                        )),
                        Err(e) => tool_error(e),
                    }
                }
            },
        )
    }

    #[tool(description = "Asks for a name, then a colour, over two rounds.")]
    async fn test_input_required_result_multi_round(
        &self,
        InputResponses(responses): InputResponses,
        RequestState(state): RequestState,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // Round 1 asks the name; round 2 keeps it in the (sealed) requestState and asks the
        // colour; round 3 answers.
        let known: Option<String> = match &state {
            Some(state) => serde_json::from_str::<serde_json::Value>(&open(state)?)
                .ok()
                .and_then(|s| s["name"].as_str().map(str::to_string)),
            None => None,
        };
        let name = match known {
            Some(name) => name,
            None => {
                let question = vec![("step1", name_question("Step 1: What is your name?"))];
                let sealed = seal(r#"{"round":1}"#);
                match ask(&context, responses.as_ref(), question, Some(sealed)).await? {
                    Asked::Pending(pending) => return Ok(pending.into()),
                    Asked::Answered(answers) => match accepted_field(&answers["step1"], "name") {
                        Ok(name) => name,
                        Err(e) => return Ok(tool_error(e)),
                    },
                }
            }
        };
        let question = vec![(
            "step2",
            Question::elicit("Step 2: What is your favorite color?", one_string("color")),
        )];
        let sealed = seal(&json!({"round": 2, "name": name}).to_string());
        // The first round's answers are not this round's.
        let responses = responses.filter(|_| state.is_some());
        Ok(
            match ask(&context, responses.as_ref(), question, Some(sealed)).await? {
                Asked::Pending(pending) => pending.into(),
                Asked::Answered(answers) => match accepted_field(&answers["step2"], "color") {
                    Ok(color) => text(format!("{name}'s favorite color is {color}.")),
                    Err(e) => tool_error(e),
                },
            },
        )
    }

    #[tool(description = "Asks only what the request's client capabilities allow.")]
    async fn test_input_required_result_capabilities(
        &self,
        InputResponses(responses): InputResponses,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let declared = context.client_capabilities();
        let questions: Vec<_> = [
            ("capital_question", capital_question()),
            ("user_name", name_question("What is your name?")),
            ("client_roots", Question::Roots),
        ]
        .into_iter()
        .filter(|(_, q)| q.allowed_by(declared.as_ref()))
        .collect();
        let sealed = seal(&json!({"asked": questions.len()}).to_string());
        Ok(
            match ask(&context, responses.as_ref(), questions, Some(sealed)).await? {
                Asked::Pending(pending) => pending.into(),
                Asked::Answered(answers) => text(format!(
                    "Answered {} question(s) the client can answer.",
                    answers.len()
                )),
            },
        )
    }

    #[tool(description = "Reports progress, then asks for a confirmation.")]
    async fn test_streaming_elicitation(
        &self,
        InputResponses(responses): InputResponses,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if let Some(token) = context.meta.get_progress_token() {
            let param = ProgressNotificationParam::new(token, 1.0)
                .with_total(2.0)
                .with_message("Waiting for confirmation");
            let _ = context.peer.notify_progress(param).await;
        }
        let question = Question::elicit("Please confirm", confirmation());
        Ok(
            match ask_one(&context, responses.as_ref(), "confirm", question).await? {
                Ok(answer) => text(format!("Confirmed: {}", answer)),
                Err(pending) => pending.into(),
            },
        )
    }

    // --- Hooks that change what is listed -----------------------------------------------------

    #[tool(description = "Adds or removes a tool, then announces tools/list_changed.")]
    fn test_trigger_tool_change(&self) -> CallToolResult {
        let added = self.toggle_tool("test_toggled_tool", Self::toggled_tool_router());
        let what = if added { "Added" } else { "Removed" };
        CallToolResult::success(vec![ContentBlock::text(format!(
            "{what} test_toggled_tool; announced notifications/tools/list_changed."
        ))])
    }

    #[tool(description = "Adds or removes a prompt, then announces prompts/list_changed.")]
    fn test_trigger_prompt_change(&self) -> CallToolResult {
        let added = self.toggle_prompt("test_toggled_prompt", Self::toggled_prompt_router());
        let what = if added { "Added" } else { "Removed" };
        CallToolResult::success(vec![ContentBlock::text(format!(
            "{what} test_toggled_prompt; announced notifications/prompts/list_changed."
        ))])
    }

    #[tool(
        description = "Announces that test://watched-resource changed, to whoever subscribed to it."
    )]
    fn test_trigger_resource_update(&self) -> CallToolResult {
        self.touch_resource(WATCHED);
        CallToolResult::success(vec![ContentBlock::text(format!(
            "Announced notifications/resources/updated for {WATCHED}."
        ))])
    }

    #[tool(
        description = "Echoes `region`, which a 2026-07-28 client mirrors into Mcp-Param-Region."
    )]
    fn test_custom_header(&self, Parameters(args): Parameters<RegionArgs>) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::text(format!("Region: {}", args.region))])
    }

    #[tool(
        description = "Meant to close its SSE stream mid-call (SEP-1699); rmcp gives a handler no way to, so it just answers late."
    )]
    async fn test_reconnection(&self) -> CallToolResult {
        tokio::time::sleep(STEP * 5).await;
        CallToolResult::success(vec![ContentBlock::text(
            "Reconnection test completed successfully",
        )])
    }

    #[tool(
        description = "Tool with JSON Schema 2020-12 features",
        input_schema = json_schema_2020_12()
    )]
    fn json_schema_2020_12_tool(&self, arguments: JsonObject) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::text(format!(
            "Received arguments: {}",
            serde_json::Value::Object(arguments)
        ))])
    }
}

/// The tool `test_trigger_tool_change` adds and removes.
#[tool_router(router = toggled_tool_router, vis = "pub(crate)")]
impl Conformance {
    #[tool(description = "Present every other test_trigger_tool_change.")]
    fn test_toggled_tool(&self) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::text("toggled")])
    }
}

impl Conformance {
    async fn log_steps(&self, context: &RequestContext<RoleServer>) -> CallToolResult {
        for (i, message) in [
            "Tool execution started",
            "Tool processing data",
            "Tool execution completed",
        ]
        .into_iter()
        .enumerate()
        {
            if i > 0 {
                tokio::time::sleep(STEP).await;
            }
            self.log_info(context, message).await;
        }
        CallToolResult::success(vec![ContentBlock::text(
            "Tool with logging executed successfully",
        )])
    }
}
