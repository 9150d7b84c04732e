//! vmcp's own index (`crates/search`), built and queried as `crates/core/src/optimizer.rs` does.

use vmcp_search::{Index, Query, analyze};

use crate::Tool;

/// The optimizer's weights for vmcp's ranking (`NAME_WEIGHT`, `PARAM_WEIGHT` in optimizer.rs).
const NAME_WEIGHT: f64 = 2.0;
const PARAM_WEIGHT: f64 = 0.5;

/// `ranking: vmcp` (the default): analysed task, BM25F over name, description and parameters.
pub struct Ours(Index);

impl Ours {
    pub fn build(tools: &[Tool]) -> Ours {
        Ours(Index::build_with_params(tools.iter().map(|t| {
            (t.name.as_str(), t.description.as_str(), t.params.as_str())
        })))
    }

    pub fn search(&self, task: &str, limit: usize) -> Vec<usize> {
        let analyzed = analyze(task, &[]);
        let hits =
            self.0
                .search_weighted(&analyzed.terms, NAME_WEIGHT, PARAM_WEIGHT, limit, |_| true);
        hits.into_iter().map(|(i, _)| i).collect()
    }
}

/// `ranking: toolhive`: the same crate replaying FTS5's tokenizer, query and bm25 on two
/// columns. Its results should match the FTS5 engine's, which checks that engine's setup.
pub struct OursToolHive(Index);

impl OursToolHive {
    pub fn build(tools: &[Tool]) -> OursToolHive {
        OursToolHive(Index::build(
            tools
                .iter()
                .map(|t| (t.name.as_str(), t.description.as_str())),
        ))
    }

    pub fn search(&self, task: &str, limit: usize) -> Vec<usize> {
        let query = Query::from_request(task, &[]);
        let hits = self.0.search(&query, limit, |_| true);
        hits.into_iter().map(|(i, _)| i).collect()
    }
}
