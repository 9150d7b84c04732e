//! vmcp's query analysis (the default ranking; `ranking: toolhive` keeps ToolHive's): a task as
//! a user writes it is full of literals (paths, URLs, ticket keys, quoted text) and filler ("can
//! you show me..."), and uses other words than the tool descriptions do ("remove" for
//! "delete"). Both arms see the task through this: the keyword arm gets weighted terms (literals
//! replaced by what they are, filler dropped, common software synonyms added at half weight),
//! the semantic arm gets the task with each literal replaced by a short phrase for its kind.
//! ToolHive's stop words are dropped as in its ranking.

use std::collections::HashMap;

use crate::tokenize::tokens;

/// Weight of a synonym added to the query, relative to the user's own word.
const SYNONYM_WEIGHT: f64 = 0.5;
/// Weight of the words standing for a literal (a path becomes "file").
const KIND_WEIGHT: f64 = 0.7;

/// A query after analysis.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Analyzed {
    /// Stemmed tokens with weights, each token once (the highest weight).
    pub terms: Vec<(String, f64)>,
    /// The task with literals replaced by their kind, for the embedder.
    pub semantic_text: String,
}

impl Analyzed {
    /// True when no term survived (the keyword arm then matches nothing).
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }
}

/// What a literal in a task is, and how it reads to each arm.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Url,
    Email,
    File,
    Directory,
    Repository,
    IssueKey,
    Channel,
    Number,
    Quoted,
    Code,
}

impl Kind {
    /// Words the keyword arm searches for in place of the literal.
    fn words(self) -> &'static [&'static str] {
        match self {
            Kind::Url => &["url", "web", "page"],
            Kind::Email => &["email"],
            Kind::File => &["file"],
            Kind::Directory => &["directory"],
            Kind::Repository => &["repository"],
            Kind::IssueKey => &["issue"],
            Kind::Channel => &["channel"],
            Kind::Number | Kind::Quoted => &[],
            Kind::Code => &["command"],
        }
    }

    /// The phrase the embedder reads in place of the literal.
    fn phrase(self) -> &'static str {
        match self {
            Kind::Url => "a web page",
            Kind::Email => "an email address",
            Kind::File => "a file",
            Kind::Directory => "a directory",
            Kind::Repository => "a repository",
            Kind::IssueKey => "an issue",
            Kind::Channel => "a channel",
            Kind::Number => "a number",
            Kind::Quoted => "some text",
            Kind::Code => "a command",
        }
    }
}

/// File extensions that mark a word as a file name (a closed list: "auth.users" is not a file).
#[rustfmt::skip]
const FILE_EXTENSIONS: &[&str] = &[
    "json", "yaml", "yml", "toml", "ini", "cfg", "conf", "env", "lock", "xml", "csv", "tsv", "txt",
    "md", "rst", "log", "html", "htm", "css", "scss", "js", "mjs", "cjs", "ts", "tsx", "jsx", "py",
    "rs", "go", "java", "kt", "rb", "php", "c", "h", "cc", "cpp", "hpp", "cs", "swift", "sh",
    "bash", "zsh", "ps1", "sql", "proto", "gradle", "pdf", "doc", "docx", "xls", "xlsx", "ppt",
    "pptx", "png", "jpg", "jpeg", "gif", "svg", "webp", "bmp", "mp3", "mp4", "wav", "zip", "tar",
    "gz", "tgz", "ipynb", "dockerfile", "tf", "vue", "svelte", "lua", "pl", "r", "jl", "dart",
];

