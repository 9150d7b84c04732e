//! The conformance prompts: plain, with arguments, with an embedded resource, with an image;
//! 2026-07-28 adds the one in `diagnostics` that asks its client for input first.

use serde_json::{Value, json};

use super::content::{embedded_text, image, text};
use super::diagnostics;
use super::era::Era;
use super::exchange::Exchange;
use super::mrtr::Interrupt;
use crate::protocol::rpc::{RpcError, str_param};

/// `prompts/list` for `era`.
pub(crate) fn list(era: Era) -> Value {
    let mut prompts = shared();
    if era == Era::Modern {
        prompts.push(diagnostics::prompt());
    }
    json!({ "prompts": prompts })
}

fn shared() -> Vec<Value> {
    let argument = |name: &str, description: &str| json!({ "name": name, "description": description, "required": true });
    vec![
        json!({ "name": "test_simple_prompt", "description": "A simple prompt without arguments" }),
        json!({
            "name": "test_prompt_with_arguments",
            "description": "A prompt with two required arguments",
            "arguments": [
                argument("arg1", "First test argument"),
                argument("arg2", "Second test argument")
            ]
        }),
        json!({
            "name": "test_prompt_with_embedded_resource",
            "description": "A prompt embedding the given resource",
            "arguments": [argument("resourceUri", "URI of the resource to embed")]
        }),
        json!({ "name": "test_prompt_with_image", "description": "A prompt holding an image" }),
    ]
}

/// `prompts/get`.
///
/// # Errors
///
/// -32602 for an unknown prompt or a missing required argument; 2026-07-28: see
/// [`diagnostics::get_prompt`].
pub(crate) async fn get(params: &Value, exchange: &Exchange<'_>) -> Result<Value, Interrupt> {
    let name = str_param(params, "name")?;
    if exchange.era() == Era::Modern
        && let Some(result) = diagnostics::get_prompt(name, exchange).await
    {
        return result;
    }
    let args = params.get("arguments").unwrap_or(&Value::Null);
    let messages = match name {
        "test_simple_prompt" => vec![user(text("This is a simple prompt for testing."))],
        "test_prompt_with_arguments" => {
            let (arg1, arg2) = (argument(args, "arg1")?, argument(args, "arg2")?);
            vec![user(text(&format!(
                "Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"
            )))]
        }
        "test_prompt_with_embedded_resource" => {
            let uri = argument(args, "resourceUri")?;
            vec![
                user(embedded_text(
                    uri,
                    "text/plain",
                    "Embedded resource content for testing.",
                )),
                user(text("Please process the embedded resource above.")),
            ]
        }
        "test_prompt_with_image" => {
            vec![user(image()), user(text("Please analyze the image above."))]
        }
        other => return Err(RpcError::invalid_params(format!("Unknown prompt: {other}")).into()),
    };
    Ok(json!({ "messages": messages }))
}

/// A `user` prompt message holding `content`.
pub(crate) fn user(content: Value) -> Value {
    json!({ "role": "user", "content": content })
}

fn argument<'a>(args: &'a Value, name: &str) -> Result<&'a str, RpcError> {
    args.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params(format!("missing required argument `{name}`")))
}
