//! ToolHive's `find_tool` query building: sanitise the words, then one FTS5 phrase per word.

use crate::tokenize::tokens;

/// Words ToolHive drops from search input (compared case-insensitively): they name parts of
/// every tool's schema and so would match everything.
pub const STOP_WORDS: &[&str] = &[
    "name",
    "description",
    "schema",
    "input",
    "output",
    "type",
    "properties",
    "required",
    "title",
    "id",
    "tool",
    "server",
    "meta",
    "data",
    "content",
    "text",
    "value",
    "field",
    "column",
    "table",
    "index",
    "key",
    "primary",
];

/// A parsed search: the phrases FTS5 would OR together.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Query {
    terms: Vec<String>,
    phrases: Vec<Vec<String>>,
}

impl Query {
    /// ToolHive's rule: keywords if any survive sanitising, else the description's words.
    pub fn from_request(description: &str, keywords: &[String]) -> Query {
        let from_keywords = sanitise(keywords.iter().flat_map(|k| k.split_whitespace()));
        let terms = if from_keywords.is_empty() {
            sanitise(description.split_whitespace())
        } else {
            from_keywords
        };
        // Each word is a quoted phrase; one that tokenizes to nothing (say "---") can match
        // no row and adds nothing to bm25, so it is dropped here.
        let phrases = terms
            .iter()
            .map(|t| tokens(t))
            .filter(|p| !p.is_empty())
            .collect();
        Query { terms, phrases }
    }

    /// True when nothing can match (no phrase with a token), so a search returns nothing.
    pub fn is_empty(&self) -> bool {
        self.phrases.is_empty()
    }

    /// The sanitised words, in order, as ToolHive would quote them into the MATCH expression.
    pub fn terms(&self) -> &[String] {
        &self.terms
    }

    /// The token sequence of each phrase, in query order.
    pub(crate) fn phrases(&self) -> &[Vec<String>] {
        &self.phrases
    }
}

/// Drops stop words and case-insensitive duplicates, keeping the first spelling seen.
fn sanitise<'a>(words: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for word in words {
        let lower = word.to_lowercase();
        if STOP_WORDS.contains(&lower.as_str()) || seen.contains(&lower) {
            continue;
        }
        seen.push(lower);
        out.push(word.to_owned());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kw(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn description_words_become_phrases() {
        let q = Query::from_request("open a new GitHub issue", &[]);
        assert_eq!(q.terms(), ["open", "a", "new", "GitHub", "issue"]);
        assert_eq!(q.phrases()[3], ["github"]);
        assert_eq!(q.phrases()[4], ["issu"]);
    }

    #[test]
    fn stop_words_are_dropped_case_insensitively() {
        let q = Query::from_request("Tool NAME for the weather Server data", &[]);
        assert_eq!(q.terms(), ["for", "the", "weather"]);
        let q = Query::from_request("schema input output type", &[]);
        assert!(q.is_empty());
        assert!(q.terms().is_empty());
    }

    #[test]
    fn duplicates_are_dropped_case_insensitively() {
        let q = Query::from_request("Issue issue ISSUE issues", &[]);
        // "issues" is a different word even though it stems the same: FTS5 sees two phrases.
        assert_eq!(q.terms(), ["Issue", "issues"]);
        assert_eq!(
            q.phrases(),
            [vec!["issu".to_string()], vec!["issu".to_string()]]
        );
    }

    #[test]
    fn keywords_win_when_any_survive() {
        let q = Query::from_request("send a slack message", &kw(&["weather", "forecast"]));
        assert_eq!(q.terms(), ["weather", "forecast"]);
        // Keywords holding only stop words fall back to the description.
        let q = Query::from_request("send a slack message", &kw(&["tool", "Name", "  "]));
        assert_eq!(q.terms(), ["send", "a", "slack", "message"]);
        // Keyword strings are split on whitespace too.
        let q = Query::from_request("", &kw(&["pull request", "tool"]));
        assert_eq!(q.terms(), ["pull", "request"]);
    }

    #[test]
    fn punctuated_words_are_multi_token_phrases() {
        let q = Query::from_request("create-issue create_issue", &[]);
        assert_eq!(q.terms(), ["create-issue", "create_issue"]);
        assert_eq!(q.phrases()[0], ["creat", "issu"]);
        assert_eq!(q.phrases()[1], ["creat", "issu"]);
    }

    #[test]
    fn empty_and_tokenless_queries() {
        assert!(Query::from_request("", &[]).is_empty());
        assert!(Query::from_request("   \t\n", &[]).is_empty());
        let q = Query::from_request("--- ...", &[]);
        assert_eq!(q.terms(), ["---", "..."]);
        assert!(q.is_empty());
        // A tokenless keyword still takes precedence over the description, as in ToolHive.
        assert!(Query::from_request("weather", &kw(&["!!!"])).is_empty());
    }
}