/// English function words and conversational filler: they say nothing about which tool fits
/// ("can you please show me ...") but match tool descriptions at random.
#[rustfmt::skip]
const FILLER: &[&str] = &[
    "a", "about", "after", "again", "all", "also", "am", "an", "and", "any", "anyone", "anything",
    "are", "as", "at", "be", "because", "been", "before", "being", "both", "but", "by", "can",
    "could", "did", "do", "does", "doing", "done", "each", "else", "even", "ever", "for", "from",
    "had", "has", "have", "having", "he", "her", "here", "hers", "him", "his", "how", "i", "i'd",
    "i'll", "i'm", "i've", "if", "in", "into", "is", "it", "it's", "its", "just", "let", "let's",
    "like", "me", "might", "mine", "more", "most", "much", "must", "my", "myself", "no", "nor",
    "not", "now", "of", "off", "ok", "okay", "on", "once", "one", "only", "or", "other", "our",
    "ours", "out", "over", "own", "please", "quick", "quickly", "really", "same", "she", "should",
    "so", "some", "someone", "something", "still", "such", "than", "thanks", "that", "that's",
    "the", "their", "theirs", "them", "then", "there", "there's", "these", "they", "this", "those",
    "through", "to", "too", "under", "until", "up", "us", "very", "want", "was", "we", "were",
    "what", "what's", "when", "where", "where's", "which", "while", "who", "who's", "whom", "why",
    "will", "with", "would", "yes", "yet", "you", "your", "yours", "need", "wanna", "gonna", "hey",
    "hi", "kindly", "whether", "maybe", "way", "able", "thing", "things", "stuff", "bit", "lot",
    "right", "sure", "actually", "basically",
];

/// Groups of words that name the same action or object in tool descriptions and tasks. Each
/// word of a task found here brings the other words of its groups at [`SYNONYM_WEIGHT`].
/// General software vocabulary only, nothing specific to one product.
#[rustfmt::skip]
const SYNONYMS: &[&[&str]] = &[
    &["get", "fetch", "retrieve", "read", "show", "view", "display", "see", "look", "open", "load"],
    &["list", "enumerate", "all", "every", "which", "available"],
    &["find", "search", "lookup", "locate", "query", "grep", "where"],
    &["create", "make", "new", "add", "insert", "generate", "open", "start"],
    &["delete", "remove", "drop", "erase", "destroy", "purge", "clear", "rid", "discard"],
    &["update", "change", "edit", "modify", "set", "alter", "patch", "fix", "replace", "swap", "rename"],
    &["run", "execute", "exec", "launch", "invoke", "start", "call", "spawn"],
    &["stop", "kill", "terminate", "cancel", "end", "halt", "abort", "quit", "close"],
    &["send", "post", "message", "tell", "notify", "reply", "say", "announce", "write"],
    &["comment", "reply", "note", "remark", "feedback"],
    &["download", "fetch", "save", "export"],
    &["upload", "attach", "attachment", "import"],
    &["write", "save", "store", "put", "persist"],
    &["directory", "folder", "dir", "tree", "structure", "layout"],
    &["page", "website", "site", "web", "url", "link", "browser", "webpage"],
    &["screenshot", "capture", "image", "picture", "photo", "snapshot"],
    &["click", "press", "tap", "button"],
    &["type", "enter", "fill", "input", "form"],
    &["log", "logs", "output", "print", "printed", "console", "stdout"],
    &["issue", "ticket", "bug", "task"],
    &["pull", "pr", "merge"],
    &["repository", "repo", "project", "codebase"],
    &["commit", "revision", "changeset"],
    &["database", "db", "sql", "query", "rows", "records"],
    &["user", "person", "people", "member", "account", "who", "contact", "someone"],
    &["chat", "channel", "conversation", "thread", "discussion"],
    &["time", "date", "timezone", "clock", "today", "now"],
    &["remember", "memory", "memorize", "knowledge", "recall", "know"],
    &["deploy", "release", "rollout", "ship", "publish"],
    &["rollback", "undo", "revert", "restore", "previous"],
    &["label", "tag", "category"],
    &["assign", "reassign", "assignee", "owner", "responsible"],
    &["watch", "follow", "subscribe", "watcher", "follower", "subscription"],
    &["history", "changelog", "changes", "timeline", "activity"],
    &["status", "state", "progress", "health"],
    &["container", "pod"],
    &["summary", "summarize", "describe", "details", "info", "information", "overview"],
    &["count", "number", "many", "total"],
    &["permission", "permissions", "access", "allowed", "permitted", "restriction", "rights"],
    &["compare", "diff", "difference", "differences", "changed", "modified"],
    &["crawl", "scrape", "browse", "spider", "extract"],
    &["schedule", "calendar", "event", "meeting"],
    &["wait", "until", "appear"],
    &["config", "configuration", "settings", "setting", "options", "preferences"],
    &["error", "errors", "failure", "failed", "broken", "crash", "problem"],
    &["move", "rename", "relocate", "transfer"],
    &["copy", "duplicate", "clone"],
    &["link", "relate", "relation", "connect", "blocked", "blocks", "depends"],
    &["document", "doc", "docs", "documentation", "wiki", "manual"],
];

