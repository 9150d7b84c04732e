//! The engines behind one interface: build from tools, answer a task with tool positions.

use search_compare::Tool;
use search_compare::fts5::Fts5;
use search_compare::ours::{Ours, OursToolHive};
use search_compare::tantivy_bm25::Tantivy;
use vmcp_search::{Query, analyze, tokens};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Ours,
    OursToolHive,
    Fts5,
    Tantivy,
    TantivyVmcp,
}

impl Kind {
    pub const ALL: [Kind; 5] = [
        Kind::Ours,
        Kind::OursToolHive,
        Kind::Fts5,
        Kind::Tantivy,
        Kind::TantivyVmcp,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Ours => "ours",
            Kind::OursToolHive => "ours-toolhive",
            Kind::Fts5 => "fts5",
            Kind::Tantivy => "tantivy",
            Kind::TantivyVmcp => "tantivy-vmcp",
        }
    }

    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == s)
    }

    pub fn describe(self) -> &'static str {
        match self {
            Kind::Ours => "vmcp-search, `ranking: vmcp` (default)",
            Kind::OursToolHive => "vmcp-search, `ranking: toolhive`",
            Kind::Fts5 => "SQLite FTS5 (rusqlite 0.43, bundled)",
            Kind::Tantivy => "tantivy 0.27, `en_stem`, ToolHive's query",
            Kind::TantivyVmcp => "tantivy 0.27 fed vmcp's tokens, field weights and query analysis",
        }
    }
}

/// The optimizer's field weights (`NAME_WEIGHT`, `PARAM_WEIGHT` in crates/core/src/optimizer.rs),
/// as tantivy field boosts.
const NAME_WEIGHT: f32 = 2.0;
const PARAM_WEIGHT: f32 = 0.5;

pub enum Engine {
    Ours(Ours),
    OursToolHive(OursToolHive),
    Fts5(Fts5),
    Tantivy(Tantivy),
    TantivyVmcp(Tantivy),
}

impl Engine {
    pub fn build(kind: Kind, tools: &[Tool]) -> Engine {
        match kind {
            Kind::Ours => Engine::Ours(Ours::build(tools)),
            Kind::OursToolHive => Engine::OursToolHive(OursToolHive::build(tools)),
            Kind::Fts5 => Engine::Fts5(Fts5::build(tools).expect("FTS5 build")),
            Kind::Tantivy => Engine::Tantivy(Tantivy::build(tools).expect("tantivy build")),
            Kind::TantivyVmcp => {
                // vmcp-search's tokenizer and Porter stemmer run here, inside the timed build.
                let joined = |text: &str| tokens(text).join(" ");
                let docs = tools
                    .iter()
                    .map(|t| vec![joined(&t.name), joined(&t.description), joined(&t.params)]);
                let fields = [
                    ("name", NAME_WEIGHT),
                    ("description", 1.0),
                    ("params", PARAM_WEIGHT),
                ];
                Engine::TantivyVmcp(
                    Tantivy::build_fields(&fields, "default", docs).expect("tantivy build"),
                )
            }
        }
    }

    /// A `find_tool` call with `tool_description: task`. FTS5 and tantivy get ToolHive's words
    /// (its sanitising, taken from vmcp-search so the rule is the same code; the few
    /// microseconds it tokenizes for are inside their timings).
    pub fn search(&self, task: &str, limit: usize) -> Vec<usize> {
        match self {
            Engine::Ours(e) => e.search(task, limit),
            Engine::OursToolHive(e) => e.search(task, limit),
            Engine::Fts5(e) => {
                let q = Query::from_request(task, &[]);
                e.search_words(q.terms(), limit).expect("FTS5 query")
            }
            Engine::Tantivy(e) => {
                let q = Query::from_request(task, &[]);
                e.search_words(q.terms(), limit).expect("tantivy query")
            }
            Engine::TantivyVmcp(e) => {
                let analyzed = analyze(task, &[]);
                e.search_weighted(&analyzed.terms, limit)
                    .expect("tantivy query")
            }
        }
    }
}
