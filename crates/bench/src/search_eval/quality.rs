//! Search quality: recall@1, recall@5 and MRR of `find_tool` over the labelled queries, and the
//! token savings it reports.

use serde_json::{Value, json};
use vmcp_core::ToolSearch;

use crate::corpus::Query;

/// One ranking mode's scores.
#[derive(Debug, Clone)]
pub(crate) struct Scores {
    pub(crate) mode: &'static str,
    pub(crate) queries: usize,
    /// Share of queries with an expected tool first.
    pub(crate) recall_1: f64,
    /// Share of queries with an expected tool in the first five.
    pub(crate) recall_5: f64,
    /// recall@5 over the even-numbered and the odd-numbered queries: a ranking tuned on one
    /// half shows it as a gap.
    pub(crate) recall_5_halves: [f64; 2],
    /// Mean of 1 / rank of the first expected tool (0 when absent).
    pub(crate) mrr: f64,
    /// Mean `token_metrics.savings_percent`.
    pub(crate) savings_percent: f64,
    /// `token_metrics.baseline_tokens` (the whole catalog).
    pub(crate) baseline_tokens: u64,
    /// Mean `token_metrics.returned_tokens`.
    pub(crate) returned_tokens: f64,
    /// Queries whose expected tools were not in the first five.
    pub(crate) misses: Vec<(String, Vec<String>)>,
}

/// What `find_tool` is given for a query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Input {
    /// The user's task text as `tool_description`, no keywords.
    Task,
    /// The arguments an agent wrote for the task (description and keywords); queries without
    /// one are left out.
    Agent,
}

pub(crate) async fn score(
    mode: &'static str,
    search: &ToolSearch,
    queries: &[Query],
    input: Input,
) -> Scores {
    let queries: Vec<&Query> = queries
        .iter()
        .filter(|q| input == Input::Task || q.agent.is_some())
        .collect();
    let (mut r1, mut r5, mut rr, mut savings, mut returned) = (0usize, 0usize, 0.0, 0.0, 0.0);
    let mut baseline = 0;
    let mut misses = Vec::new();
    let mut halves = [0usize; 2];
    for (n, q) in queries.iter().enumerate() {
        let args = match (input, &q.agent) {
            (Input::Agent, Some(agent)) => agent.clone(),
            _ => json!({"tool_description": q.text}),
        };
        let r = search.find(&args).await;
        let out = &r["structuredContent"];
        let names: Vec<String> = out["tools"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|t| t["name"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        let rank = names.iter().position(|n| q.expected.contains(n));
        r1 += usize::from(rank == Some(0));
        r5 += usize::from(rank.is_some_and(|r| r < 5));
        halves[n % 2] += usize::from(rank.is_some_and(|r| r < 5));
        rr += rank.map_or(0.0, |r| 1.0 / (r + 1) as f64);
        if rank.is_none_or(|r| r >= 5) {
            misses.push((q.text.clone(), names.into_iter().take(5).collect()));
        }
        let m = &out["token_metrics"];
        savings += m["savings_percent"].as_f64().unwrap_or(0.0);
        returned += m["returned_tokens"].as_f64().unwrap_or(0.0);
        baseline = m["baseline_tokens"].as_u64().unwrap_or(0);
    }
    let n = queries.len().max(1) as f64;
    Scores {
        mode,
        queries: queries.len(),
        recall_1: r1 as f64 / n,
        recall_5: r5 as f64 / n,
        recall_5_halves: [
            halves[0] as f64 / queries.len().div_ceil(2).max(1) as f64,
            halves[1] as f64 / (queries.len() / 2).max(1) as f64,
        ],
        mrr: rr / n,
        savings_percent: savings / n,
        baseline_tokens: baseline,
        returned_tokens: returned / n,
        misses,
    }
}

impl Scores {
    pub(crate) fn json(&self) -> Value {
        json!({
            "mode": self.mode, "queries": self.queries, "recall_at_1": self.recall_1,
            "recall_at_5": self.recall_5, "recall_at_5_even_odd": self.recall_5_halves, "mrr": self.mrr, "savings_percent": self.savings_percent,
            "baseline_tokens": self.baseline_tokens, "returned_tokens": self.returned_tokens,
            "misses": self.misses.iter().map(|(q, got)| json!({"query": q, "top5": got})).collect::<Vec<_>>(),
        })
    }
}
