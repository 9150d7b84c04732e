//! The prompts the suite's server scenarios get, on rmcp's `#[prompt_router]`, and the one that
//! asks the client first (2026-07-28 `input_required`), which the router cannot serve.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    ContentBlock, ElicitationSchema, GetPromptRequestParams, GetPromptResponse, GetPromptResult,
    Prompt, PromptMessage, ResourceContents, Role,
};
use rmcp::schemars::JsonSchema;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, prompt, prompt_router};
use serde::Deserialize;

use crate::ask::{Asked, Question, accepted_field, ask};
use crate::media;
use crate::server::Conformance;

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(crate) struct TwoArgs {
    /// First test argument
    arg1: String,
    /// Second test argument
    arg2: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(crate) struct EmbedArgs {
    /// URI of the resource to embed
    #[serde(rename = "resourceUri")]
    resource_uri: String,
}

#[prompt_router(vis = "pub(crate)")]
impl Conformance {
    #[prompt(description = "A simple prompt without arguments")]
    fn test_simple_prompt(&self) -> Vec<PromptMessage> {
        vec![PromptMessage::new_text(
            Role::User,
            "This is a simple prompt for testing.",
        )]
    }

    #[prompt(description = "A prompt with two required arguments")]
    fn test_prompt_with_arguments(
        &self,
        Parameters(args): Parameters<TwoArgs>,
    ) -> Vec<PromptMessage> {
        vec![PromptMessage::new_text(
            Role::User,
            format!(
                "Prompt with arguments: arg1='{}', arg2='{}'",
                args.arg1, args.arg2
            ),
        )]
    }

    #[prompt(description = "A prompt embedding the given resource")]
    fn test_prompt_with_embedded_resource(
        &self,
        Parameters(args): Parameters<EmbedArgs>,
    ) -> Vec<PromptMessage> {
        let resource =
            ResourceContents::text("Embedded resource content for testing.", args.resource_uri);
        vec![
            PromptMessage::new(Role::User, ContentBlock::resource(resource)),
            PromptMessage::new_text(Role::User, "Please process the embedded resource above."),
        ]
    }

    #[prompt(description = "A prompt holding an image")]
    fn test_prompt_with_image(&self) -> Vec<PromptMessage> {
        vec![
            PromptMessage::new(
                Role::User,
                ContentBlock::image(media::png_base64(), "image/png"),
            ),
            PromptMessage::new_text(Role::User, "Please analyze the image above."),
        ]
    }
}

/// The prompt `test_trigger_prompt_change` adds and removes.
#[prompt_router(router = "toggled_prompt_router", vis = "pub(crate)")]
impl Conformance {
    #[prompt(description = "Present every other test_trigger_prompt_change")]
    fn test_toggled_prompt(&self) -> Vec<PromptMessage> {
        vec![PromptMessage::new_text(Role::User, "toggled")]
    }
}

/// input-required-result-non-tool-request: `prompts/get` may answer `input_required` too.
///
/// Served by hand: rmcp's `PromptContext` (what a `#[prompt]` fn can extract from) carries the
/// name, arguments and request context but not the request's `inputResponses`/`requestState`,
/// and `#[prompt_handler]` drops them, so a routed prompt never sees the client's answers.
pub(crate) const INPUT_REQUIRED_PROMPT: &str = "test_input_required_result_prompt";

pub(crate) fn input_required_prompt() -> Prompt {
    Prompt::new(
        INPUT_REQUIRED_PROMPT,
        Some("Asks, through the client, what context to use before it is rendered"),
        None,
    )
}

pub(crate) async fn input_required(
    request: GetPromptRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<GetPromptResponse, ErrorData> {
    let schema = ElicitationSchema::builder()
        .required_string("context")
        .build_unchecked();
    let question = vec![(
        "user_context",
        Question::elicit("What context should the prompt use?", schema),
    )];
    match ask(&context, request.input_responses.as_ref(), question, None).await? {
        Asked::Pending(pending) => Ok(pending.into()),
        Asked::Answered(answers) => {
            let given = accepted_field(&answers["user_context"], "context")
                .map_err(|e| ErrorData::invalid_params(e, None))?;
            let message =
                PromptMessage::new_text(Role::User, format!("Answer using this context: {given}"));
            Ok(GetPromptResult::new(vec![message]).into())
        }
    }
}
