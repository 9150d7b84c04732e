//! What each tool of one 2026-07-28 backend asks to be mirrored into `Mcp-Param-*` headers
//! (`x-mcp-header`), learnt from the backend's own `tools/list` answers, so the gateway (the
//! backend's client) can send them on every `tools/call`.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::Value;
use vmcp_proto::param_headers::{self, Annotation};

/// Annotations by tool.
#[derive(Default)]
pub(crate) struct ParamHeaders {
    by_tool: Mutex<HashMap<String, Vec<Annotation>>>,
}

impl ParamHeaders {
    /// Learns the annotations of the tools in a `tools/list` result (one page of it).
    pub(crate) fn learn(&self, result: &Value) {
        let Some(tools) = result.get("tools").and_then(Value::as_array) else {
            return;
        };
        let mut by_tool = self.by_tool.lock().unwrap_or_else(|p| p.into_inner());
        for tool in tools {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                continue;
            };
            let found = match tool.get("inputSchema").map(param_headers::annotations) {
                Some(Some(found)) => found,
                Some(None) => {
                    tracing::warn!(
                        tool = name,
                        "tool has an invalid x-mcp-header annotation; its parameters are not mirrored"
                    );
                    Vec::new()
                }
                None => Vec::new(),
            };
            if found.is_empty() {
                by_tool.remove(name);
            } else {
                by_tool.insert(name.to_string(), found);
            }
        }
    }

    /// The `Mcp-Param-*` headers for a call of `tool` with `arguments`.
    pub(crate) fn headers_for(
        &self,
        tool: &str,
        arguments: Option<&Value>,
    ) -> Vec<(String, String)> {
        let by_tool = self.by_tool.lock().unwrap_or_else(|p| p.into_inner());
        let Some(found) = by_tool.get(tool) else {
            return Vec::new();
        };
        found
            .iter()
            .filter_map(|(header, path)| {
                param_headers::value_at(arguments, path)
                    .map(|v| (format!("mcp-param-{header}"), param_headers::encode(&v)))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn mirrors_the_annotated_arguments_of_the_tool_called() {
        let h = ParamHeaders::default();
        h.learn(&json!({"tools": [{
            "name": "execute_sql",
            "inputSchema": {"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "query": {"type": "string"}
            }}
        }, {"name": "bad", "inputSchema": {"properties": {"a": {"x-mcp-header": "bad name"}}}}]}));
        let got = h.headers_for(
            "execute_sql",
            Some(&json!({"region": "us-west1", "query": "q"})),
        );
        assert_eq!(
            got,
            vec![("mcp-param-Region".to_string(), "us-west1".to_string())]
        );
        assert!(
            h.headers_for("execute_sql", Some(&json!({"query": "q"})))
                .is_empty()
        );
        assert!(h.headers_for("bad", Some(&json!({"a": "1"}))).is_empty());
        assert!(
            h.headers_for("other", Some(&json!({"region": "x"})))
                .is_empty()
        );
    }
}
