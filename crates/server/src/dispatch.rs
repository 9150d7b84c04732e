//! The MCP methods every edge serves the same way: lists (paginated) and calls routed through the
//! core. Session-specific methods (initialize, logging/setLevel) stay with their edge.

use serde_json::{Map, Value, json};
use vmcp_backend::CallSink;
use vmcp_core::{Caller, Catalog, Gateway, Identity};
use vmcp_proto::codes;

use vmcp_proto::cursor;

use crate::errors::Failure;

/// Who is asking and what they see.
pub(crate) struct Ctx<'a> {
    pub(crate) identity: &'a Identity,
    pub(crate) catalog: &'a Catalog,
    /// The client session, for backends with per-session connections.
    pub(crate) session: Option<&'a str>,
    pub(crate) page_size: usize,
    /// Receives what the backend sends during the request, when the edge can relay it.
    pub(crate) sink: Option<&'a CallSink>,
}

impl Ctx<'_> {
    fn caller(&self) -> Caller<'_> {
        Caller {
            identity: self.identity,
            session: self.session,
            sink: self.sink,
        }
    }
}

/// Serves one request.
pub(crate) async fn dispatch(
    gw: &Gateway,
    ctx: &Ctx<'_>,
    method: &str,
    params: Option<Value>,
) -> Result<Value, Failure> {
    let params = params.unwrap_or_else(|| Value::Object(Map::new()));
    match method {
        "ping" => Ok(json!({})),
        "tools/list" => page(
            ctx,
            &params,
            "tools",
            gw.list_tools(ctx.identity, ctx.catalog),
        ),
        "resources/list" => page(
            ctx,
            &params,
            "resources",
            gw.list_resources(ctx.identity, ctx.catalog),
        ),
        "resources/templates/list" => page(
            ctx,
            &params,
            "resourceTemplates",
            gw.list_templates(ctx.identity, ctx.catalog),
        ),
        "prompts/list" => page(
            ctx,
            &params,
            "prompts",
            gw.list_prompts(ctx.identity, ctx.catalog),
        ),
        "tools/call" => Ok(plain(
            gw.call_tool(&ctx.caller(), ctx.catalog, params).await?,
        )),
        "resources/read" => Ok(plain(
            gw.read_resource(&ctx.caller(), ctx.catalog, params).await?,
        )),
        "prompts/get" => Ok(plain(
            gw.get_prompt(&ctx.caller(), ctx.catalog, params).await?,
        )),
        "completion/complete" => Ok(plain(
            gw.complete(&ctx.caller(), ctx.catalog, params).await?,
        )),
        _ => Err(Failure::rpc(
            codes::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )),
    }
}

/// A backend result without the 2026-07-28 envelope fields, so a session-based client sees the
/// shape of its own revision (the Modern edge stamps its own envelope on top). An
/// `input_required` result keeps its `resultType`: it is not an ordinary answer.
fn plain(mut result: Value) -> Value {
    if let Some(obj) = result.as_object_mut() {
        if obj.get("resultType").and_then(Value::as_str) == Some("complete") {
            obj.remove("resultType");
        }
        obj.remove("ttlMs");
        obj.remove("cacheScope");
    }
    result
}

/// One page of a list (items sorted by key), with `nextCursor` while more remain.
pub(crate) fn page(
    ctx: &Ctx<'_>,
    params: &Value,
    field: &str,
    items: Vec<&Value>,
) -> Result<Value, Failure> {
    let key_name = match field {
        "resources" => "uri",
        "resourceTemplates" => "uriTemplate",
        _ => "name",
    };
    let from = match params.get("cursor") {
        None | Some(Value::Null) => None,
        Some(Value::String(c)) if c.is_empty() => None,
        Some(Value::String(c)) => Some(
            cursor::decode(field, c)
                .ok_or_else(|| Failure::rpc(codes::INVALID_PARAMS, "invalid cursor"))?,
        ),
        Some(_) => {
            return Err(Failure::rpc(
                codes::INVALID_PARAMS,
                "cursor must be a string",
            ));
        }
    };
    let (items, next) = cursor::page(
        &items,
        |v| key_of(v, key_name),
        from.as_ref(),
        ctx.page_size,
    );
    let mut out = Map::with_capacity(2);
    out.insert(
        field.to_string(),
        Value::Array(items.iter().map(|v| (*v).clone()).collect()),
    );
    if let Some(next) = next {
        out.insert(
            "nextCursor".into(),
            Value::String(cursor::encode(field, &next)),
        );
    }
    Ok(Value::Object(out))
}

fn key_of<'v>(v: &&'v Value, key: &str) -> &'v str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}
