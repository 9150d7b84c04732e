//! The MCP methods every edge serves the same way: lists (paginated) and calls routed through the
//! core. Session-specific methods (initialize, logging/setLevel) stay with their edge.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value, json};
use vmcp_backend::CallSink;
use vmcp_core::{Caller, Catalog, CoreError, Gateway, Identity};
use vmcp_proto::codes;
use vmcp_proto::era::Era;

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
    /// The revision family of the client's request.
    pub(crate) era: Era,
    /// The client's request headers passed through to backends.
    pub(crate) forwarded: Option<&'a http::HeaderMap>,
}

impl Ctx<'_> {
    fn caller(&self) -> Caller<'_> {
        Caller {
            identity: self.identity,
            session: self.session,
            sink: self.sink,
            era: Some(self.era),
            headers: self.forwarded,
        }
    }
}

/// What a request produced: a value, or a page of a list that borrows the catalog's items (a page of
/// 1,000 tools is serialised straight from the catalog instead of being copied out of it first).
pub(crate) enum Reply<'c> {
    Value(Value),
    Page(ListPage<'c>),
}

impl Reply<'_> {
    /// The reply as a JSON value (a page's items are copied).
    pub(crate) fn into_value(self) -> Value {
        match self {
            Reply::Value(v) => v,
            Reply::Page(p) => serde_json::to_value(&p).unwrap_or(Value::Null),
        }
    }
}

impl Serialize for Reply<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Reply::Value(v) => v.serialize(s),
            Reply::Page(p) => p.serialize(s),
        }
    }
}

/// One page of a list: `{field: [items], nextCursor?}` plus, for Modern clients, the envelope.
pub(crate) struct ListPage<'c> {
    field: &'static str,
    items: Vec<&'c Value>,
    next: Option<String>,
    envelope: Map<String, Value>,
}

impl ListPage<'_> {
    /// Adds the envelope's fields (`resultType`, cache hints, `_meta`) next to the items.
    pub(crate) fn with_envelope(mut self, envelope: Map<String, Value>) -> Self {
        self.envelope = envelope;
        self
    }
}

impl Serialize for ListPage<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        map.serialize_entry(self.field, &self.items)?;
        if let Some(next) = &self.next {
            map.serialize_entry("nextCursor", next)?;
        }
        for (k, v) in &self.envelope {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// Serves one request.
pub(crate) async fn dispatch<'c>(
    gw: &Gateway,
    ctx: &Ctx<'c>,
    method: &str,
    params: Option<Value>,
) -> Result<Reply<'c>, Failure> {
    let params = params.unwrap_or_else(|| Value::Object(Map::new()));
    crate::audit::backend(ctx.catalog, method, &params);
    let value = match method {
        "ping" => json!({}),
        "tools/list" => {
            let items = gw.list_tools(ctx.identity, ctx.catalog);
            return page(ctx, &params, "tools", items).map(Reply::Page);
        }
        "resources/list" => {
            let items = gw.list_resources(ctx.identity, ctx.catalog);
            return page(ctx, &params, "resources", items).map(Reply::Page);
        }
        "resources/templates/list" => {
            let items = gw.list_templates(ctx.identity, ctx.catalog);
            return page(ctx, &params, "resourceTemplates", items).map(Reply::Page);
        }
        "prompts/list" => {
            let items = gw.list_prompts(ctx.identity, ctx.catalog);
            return page(ctx, &params, "prompts", items).map(Reply::Page);
        }
        "tools/call" => match gw.call_tool(&ctx.caller(), ctx.catalog, params).await {
            // ToolHive's 2025-11-25 shape: a tool result the model can read, not an error.
            Err(CoreError::RateLimited { retry_after }) if ctx.era == Era::Legacy => {
                crate::errors::rate_limited_tool_result(retry_after)
            }
            result => plain(result?),
        },
        "resources/read" => plain(gw.read_resource(&ctx.caller(), ctx.catalog, params).await?),
        "prompts/get" => plain(gw.get_prompt(&ctx.caller(), ctx.catalog, params).await?),
        "completion/complete" => plain(gw.complete(&ctx.caller(), ctx.catalog, params).await?),
        _ => {
            return Err(Failure::rpc(
                codes::METHOD_NOT_FOUND,
                format!("Method not found: {method}"),
            ));
        }
    };
    Ok(Reply::Value(value))
}

/// Lists and `server/discover` draw from the shared and per-caller rate limits, unlike in
/// ToolHive: each is a fan-out over the catalog (and, for a new view, over backends) that would
/// otherwise be free to repeat. Tool calls are metered in the core, by tool name.
///
/// Each edge calls this as a request arrives, before it fetches the catalog, so a caller out of
/// tokens costs no catalog work (`dispatch` itself cannot: the Modern edge fetches the catalog
/// before calling it). A list has no result shape for a refusal, so both revisions get the
/// JSON-RPC error `429` with `data.retryAfterSeconds`.
pub(crate) async fn meter(gw: &Gateway, identity: &Identity, method: &str) -> Result<(), Failure> {
    if matches!(
        method,
        "tools/list"
            | "resources/list"
            | "resources/templates/list"
            | "prompts/list"
            | "server/discover"
    ) {
        gw.rate_limit_request(identity).await?;
    }
    Ok(())
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

/// One page of a list (in its advertised order), with `nextCursor` while more remain.
pub(crate) fn page<'c>(
    ctx: &Ctx<'_>,
    params: &Value,
    field: &'static str,
    items: Vec<&'c Value>,
) -> Result<ListPage<'c>, Failure> {
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
    Ok(ListPage {
        field,
        items: items.to_vec(),
        next: next.map(|n| cursor::encode(field, &n)),
        envelope: Map::new(),
    })
}

fn key_of<'v>(v: &&'v Value, key: &str) -> &'v str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_serialises_its_borrowed_items_cursor_and_envelope() {
        let items = [json!({"name": "a", "x": 1}), json!({"name": "b"})];
        let page = ListPage {
            field: "tools",
            items: items.iter().collect(),
            next: Some("cur".into()),
            envelope: Map::new(),
        };
        assert_eq!(
            serde_json::to_value(&page).unwrap(),
            json!({"tools": [{"name": "a", "x": 1}, {"name": "b"}], "nextCursor": "cur"})
        );
        let envelope = json!({"resultType": "complete", "ttlMs": 0, "_meta": {"k": true}});
        let Value::Object(envelope) = envelope else {
            unreachable!()
        };
        let stamped = Reply::Page(page.with_envelope(envelope)).into_value();
        assert_eq!(
            stamped,
            json!({"tools": [{"name": "a", "x": 1}, {"name": "b"}], "nextCursor": "cur",
                   "resultType": "complete", "ttlMs": 0, "_meta": {"k": true}})
        );
    }
}
