//! A readable difference between a pinned definition and what the backend serves now: text
//! fields (description, title) line by line, everything else (schemas, annotations, arguments)
//! as JSON-pointer changes (`json-patch` computes them).

use json_patch::PatchOperation;
use serde_json::Value;

/// Fields shown as text rather than as one replaced value.
const TEXT_FIELDS: [&str; 2] = ["/description", "/title"];

/// One line per change: `~ /annotations/readOnlyHint: true -> false`, `+ /inputSchema/...: v`,
/// `- /inputSchema/...: v`, and for text fields the field name followed by `-`/`+` lines.
pub fn diff(old: &Value, new: &Value) -> Vec<String> {
    let mut lines = Vec::new();
    for op in json_patch::diff(old, new).0 {
        match op {
            PatchOperation::Add(add) => lines.push(format!(
                "+ {}: {}",
                pointer(add.path.as_str()),
                short(&add.value)
            )),
            PatchOperation::Remove(remove) => {
                let was = old.pointer(remove.path.as_str()).unwrap_or(&Value::Null);
                lines.push(format!(
                    "- {}: {}",
                    pointer(remove.path.as_str()),
                    short(was)
                ));
            }
            PatchOperation::Replace(replace) => {
                let path = replace.path.as_str();
                let was = old.pointer(path).unwrap_or(&Value::Null);
                match (was, &replace.value) {
                    (Value::String(a), Value::String(b)) if TEXT_FIELDS.contains(&path) => {
                        lines.push(format!("~ {path}:"));
                        text_diff(a, b, &mut lines);
                    }
                    (was, now) => lines.push(format!("~ {path}: {} -> {}", short(was), short(now))),
                }
            }
            other => lines.push(format!("~ {}", other.path().as_str())),
        }
    }
    lines
}

fn pointer(path: &str) -> &str {
    if path.is_empty() { "/" } else { path }
}

/// Changed lines of `a` and `b`, prefixed `    - ` and `    + ` (unchanged lines are left out
/// unless the text is a single line, which is then shown whole on both sides).
fn text_diff(a: &str, b: &str, lines: &mut Vec<String>) {
    let diff = similar::TextDiff::from_lines(a, b);
    for change in diff.iter_all_changes() {
        let sign = match change.tag() {
            similar::ChangeTag::Delete => '-',
            similar::ChangeTag::Insert => '+',
            similar::ChangeTag::Equal => continue,
        };
        lines.push(format!(
            "    {sign} {}",
            change.value().trim_end_matches('\n')
        ));
    }
}

/// A value on one line, cut at 200 characters.
fn short(v: &Value) -> String {
    let text = v.to_string();
    if text.chars().count() <= 200 {
        return text;
    }
    let cut: String = text.chars().take(200).collect();
    format!("{cut}…")
}

/// One definition awaiting approval, as reviewers see it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingReport {
    /// The backend.
    pub backend: String,
    /// `tools`, `prompts` or `resourceTemplates`.
    pub kind: &'static str,
    /// The item's name (a template's URI template).
    pub name: String,
    /// Why it awaits approval.
    pub reason: String,
    /// When it was first seen.
    pub first_seen: String,
    /// What changed ([`diff`] against the pin), or the whole definition with `+` when there is
    /// no pin to compare with (a copied description).
    pub diff: Vec<String>,
}

/// Every definition of `book` awaiting approval, with what changed.
pub fn pending_report(book: &super::PinBook) -> Vec<PendingReport> {
    use super::Reason;
    book.all_pending()
        .map(|(backend, kind, name, pending)| {
            let before = match &pending.reason {
                Reason::Changed => book.pin(backend, kind, name),
                Reason::Renamed { from } => book.pin(backend, kind, from),
                Reason::CopiesDescription { .. } => None,
            };
            let diff = match before {
                Some(pin) => diff(&pin.definition, &pending.definition),
                None => serde_json::to_string_pretty(&pending.definition)
                    .unwrap_or_default()
                    .lines()
                    .map(|l| format!("+ {l}"))
                    .collect(),
            };
            PendingReport {
                backend: backend.to_owned(),
                kind: kind.as_str(),
                name: name.to_owned(),
                reason: pending.reason.describe(),
                first_seen: pending.first_seen.clone(),
                diff,
            }
        })
        .collect()
}
