//! `completion/complete` for the arguments of `test_prompt_with_arguments` and the `{id}` of
//! the resource template.

use serde_json::{Value, json};

use crate::protocol::rpc::{RpcError, str_param};

const ARG_VALUES: [&str; 4] = ["paris", "park", "party", "test"];
const IDS: [&str; 3] = ["1", "2", "123"];

/// `completion/complete`.
///
/// # Errors
///
/// -32602 for an unknown reference or a request without `ref` or `argument.name`.
pub(crate) fn complete(params: &Value) -> Result<Value, RpcError> {
    let reference = params.get("ref").unwrap_or(&Value::Null);
    let argument = params.get("argument").unwrap_or(&Value::Null);
    let name = str_param(argument, "name")?;
    let typed = argument.get("value").and_then(Value::as_str).unwrap_or("");
    let candidates: &[&str] = match (str_param(reference, "type")?, name) {
        ("ref/prompt", "arg1" | "arg2")
            if str_param(reference, "name")? == "test_prompt_with_arguments" =>
        {
            &ARG_VALUES
        }
        ("ref/resource", "id") if str_param(reference, "uri")? == "test://template/{id}/data" => {
            &IDS
        }
        (kind, _) => {
            return Err(RpcError::invalid_params(format!(
                "nothing to complete for {kind} argument {name}"
            )));
        }
    };
    let values: Vec<&str> = candidates
        .iter()
        .copied()
        .filter(|value| value.starts_with(typed))
        .collect();
    Ok(json!({ "completion": { "values": values, "total": values.len(), "hasMore": false } }))
}
