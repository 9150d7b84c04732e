//! The evaluation corpus (crates/bench/eval), read as `vmcp-search-eval` reads it: tools named
//! `{server}_{tool}` as a gateway's prefix strategy advertises them, and `--scale`'s repetition.

use std::path::Path;

use search_compare::Tool;
use serde_json::Value;

/// A task and the advertised names of the tools that solve it.
pub struct Labelled {
    pub task: String,
    pub expected: Vec<String>,
}

fn read_json(path: &Path) -> Value {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The 371 tools, in file order of the sorted server files.
pub fn tools(eval_dir: &Path) -> Vec<Tool> {
    let mut files: Vec<_> = std::fs::read_dir(eval_dir.join("corpus"))
        .expect("corpus directory")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let server = file
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        for t in read_json(&file).as_array().expect("a tools array") {
            let field = |k: &str| t.get(k).and_then(Value::as_str).unwrap_or_default();
            out.push(Tool {
                name: format!("{server}_{}", field("name")),
                description: field("description").to_owned(),
                params: parameter_text(t),
            });
        }
    }
    out
}

pub fn queries(eval_dir: &Path) -> Vec<Labelled> {
    let raw = read_json(&eval_dir.join("queries.json"));
    raw.as_array()
        .expect("a queries array")
        .iter()
        .map(|q| Labelled {
            task: q["query"].as_str().unwrap_or_default().to_owned(),
            expected: q["expected"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(|e| e.replacen('/', "_", 1))
                .collect(),
        })
        .collect()
}

/// At least `n` tools: the corpus repeated as `{server}{k}_{tool}` (search_eval's `scaled`).
pub fn scaled(tools: &[Tool], n: usize) -> Vec<Tool> {
    let mut out = Vec::with_capacity(n + tools.len());
    let mut k = 0;
    while out.len() < n {
        for t in tools {
            let (server, tool) = t.name.split_once('_').unwrap_or((&t.name, ""));
            out.push(Tool {
                name: format!("{server}{k}_{tool}"),
                ..t.clone()
            });
        }
        k += 1;
    }
    out
}

/// The optimizer's parameter text (`parameter_text` in crates/core/src/optimizer.rs, private
/// there): each property's name, camelCase split, and description.
fn parameter_text(tool: &Value) -> String {
    let mut out = String::new();
    let props = tool
        .pointer("/inputSchema/properties")
        .and_then(Value::as_object);
    for (name, prop) in props.into_iter().flatten() {
        out.push_str(&vmcp_search::split_identifier(name));
        out.push(' ');
        if let Some(d) = prop.get("description").and_then(Value::as_str) {
            out.push_str(d);
            out.push(' ');
        }
    }
    out
}
