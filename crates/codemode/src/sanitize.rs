//! Tool names as Starlark identifiers (ToolHive's `conversions/toolname.go`).

/// Words the starlark 0.13 lexer reserves: a tool whose sanitised name is one of these gets no
/// function (it stays reachable through `call_tool`).
const KEYWORDS: &[&str] = &[
    "and", "break", "continue", "def", "elif", "else", "for", "if", "in", "lambda", "load", "not",
    "or", "pass", "return", // keywords
    "as", "assert", "async", "await", "class", "del", "except", "finally", "from", "global",
    "import", "is", "nonlocal", "raise", "try", "while", "with", "yield", // reserved
];

/// Names the engine defines itself; a tool sanitised to one of these gets no function either.
const ENGINE_NAMES: &[&str] = &["__tool", "__main__", "__result__", "call_tool", "parallel"];

/// ToolHive's sanitising: every character outside `[A-Za-z0-9_]` becomes `_`, and a leading digit
/// gets a `_` prefix.
pub fn sanitize_tool_name(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

/// The function name of each tool (by index), or `None` where it gets none: an empty name, a
/// keyword, an engine name, or a later tool whose sanitised name an earlier one already took
/// (the first wins).
pub(crate) fn bind_names(tools: &[crate::ToolInfo]) -> Vec<Option<String>> {
    let mut taken = std::collections::HashSet::new();
    tools
        .iter()
        .map(|tool| {
            let name = sanitize_tool_name(&tool.name);
            let usable = !name.is_empty()
                && !KEYWORDS.contains(&name.as_str())
                && !ENGINE_NAMES.contains(&name.as_str());
            (usable && taken.insert(name.clone())).then_some(name)
        })
        .collect()
}
