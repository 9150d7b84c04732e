//! The optimizer: `tools/list` shows two meta-tools, `find_tool` (ToolHive's keyword tier: BM25
//! over the advertised tools' names and descriptions; with an embedder, its hybrid tier) and
//! `call_tool` (runs a found tool through the normal call path). The index is built once per
//! catalog and shared by every session and identity; what a caller may see is filtered at query
//! time.

mod semantic;

use std::collections::{BTreeMap, HashSet};

use serde_json::{Map, Value, json};
use vmcp_search::{Index, Query};

use semantic::SemanticArm;
pub use semantic::SemanticSettings;

/// The optimizer's settings (the config's `optimizer` block).
#[derive(Debug, Clone, PartialEq)]
pub struct OptimizerSettings {
    /// `maxToolsToReturn`.
    pub max_tools: usize,
    /// The semantic arm, when an embedder is configured (ToolHive's Tier 2).
    pub semantic: Option<SemanticSettings>,
    /// How queries are analysed and the arms merged.
    pub ranking: Ranking,
}

/// `optimizer.ranking`: vmcp's (the default) or exactly ToolHive's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Ranking {
    /// Task text analysed ([`vmcp_search::analyze`]), weighted BM25 with name hits counted
    /// twice, and the arms' normalised scores mixed by `hybridSearchSemanticRatio`.
    #[default]
    Vmcp,
    /// ToolHive's: one FTS5 phrase per word, FTS5's bm25, and `round(max × ratio)` semantic
    /// matches first, then keyword matches.
    ToolHive,
}

/// A name hit counts this many description hits in vmcp's ranking (a tool's name is its most
/// precise summary).
const NAME_WEIGHT: f64 = 2.0;
/// A hit in a tool's parameters (names and descriptions) counts this much of a description hit:
/// parameters say what a tool acts on ("owner", "repo", "issue key"), which tasks name.
const PARAM_WEIGHT: f64 = 0.5;
/// Candidates taken from each arm before vmcp's merge.
const CANDIDATES: usize = 50;

/// Longest `tool_description` searched: past it a model is pasting content, not describing a
/// task (the embedder would truncate it anyway).
const MAX_DESCRIPTION: usize = 8 * 1024;

/// A catalog's search index and meta-tools.
#[derive(Debug)]
pub(crate) struct OptimizerIndex {
    index: Index,
    semantic: Option<SemanticArm>,
    /// Document i's tool definition (advertised tools, composites included).
    tools: Vec<Value>,
    /// Document i's token estimate (JSON length / 4, as ToolHive counts).
    tokens: Vec<u64>,
    /// `find_tool` and `call_tool`, as listed.
    pub(crate) meta: Vec<Value>,
    pub(crate) max_tools: usize,
    ranking: Ranking,
}

/// The meta-tools' names.
pub(crate) const FIND_TOOL: &str = "find_tool";
/// See [`FIND_TOOL`].
pub(crate) const CALL_TOOL: &str = "call_tool";

