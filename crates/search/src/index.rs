//! The inverted index and FTS5's `bm25()` ranking.
//!
//! Scoring follows SQLite's `ext/fts5/fts5_aux.c` (`fts5Bm25GetData` / `fts5Bm25Function`):
//!
//! ```text
//! IDF(P)  = ln((N - n(P) + 0.5) / (n(P) + 0.5)), replaced by 1e-6 when <= 0
//! f(P)    = sum over the phrase's hits in the row of the hit column's weight (all 1 here)
//! score   = sum over P of IDF(P) * (f(P) * (k1 + 1)) / (f(P) + k1 * (1 - b + b * D / avgdl))
//! ```
//!
//! with k1 = 1.2, b = 0.75, N the row count, n(P) the rows matching P, D the row's token count
//! over all columns and avgdl the table's total token count / N. Note that the column weights
//! are folded into one frequency per phrase (`aFreq[ip] += w`) before the saturation, not
//! applied per column. FTS5 returns `-score`; we return `score`, best first.

use std::collections::HashMap;

use crate::query::Query;
use crate::tokenize::tokens;

const K1: f64 = 1.2;
const B: f64 = 0.75;
/// FTS5's floor for phrases found in half the rows or more.
const MIN_IDF: f64 = 1e-6;
/// The indexed columns, in FTS5 column order: name, description.
const COLUMNS: usize = 2;

/// A read-only search index over one catalog version.
#[derive(Debug, Clone, Default)]
pub struct Index {
    vocab: HashMap<String, u32>,
    /// Per document, per column, the token ids in order (positions matter for phrases).
    docs: Vec<[Vec<u32>; COLUMNS]>,
    /// Per token id, every occurrence as (document, column, position), in that order.
    postings: Vec<Vec<(u32, u8, u32)>>,
    avgdl: f64,
    /// vmcp's third field, outside FTS5's statistics: per token id, the documents whose
    /// parameters (names and descriptions) hold it, once per occurrence, in document order.
    param_postings: Vec<Vec<u32>>,
    /// Per document, BM25's length normalisation `1 − b + b·len/avglen` for its name and
    /// description together, and for its parameters.
    norms: Vec<f64>,
    param_norms: Vec<f64>,
}