/// Analyses a `find_tool` request: `tool_keywords` (weight 1.5: a model chose them) and the
/// task text.
pub fn analyze(description: &str, keywords: &[String]) -> Analyzed {
    let mut out = Terms::default();
    let mut semantic = Vec::new();
    for keyword in keywords {
        for word in keyword.split_whitespace() {
            add_word(&mut out, word, 1.5);
        }
    }
    for piece in literal_pieces(description) {
        match piece {
            Piece::Literal(kind) => {
                for w in kind.words() {
                    add_token(&mut out, w, KIND_WEIGHT);
                }
                semantic.push(kind.phrase().to_owned());
            }
            Piece::Word(word) => {
                match classify(word) {
                    Some(kind) => {
                        for w in kind.words() {
                            add_token(&mut out, w, KIND_WEIGHT);
                        }
                        semantic.push(kind.phrase().to_owned());
                    }
                    None => {
                        add_word(&mut out, word, 1.0);
                        // Filler stays in the embedder's text: sentence models read whole
                        // sentences (dropping it lowered semantic recall@5 on our corpus).
                        semantic.push(word.to_owned());
                    }
                }
            }
        }
    }
    Analyzed {
        terms: out.terms,
        semantic_text: semantic.join(" "),
    }
}

/// Terms being collected, each token once (a map keeps a long task linear).
#[derive(Default)]
struct Terms {
    terms: Vec<(String, f64)>,
    position: HashMap<String, usize>,
}

/// A word of the task: its tokens unless it is filler or one of ToolHive's stop words, then
/// its synonyms.
fn add_word(out: &mut Terms, word: &str, weight: f64) {
    let lower = word
        .trim_matches(|c: char| !c.is_alphanumeric() && c != '\'')
        .to_lowercase()
        .replace('’', "'");
    if lower.is_empty() {
        return;
    }
    let filler =
        FILLER.contains(&lower.as_str()) || crate::query::STOP_WORDS.contains(&lower.as_str());
    let stemmed = tokens(&lower);
    // Groups are matched by stem, so "following" finds "follow".
    if let [stem] = stemmed.as_slice() {
        for group in stemmed_synonyms().iter().filter(|g| g.contains(stem)) {
            for synonym in group.iter().filter(|s| *s != stem) {
                push(out, synonym.clone(), SYNONYM_WEIGHT * weight.min(1.0));
            }
        }
    }
    if !filler {
        for t in stemmed {
            push(out, t, weight);
        }
    }
}

/// [`SYNONYMS`] as stems, computed once.
fn stemmed_synonyms() -> &'static [Vec<String>] {
    static GROUPS: std::sync::OnceLock<Vec<Vec<String>>> = std::sync::OnceLock::new();
    GROUPS.get_or_init(|| {
        SYNONYMS
            .iter()
            .map(|group| {
                let mut stems: Vec<String> = group.iter().flat_map(|w| tokens(w)).collect();
                stems.dedup();
                stems
            })
            .collect()
    })
}

fn add_token(out: &mut Terms, word: &str, weight: f64) {
    for t in tokens(word) {
        push(out, t, weight);
    }
}

fn push(out: &mut Terms, token: String, weight: f64) {
    match out.position.get(&token) {
        Some(&i) => out.terms[i].1 = out.terms[i].1.max(weight),
        None => {
            out.position.insert(token.clone(), out.terms.len());
            out.terms.push((token, weight));
        }
    }
}

enum Piece<'a> {
    Literal(Kind),
    Word(&'a str),
}

/// Splits a task into whitespace-separated words, keeping quoted ('…', "…") and code (`…`)
/// spans together as literals.
fn literal_pieces(text: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(|c: char| !c.is_whitespace()) {
        rest = &rest[start..];
        let first = rest.chars().next().unwrap_or(' ');
        let quote = match first {
            '`' => Some(('`', Kind::Code)),
            '"' | '“' => Some((if first == '"' { '"' } else { '”' }, Kind::Quoted)),
            '\'' | '‘' => Some((if first == '\'' { '\'' } else { '’' }, Kind::Quoted)),
            _ => None,
        };
        if let Some((close, kind)) = quote {
            let body = &rest[first.len_utf8()..];
            // A closing quote followed by a word boundary ends the span ("don't" does not).
            let end = body.char_indices().find(|&(i, c)| {
                c == close
                    && body[i + c.len_utf8()..]
                        .chars()
                        .next()
                        .is_none_or(|n| !n.is_alphanumeric())
            });
            if let Some((i, c)) = end
                && i > 0
            {
                out.push(Piece::Literal(kind));
                rest = &body[i + c.len_utf8()..];
                continue;
            }
        }
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        out.push(Piece::Word(&rest[..end]));
        rest = &rest[end..];
    }
    out
}