impl OptimizerIndex {
    /// Indexes `tools` (the catalog's advertised tools) and describes the catalog to models.
    pub(crate) fn build(
        settings: &OptimizerSettings,
        tools: &[Value],
        backends: &BTreeMap<String, usize>,
    ) -> Self {
        let text = |t: &Value, k: &str| {
            t.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let docs: Vec<(String, String)> = tools
            .iter()
            .map(|t| (text(t, "name"), text(t, "description")))
            .collect();
        // Only vmcp's ranking reads the parameters.
        let index = match settings.ranking {
            Ranking::ToolHive => Index::build(docs.iter().map(|(n, d)| (n.as_str(), d.as_str()))),
            Ranking::Vmcp => {
                let params: Vec<String> = tools.iter().map(parameter_text).collect();
                Index::build_with_params(
                    docs.iter()
                        .zip(&params)
                        .map(|((n, d), p)| (n.as_str(), d.as_str(), p.as_str())),
                )
            }
        };
        let tokens = tools
            .iter()
            .map(|t| (t.to_string().len() / 4) as u64)
            .collect();
        Self {
            index,
            semantic: settings
                .semantic
                .as_ref()
                .map(|s| SemanticArm::new(s, &docs)),
            tools: tools.to_vec(),
            tokens,
            meta: meta_tools(tools.len(), backends),
            max_tools: settings.max_tools,
            ranking: settings.ranking,
        }
    }

    fn name(&self, i: usize) -> &str {
        self.tools[i]
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// `find_tool` for a caller who may see the tools named in `visible` (None: all of them),
    /// recorded in ToolHive's `toolhive_vmcp_optimizer_find_tool_*` metrics.
    pub(crate) async fn find(&self, args: &Value, visible: Option<&HashSet<&str>>) -> Value {
        let started = std::time::Instant::now();
        let out = self.search(args, visible).await;
        let content = &out["structuredContent"];
        let outcome = match content["token_metrics"]["savings_percent"].as_f64() {
            Some(savings) if out.get("isError") != Some(&Value::Bool(true)) => {
                let found = content["tools"].as_array().map_or(0, Vec::len);
                Ok((found as u64, savings))
            }
            _ => Err(()),
        };
        vmcp_telemetry::find_tool_finished(started.elapsed(), outcome);
        out
    }

    async fn search(&self, args: &Value, visible: Option<&HashSet<&str>>) -> Value {
        let description = match args.get("tool_description") {
            Some(Value::String(d)) if !d.trim().is_empty() => d.as_str(),
            None | Some(Value::Null | Value::String(_)) => {
                return error_result("find_tool failed: tool_description is required");
            }
            Some(_) => {
                return error_result("invalid arguments: tool_description must be a string");
            }
        };
        if description.len() > MAX_DESCRIPTION {
            return error_result(&format!(
                "find_tool failed: tool_description is {} bytes; describe the task in at most {MAX_DESCRIPTION}",
                description.len()
            ));
        }
        let keywords: Vec<String> = match args.get("tool_keywords") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) if a.iter().all(Value::is_string) => a
                .iter()
                .filter_map(Value::as_str)
                .take(64)
                .map(str::to_owned)
                .collect(),
            Some(_) => {
                return error_result(
                    "invalid arguments: tool_keywords must be an array of strings",
                );
            }
        };
        let allowed = |i: usize| visible.is_none_or(|v| v.contains(self.name(i)));
        let hits = self.rank(description, &keywords, &allowed).await;
        let baseline: u64 = match visible {
            None => self.tokens.iter().sum(),
            Some(_) => (0..self.tools.len())
                .filter(|&i| allowed(i))
                .map(|i| self.tokens[i])
                .sum(),
        };
        let returned: u64 = hits.iter().map(|&i| self.tokens[i]).sum();
        let savings = if baseline == 0 {
            0.0
        } else {
            (baseline - returned.min(baseline)) as f64 / baseline as f64 * 100.0
        };
        let tools = if hits.is_empty() {
            Value::Null
        } else {
            Value::Array(hits.iter().map(|&i| self.tools[i].clone()).collect())
        };
        let out = json!({
            "tools": tools,
            "token_metrics": {"baseline_tokens": baseline, "returned_tokens": returned, "savings_percent": savings},
        });
        json!({"content": [{"type": "text", "text": vmcp_workflow::to_sorted_json(&out)}], "structuredContent": out})
    }

    /// ToolHive's ranking: keyword only, or `round(max × ratio)` semantic matches first, then
    /// keyword matches not already present. When the embedder fails, the keyword tier answers
    /// alone (logged).
    async fn rank(
        &self,
        description: &str,
        keywords: &[String],
        allowed: &(impl Fn(usize) -> bool + Sync),
    ) -> Vec<usize> {
        if self.ranking == Ranking::Vmcp {
            return self.rank_vmcp(description, keywords, allowed).await;
        }
        let query = Query::from_request(description, keywords);
        let keyword = |limit: usize| -> Vec<usize> {
            if query.is_empty() || limit == 0 {
                return Vec::new();
            }
            self.index
                .search(&query, limit, allowed)
                .into_iter()
                .map(|(i, _)| i)
                .collect()
        };
        let max = self.max_tools;
        let Some(arm) = &self.semantic else {
            return keyword(max);
        };
        let semantic_limit = arm.settings().semantic_limit(max);
        if semantic_limit == 0 {
            return keyword(max);
        }
        match arm.search(description, semantic_limit, allowed).await {
            Ok(hits) => {
                let mut hits: Vec<usize> = hits.into_iter().map(|(i, _)| i).collect();
                for i in keyword(max - semantic_limit) {
                    if !hits.contains(&i) {
                        hits.push(i);
                    }
                }
                hits.truncate(max);
                hits
            }
            Err(e) => {
                tracing::warn!(error = %e, "optimizer: semantic search failed; answering from the keyword tier");
                keyword(max)
            }
        }
    }

