//! Cursor pagination shared by every `*/list` method (page size 50).
//!
//! Cursors are opaque to clients; here they encode the offset of the next page.

use serde_json::{Map, Value};

use super::rpc::RpcError;

/// Items per page of every list method.
pub(crate) const PAGE_SIZE: usize = 50;

const CURSOR_PREFIX: &str = "fixture-page-";

/// The page of `items` that `params.cursor` points at, as `{ key: [...], nextCursor? }`.
pub(crate) fn paginate(items: &[Value], params: &Value, key: &str) -> Result<Value, RpcError> {
    let start = match params.get("cursor") {
        None | Some(Value::Null) => 0,
        Some(cursor) => decode(cursor)
            .filter(|offset| *offset <= items.len())
            .ok_or_else(|| RpcError::invalid_params(format!("invalid cursor {cursor}")))?,
    };
    let end = (start + PAGE_SIZE).min(items.len());
    let mut page = Map::new();
    page.insert(key.to_owned(), Value::Array(items[start..end].to_vec()));
    if end < items.len() {
        page.insert(
            "nextCursor".to_owned(),
            Value::String(format!("{CURSOR_PREFIX}{end}")),
        );
    }
    Ok(Value::Object(page))
}

fn decode(cursor: &Value) -> Option<usize> {
    cursor.as_str()?.strip_prefix(CURSOR_PREFIX)?.parse().ok()
}
