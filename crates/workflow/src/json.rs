//! JSON text with object keys sorted, as Go's `encoding/json` writes maps: the text item of a
//! composite's result is byte-comparable with ToolHive's. (serde_json keeps insertion order
//! here: another crate in the build enables `preserve_order`.)

use serde_json::Value;

/// `v` as compact JSON with every object's keys in sorted order.
pub fn to_sorted_json(v: &Value) -> String {
    let mut out = String::new();
    write(v, &mut out);
    out
}

fn write(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort_unstable();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                if let Some(x) = m.get(k) {
                    write(x, out);
                }
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(x, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_are_sorted_at_every_depth() {
        let v = json!({"success": true, "count": 42, "score": 95.5, "message": "ok",
            "nested": {"z": [{"b": 1, "a": "\"q\""}], "a": null}});
        assert_eq!(
            to_sorted_json(&v),
            r#"{"count":42,"message":"ok","nested":{"a":null,"z":[{"a":"\"q\"","b":1}]},"score":95.5,"success":true}"#
        );
    }
}