    /// vmcp's ranking: both arms score the analysed task; each arm's scores are scaled to 0..1
    /// (keyword: by the best; semantic: similarity between the worst and best candidate) and
    /// mixed as `ratio × semantic + (1 − ratio) × keyword`. Ratio 0 and 1 use one arm only, as
    /// in ToolHive (0 never embeds the query).
    async fn rank_vmcp(
        &self,
        description: &str,
        keywords: &[String],
        allowed: &(impl Fn(usize) -> bool + Sync),
    ) -> Vec<usize> {
        let analyzed = vmcp_search::analyze(description, keywords);
        let max = self.max_tools;
        let keyword = |limit: usize| {
            self.index
                .search_weighted(&analyzed.terms, NAME_WEIGHT, PARAM_WEIGHT, limit, allowed)
        };
        let only_keyword = || keyword(max).into_iter().map(|(i, _)| i).collect();
        let Some(arm) = &self.semantic else {
            return only_keyword();
        };
        let ratio = arm.settings().ratio;
        if ratio <= 0.0 {
            return only_keyword();
        }
        let text = if analyzed.semantic_text.trim().is_empty() {
            description
        } else {
            analyzed.semantic_text.as_str()
        };
        let semantic = match arm.search(text, CANDIDATES.max(max), allowed).await {
            Ok(hits) => hits,
            Err(e) => {
                tracing::warn!(error = %e, "optimizer: semantic search failed; answering from the keyword tier");
                return only_keyword();
            }
        };
        if ratio >= 1.0 {
            return semantic.into_iter().take(max).map(|(i, _)| i).collect();
        }
        let keyword = keyword(CANDIDATES.max(max));
        let mut mixed: Vec<(usize, f64)> = Vec::new();
        let best_kw = keyword.first().map_or(0.0, |k| k.1);
        for &(i, s) in &keyword {
            if best_kw > 0.0 {
                mixed.push((i, (1.0 - ratio) * s / best_kw));
            }
        }
        let (near, far) = (
            semantic.first().map_or(0.0, |s| f64::from(s.1)),
            semantic.last().map_or(0.0, |s| f64::from(s.1)),
        );
        for &(i, d) in &semantic {
            let score = if far > near {
                ratio * (far - f64::from(d)) / (far - near)
            } else {
                ratio
            };
            match mixed.iter_mut().find(|m| m.0 == i) {
                Some(m) => m.1 += score,
                None => mixed.push((i, score)),
            }
        }
        mixed.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        mixed.into_iter().take(max).map(|(i, _)| i).collect()
    }

    /// `call_tool`'s answer for an unknown name: the visible tools with the nearest names.
    pub(crate) fn not_found(&self, name: &str, visible: &HashSet<&str>) -> Value {
        let closest = self.closest(name, visible);
        let hint = if closest.is_empty() {
            " (search with find_tool)".to_owned()
        } else {
            format!("; closest matches: {}", closest.join(", "))
        };
        error_result(&format!("tool not found: {name}{hint}"))
    }

    fn closest(&self, name: &str, visible: &HashSet<&str>) -> Vec<&str> {
        let allowed = |i: usize| visible.contains(self.name(i));
        let query = Query::from_request(name, &[]);
        let mut out: Vec<&str> = if query.is_empty() {
            Vec::new()
        } else {
            self.index
                .search(&query, 3, allowed)
                .into_iter()
                .map(|(i, _)| self.name(i))
                .collect()
        };
        // Names that contain the asked name, or are contained in it (a dropped prefix).
        let lower = name.to_lowercase();
        for i in (0..self.tools.len()).filter(|&i| allowed(i)) {
            let n = self.name(i);
            let ln = n.to_lowercase();
            if out.len() < 3 && !out.contains(&n) && (ln.ends_with(&lower) || lower.ends_with(&ln))
            {
                out.push(n);
            }
        }
        out
    }
}

/// `find_tool`'s ranking over a tool list, outside a gateway: for the search-quality evaluation
/// and the benchmark, which must measure exactly what `find_tool` answers.
#[derive(Debug)]
pub struct ToolSearch(OptimizerIndex);

impl ToolSearch {
    /// Indexes `tools` (MCP tool definitions, as advertised; `servers` counts them per server)
    /// with `settings`; with a semantic arm, their vectors start computing now.
    #[must_use]
    pub fn new(
        settings: &OptimizerSettings,
        tools: &[Value],
        servers: &BTreeMap<String, usize>,
    ) -> Self {
        Self(OptimizerIndex::build(settings, tools, servers))
    }