/// What kind of literal `word` is, if it is one.
fn classify(word: &str) -> Option<Kind> {
    let w = word.trim_end_matches(['.', ',', ';', ':', '?', '!', ')', ']', '}']);
    let w = w.trim_start_matches(['(', '[', '{', '<']);
    let w = w.trim_end_matches('>');
    if w.is_empty() {
        return None;
    }
    let lower = w.to_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") || lower.starts_with("www.") {
        return Some(Kind::Url);
    }
    if let Some((user, host)) = w.split_once('@')
        && !user.is_empty()
        && host.contains('.')
    {
        return Some(Kind::Email);
    }
    if let Some(rest) = w.strip_prefix('#') {
        if !rest.is_empty() && rest.chars().all(|c| c.is_ascii_digit()) {
            return Some(Kind::Number);
        }
        if rest.chars().next().is_some_and(char::is_alphabetic) {
            return Some(Kind::Channel);
        }
    }
    if is_issue_key(w) {
        return Some(Kind::IssueKey);
    }
    let extension = lower
        .rsplit_once('.')
        .map(|(stem, ext)| (!stem.is_empty() || lower.starts_with('.'), ext));
    let has_file_extension =
        extension.is_some_and(|(named, ext)| named && FILE_EXTENSIONS.contains(&ext));
    if w.contains('/') || w.contains('\\') || w.starts_with('~') {
        if has_file_extension {
            return Some(Kind::File);
        }
        if w.starts_with('/') || w.starts_with('~') || w.starts_with('.') || w.ends_with('/') {
            return Some(Kind::Directory);
        }
        let parts: Vec<&str> = w.split('/').collect();
        if parts.len() == 2
            && parts.iter().all(|p| {
                !p.is_empty()
                    && p.chars()
                        .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '#'))
            })
        {
            return Some(Kind::Repository);
        }
        return Some(Kind::Directory);
    }
    if has_file_extension {
        return Some(Kind::File);
    }
    if w.chars()
        .all(|c| c.is_ascii_digit() || c == '.' || c == ',')
        && w.chars().any(|c| c.is_ascii_digit())
    {
        return Some(Kind::Number);
    }
    None
}

