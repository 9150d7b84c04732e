//! SQLite FTS5 set up as ToolHive sets it up: an in-memory table `(name, description)` with
//! `tokenize='porter'`, matched by the query's words as quoted phrases OR-ed, ordered by `bm25()`.

use rusqlite::Connection;

use crate::{Tool, quoted_or};

pub struct Fts5(Connection);

impl Fts5 {
    pub fn build(tools: &[Tool]) -> rusqlite::Result<Fts5> {
        let mut conn = Connection::open_in_memory()?;
        conn.execute_batch(
            "CREATE VIRTUAL TABLE tools USING fts5(name, description, tokenize='porter')",
        )?;
        // One transaction: inserting row by row in autocommit would measure SQLite's journal.
        let tx = conn.transaction()?;
        {
            let mut insert =
                tx.prepare("INSERT INTO tools(rowid, name, description) VALUES (?1, ?2, ?3)")?;
            for (i, t) in tools.iter().enumerate() {
                insert.execute((i as i64, &t.name, &t.description))?;
            }
        }
        tx.commit()?;
        Ok(Fts5(conn))
    }

    /// `words`: the task's words after ToolHive's sanitising (stop words and repeats dropped).
    pub fn search_words(&self, words: &[String], limit: usize) -> rusqlite::Result<Vec<usize>> {
        if words.is_empty() {
            return Ok(Vec::new());
        }
        // FTS5 escapes `"` inside a string by doubling it.
        let expr = quoted_or(words, |w| w.replace('"', "\"\""));
        let mut stmt = self.0.prepare_cached(
            "SELECT rowid FROM tools WHERE tools MATCH ?1 ORDER BY bm25(tools) LIMIT ?2",
        )?;
        let rows = stmt.query_map((expr, limit as i64), |r| r.get::<_, i64>(0))?;
        rows.map(|r| r.map(|id| id as usize)).collect()
    }
}