    /// The text the semantic arm embeds for `tool` (to pre-compute or look up its vector).
    #[must_use]
    pub fn embedded_text(tool: &Value) -> String {
        let field = |k: &str| tool.get(k).and_then(Value::as_str).unwrap_or_default();
        semantic::embedded_text(field("name"), field("description"))
    }

    /// What `tools/list` shows: `call_tool` and `find_tool`.
    #[must_use]
    pub fn listed(&self) -> &[Value] {
        &self.0.meta
    }

    /// `find_tool`'s result for `arguments` (`tool_description`, `tool_keywords`), every tool
    /// visible.
    pub async fn find(&self, arguments: &Value) -> Value {
        self.0.find(arguments, None).await
    }
}

/// What `call_tool` was asked to run: the inner tool's name and arguments, taking the shapes
/// models send (ToolHive's: a `tool_name` nested in `parameters` is hoisted).
pub(crate) fn inner_call(args: &Value) -> Result<(String, Value), Value> {
    let mut parameters = match args.get("parameters") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => {
            return Err(error_result(
                "invalid arguments: parameters must be an object",
            ));
        }
    };
    let mut name = args
        .get("tool_name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if name.is_empty()
        && let Some(Value::String(n)) = parameters.get("tool_name")
        && !n.is_empty()
    {
        name = n.clone();
        parameters.remove("tool_name");
    }
    if name.is_empty() {
        let keys: Vec<&String> = parameters.keys().collect();
        return Err(error_result(&format!(
            "call_tool failed: tool_name is required: call_tool expects {{\"tool_name\": \"<name from find_tool>\", \"parameters\": {{<tool arguments>}}}}, got parameters keys {keys:?}"
        )));
    }
    if name == FIND_TOOL || name == CALL_TOOL {
        return Err(error_result(&format!(
            "call_tool cannot run {name}: call it directly"
        )));
    }
    Ok((name, Value::Object(parameters)))
}

/// A tool's parameters as text for vmcp's keyword ranking: each property's name (its words) and
/// description, one level deep.
fn parameter_text(tool: &Value) -> String {
    let mut out = String::new();
    if let Some(props) = tool
        .pointer("/inputSchema/properties")
        .and_then(Value::as_object)
    {
        for (name, prop) in props {
            out.push_str(&vmcp_search::split_identifier(name));
            out.push(' ');
            if let Some(d) = prop.get("description").and_then(Value::as_str) {
                out.push_str(d);
                out.push(' ');
            }
        }
    }
    out
}

/// The names of `tools`.
pub(crate) fn names<'a>(tools: &[&'a Value]) -> HashSet<&'a str> {
    tools
        .iter()
        .filter_map(|t| t.get("name").and_then(Value::as_str))
        .collect()
}

pub(crate) fn error_result(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": true})
}

/// The two meta-tools; `find_tool`'s description says what the catalog holds, so a model knows
/// when searching is worth it.
fn meta_tools(count: usize, backends: &BTreeMap<String, usize>) -> Vec<Value> {
    let mut summary: Vec<String> = backends
        .iter()
        .take(12)
        .map(|(b, n)| format!("{b} ({n})"))
        .collect();
    if backends.len() > 12 {
        summary.push(format!("and {} more servers", backends.len() - 12));
    }
    let find = json!({
        "name": FIND_TOOL,
        "description": format!(
            "Find and return tools that can help accomplish the user's request. Search before calling: {count} tools are available, from {}. Returns full tool definitions to pass to call_tool.",
            summary.join(", ")
        ),
        "inputSchema": {"type": "object", "properties": {
            "tool_description": {"type": "string", "description": "Description of the task or capability needed (e.g. 'create a GitHub issue')"},
            "tool_keywords": {"type": "array", "items": {"type": "string"}, "description": "Optional keywords driving the BM25 keyword-search arm (e.g. ['github', 'issue'])"}},
            "required": ["tool_description"]},
        "annotations": {"readOnlyHint": true, "openWorldHint": false},
    });
    let call = json!({
        "name": CALL_TOOL,
        "description": "Execute a specific tool with the provided parameters. Use a tool name returned by find_tool.",
        "inputSchema": {"type": "object", "properties": {
            "tool_name": {"type": "string", "description": "The name of the tool to execute, as returned by find_tool"},
            "parameters": {"type": "object", "description": "The tool's arguments, matching its inputSchema"}},
            "required": ["tool_name", "parameters"]},
    });
    vec![call, find]
}

#[cfg(test)]
mod tests;