/// A tracker key such as `PROJ-12`: capitals (and digits) then a dash and a number.
fn is_issue_key(w: &str) -> bool {
    let Some((project, number)) = w.split_once('-') else {
        return false;
    };
    project.len() >= 2
        && project
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_uppercase())
        && project
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        && !number.is_empty()
        && number.chars().all(|c| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn weight(a: &Analyzed, word: &str) -> Option<f64> {
        let token = tokens(word).pop()?;
        a.terms.iter().find(|(t, _)| *t == token).map(|(_, w)| *w)
    }

    #[test]
    fn literals_become_their_kind() {
        let a = analyze(
            "show me config/settings.yaml, https://x.org/a?b=1, PROJ-12, acme/api#7 and /etc/nginx",
            &[],
        );
        assert_eq!(
            a.semantic_text,
            "show me a file a web page an issue a repository and a directory"
        );
        for (word, w) in [
            ("file", KIND_WEIGHT),
            ("url", KIND_WEIGHT),
            ("issue", KIND_WEIGHT),
            ("repository", KIND_WEIGHT),
            ("directory", KIND_WEIGHT),
        ] {
            assert_eq!(weight(&a, word), Some(w), "{word}");
        }
        // The literal's own pieces are not searched for.
        for word in ["config", "settings", "yaml", "proj", "acme", "nginx"] {
            assert_eq!(weight(&a, word), None, "{word}");
        }
    }

    #[test]
    fn other_literals() {
        let kinds = |t: &str| analyze(t, &[]).semantic_text;
        assert_eq!(kinds("mail bob@example.com"), "mail an email address");
        assert_eq!(
            kinds("tell #general and close #42"),
            "tell a channel and close a number"
        );
        assert_eq!(kinds("run `npm test` now"), "run a command now");
        assert_eq!(kinds("type 'blue shoes' here"), "type some text here");
        assert_eq!(kinds("type “blue shoes” here"), "type some text here");
        // An apostrophe inside a word does not open a quote; an unclosed quote is a word.
        assert_eq!(kinds("don't stop"), "don't stop");
        assert_eq!(kinds("it's 'open"), "it's 'open");
        // Not files: a closed extension list, so a table name and a version stay words.
        assert_eq!(
            kinds("count auth.users in v2.3"),
            "count auth.users in v2.3"
        );
        assert_eq!(kinds("release 2.4.0"), "release a number");
        assert_eq!(
            kinds("read ./notes.md and ~/bin/"),
            "read a file and a directory"
        );
    }

    #[test]
    fn filler_is_dropped_and_synonyms_added_at_half_weight() {
        let a = analyze("can you please remove the folder", &[]);
        for filler in ["can", "you", "please", "the"] {
            assert_eq!(weight(&a, filler), None, "{filler}");
        }
        assert_eq!(weight(&a, "remove"), Some(1.0));
        assert_eq!(weight(&a, "delete"), Some(SYNONYM_WEIGHT));
        assert_eq!(weight(&a, "directory"), Some(SYNONYM_WEIGHT));
        // Groups match by stem: "following" finds the watch group.
        let a = analyze("who is following SEC-19", &[]);
        assert_eq!(weight(&a, "watcher"), Some(SYNONYM_WEIGHT));
        // A filler word that names an intent still brings its group ("who" → user).
        assert_eq!(weight(&a, "who"), None);
        assert_eq!(weight(&a, "user"), Some(SYNONYM_WEIGHT));
        // The user's own word keeps its weight when a synonym of it also appears.
        let a = analyze("delete and remove", &[]);
        assert_eq!(weight(&a, "delete"), Some(1.0));
        assert_eq!(weight(&a, "remove"), Some(1.0));
    }

    #[test]
    fn keywords_weigh_more_than_the_task() {
        let a = analyze("send it", &["slack".to_owned(), "post message".to_owned()]);
        assert_eq!(weight(&a, "slack"), Some(1.5));
        assert_eq!(weight(&a, "post"), Some(1.5));
        assert_eq!(weight(&a, "send"), Some(1.0));
    }

    #[test]
    fn hostile_input_analyses_to_something_or_nothing() {
        assert!(analyze("", &[]).is_empty());
        assert!(analyze("the a of and", &[]).is_empty());
        // ToolHive's stop words are dropped too.
        assert!(analyze("name description data table", &[]).is_empty());
        assert!(analyze("\"", &[]).is_empty());
        assert!(analyze("'''' `` \"\"", &[]).is_empty());
        let a = analyze("\"unterminated `quote 'mix", &[]);
        assert!(!a.is_empty());
        let long = "word ".repeat(2000) + &"ä€😀-#/".repeat(500);
        assert!(!analyze(&long, &[]).is_empty());
        assert!(!analyze("NEAR(a b) AND \"x\" OR y* ^z", &[]).is_empty());
    }

    #[test]
    fn never_panics_on_mixed_quotes_marks_and_multibyte_text() {
        // A small linear congruential generator over the characters the analyser treats
        // specially, so the slicing around quotes and literals meets every boundary.
        const CHARS: &[char] = &[
            'a', 'Z', '1', ' ', '\'', '"', '`', '‘', '’', '“', '”', '#', '/', '\\', '~', '.', '-',
            '@', ':', '?', 'é', '😀', '日', '\u{301}', '\t',
        ];
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..5_000 {
            let len = (state >> 59) as usize + 1;
            let text: String = (0..len * 2)
                .map(|_| {
                    state = state
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1_442_695_040_888_963_407);
                    CHARS[(state >> 33) as usize % CHARS.len()]
                })
                .collect();
            let a = analyze(&text, std::slice::from_ref(&text));
            assert!(
                a.terms.iter().all(|(t, w)| !t.is_empty() && *w > 0.0),
                "{text:?}"
            );
        }
    }
}
