//! Between templates (which produce strings) and tools (which take and give JSON): rendered
//! arguments coerced to the target tool's input schema, and a tool result turned into the
//! step output that later templates read.

use serde_json::{Map, Number, Value};

/// Coerces strings in `v` to the types `schema` declares (`integer`, `number`, `boolean`),
/// recursing into object properties and array items. A string that does not parse stays a
/// string, and a string is never parsed into an object or array (as in ToolHive).
pub(crate) fn to_schema(v: Value, schema: &Value) -> Value {
    match v {
        Value::String(s) => match schema.get("type").and_then(Value::as_str) {
            Some("integer") => s
                .parse::<i64>()
                .map(|n| Value::Number(n.into()))
                .unwrap_or(Value::String(s)),
            Some("number") => parse_float(&s).map_or(Value::String(s), number),
            Some("boolean") => parse_bool(&s).map(Value::Bool).unwrap_or(Value::String(s)),
            _ => Value::String(s),
        },
        Value::Object(m) => {
            let props = schema.get("properties");
            Value::Object(
                m.into_iter()
                    .map(|(k, x)| {
                        let x = match props.and_then(|p| p.get(&k)) {
                            Some(s) => to_schema(x, s),
                            None => x,
                        };
                        (k, x)
                    })
                    .collect(),
            )
        }
        Value::Array(a) => match schema.get("items") {
            Some(items) => Value::Array(a.into_iter().map(|x| to_schema(x, items)).collect()),
            None => Value::Array(a),
        },
        other => other,
    }
}

/// A float as JSON the way Go writes a float64: integral values without a fraction (`41`,
/// not `41.0`).
pub(crate) fn number(f: f64) -> Value {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53: every integer below is exact
    if f.fract() == 0.0 && f.abs() < EXACT {
        Value::Number((f as i64).into())
    } else {
        Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}

/// Go's `strconv.ParseFloat` accepts what Rust's parser does, plus `inf`/`nan` spellings
/// that JSON cannot carry; those stay strings.
fn parse_float(s: &str) -> Option<f64> {
    s.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// Go's `strconv.ParseBool`.
pub(crate) fn parse_bool(s: &str) -> Option<bool> {
    match s {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// The content map of a tool result: the first text as `text`, then `text_1`, `text_2`...;
/// images `image_0`, `image_1`... (their data); embedded resources `resource`,
/// `resource_1`... (text or blob). Audio and resource links are left out, as in ToolHive.
pub(crate) fn content_map(result: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    let (mut texts, mut images, mut resources) = (0usize, 0usize, 0usize);
    let items = result.get("content").and_then(Value::as_array);
    for item in items.into_iter().flatten() {
        match item.get("type").and_then(Value::as_str) {
            Some("text") => {
                let key = numbered("text", texts);
                texts += 1;
                out.insert(key, item.get("text").cloned().unwrap_or(Value::Null));
            }
            Some("image") => {
                out.insert(
                    format!("image_{images}"),
                    item.get("data").cloned().unwrap_or(Value::Null),
                );
                images += 1;
            }
            Some("resource") => {
                let key = numbered("resource", resources);
                resources += 1;
                let r = item.get("resource");
                let v = r
                    .and_then(|r| r.get("text").or_else(|| r.get("blob")))
                    .cloned()
                    .unwrap_or(Value::Null);
                out.insert(key, v);
            }
            _ => {}
        }
    }
    out
}

fn numbered(base: &str, n: usize) -> String {
    if n == 0 {
        base.to_owned()
    } else {
        format!("{base}_{n}")
    }
}

/// The step output of a successful result: `structuredContent` when present, else the
/// content map.
pub(crate) fn step_output(result: &mut Value, content: &Map<String, Value>) -> Value {
    match result.get_mut("structuredContent") {
        Some(v) if !v.is_null() => v.take(),
        _ => Value::Object(content.clone()),
    }
}

/// Why an `isError` result failed: its first non-empty text, else `error`/`message`/`text`
/// of its structured content, else a generic message.
pub(crate) fn error_message(result: &Value) -> String {
    let text = result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|c| c.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|c| c.get("text").and_then(Value::as_str))
        .find(|t| !t.is_empty());
    if let Some(t) = text {
        return t.to_owned();
    }
    let sc = result.get("structuredContent");
    for key in ["error", "message", "text"] {
        if let Some(s) = sc.and_then(|v| v.get(key)).and_then(Value::as_str) {
            return s.to_owned();
        }
    }
    "tool execution error".to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strings_become_the_schema_types_and_unparsable_ones_stay_strings() {
        let schema = json!({"type": "object", "properties": {
            "n": {"type": "integer"}, "f": {"type": "number"}, "whole": {"type": "number"}, "b": {"type": "boolean"},
            "bad": {"type": "integer"}, "o": {"type": "object"},
            "nested": {"type": "object", "properties": {"k": {"type": "integer"}}},
            "list": {"type": "array", "items": {"type": "boolean"}}}});
        let v = json!({"n": "456", "f": "95.5", "whole": "2", "b": "T", "bad": "1e3", "o": "{\"a\":1}",
            "nested": {"k": "7"}, "list": ["true", "0", "maybe"], "extra": "5"});
        assert_eq!(
            to_schema(v, &schema),
            json!({"n": 456, "f": 95.5, "whole": 2, "b": true, "bad": "1e3", "o": "{\"a\":1}",
                "nested": {"k": 7}, "list": [true, false, "maybe"], "extra": "5"})
        );
    }

    #[test]
    fn content_becomes_numbered_keys() {
        let r = json!({"content": [
            {"type": "text", "text": "a"}, {"type": "image", "data": "AAA", "mimeType": "image/png"},
            {"type": "text", "text": "b"}, {"type": "resource", "resource": {"uri": "x:/", "text": "r"}},
            {"type": "audio", "data": "zz"}, {"type": "resource", "resource": {"uri": "y:/", "blob": "Qg=="}}]});
        let m = content_map(&r);
        assert_eq!(
            Value::Object(m.clone()),
            json!({"text": "a", "image_0": "AAA", "text_1": "b", "resource": "r", "resource_1": "Qg=="})
        );
        let mut r = r;
        assert_eq!(step_output(&mut r, &m), Value::Object(m.clone()));
        let mut s = json!({"structuredContent": {"x": 1}, "content": []});
        assert_eq!(step_output(&mut s, &Map::new()), json!({"x": 1}));
    }

    #[test]
    fn error_messages_prefer_text_then_structured_fields() {
        assert_eq!(
            error_message(
                &json!({"isError": true, "content": [{"type": "text", "text": ""}, {"type": "text", "text": "boom"}]})
            ),
            "boom"
        );
        assert_eq!(
            error_message(
                &json!({"isError": true, "content": [], "structuredContent": {"message": "m"}})
            ),
            "m"
        );
        assert_eq!(
            error_message(&json!({"isError": true})),
            "tool execution error"
        );
    }
}
