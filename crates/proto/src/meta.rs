//! The reserved `io.modelcontextprotocol/*` `_meta` namespace: the gateway is the MCP peer on each
//! hop, so these keys are its own to set and are stripped wherever a `_meta` map crosses it.

use serde_json::Value;

/// Prefix of reserved `_meta` keys.
pub const RESERVED_PREFIX: &str = "io.modelcontextprotocol/";

/// Reserved keys that are end-to-end and therefore pass through the gateway.
pub const PASSTHROUGH: [&str; 2] = [
    "io.modelcontextprotocol/related-task",
    "io.modelcontextprotocol/model-immediate-response",
];

/// Removes reserved keys (except [`PASSTHROUGH`]) from the `_meta` object of `obj`, if any.
///
/// ```
/// let mut v = serde_json::json!({"_meta": {"io.modelcontextprotocol/serverInfo": 1, "progressToken": 7}});
/// vmcp_proto::meta::strip_reserved(&mut v);
/// assert_eq!(v, serde_json::json!({"_meta": {"progressToken": 7}}));
/// ```
pub fn strip_reserved(obj: &mut Value) {
    if let Some(Value::Object(meta)) = obj.get_mut("_meta") {
        meta.retain(|k, _| !k.starts_with(RESERVED_PREFIX) || PASSTHROUGH.contains(&k.as_str()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keeps_passthrough_and_foreign_keys() {
        let mut v = json!({"_meta": {
            "io.modelcontextprotocol/related-task": {"taskId": "t"},
            "io.modelcontextprotocol/protocolVersion": "x",
            "traceparent": "00-abc"
        }});
        strip_reserved(&mut v);
        assert_eq!(
            v,
            json!({"_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t"}, "traceparent": "00-abc"}})
        );
    }

    #[test]
    fn no_meta_is_a_no_op() {
        let mut v = json!({"a": 1});
        strip_reserved(&mut v);
        assert_eq!(v, json!({"a": 1}));
    }
}
