//! JSON to Starlark and back, ours rather than starlark's (ToolHive's `GoToStarlark` and
//! `StarlarkToGo`), and the reading of an inner tool result (ToolHive's `ParseToolResult`).

use serde_json::{Map, Number, Value as Json};
use starlark::collections::SmallMap;
use starlark::values::dict::{AllocDict, DictRef};
use starlark::values::float::StarlarkFloat;
use starlark::values::list::{AllocList, ListRef};
use starlark::values::tuple::TupleRef;
use starlark::values::{Heap, UnpackValue, Value};

/// Deepest value converted either way, counting the top-level value as level 1: a list or dict
/// may sit at level 127 at most, which is also the most serde_json's reader accepts.
pub const MAX_DEPTH: usize = 128;

/// Largest whole float turned into an int (2^53).
const MAX_SAFE_FLOAT: f64 = 9_007_199_254_740_992.0;

fn too_deep() -> String {
    format!("value is nested more than {MAX_DEPTH} levels deep")
}

/// A JSON value as a Starlark value: objects become dicts in key order, and a whole float below
/// 2^53 becomes an int.
pub(crate) fn to_starlark<'v>(heap: &'v Heap, value: &Json) -> Result<Value<'v>, String> {
    to_starlark_at(heap, value, 1)
}

fn to_starlark_at<'v>(heap: &'v Heap, value: &Json, depth: usize) -> Result<Value<'v>, String> {
    Ok(match value {
        Json::Null => Value::new_none(),
        Json::Bool(b) => Value::new_bool(*b),
        Json::Number(n) => number_to_starlark(heap, n),
        Json::String(s) => heap.alloc(s.as_str()),
        Json::Array(items) => {
            if depth >= MAX_DEPTH {
                return Err(too_deep());
            }
            let items = items
                .iter()
                .map(|item| to_starlark_at(heap, item, depth + 1))
                .collect::<Result<Vec<_>, _>>()?;
            heap.alloc(AllocList(items))
        }
        Json::Object(map) => {
            if depth >= MAX_DEPTH {
                return Err(too_deep());
            }
            let pairs = map
                .iter()
                .map(|(k, v)| Ok((k.as_str(), to_starlark_at(heap, v, depth + 1)?)))
                .collect::<Result<Vec<_>, String>>()?;
            heap.alloc(AllocDict(pairs))
        }
    })
}

fn number_to_starlark<'v>(heap: &'v Heap, n: &Number) -> Value<'v> {
    if let Some(i) = n.as_i64() {
        heap.alloc(i)
    } else if let Some(u) = n.as_u64() {
        heap.alloc(u)
    } else {
        let f = n.as_f64().unwrap_or(f64::NAN);
        if f.fract() == 0.0 && f.abs() < MAX_SAFE_FLOAT {
            // Exact: a whole number below 2^53 fits an i64 without rounding.
            #[allow(clippy::cast_possible_truncation)]
            heap.alloc(f as i64)
        } else {
            heap.alloc(f)
        }
    }
}

/// A Starlark value as JSON: `None` is null, an int beyond i64 a decimal string, a tuple an
/// array, a non-string dict key its `str()`, and anything else (function, range, set, a float
/// that is not finite) its `str()`.
pub(crate) fn to_json(value: Value) -> Result<Json, String> {
    to_json_at(value, 1)
}

fn to_json_at(value: Value, depth: usize) -> Result<Json, String> {
    if value.is_none() {
        return Ok(Json::Null);
    }
    if let Some(b) = value.unpack_bool() {
        return Ok(Json::Bool(b));
    }
    if let Some(s) = value.unpack_str() {
        return Ok(Json::String(s.to_owned()));
    }
    match value.get_type() {
        "int" => {
            return Ok(match i64::unpack_value(value).ok().flatten() {
                Some(i) => Json::Number(i.into()),
                None => Json::String(value.to_str()),
            });
        }
        "float" => {
            if let Some(n) = StarlarkFloat::unpack_value(value)
                .ok()
                .flatten()
                .and_then(|f| Number::from_f64(f.0))
            {
                return Ok(Json::Number(n));
            }
        }
        _ => {}
    }
    let items = ListRef::from_value(value)
        .map(|l| l.content())
        .or_else(|| TupleRef::from_value(value).map(|t| t.content()));
    if let Some(items) = items {
        if depth >= MAX_DEPTH {
            return Err(too_deep());
        }
        return items
            .iter()
            .map(|item| to_json_at(*item, depth + 1))
            .collect::<Result<Vec<_>, _>>()
            .map(Json::Array);
    }
    if let Some(dict) = DictRef::from_value(value) {
        if depth >= MAX_DEPTH {
            return Err(too_deep());
        }
        let mut map = Map::new();
        for (k, v) in dict.iter() {
            let key = k.unpack_str().map_or_else(|| k.to_str(), str::to_owned);
            map.insert(key, to_json_at(v, depth + 1)?);
        }
        return Ok(Json::Object(map));
    }
    Ok(Json::String(value.to_str()))
}

/// The JSON object of a tool's arguments: positional arguments as `arg0`, `arg1`, ... and keyword
/// arguments by name (ToolHive's `argsToGoMap`).
pub(crate) fn arguments_to_json<'v>(
    positional: &[Value<'v>],
    named: &SmallMap<String, Value<'v>>,
) -> Result<Json, String> {
    let mut map = Map::new();
    for (i, value) in positional.iter().enumerate() {
        map.insert(format!("arg{i}"), to_json(*value)?);
    }
    for (name, value) in named.iter() {
        map.insert(name.clone(), to_json(*value)?);
    }
    Ok(Json::Object(map))
}

/// What a script sees of a tool's `CallToolResult` (ToolHive's `ParseToolResult`):
///
/// - `isError`: an error whose message is the first text item, or `tool execution error`;
/// - `structuredContent`: that value, or its only field `result`;
/// - no content: null;
/// - otherwise the first text item, JSON-parsed if it parses, else the string.
pub fn parse_tool_result(result: &Json) -> Result<Json, String> {
    let first_text = || {
        result
            .get("content")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .find(|item| item.get("type").and_then(Json::as_str) == Some("text"))
            .and_then(|item| item.get("text").and_then(Json::as_str))
    };
    if result.get("isError").and_then(Json::as_bool) == Some(true) {
        return Err(first_text().unwrap_or("tool execution error").to_owned());
    }
    match result.get("structuredContent") {
        None | Some(Json::Null) => {}
        Some(Json::Object(map)) if map.len() == 1 && map.contains_key("result") => {
            return Ok(map.get("result").cloned().unwrap_or(Json::Null));
        }
        Some(structured) => return Ok(structured.clone()),
    }
    Ok(match first_text() {
        None => Json::Null,
        Some(text) => serde_json::from_str(text).unwrap_or_else(|_| Json::String(text.to_owned())),
    })
}
