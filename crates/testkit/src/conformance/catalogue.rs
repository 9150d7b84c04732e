//! The methods both eras answer, written once: tools, resources, prompts and completions.
//! Each edge adds only its own methods around this (2025-11-25: `initialize`, `ping`,
//! `logging/setLevel`, `resources/subscribe`; 2026-07-28: `server/discover`,
//! `subscriptions/listen`) and its own wire envelope.

use serde_json::Value;

use super::exchange::Exchange;
use super::mrtr::Interrupt;
use super::{completion, prompts, resources, tools};
use crate::protocol::rpc::RpcError;

/// Answers `method` with `params` for the client on the other end of `exchange`.
///
/// # Errors
///
/// -32601 for a method outside the catalogue; otherwise what the method's module says.
pub(crate) async fn call(
    method: &str,
    params: &Value,
    exchange: &Exchange<'_>,
) -> Result<Value, Interrupt> {
    let era = exchange.era();
    match method {
        "tools/list" => Ok(tools::list(era)),
        "tools/call" => tools::call(params, exchange).await,
        "resources/list" => Ok(resources::list()),
        "resources/templates/list" => Ok(resources::templates()),
        "resources/read" => Ok(resources::read(params)?),
        "prompts/list" => Ok(prompts::list(era)),
        "prompts/get" => prompts::get(params, exchange).await,
        "completion/complete" => Ok(completion::complete(params)?),
        _ => Err(RpcError::method_not_found(method).into()),
    }
}
