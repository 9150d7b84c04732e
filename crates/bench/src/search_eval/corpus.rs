//! The evaluation corpus: real MCP servers' recorded `tools/list` answers and task queries
//! labelled with the tools that solve them (crates/bench/eval, see its README).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, bail};
use serde_json::Value;
use vmcp_core::ToolSearch;

/// The tools as a gateway in front of every server advertises them (prefix strategy,
/// `{server}_{tool}`), and how many each server has.
#[derive(Debug)]
pub(crate) struct Corpus {
    pub(crate) tools: Vec<Value>,
    pub(crate) servers: BTreeMap<String, usize>,
}

/// A task and the advertised names of the tools that solve it.
#[derive(Debug)]
pub(crate) struct Query {
    pub(crate) text: String,
    pub(crate) expected: Vec<String>,
    /// The `find_tool` arguments an agent wrote for this task (agent_calls.json), if recorded.
    pub(crate) agent: Option<Value>,
}

pub(crate) fn load(dir: &Path) -> anyhow::Result<Corpus> {
    let mut files: Vec<_> = std::fs::read_dir(dir.join("corpus"))
        .with_context(|| format!("{}/corpus", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut corpus = Corpus {
        tools: Vec::new(),
        servers: BTreeMap::new(),
    };
    for file in files {
        let server = file
            .file_stem()
            .and_then(|s| s.to_str())
            .context("corpus file name")?
            .to_owned();
        let tools: Vec<Value> = serde_json::from_slice(&std::fs::read(&file)?)
            .with_context(|| file.display().to_string())?;
        corpus.servers.insert(server.clone(), tools.len());
        for mut t in tools {
            let name = t["name"].as_str().context("a tool without a name")?;
            t["name"] = Value::String(format!("{server}_{name}"));
            corpus.tools.push(t);
        }
    }
    Ok(corpus)
}

pub(crate) fn queries(file: &Path, corpus: &Corpus) -> anyhow::Result<Vec<Query>> {
    let raw: Vec<Value> = serde_json::from_slice(&std::fs::read(file)?)
        .with_context(|| file.display().to_string())?;
    let known: std::collections::HashSet<&str> = corpus
        .tools
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    let calls_file = file.with_file_name("agent_calls.json");
    let mut calls: std::collections::HashMap<String, Value> = match std::fs::read(&calls_file) {
        Ok(bytes) => serde_json::from_slice::<Vec<Value>>(&bytes)
            .with_context(|| calls_file.display().to_string())?
            .into_iter()
            .filter_map(|c| Some((c["task"].as_str()?.to_owned(), c["arguments"].clone())))
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Default::default(),
        Err(e) => return Err(e).with_context(|| calls_file.display().to_string()),
    };
    raw.iter()
        .map(|q| {
            let text = q["query"]
                .as_str()
                .context("a query without text")?
                .to_owned();
            let expected: Vec<String> = q["expected"]
                .as_array()
                .context("a query without expected tools")?
                .iter()
                .filter_map(Value::as_str)
                .map(|e| e.replacen('/', "_", 1))
                .collect();
            if let Some(missing) = expected.iter().find(|e| !known.contains(e.as_str())) {
                bail!("{text:?} expects {missing}, which the corpus does not hold");
            }
            let agent = calls.remove(&text);
            Ok(Query {
                text,
                expected,
                agent,
            })
        })
        .collect()
}

/// `n` or more tools: the corpus repeated as if `copies` groups of the same servers were
/// aggregated (`{server}{k}_{tool}`), each copy's text mapped to its original's.
pub(crate) fn scaled(corpus: &Corpus, n: usize) -> (Vec<Value>, BTreeMap<String, String>) {
    let mut tools = Vec::with_capacity(n + corpus.tools.len());
    let mut original = BTreeMap::new();
    let mut k = 0;
    while tools.len() < n {
        for t in &corpus.tools {
            let name = t["name"].as_str().unwrap_or_default();
            let mut copy = t.clone();
            let (server, tool) = name.split_once('_').unwrap_or((name, ""));
            copy["name"] = Value::String(format!("{server}{k}_{tool}"));
            original.insert(
                ToolSearch::embedded_text(&copy),
                ToolSearch::embedded_text(t),
            );
            tools.push(copy);
        }
        k += 1;
    }
    (tools, original)
}