impl Index {
    /// Indexes `(name, description)` pairs; a document's index is its position in `docs`.
    pub fn build<'a>(docs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Index {
        let mut index = Index::default();
        let mut total_tokens = 0usize;
        for (name, description) in docs {
            let doc = index.docs.len() as u32;
            let mut cols: [Vec<u32>; COLUMNS] = Default::default();
            for (col, text) in [name, description].into_iter().enumerate() {
                for (pos, token) in tokens(text).into_iter().enumerate() {
                    let id = index.intern(token);
                    index.postings[id as usize].push((doc, col as u8, pos as u32));
                    cols[col].push(id);
                }
                total_tokens += cols[col].len();
            }
            index.docs.push(cols);
        }
        if !index.docs.is_empty() {
            index.avgdl = total_tokens as f64 / index.docs.len() as f64;
        }
        index.norms = (0..index.docs.len())
            .map(|d| 1.0 - B + B * index.doc_len(d) as f64 / index.avgdl)
            .collect();
        index
    }

    /// [`Index::build`] plus each tool's parameter text, which only
    /// [`Index::search_weighted`] reads.
    pub fn build_with_params<'a>(
        docs: impl IntoIterator<Item = (&'a str, &'a str, &'a str)>,
    ) -> Index {
        let docs: Vec<_> = docs.into_iter().collect();
        let mut index = Index::build(docs.iter().map(|&(n, d, _)| (n, d)));
        let mut lens = Vec::with_capacity(docs.len());
        for (doc, &(_, _, params)) in docs.iter().enumerate() {
            let toks = tokens(params);
            lens.push(toks.len());
            for token in toks {
                let id = index.intern(token);
                index.param_postings[id as usize].push(doc as u32);
            }
        }
        let avg = lens.iter().sum::<usize>() as f64 / docs.len().max(1) as f64;
        index.param_norms = lens
            .iter()
            .map(|&l| 1.0 - B + B * l as f64 / avg.max(1.0))
            .collect();
        index
    }

    fn intern(&mut self, token: String) -> u32 {
        let next = self.vocab.len() as u32;
        let id = *self.vocab.entry(token).or_insert(next);
        if id == next {
            self.postings.push(Vec::new());
            self.param_postings.push(Vec::new());
        }
        id
    }

    /// Number of indexed documents.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// True when no documents are indexed.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// Best first; only documents whose index (insertion order) `allowed(i)` admits; at most `limit`.
    ///
    /// N, n(P) and avgdl are table-wide, as in ToolHive's `MATCH ? AND name IN (...)`: the
    /// filter removes rows from the result, not from the statistics.
    pub fn search(
        &self,
        query: &Query,
        limit: usize,
        allowed: impl Fn(usize) -> bool,
    ) -> Vec<(usize, f64)> {
        if query.is_empty() || self.docs.is_empty() || limit == 0 {
            return Vec::new();
        }
        let n_rows = self.docs.len() as f64;
        let mut scores: Vec<f64> = vec![0.0; self.docs.len()];
        let mut matched = vec![false; self.docs.len()];
        // Phrases are summed in query order, as fts5Bm25Function does, so the floating-point
        // result is the same as SQLite's.
        for phrase in query.phrases() {
            let hits = self.phrase_hits(phrase);
            let idf = ((n_rows - hits.len() as f64 + 0.5) / (hits.len() as f64 + 0.5)).ln();
            let idf = if idf <= 0.0 { MIN_IDF } else { idf };
            for (doc, freq) in hits {
                let d = self.doc_len(doc) as f64;
                let freq = f64::from(freq);
                scores[doc] +=
                    idf * ((freq * (K1 + 1.0)) / (freq + K1 * (1.0 - B + B * d / self.avgdl)));
                matched[doc] = true;
            }
        }
        best(&scores, &matched, allowed, limit)
    }

    /// vmcp's ranking: BM25 over single stemmed tokens, each with a weight (see
    /// [`crate::analyze`]), a name hit counting `name_weight` times a description hit, and
    /// Lucene's always-positive IDF (FTS5's floors every token in half the tools or more to the
    /// same 1e-6, so "get" and "list" stop ranking at all in a catalog of getters).
    pub fn search_weighted(
        &self,
        terms: &[(String, f64)],
        name_weight: f64,
        param_weight: f64,
        limit: usize,
        allowed: impl Fn(usize) -> bool,
    ) -> Vec<(usize, f64)> {
        if terms.is_empty() || self.docs.is_empty() || limit == 0 {
            return Vec::new();
        }
        let n_rows = self.docs.len() as f64;
        let mut scores: Vec<f64> = vec![0.0; self.docs.len()];
        let mut matched = vec![false; self.docs.len()];
        // BM25F: each field's frequency is normalised by that field's length, weighted, and
        // summed into one pseudo-frequency before the saturation.
        let mut tf: Vec<f64> = vec![0.0; self.docs.len()];
        // Which term last touched each document, so each is counted once per term.
        let mut stamp: Vec<usize> = vec![usize::MAX; self.docs.len()];
        let mut touched: Vec<usize> = Vec::new();
        for (k, (token, weight)) in terms.iter().enumerate() {
            let Some(&id) = self.vocab.get(token) else {
                continue;
            };
            touched.clear();
            for &(doc, col, _) in &self.postings[id as usize] {
                let doc = doc as usize;
                let w = if col == 0 { name_weight } else { 1.0 };
                if stamp[doc] != k {
                    stamp[doc] = k;
                    touched.push(doc);
                }
                tf[doc] += w / self.norms[doc];
            }
            for &doc in &self.param_postings[id as usize] {
                let doc = doc as usize;
                if stamp[doc] != k {
                    stamp[doc] = k;
                    touched.push(doc);
                }
                tf[doc] += param_weight / self.param_norms[doc];
            }
            let n = touched.len() as f64;
            let idf = (1.0 + (n_rows - n + 0.5) / (n + 0.5)).ln();
            for &doc in &touched {
                let f = tf[doc];
                scores[doc] += weight * idf * (f * (K1 + 1.0)) / (f + K1);
                matched[doc] = true;
                tf[doc] = 0.0;
            }
        }
        best(&scores, &matched, allowed, limit)
    }

    fn doc_len(&self, doc: usize) -> usize {
        self.docs[doc].iter().map(Vec::len).sum()
    }

    /// Per matching document, how many times the phrase occurs with its tokens adjacent in one
    /// column (overlapping occurrences count, as in FTS5's position lists); document order.
    fn phrase_hits(&self, phrase: &[String]) -> Vec<(usize, u32)> {
        let Some(ids) = phrase
            .iter()
            .map(|t| self.vocab.get(t).copied())
            .collect::<Option<Vec<u32>>>()
        else {
            return Vec::new();
        };
        let Some(&first) = ids.first() else {
            return Vec::new();
        };
        let mut hits: Vec<(usize, u32)> = Vec::new();
        for &(doc, col, pos) in &self.postings[first as usize] {
            let (doc, pos) = (doc as usize, pos as usize);
            let column = &self.docs[doc][col as usize];
            if column.get(pos..pos + ids.len()) != Some(&ids[..]) {
                continue;
            }
            match hits.last_mut() {
                Some((d, count)) if *d == doc => *count += 1,
                _ => hits.push((doc, 1)),
            }
        }
        hits
    }
}

