//! `completion/complete` for the `greet` prompt and the item resource template.

use serde_json::{Value, json};

use super::rpc::{RpcError, str_param};

const NAMES: [&str; 4] = ["alice", "albert", "bob", "carol"];
const ITEM_IDS: [&str; 3] = ["1", "2", "42"];

/// What a completion reference points at, once resolved against the catalogue.
pub(crate) enum Target {
    /// `ref/prompt` `greet`.
    GreetPrompt,
    /// `ref/resource` of the item template.
    ItemTemplate,
}

/// The `ref` of a completion request, unresolved.
pub(crate) enum Reference<'a> {
    Prompt(&'a str),
    Resource(&'a str),
}

/// Reads the `ref` of `params`.
pub(crate) fn reference(params: &Value) -> Result<Reference<'_>, RpcError> {
    let reference = params.get("ref").unwrap_or(&Value::Null);
    match str_param(reference, "type")? {
        "ref/prompt" => Ok(Reference::Prompt(str_param(reference, "name")?)),
        "ref/resource" => Ok(Reference::Resource(str_param(reference, "uri")?)),
        other => Err(RpcError::invalid_params(format!(
            "unknown ref type {other}"
        ))),
    }
}

/// The completion result for `target`, filtered by the argument's typed prefix.
pub(crate) fn complete(target: Target, params: &Value) -> Result<Value, RpcError> {
    let argument = params.get("argument").unwrap_or(&Value::Null);
    let name = str_param(argument, "name")?;
    let typed = argument.get("value").and_then(Value::as_str).unwrap_or("");
    let candidates: &[&str] = match (target, name) {
        (Target::GreetPrompt, "name") => &NAMES,
        (Target::ItemTemplate, "id") => &ITEM_IDS,
        _ => &[],
    };
    let values: Vec<&str> = candidates
        .iter()
        .copied()
        .filter(|v| v.starts_with(typed))
        .collect();
    Ok(json!({ "completion": { "values": values, "total": values.len(), "hasMore": false } }))
}
