//! BERT's WordPiece tokenizer as `tokenizer.json` describes it (Hugging Face `tokenizers`):
//! `BertNormalizer` (clean text, pad CJK ideographs, strip accents, lowercase), `BertPreTokenizer`
//! (split on whitespace and punctuation), greedy longest-match WordPiece with a `##` prefix, and
//! the `[CLS] … [SEP]` template (or `RobertaProcessing`'s `<s> … </s>`, as MPNet models use).

use std::collections::HashMap;

use serde_json::Value;
use unicode_normalization::UnicodeNormalization;

use crate::EmbedError;

/// A loaded WordPiece tokenizer.
#[derive(Debug)]
pub struct WordPiece {
    vocab: HashMap<String, u32>,
    unk: u32,
    cls: u32,
    sep: u32,
    prefix: String,
    max_word_chars: usize,
    lowercase: bool,
    strip_accents: bool,
    chinese_chars: bool,
    clean_text: bool,
}

impl WordPiece {
    /// Reads a `tokenizer.json` whose model is WordPiece.
    ///
    /// # Errors
    /// When the file is not a WordPiece tokenizer or lacks its special tokens.
    pub fn from_json(json: &Value) -> Result<Self, EmbedError> {
        let bad = |m: &str| EmbedError::Model(format!("tokenizer.json: {m}"));
        let model = json.get("model").ok_or_else(|| bad("no model"))?;
        if model.get("type").and_then(Value::as_str) != Some("WordPiece") {
            return Err(bad("only WordPiece tokenizers (BERT family) are supported"));
        }
        let vocab: HashMap<String, u32> = model
            .get("vocab")
            .and_then(Value::as_object)
            .ok_or_else(|| bad("no vocab"))?
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), u32::try_from(v.as_u64()?).ok()?)))
            .collect();
        let id = |t: &str| {
            vocab
                .get(t)
                .copied()
                .ok_or_else(|| bad(&format!("vocab has no {t}")))
        };
        let unk_token = model
            .get("unk_token")
            .and_then(Value::as_str)
            .unwrap_or("[UNK]");
        let norm = json.get("normalizer").unwrap_or(&Value::Null);
        let flag = |k: &str, d: bool| norm.get(k).and_then(Value::as_bool).unwrap_or(d);
        let lowercase = flag("lowercase", true);
        // The tokens around a sequence: RobertaProcessing names them (`"cls": ["<s>", 0]`);
        // BERT's template is [CLS] … [SEP].
        let post = json.get("post_processor").unwrap_or(&Value::Null);
        let special = |k: &str, default: &str| -> Result<u32, EmbedError> {
            match post.get("type").and_then(Value::as_str) {
                Some("RobertaProcessing") => post
                    .get(k)
                    .and_then(|v| v.get(1))
                    .and_then(Value::as_u64)
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| bad(&format!("post_processor has no {k} id"))),
                _ => id(default),
            }
        };
        Ok(Self {
            unk: id(unk_token)?,
            cls: special("cls", "[CLS]")?,
            sep: special("sep", "[SEP]")?,
            prefix: model
                .get("continuing_subword_prefix")
                .and_then(Value::as_str)
                .unwrap_or("##")
                .to_owned(),
            max_word_chars: model
                .get("max_input_chars_per_word")
                .and_then(Value::as_u64)
                .map_or(100, |n| n as usize),
            // `strip_accents: null` follows `lowercase`, as in Hugging Face's BertNormalizer.
            strip_accents: flag("strip_accents", lowercase),
            lowercase,
            chinese_chars: flag("handle_chinese_chars", true),
            clean_text: flag("clean_text", true),
            vocab,
        })
    }

    /// The largest token id.
    pub(crate) fn max_id(&self) -> usize {
        self.vocab.values().max().map_or(0, |&m| m as usize)
    }

    /// Token ids for `text`: `[CLS]`, at most `max_len - 2` pieces, `[SEP]` (or the
    /// post-processor's own pair).
    pub fn encode(&self, text: &str, max_len: usize) -> Vec<u32> {
        let normalized = self.normalize(text);
        let mut ids = vec![self.cls];
        let budget = max_len.saturating_sub(1);
        'words: for word in pre_tokenize(&normalized) {
            for id in self.word_pieces(word) {
                if ids.len() >= budget {
                    break 'words;
                }
                ids.push(id);
            }
        }
        ids.push(self.sep);
        ids
    }

    fn normalize(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        for c in text.chars() {
            if self.clean_text {
                if c == '\0' || c == '\u{fffd}' || is_control(c) {
                    continue;
                }
                if is_whitespace(c) {
                    out.push(' ');
                    continue;
                }
            }
            if self.chinese_chars && is_cjk(c) {
                out.push(' ');
                out.push(c);
                out.push(' ');
            } else {
                out.push(c);
            }
        }
        if self.strip_accents {
            out = out
                .nfd()
                .filter(|&c| !unicode_normalization::char::is_combining_mark(c))
                .collect();
        }
        if self.lowercase {
            out = out.to_lowercase();
        }
        out
    }

    fn word_pieces(&self, word: &str) -> Vec<u32> {
        if word.chars().count() > self.max_word_chars {
            return vec![self.unk];
        }
        let mut pieces = Vec::new();
        let mut start = 0;
        let mut candidate = String::new();
        while start < word.len() {
            let mut end = word.len();
            let mut found = None;
            while start < end {
                candidate.clear();
                if start > 0 {
                    candidate.push_str(&self.prefix);
                }
                candidate.push_str(&word[start..end]);
                if let Some(&id) = self.vocab.get(&candidate) {
                    found = Some(id);
                    break;
                }
                end = prev_boundary(word, end);
            }
            let Some(id) = found else {
                return vec![self.unk];
            };
            pieces.push(id);
            start = end;
        }
        pieces
    }
}

