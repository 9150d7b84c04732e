//! What a model reads of a definition, and its fingerprint: SHA-256 over canonical JSON (object
//! keys sorted at every level), so key order, whitespace and fields the model never sees (icons,
//! `_meta`) change nothing, and any change to what it does see changes the fingerprint.

use serde_json::{Map, Value};

/// A kind of pinned definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PinKind {
    /// A tool, keyed by `name`.
    Tool,
    /// A prompt, keyed by `name`.
    Prompt,
    /// A resource template, keyed by `uriTemplate`.
    Template,
}

impl PinKind {
    /// Every kind, in the order they are reported.
    pub const ALL: [PinKind; 3] = [PinKind::Tool, PinKind::Prompt, PinKind::Template];

    /// The kind's name in the pin file and in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            PinKind::Tool => "tools",
            PinKind::Prompt => "prompts",
            PinKind::Template => "resourceTemplates",
        }
    }

    /// The kind named `s` (as [`PinKind::as_str`] spells it).
    pub fn parse(s: &str) -> Option<PinKind> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// The fields a model reads, the key first.
    fn fields(self) -> &'static [&'static str] {
        match self {
            PinKind::Tool => &[
                "name",
                "title",
                "description",
                "inputSchema",
                "outputSchema",
                "annotations",
            ],
            PinKind::Prompt => &["name", "title", "description", "arguments"],
            PinKind::Template => &["uriTemplate", "name", "title", "description", "mimeType"],
        }
    }

    /// The item's key (its name, or its URI template), if it has one.
    pub fn key(self, item: &Value) -> Option<&str> {
        item.get(self.fields()[0]).and_then(Value::as_str)
    }
}

/// The part of `item` a model reads.
pub fn model_view(kind: PinKind, item: &Value) -> Value {
    let mut view = Map::new();
    for &field in kind.fields() {
        if let Some(v) = item.get(field).filter(|v| !v.is_null()) {
            view.insert(field.to_owned(), v.clone());
        }
    }
    Value::Object(view)
}

/// Whether `item` shows a model what `view` (a [`model_view`]) does. Objects compare as maps,
/// whatever their key order, so this agrees with comparing fingerprints.
pub(crate) fn same_view(kind: PinKind, item: &Value, view: &Value) -> bool {
    kind.fields()
        .iter()
        .all(|&f| match (shown(item.get(f)), shown(view.get(f))) {
            (Some(a), Some(b)) => same(a, b),
            (None, None) => true,
            _ => false,
        })
}

/// A field as a model sees it: null is absent.
fn shown(v: Option<&Value>) -> Option<&Value> {
    v.filter(|v| !v.is_null())
}

/// `a == b`, walking objects whose keys come in the same order side by side (the usual case: a
/// pin keeps the order the backend listed) instead of looking each key up.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && if x.keys().zip(y.keys()).all(|(k, l)| k == l) {
                    x.values().zip(y.values()).all(|(v, w)| same(v, w))
                } else {
                    x == y
                }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same(v, w))
        }
        _ => a == b,
    }
}

/// The fingerprint of a model view: `sha256:` and 64 hex digits.
pub fn fingerprint(view: &Value) -> String {
    fingerprint_without(view, None)
}

/// The fingerprint of `view` without its top-level field `skip`: two tools with the same
/// fingerprint without `name` are one tool renamed.
pub(crate) fn fingerprint_without(view: &Value, skip: Option<&str>) -> String {
    let mut text = Vec::with_capacity(512);
    canonical(view, skip, &mut text);
    let digest = ring::digest::digest(&ring::digest::SHA256, &text);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in digest.as_ref() {
        use std::fmt::Write;
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// `v` as JSON with every object's keys in byte order (serde_json keeps insertion order here),
/// leaving out the top-level key `skip`.
fn canonical(v: &Value, skip: Option<&str>, out: &mut Vec<u8>) {
    match v {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map
                .iter()
                .filter(|(k, _)| skip != Some(k.as_str()))
                .collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push(b'{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_json(k.as_str(), out);
                out.push(b':');
                canonical(v, None, out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                canonical(item, None, out);
            }
            out.push(b']');
        }
        scalar => write_json(scalar, out),
    }
}

/// A string or scalar as serde_json writes it (escaped), appended to `out`.
fn write_json<T: serde::Serialize + ?Sized>(v: &T, out: &mut Vec<u8>) {
    // Writing into a Vec cannot fail, and a string or scalar always serialises.
    let _ = serde_json::to_writer(&mut *out, v);
}
