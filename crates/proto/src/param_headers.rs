//! `x-mcp-header` (MCP 2026-07-28): a tool's input schema may ask for some arguments to be mirrored
//! into `Mcp-Param-{Name}` HTTP headers. The pure rules, used on both edges: which properties are
//! annotated, how a value is written into a header, and how a received header is checked.

use serde_json::Value;

use crate::mcp_name;

/// An annotated argument: the header's name part and the property path from the schema root.
pub type Annotation = (String, Vec<String>);

/// The annotations of a tool's input schema: properties reachable from the root through
/// `properties` keys only. `None` when an annotation is invalid (not an HTTP token, or not unique
/// regardless of case), which makes the tool definition invalid.
///
/// ```
/// let schema = serde_json::json!({"properties": {"region": {"type": "string", "x-mcp-header": "Region"}}});
/// let found = vmcp_proto::param_headers::annotations(&schema).unwrap();
/// assert_eq!(found, vec![("Region".to_string(), vec!["region".to_string()])]);
/// ```
pub fn annotations(schema: &Value) -> Option<Vec<Annotation>> {
    let mut found = Vec::new();
    walk(schema, &mut Vec::new(), &mut found);
    valid(&found).then_some(found)
}

fn walk(schema: &Value, path: &mut Vec<String>, out: &mut Vec<Annotation>) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (key, prop) in props {
        path.push(key.clone());
        if let Some(header) = prop.get("x-mcp-header").and_then(Value::as_str) {
            out.push((header.to_string(), path.clone()));
        }
        walk(prop, path, out);
        path.pop();
    }
}

fn valid(found: &[Annotation]) -> bool {
    let token = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
    };
    let mut seen = std::collections::HashSet::new();
    found
        .iter()
        .all(|(h, _)| token(h) && seen.insert(h.to_ascii_lowercase()))
}

/// The argument at `path`, as the plain text its header carries: strings as they are, integers in
/// decimal, booleans lowercase; absent, null and other values give none.
pub fn value_at(arguments: Option<&Value>, path: &[String]) -> Option<String> {
    let mut v = arguments?;
    for key in path {
        v = v.get(key)?;
    }
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(n.to_string()),
        _ => None,
    }
}

/// The header value for a plain text (sentinel-encoded when not plain visible ASCII).
pub fn encode(text: &str) -> String {
    mcp_name::encode(text)
}

/// Why a received `Mcp-Param-*` header does not agree with the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mismatch {
    /// The body has a value but the header is missing.
    Missing,
    /// The header is present but the body has no value.
    Unexpected,
    /// The header is not a valid header value, or a malformed sentinel.
    Malformed,
    /// Decoded, it differs from the body's value.
    Differs,
}

/// Checks one received header (raw bytes, if present) against the body's value.
///
/// # Errors
/// The [`Mismatch`].
pub fn check(header: Option<&[u8]>, body: Option<&str>) -> Result<(), Mismatch> {
    match (header, body) {
        (None, None) => Ok(()),
        (None, Some(_)) => Err(Mismatch::Missing),
        (Some(raw), value) => {
            // Only visible ASCII, space and tab may travel in a header; anything else is malformed.
            if !raw.iter().all(|b| (0x20..=0x7e).contains(b) || *b == b'\t') {
                return Err(Mismatch::Malformed);
            }
            let text = std::str::from_utf8(raw).map_err(|_| Mismatch::Malformed)?;
            let decoded = mcp_name::decode(text).ok_or(Mismatch::Malformed)?;
            match value {
                None => Err(Mismatch::Unexpected),
                Some(v) if v == decoded => Ok(()),
                Some(_) => Err(Mismatch::Differs),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn finds_nested_annotations_and_rejects_invalid_ones() {
        let schema = json!({"properties": {
            "region": {"x-mcp-header": "Region"},
            "opts": {"properties": {"limit": {"x-mcp-header": "Limit"}}},
            "list": {"items": {"properties": {"x": {"x-mcp-header": "Hidden"}}}}
        }});
        let mut found = annotations(&schema).unwrap();
        found.sort();
        assert_eq!(
            found,
            vec![
                (
                    "Limit".to_string(),
                    vec!["opts".to_string(), "limit".to_string()]
                ),
                ("Region".to_string(), vec!["region".to_string()]),
            ]
        );
        assert!(annotations(&json!({"properties": {"a": {"x-mcp-header": "Same"}, "b": {"x-mcp-header": "same"}}})).is_none());
        assert!(annotations(&json!({"properties": {"a": {"x-mcp-header": "bad name"}}})).is_none());
    }

    #[test]
    fn values_render_as_the_spec_says() {
        let args = json!({"s": "Hello, 世界", "i": 42, "b": false, "f": 1.5, "n": null});
        let at = |k: &str| value_at(Some(&args), &[k.to_string()]);
        assert_eq!(
            at("s").map(|s| encode(&s)).as_deref(),
            Some("=?base64?SGVsbG8sIOS4lueVjA==?=")
        );
        assert_eq!(at("i").as_deref(), Some("42"));
        assert_eq!(at("b").as_deref(), Some("false"));
        assert_eq!(at("f"), None);
        assert_eq!(at("n"), None);
        assert_eq!(at("missing"), None);
    }

    #[test]
    fn received_headers_are_checked_against_the_body() {
        assert_eq!(check(None, None), Ok(()));
        assert_eq!(check(Some(b"us-west1"), Some("us-west1")), Ok(()));
        assert_eq!(
            check(
                Some(b"=?base64?SGVsbG8sIOS4lueVjA==?="),
                Some("Hello, 世界")
            ),
            Ok(())
        );
        assert_eq!(check(None, Some("x")), Err(Mismatch::Missing));
        assert_eq!(check(Some(b"x"), None), Err(Mismatch::Unexpected));
        assert_eq!(check(Some(b"other"), Some("x")), Err(Mismatch::Differs));
        assert_eq!(
            check(Some(b"=?base64?!!?="), Some("x")),
            Err(Mismatch::Malformed)
        );
        assert_eq!(
            check(Some("caf\u{e9}".as_bytes()), Some("café")),
            Err(Mismatch::Malformed)
        );
    }
}
