//! The fixture's one prompt, `greet`.

use serde_json::{Value, json};

use super::page::paginate;
use super::rpc::{RpcError, str_param};

/// The prompt catalogue of one fixture.
pub(crate) struct Prompts {
    server_name: String,
    prompts: Vec<Value>,
}

impl Prompts {
    pub(crate) fn new(server_name: &str) -> Self {
        let prompts = vec![json!({
            "name": "greet",
            "title": "Greet",
            "description": "Greets someone by name.",
            "arguments": [{ "name": "name", "description": "Who to greet", "required": true }]
        })];
        Self {
            server_name: server_name.to_owned(),
            prompts,
        }
    }

    /// `prompts/list`.
    pub(crate) fn list(&self, params: &Value) -> Result<Value, RpcError> {
        paginate(&self.prompts, params, "prompts")
    }

    /// `prompts/get`.
    pub(crate) fn get(&self, params: &Value) -> Result<Value, RpcError> {
        let prompt = str_param(params, "name")?;
        if prompt != "greet" {
            return Err(RpcError::invalid_params(format!(
                "Unknown prompt: {prompt}"
            )));
        }
        let who = params
            .get("arguments")
            .and_then(|args| args.get("name"))
            .and_then(Value::as_str)
            .ok_or_else(|| RpcError::invalid_params("missing required argument `name`"))?;
        let text = format!("Hello, {who}! (from {})", self.server_name);
        Ok(json!({
            "description": "A greeting",
            "messages": [{ "role": "user", "content": { "type": "text", "text": text } }]
        }))
    }
}
