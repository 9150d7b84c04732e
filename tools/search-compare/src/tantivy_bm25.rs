//! tantivy, in RAM, one segment. Two set-ups:
//!
//! - [`Tantivy::build`]: the same two text fields as FTS5 (`name`, `description`), tantivy's
//!   `en_stem` analyzer (simple tokenizer, lower case, tokens over 40 bytes dropped, Snowball
//!   English stemmer) and its default BM25 `QueryParser` over both fields. This is tantivy as
//!   it comes, fed ToolHive's query words.
//! - [`Tantivy::build_fields`] with pre-tokenized text: the caller hands in text already split
//!   and stemmed (by vmcp-search's tokenizer), indexed with tantivy's `default` analyzer (which
//!   then only lower-cases and splits on spaces), and per-field boosts. This puts vmcp's
//!   tokens, field weights and query analysis on tantivy's BM25, to see what the engine alone
//!   changes.

use tantivy::collector::TopDocs;
use tantivy::query::QueryParser;
use tantivy::schema::{FAST, Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions};
use tantivy::{DocAddress, Index, IndexWriter, ReloadPolicy, Searcher, TantivyDocument};

use crate::{Tool, quoted_or};

pub struct Tantivy {
    searcher: Searcher,
    parser: QueryParser,
    /// Per segment, per document, the tool's position in the input (read from the `id` fast
    /// field once at build time, so a search maps hits without touching the doc store).
    ids: Vec<Vec<u32>>,
}

impl Tantivy {
    /// `name` and `description` with `en_stem`, equal field weights.
    pub fn build(tools: &[Tool]) -> tantivy::Result<Tantivy> {
        Tantivy::build_fields(
            &[("name", 1.0), ("description", 1.0)],
            "en_stem",
            tools
                .iter()
                .map(|t| vec![t.name.clone(), t.description.clone()]),
        )
    }

    /// One text field per `(name, boost)`; each document gives one text per field, in order.
    pub fn build_fields(
        fields: &[(&str, f32)],
        tokenizer: &str,
        docs: impl Iterator<Item = Vec<String>>,
    ) -> tantivy::Result<Tantivy> {
        let text = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(tokenizer)
                .set_index_option(IndexRecordOption::WithFreqsAndPositions),
        );
        let mut schema = Schema::builder();
        let handles: Vec<Field> = fields
            .iter()
            .map(|(name, _)| schema.add_text_field(name, text.clone()))
            .collect();
        let id = schema.add_u64_field("id", FAST);
        let index = Index::create_in_ram(schema.build());
        // One indexing thread, as the other engines build on one; 50 MB keeps 10,000 tools in
        // one segment.
        let mut writer: IndexWriter = index.writer_with_num_threads(1, 50_000_000)?;
        for (i, texts) in docs.enumerate() {
            let mut doc = TantivyDocument::default();
            for (field, value) in handles.iter().zip(&texts) {
                doc.add_text(*field, value);
            }
            doc.add_u64(id, i as u64);
            writer.add_document(doc)?;
        }
        writer.commit()?;
        // Waits for the writer's threads, so the index is final and the arena freed.
        writer.wait_merging_threads()?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        let searcher = reader.searcher();
        let mut ids = Vec::new();
        for segment in searcher.segment_readers() {
            let column = segment.fast_fields().u64("id")?;
            let docs = (0..segment.max_doc())
                .map(|d| column.first(d).unwrap_or_default() as u32)
                .collect();
            ids.push(docs);
        }
        let mut parser = QueryParser::for_index(&index, handles.clone());
        for (field, (_, boost)) in handles.iter().zip(fields) {
            if (*boost - 1.0).abs() > f32::EPSILON {
                parser.set_field_boost(*field, *boost);
            }
        }
        Ok(Tantivy {
            searcher,
            parser,
            ids,
        })
    }

    /// The same words FTS5 gets, quoted and OR-ed (the parser's default is OR as well). `"` and
    /// `\` are dropped from a word: the tokenizer splits on them anyway, and inside a phrase
    /// they would be syntax.
    pub fn search_words(&self, words: &[String], limit: usize) -> tantivy::Result<Vec<usize>> {
        if words.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        self.search_text(&quoted_or(words, |w| w.replace(['"', '\\'], " ")), limit)
    }

    /// Weighted single tokens (already stemmed, letters and digits only), each quoted and
    /// boosted: `"creat"^1 OR "issu"^0.5`.
    pub fn search_weighted(
        &self,
        terms: &[(String, f64)],
        limit: usize,
    ) -> tantivy::Result<Vec<usize>> {
        if terms.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let text = terms
            .iter()
            .map(|(t, w)| format!("\"{}\"^{w}", t.replace(['"', '\\'], " ")))
            .collect::<Vec<_>>()
            .join(" OR ");
        self.search_text(&text, limit)
    }

    fn search_text(&self, text: &str, limit: usize) -> tantivy::Result<Vec<usize>> {
        let query = self.parser.parse_query(text)?;
        let top = self
            .searcher
            .search(&query, &TopDocs::with_limit(limit).order_by_score())?;
        Ok(top
            .into_iter()
            .map(
                |(
                    _,
                    DocAddress {
                        segment_ord,
                        doc_id,
                    },
                )| { self.ids[segment_ord as usize][doc_id as usize] as usize },
            )
            .collect())
    }
}
