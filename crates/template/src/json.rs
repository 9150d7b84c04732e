//! The `json` function: Go's `json.Marshal` of a decoded JSON value, byte for byte.
//!
//! Written out rather than left to `serde_json` because Go differs in ways templates can see:
//! `<`, `>`, `&`, U+2028 and U+2029 are escaped; object keys are always sorted; floats use
//! `%f`-style digits unless the exponent is below -6 or at least 21, where they use `1e+21`
//! (`serde_json` writes `1e21` and switches at other exponents).

use serde_json::Value;

use crate::float::format_float;

/// Nesting beyond this is written as `null` instead of recursing further; `serde_json` itself
/// refuses to parse more than 128 levels, so only hand-built values get here.
const MAX_JSON_DEPTH: usize = 512;

/// Go's `json.Marshal(v)`; `None` (no value) marshals as `null`.
pub(crate) fn marshal(v: Option<&Value>) -> String {
    let mut out = String::new();
    match v {
        Some(v) => write_value(&mut out, v, 0),
        None => out.push_str("null"),
    }
    out
}

fn write_value(out: &mut String, v: &Value, depth: usize) {
    if depth > MAX_JSON_DEPTH {
        out.push_str("null");
        return;
    }
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            if n.is_f64() {
                out.push_str(&float(n.as_f64().unwrap_or(0.0)));
            } else {
                out.push_str(&n.to_string());
            }
        }
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item, depth + 1);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (k, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, k);
                out.push(':');
                write_value(out, item, depth + 1);
            }
            out.push('}');
        }
    }
}

/// Go's float encoder: ES6 number formatting with exponents written `e+21`/`e-7`.
fn float(f: f64) -> String {
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let s = format_float(f, b'e', -1);
        // Go cleans up "e-09" to "e-9".
        let b = s.as_bytes();
        let n = b.len();
        if n >= 4 && b[n - 4] == b'e' && b[n - 3] == b'-' && b[n - 2] == b'0' {
            return format!("{}{}", &s[..n - 2], &s[n - 1..]);
        }
        return s;
    }
    format_float(f, b'f', -1)
}

fn write_string(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c if (c as u32) < 0x20 => {
                let b = c as usize;
                out.push_str("\\u00");
                out.push(HEX[b >> 4] as char);
                out.push(HEX[b & 0xF] as char);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::marshal;
    use serde_json::json;

    #[test]
    fn matches_go_json_marshal() {
        let v = json!({"b": [1, 2.5, null, true], "a": "x<y>&z", "c": {"z": 1, "y": {}}});
        assert_eq!(
            marshal(Some(&v)),
            r#"{"a":"x\u003cy\u003e\u0026z","b":[1,2.5,null,true],"c":{"y":{},"z":1}}"#
        );
        assert_eq!(marshal(None), "null");
        assert_eq!(
            marshal(Some(&json!("tab\tnl\n\u{1}\u{2028}é"))),
            r#""tab\tnl\n\u0001\u2028é""#
        );
    }

    #[test]
    fn floats_use_es6_cutoffs() {
        for (f, want) in [
            (1e20, "100000000000000000000"),
            (1e21, "1e+21"),
            (0.000001, "0.000001"),
            (0.0000001, "1e-7"),
            (1.5e-10, "1.5e-10"),
            (456.0, "456"),
            (-0.5, "-0.5"),
            (1e100, "1e+100"),
        ] {
            assert_eq!(marshal(Some(&json!(f))), want, "{f}");
        }
    }
}