/// The `limit` best matched and allowed documents, best first; equal scores keep insertion
/// order (FTS5's rowid). Only the first `limit` are sorted.
fn best(
    scores: &[f64],
    matched: &[bool],
    allowed: impl Fn(usize) -> bool,
    limit: usize,
) -> Vec<(usize, f64)> {
    let mut results: Vec<(usize, f64)> = (0..scores.len())
        .filter(|&i| matched[i] && allowed(i))
        .map(|i| (i, scores[i]))
        .collect();
    let order = |a: &(usize, f64), b: &(usize, f64)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if results.len() > limit {
        results.select_nth_unstable_by(limit, order);
        results.truncate(limit);
    }
    results.sort_by(order);
    results
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(description: &str) -> Query {
        Query::from_request(description, &[])
    }

    fn ids(results: &[(usize, f64)]) -> Vec<usize> {
        results.iter().map(|r| r.0).collect()
    }

    #[test]
    fn phrases_need_adjacent_tokens_in_one_column() {
        let index = Index::build([
            ("create_issue", "Create an issue"),     // adjacent in name
            ("issue_tracker", "Create a new issue"), // both present, never adjacent
            ("mcp_create", "Issue reports"),         // adjacent only across columns
            ("x", "create issue and create issue"),  // two hits in description
        ]);
        let found = index.search(&q("create-issue"), 10, |_| true);
        assert_eq!(ids(&found), [3, 0]);
        assert!(found[0].1 > found[1].1);
        assert_eq!(ids(&index.search(&q("create_issue"), 10, |_| true)), [3, 0]);
        // As separate words each token matches on its own.
        assert_eq!(index.search(&q("create issue"), 10, |_| true).len(), 4);
    }

    #[test]
    fn hits_count_across_columns_and_overlaps() {
        let index = Index::build([("weather", "weather weather"), ("a a a", "")]);
        assert_eq!(index.phrase_hits(&tokens("weather")), [(0, 3)]);
        assert_eq!(index.phrase_hits(&tokens("a-a")), [(1, 2)]);
        assert!(index.phrase_hits(&tokens("unknown")).is_empty());
    }

    #[test]
    fn idf_is_floored_for_common_phrases() {
        // "get" is in 2 of 3 rows: ln((3 - 2 + 0.5) / 2.5) < 0, so IDF = 1e-6.
        let index = Index::build([("get", "x"), ("get", "y"), ("z", "w")]);
        let found = index.search(&q("get"), 10, |_| true);
        assert_eq!(ids(&found), [0, 1]);
        // f = 1, D = 2, avgdl = 2: 1e-6 * 2.2 / (1 + 1.2) = 1e-6.
        assert!((found[0].1 - 1e-6).abs() < 1e-18);
        assert_eq!(found[0].1, found[1].1);
    }

    #[test]
    fn empty_index_and_limits() {
        let empty = Index::build(std::iter::empty());
        assert!(empty.is_empty());
        assert_eq!(empty.len(), 0);
        assert!(empty.search(&q("anything"), 10, |_| true).is_empty());
        let index = Index::build([("", ""), ("a", "")]);
        assert_eq!(index.len(), 2);
        assert!(index.search(&q("a"), 0, |_| true).is_empty());
        assert_eq!(ids(&index.search(&q("a"), 1, |_| true)), [1]);
    }

    fn terms(words: &[(&str, f64)]) -> Vec<(String, f64)> {
        words
            .iter()
            .map(|&(w, weight)| (tokens(w).remove(0), weight))
            .collect()
    }

    #[test]
    fn weighted_search_counts_names_params_and_weights() {
        let index = Index::build_with_params([
            ("list_files", "Lists entries.", "path The directory"),
            ("read", "Reads the files of a directory.", "path"),
            ("send", "Sends a message.", "channel The channel"),
        ]);
        // A name hit outranks the same hit in a description of similar length.
        let found = index.search_weighted(&terms(&[("files", 1.0)]), 2.0, 0.5, 10, |_| true);
        assert_eq!(ids(&found), [0, 1]);
        // Parameters are searched: "channel" is only in send's.
        let found = index.search_weighted(&terms(&[("channel", 1.0)]), 2.0, 0.5, 10, |_| true);
        assert_eq!(ids(&found), [2]);
        // ...and not at all with weight 0 (ToolHive's two columns only).
        let found = index.search_weighted(&terms(&[("channel", 1.0)]), 2.0, 0.0, 10, |_| true);
        assert_eq!(ids(&found), [2], "still matched, with a zero score");
        assert_eq!(found[0].1, 0.0);
        // A term's weight scales its contribution.
        let one = index.search_weighted(&terms(&[("message", 1.0)]), 2.0, 0.5, 10, |_| true);
        let half = index.search_weighted(&terms(&[("message", 0.5)]), 2.0, 0.5, 10, |_| true);
        assert!((one[0].1 - 2.0 * half[0].1).abs() < 1e-12);
        // The filter and the limit apply; an unknown token matches nothing.
        let found = index.search_weighted(&terms(&[("files", 1.0)]), 2.0, 0.5, 10, |i| i != 0);
        assert_eq!(ids(&found), [1]);
        assert_eq!(
            index
                .search_weighted(&terms(&[("directory", 1.0)]), 2.0, 0.5, 1, |_| true)
                .len(),
            1
        );
        assert!(
            index
                .search_weighted(&terms(&[("zebra", 1.0)]), 2.0, 0.5, 10, |_| true)
                .is_empty()
        );
        assert!(
            index
                .search_weighted(&[], 2.0, 0.5, 10, |_| true)
                .is_empty()
        );
    }

    #[test]
    fn weighted_search_keeps_common_words_useful() {
        // "get" is in 3 of 4 tools: FTS5's IDF floors it to 1e-6, Lucene's stays positive, so
        // a tool with both words still beats one with only the rarer word.
        let index = Index::build_with_params([
            ("get_issue", "Get an issue.", ""),
            ("get_page", "Get a page.", ""),
            ("get_user", "Get a user.", ""),
            ("issue_events", "Events of an issue.", ""),
        ]);
        let found = index.search_weighted(
            &terms(&[("get", 1.0), ("issue", 1.0)]),
            2.0,
            0.5,
            10,
            |_| true,
        );
        assert_eq!(found[0].0, 0);
        assert!(found.iter().all(|&(_, s)| s > 0.0));
        // Plain `build` has no parameter field, and weighted search still works on it.
        let plain = Index::build([("get_issue", "Get an issue.")]);
        assert_eq!(
            plain
                .search_weighted(&terms(&[("issue", 1.0)]), 2.0, 0.5, 10, |_| true)
                .len(),
            1
        );
    }

    #[test]
    fn index_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Index>();
        check::<Query>();
    }
}
