//! `from_mcp_json`: turns an MCP client's server list into a vmcp [`Config`], for
//! `vmcp init --from-mcp-json`.
//!
//! Accepted shapes: Claude Desktop and Cursor (`{"mcpServers": {name: entry}}`) and
//! VS Code (`{"servers": {name: entry}}`). An entry is either stdio (`command`,
//! `args`, `env`, `cwd`) or HTTP (`url`, with `type`/`transport` of `http`,
//! `streamable-http` or `sse`, and `headers`). Client-specific keys (`disabled`,
//! `autoApprove`, `timeout`, ...) are ignored; entries with `"disabled": true` are
//! skipped. Strings are copied as written: VS Code's `${input:...}` is not expanded.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::error::{ConfigErrors, Issues, KeyPath};
use crate::schema::{BackendConfig, BackendKind, Config, Isolation, Transport};

/// Converts an MCP client configuration file into a validated vmcp configuration,
/// with backends in sorted name order.
///
/// # Errors
///
/// The input is not JSON, has neither `mcpServers` nor `servers`, or an entry is
/// malformed (every problem is listed, with its JSON path and no line).
pub fn from_mcp_json(json: &str) -> Result<Config, ConfigErrors> {
    let root: Value = serde_json::from_str(json)
        .map_err(|e| ConfigErrors::single(format!("not valid JSON: {e}")))?;
    let issues = Issues::default();
    let mut entries: BTreeMap<String, (KeyPath, &Map<String, Value>)> = BTreeMap::new();
    let mut found_any = false;
    for key in ["mcpServers", "servers"] {
        let Some(section) = root.get(key) else {
            continue;
        };
        found_any = true;
        let path = KeyPath::root().key(key);
        let Some(map) = section.as_object() else {
            issues.push_new(&path, "expected an object of servers");
            continue;
        };
        for (name, entry) in map {
            let epath = path.key(name);
            match entry.as_object() {
                Some(obj) if obj.get("disabled") == Some(&Value::Bool(true)) => {}
                Some(obj) => {
                    if entries.insert(name.clone(), (epath.clone(), obj)).is_some() {
                        issues.push_new(&epath, "server defined twice");
                    }
                }
                None => issues.push_new(&epath, "expected an object"),
            }
        }
    }
    if !found_any {
        return Err(ConfigErrors::single(
            "no \"mcpServers\" (Claude Desktop, Cursor) or \"servers\" (VS Code) object found",
        ));
    }
    let mut config = Config::default();
    let mut used = BTreeMap::new();
    for (name, (path, obj)) in &entries {
        let backend_name = sanitize(name);
        if let Some(other) = used.insert(backend_name.clone(), name.clone()) {
            issues.push_new(
                path,
                format!("becomes backend {backend_name:?}, like {other:?}; rename one of them"),
            );
            continue;
        }
        if let Some(b) = convert(&backend_name, obj, path, &issues) {
            config.backends.push(b);
        }
    }
    if issues.is_empty() {
        crate::validate::validate(&config, &issues);
    }
    crate::finish(config, issues, None)
}

/// A backend name vmcp accepts (`^[a-zA-Z0-9][a-zA-Z0-9._-]*$`) made from a client's
/// server name: other characters become `-`.
fn sanitize(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    if !s.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        s.insert(0, 's');
    }
    s
}

fn convert(
    name: &str,
    obj: &Map<String, Value>,
    path: &KeyPath,
    issues: &Issues,
) -> Option<BackendConfig> {
    let text = |key: &str| -> Option<String> {
        match obj.get(key)? {
            Value::String(s) => Some(s.clone()),
            Value::Null => None,
            _ => {
                issues.push_new(&path.key(key), "expected a string");
                None
            }
        }
    };
    let list = |key: &str| -> Vec<String> {
        match obj.get(key) {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .filter_map(|(i, v)| match v {
                    Value::String(s) => Some(s.clone()),
                    Value::Number(n) => Some(n.to_string()),
                    _ => {
                        issues.push_new(&path.key(key).index(i), "expected a string");
                        None
                    }
                })
                .collect(),
            Some(_) => {
                issues.push_new(&path.key(key), "expected a list of strings");
                Vec::new()
            }
        }
    };
    let map = |key: &str| -> BTreeMap<String, String> {
        match obj.get(key) {
            None | Some(Value::Null) => BTreeMap::new(),
            Some(Value::Object(m)) => m
                .iter()
                .filter_map(|(k, v)| match v {
                    Value::String(s) => Some((k.clone(), s.clone())),
                    Value::Number(_) | Value::Bool(_) => Some((k.clone(), v.to_string())),
                    _ => {
                        issues.push_new(&path.key(key).key(k), "expected a string");
                        None
                    }
                })
                .collect(),
            Some(_) => {
                issues.push_new(&path.key(key), "expected an object of strings");
                BTreeMap::new()
            }
        }
    };
    let kind = text("type").or_else(|| text("transport"));
    let url = text("url").or_else(|| text("serverUrl"));
    let command = text("command");
    let transport = match (kind.as_deref(), &url, &command) {
        (Some("stdio"), _, _) | (None, None, Some(_)) => Transport::Stdio,
        (Some("sse"), _, _) => Transport::Sse,
        (Some("http" | "streamable-http" | "streamableHttp"), _, _) | (None, Some(_), _) => {
            Transport::StreamableHttp
        }
        (Some(other), _, _) => {
            issues.push_new(
                &path.key("type"),
                format!("unknown transport {other:?} (expected stdio, http or sse)"),
            );
            return None;
        }
        (None, None, None) => {
            issues.push_new(path, "has neither command nor url");
            return None;
        }
    };
    let backend = if transport.is_http() {
        BackendConfig {
            url,
            headers: map("headers"),
            ..empty(name, transport)
        }
    } else {
        BackendConfig {
            command,
            args: list("args"),
            env: map("env"),
            cwd: text("cwd").map(Into::into),
            ..empty(name, transport)
        }
    };
    Some(backend)
}

fn empty(name: &str, transport: Transport) -> BackendConfig {
    BackendConfig {
        name: name.to_owned(),
        url: None,
        transport,
        kind: BackendKind::Workload,
        ca_bundle_path: None,
        metadata: BTreeMap::new(),
        command: None,
        args: Vec::new(),
        env: BTreeMap::new(),
        cwd: None,
        isolation: Isolation::Shared,
        headers: BTreeMap::new(),
    }
}
