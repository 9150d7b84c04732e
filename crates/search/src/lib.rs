//! Keyword search over the tool catalog, ranked the way ToolHive's optimizer ranks `find_tool`.
//!
//! ToolHive keeps tools in an SQLite FTS5 table (`name`, `description`, `tokenize='porter'`) and
//! orders matches by `bm25()`. This crate reproduces that pipeline without SQLite:
//! [`tokens`] is FTS5's `unicode61` tokenizer followed by its Porter stemmer, [`Query`] is
//! ToolHive's query building (one quoted phrase per sanitised word, OR-ed together) and
//! [`Index::search`] scores with FTS5's bm25 formula.

mod analyze;
mod index;
mod porter;
mod query;
mod tokenize;

pub use analyze::{Analyzed, analyze};
pub use index::Index;
pub use porter::stem;
pub use query::{Query, STOP_WORDS};
pub use tokenize::{split_identifier, tokens};