fn prev_boundary(s: &str, mut i: usize) -> usize {
    i -= 1;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Splits on whitespace (dropped) and punctuation (kept as its own word).
fn pre_tokenize(text: &str) -> impl Iterator<Item = &str> {
    let mut words = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        if c.is_whitespace() || is_punctuation(c) {
            if let Some(s) = start.take() {
                words.push(&text[s..i]);
            }
            if !c.is_whitespace() {
                words.push(&text[i..i + c.len_utf8()]);
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        words.push(&text[s..]);
    }
    words.into_iter()
}

fn is_whitespace(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || c.is_whitespace()
}

/// Control and format characters (Unicode Cc, Cf and private use), which BERT's cleaning drops.
fn is_control(c: char) -> bool {
    if matches!(c, '\t' | '\n' | '\r') {
        return false;
    }
    c.is_control()
        || matches!(c as u32,
            0xAD | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F | 0x180E | 0x200B..=0x200F
            | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x206F | 0xFEFF | 0xFFF9..=0xFFFB
            | 0xE000..=0xF8FF | 0xF0000..=0x10FFFF)
}

/// Unicode punctuation as BERT splits it: all ASCII symbols plus the common punctuation blocks.
fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation()
        || matches!(c as u32,
            0xA1 | 0xA7 | 0xAB | 0xB6 | 0xB7 | 0xBB | 0xBF | 0x37E | 0x387
            | 0x55A..=0x55F | 0x589 | 0x58A | 0x5BE | 0x5C0 | 0x5C3 | 0x5C6 | 0x5F3 | 0x5F4
            | 0x609 | 0x60A | 0x60C | 0x60D | 0x61B | 0x61E | 0x61F | 0x66A..=0x66D | 0x6D4
            | 0x964 | 0x965 | 0x970 | 0xE4F | 0xE5A | 0xE5B
            | 0x2010..=0x2027 | 0x2030..=0x2043 | 0x2045..=0x2051 | 0x2053..=0x205E
            | 0x207D | 0x207E | 0x208D | 0x208E | 0x2308..=0x230B | 0x2329 | 0x232A
            | 0x2768..=0x2775 | 0x27C5 | 0x27C6 | 0x27E6..=0x27EF | 0x2983..=0x2998
            | 0x29D8..=0x29DB | 0x29FC | 0x29FD | 0x2CF9..=0x2CFC | 0x2CFE | 0x2CFF
            | 0x2E00..=0x2E2E | 0x2E30..=0x2E4F | 0x3001..=0x3003 | 0x3008..=0x3011
            | 0x3014..=0x301F | 0x3030 | 0x303D | 0x30A0 | 0x30FB | 0xFE10..=0xFE19
            | 0xFE30..=0xFE52 | 0xFE54..=0xFE61 | 0xFE63 | 0xFE68 | 0xFE6A | 0xFE6B
            | 0xFF01..=0xFF03 | 0xFF05..=0xFF0A | 0xFF0C..=0xFF0F | 0xFF1A | 0xFF1B
            | 0xFF1F | 0xFF20 | 0xFF3B..=0xFF3D | 0xFF3F | 0xFF5B | 0xFF5D | 0xFF5F..=0xFF65)
}

/// CJK ideographs, which BERT treats as words of their own.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F | 0x2B820..=0x2CEAF | 0xF900..=0xFAFF | 0x2F800..=0x2FA1F)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> WordPiece {
        let vocab: serde_json::Map<String, Value> = [
            "[PAD]", "[UNK]", "[CLS]", "[SEP]", "git", "##hub", "issue", "create", ",", "a",
            "cafe", "中",
        ]
        .iter()
        .enumerate()
        .map(|(i, t)| ((*t).to_owned(), Value::from(i)))
        .collect();
        WordPiece::from_json(&serde_json::json!({
            "normalizer": {"type": "BertNormalizer", "lowercase": true, "strip_accents": null},
            "model": {"type": "WordPiece", "unk_token": "[UNK]", "vocab": vocab}
        }))
        .unwrap()
    }

    #[test]
    fn splits_words_punctuation_and_pieces() {
        let t = tiny();
        assert_eq!(
            t.encode("Create a GitHub issue, café", 64),
            [2, 7, 9, 4, 5, 6, 8, 10, 3]
        );
    }

    #[test]
    fn unknown_words_and_truncation() {
        let t = tiny();
        assert_eq!(t.encode("gitx 中文", 64), [2, 1, 11, 1, 3]);
        assert_eq!(t.encode("git git git git", 4), [2, 4, 4, 3]);
        assert_eq!(t.encode("", 8), [2, 3]);
        assert_eq!(t.encode("\u{200b}\u{0}", 8), [2, 3]);
    }

    #[test]
    fn roberta_processing_names_the_sequence_tokens() {
        let json = serde_json::json!({
            "model": {"type": "WordPiece", "unk_token": "[UNK]",
                      "vocab": {"<s>": 0, "<pad>": 1, "</s>": 2, "[UNK]": 3, "hello": 4}},
            "post_processor": {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0]}
        });
        let wp = WordPiece::from_json(&json).unwrap();
        assert_eq!(wp.encode("hello there", 16), [0, 4, 3, 2]);
        let broken = serde_json::json!({
            "model": {"type": "WordPiece", "vocab": {"[UNK]": 0}},
            "post_processor": {"type": "RobertaProcessing", "sep": ["</s>"]}
        });
        let err = WordPiece::from_json(&broken).unwrap_err();
        assert!(err.to_string().contains("no cls id"), "{err}");
    }

    #[test]
    fn refuses_other_tokenizers() {
        let err = WordPiece::from_json(&serde_json::json!({"model": {"type": "BPE"}})).unwrap_err();
        assert!(err.to_string().contains("WordPiece"), "{err}");
    }
}
