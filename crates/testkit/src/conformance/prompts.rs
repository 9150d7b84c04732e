//! The conformance prompts: plain, with arguments, with an embedded resource, with an image.

use serde_json::{Value, json};

use super::content::{embedded_text, image, text};
use crate::protocol::rpc::{RpcError, str_param};

/// `prompts/list`.
pub(crate) fn list() -> Value {
    let argument = |name: &str, description: &str| json!({ "name": name, "description": description, "required": true });
    json!({ "prompts": [
        { "name": "test_simple_prompt", "description": "A simple prompt without arguments" },
        {
            "name": "test_prompt_with_arguments",
            "description": "A prompt with two required arguments",
            "arguments": [
                argument("arg1", "First test argument"),
                argument("arg2", "Second test argument")
            ]
        },
        {
            "name": "test_prompt_with_embedded_resource",
            "description": "A prompt embedding the given resource",
            "arguments": [argument("resourceUri", "URI of the resource to embed")]
        },
        { "name": "test_prompt_with_image", "description": "A prompt holding an image" }
    ] })
}

/// `prompts/get`.
///
/// # Errors
///
/// -32602 for an unknown prompt or a missing required argument.
pub(crate) fn get(params: &Value) -> Result<Value, RpcError> {
    let name = str_param(params, "name")?;
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
        other => return Err(RpcError::invalid_params(format!("Unknown prompt: {other}"))),
    };
    Ok(json!({ "messages": messages }))
}

fn user(content: Value) -> Value {
    json!({ "role": "user", "content": content })
}

fn argument<'a>(args: &'a Value, name: &str) -> Result<&'a str, RpcError> {
    args.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params(format!("missing required argument `{name}`")))
}
