//! Three keyword indexes over the same tool texts, each behind a cargo feature so that a binary
//! can be built with one engine alone (`tiny`, for size and build time) or all three
//! (`search-compare`, for speed, memory and recall).

#[cfg(feature = "fts5")]
pub mod fts5;
#[cfg(feature = "ours")]
pub mod ours;
#[cfg(feature = "tantivy")]
pub mod tantivy_bm25;

/// What every engine indexes for one tool. `params` (parameter names and descriptions) is read
/// only where vmcp's ranking is reproduced (`ours`, and tantivy fed vmcp's tokens): ToolHive's
/// FTS5 table has two columns, and plain tantivy gets the same two.
#[derive(Debug, Clone, Default)]
pub struct Tool {
    pub name: String,
    pub description: String,
    pub params: String,
}

/// A query for FTS5 or tantivy: each word quoted as a phrase, OR-ed (ToolHive's shape), with the
/// quote escaped in the engine's own way so that query syntax in a task cannot break the query.
pub fn quoted_or(words: &[String], escape: impl Fn(&str) -> String) -> String {
    words
        .iter()
        .map(|w| format!("\"{}\"", escape(w)))
        .collect::<Vec<_>>()
        .join(" OR ")
}
