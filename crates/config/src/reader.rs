//! The strict reader the schema decoders are written with: typed getters over a YAML
//! mapping that record every type error, and report every key nobody asked for.
//!
//! A decoder opens a mapping with [`Fields::open`], asks for each key it knows, and
//! calls [`Fields::finish`]; keys it never asked for are "unknown key" errors with a
//! suggestion. Getters return `None` on error, so decoding always continues and one
//! pass finds every problem. `null` (an empty `key:`) counts as absent, as in Go.

use std::collections::BTreeMap;
use std::time::Duration;

use yaml_serde::{Mapping, Value};

use crate::error::{Issues, KeyPath};
use crate::schema::RawSection;

/// A closed set of string values (an enum in the schema).
pub(crate) trait Choice: Sized + Copy + PartialEq + 'static {
    /// Every accepted spelling and its value; the first spelling of a value is canonical.
    const NAMES: &'static [(&'static str, Self)];

    /// The canonical spelling.
    fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(_, v)| *v == self)
            .map_or("", |(n, _)| n)
    }
}

/// A mapping being decoded.
pub(crate) struct Fields<'a> {
    map: Option<&'a Mapping>,
    path: KeyPath,
    asked: Vec<&'static str>,
    issues: &'a Issues,
}

impl<'a> Fields<'a> {
    /// Opens `value` as a mapping; `null` reads as empty, anything else is a type error
    /// (and every getter then returns `None`).
    pub(crate) fn open(value: &'a Value, path: &KeyPath, issues: &'a Issues) -> Self {
        let map = match untag(value) {
            Value::Mapping(m) => Some(m),
            Value::Null => None,
            other => {
                issues.push_new(path, format!("expected a mapping, found {}", kind(other)));
                None
            }
        };
        Self {
            map,
            path: path.clone(),
            asked: Vec::new(),
            issues,
        }
    }

    /// The raw value at `key` and its path; `None` when absent or `null`.
    pub(crate) fn value(&mut self, key: &'static str) -> Option<(&'a Value, KeyPath)> {
        self.asked.push(key);
        let v = untag(self.map?.get(key)?);
        (!v.is_null()).then(|| (v, self.path.key(key)))
    }

    /// A string (numbers and booleans are taken as their text, as Go's YAML does).
    pub(crate) fn string(&mut self, key: &'static str) -> Option<String> {
        let (v, p) = self.value(key)?;
        as_string(v, &p, self.issues)
    }

    /// A boolean (`true`/`false`, or a string holding one, e.g. from `${VAR}`).
    pub(crate) fn bool(&mut self, key: &'static str) -> Option<bool> {
        let (v, p) = self.value(key)?;
        match v {
            Value::Bool(b) => Some(*b),
            Value::String(s) if s == "true" || s == "false" => Some(s == "true"),
            other => {
                self.issues
                    .push_new(&p, format!("expected true or false, found {}", kind(other)));
                None
            }
        }
    }

    /// A non-negative integer that fits `T` (a string of digits is accepted too).
    pub(crate) fn uint<T: TryFrom<u64>>(&mut self, key: &'static str) -> Option<T> {
        let (v, p) = self.value(key)?;
        let n = match v {
            Value::Number(n) => n.as_u64(),
            Value::String(s) => s.trim().parse::<u64>().ok(),
            _ => None,
        };
        let Some(n) = n else {
            self.issues.push_new(
                &p,
                format!("expected a non-negative integer, found {}", kind(v)),
            );
            return None;
        };
        T::try_from(n).ok().or_else(|| {
            self.issues.push_new(&p, format!("{n} is out of range"));
            None
        })
    }

    /// A Go-style duration string.
    pub(crate) fn duration(&mut self, key: &'static str) -> Option<Duration> {
        let (v, p) = self.value(key)?;
        as_duration(v, &p, self.issues)
    }

    /// One of the values of a [`Choice`].
    pub(crate) fn choice<T: Choice>(&mut self, key: &'static str) -> Option<T> {
        let (v, p) = self.value(key)?;
        as_choice(v, &p, self.issues)
    }

    /// A list of strings; absent reads as empty.
    pub(crate) fn strings(&mut self, key: &'static str) -> Vec<String> {
        let Some((v, p)) = self.value(key) else {
            return Vec::new();
        };
        seq(v, &p, self.issues)
            .filter_map(|(item, ip)| as_string(item, &ip, self.issues))
            .collect()
    }

    /// A mapping of string to string; absent reads as empty.
    pub(crate) fn string_map(&mut self, key: &'static str) -> BTreeMap<String, String> {
        let Some((v, p)) = self.value(key) else {
            return BTreeMap::new();
        };
        entries(v, &p, self.issues)
            .filter_map(|(k, item, ip)| Some((k, as_string(item, &ip, self.issues)?)))
            .collect()
    }

    /// A section kept loosely typed (any YAML that converts to JSON).
    pub(crate) fn raw(&mut self, key: &'static str) -> Option<RawSection> {
        let (v, p) = self.value(key)?;
        match yaml_serde::from_value::<serde_json::Value>(v.clone()) {
            Ok(json) => Some(RawSection(json)),
            Err(e) => {
                self.issues
                    .push_new(&p, format!("cannot be represented: {e}"));
                None
            }
        }
    }

    /// The whole mapping, loosely typed (`None` if it was not a mapping or cannot
    /// be represented as JSON).
    pub(crate) fn raw_self(&self) -> Option<RawSection> {
        let map = self.map?;
        match yaml_serde::from_value::<serde_json::Value>(Value::Mapping(map.clone())) {
            Ok(json) => Some(RawSection(json)),
            Err(e) => {
                self.issues
                    .push_new(&self.path, format!("cannot be represented: {e}"));
                None
            }
        }
    }

    /// Reports every key that no getter asked for.
    pub(crate) fn finish(self) {
        let Some(map) = self.map else { return };
        for k in map.keys() {
            let Value::String(name) = k else {
                let text = scalar_text(k);
                self.issues.push_new(
                    &self.path.key(&text),
                    format!("keys must be strings, found {}", kind(k)),
                );
                continue;
            };
            if self.asked.contains(&name.as_str()) {
                continue;
            }
            let mut message = format!("unknown key {name:?}");
            match suggest(name, &self.asked) {
                Some(s) => message.push_str(&format!(" (did you mean {s:?}?)")),
                None => {
                    let mut known = self.asked.clone();
                    known.sort_unstable();
                    known.dedup();
                    message.push_str(&format!(" (known keys: {})", known.join(", ")));
                }
            }
            self.issues.push_new(&self.path.key(name), message);
        }
    }
}

/// Follows a YAML tag (`!foo value`) to its value; tags carry no meaning here.
fn untag(v: &Value) -> &Value {
    match v {
        Value::Tagged(t) => untag(&t.value),
        other => other,
    }
}

/// The items of a sequence with their paths; `null` is empty, anything else an error.
pub(crate) fn seq<'a>(
    v: &'a Value,
    path: &KeyPath,
    issues: &Issues,
) -> impl Iterator<Item = (&'a Value, KeyPath)> + use<'a> {
    let items: &'a [Value] = match untag(v) {
        Value::Sequence(s) => s,
        Value::Null => &[],
        other => {
            issues.push_new(path, format!("expected a list, found {}", kind(other)));
            &[]
        }
    };
    let base = path.clone();
    items
        .iter()
        .enumerate()
        .map(move |(i, item)| (untag(item), base.index(i)))
}

/// The entries of a user-keyed mapping (names chosen by the user, so no unknown-key
/// check) with their paths; non-string keys are errors.
pub(crate) fn entries<'a>(
    v: &'a Value,
    path: &KeyPath,
    issues: &'a Issues,
) -> impl Iterator<Item = (String, &'a Value, KeyPath)> + use<'a> {
    let map = match untag(v) {
        Value::Mapping(m) => Some(m),
        Value::Null => None,
        other => {
            issues.push_new(path, format!("expected a mapping, found {}", kind(other)));
            None
        }
    };
    let base = path.clone();
    map.into_iter()
        .flat_map(|m| m.iter())
        .filter_map(move |(k, v)| {
            let Value::String(name) = k else {
                issues.push_new(
                    &base.key(&scalar_text(k)),
                    format!("keys must be strings, found {}", kind(k)),
                );
                return None;
            };
            Some((name.clone(), untag(v), base.key(name)))
        })
}

/// A scalar as a string.
pub(crate) fn as_string(v: &Value, path: &KeyPath, issues: &Issues) -> Option<String> {
    match untag(v) {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        other => {
            issues.push_new(path, format!("expected a string, found {}", kind(other)));
            None
        }
    }
}

/// A Go-style duration.
pub(crate) fn as_duration(v: &Value, path: &KeyPath, issues: &Issues) -> Option<Duration> {
    let text = match untag(v) {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        other => {
            issues.push_new(
                path,
                format!("expected a duration such as \"30s\", found {}", kind(other)),
            );
            return None;
        }
    };
    crate::duration::parse_duration(&text)
        .map_err(|e| issues.push_new(path, e))
        .ok()
}

/// One of the values of a [`Choice`].
pub(crate) fn as_choice<T: Choice>(v: &Value, path: &KeyPath, issues: &Issues) -> Option<T> {
    let text = as_string(v, path, issues)?;
    if let Some((_, value)) = T::NAMES.iter().find(|(n, _)| *n == text) {
        return Some(*value);
    }
    let names: Vec<&str> = T::NAMES.iter().map(|(n, _)| *n).collect();
    let mut message = format!("must be one of: {} (got {text:?})", names.join(", "));
    if let Some(s) = suggest(&text, &names) {
        message.push_str(&format!("; did you mean {s:?}?"));
    }
    issues.push_new(path, message);
    None
}

/// A short description of a value's YAML type, for messages.
pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Sequence(_) => "a list",
        Value::Mapping(_) => "a mapping",
        Value::Tagged(_) => "a tagged value",
    }
}

/// A scalar's text, for keys that are not strings.
pub(crate) fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".to_owned(),
        _ => "?".to_owned(),
    }
}

/// The closest candidate to `input`, if one is close enough to be a likely typo:
/// a small edit distance (transpositions count as one edit), or one name being a
/// prefix of the other. Case, `_` and `-` are ignored.
pub(crate) fn suggest<'c>(input: &str, candidates: &[&'c str]) -> Option<&'c str> {
    let norm = |s: &str| -> Vec<char> {
        s.chars()
            .filter(|c| *c != '_' && *c != '-')
            .flat_map(char::to_lowercase)
            .collect()
    };
    let n_input = norm(input);
    candidates
        .iter()
        .filter_map(|c| {
            let n_cand = norm(c);
            let d = edit_distance(&n_input, &n_cand);
            let short = n_input.len().min(n_cand.len());
            let prefix =
                short >= 4 && (n_cand.starts_with(&n_input) || n_input.starts_with(&n_cand));
            (d <= 2.min(n_cand.len() / 3) || prefix).then_some((d, *c))
        })
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Optimal string alignment distance (Levenshtein plus adjacent transpositions).
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let (n, m) = (a.len(), b.len());
    let mut d = vec![vec![0usize; m + 1]; n + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    d[0] = (0..=m).collect();
    for i in 1..=n {
        for j in 1..=m {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[n][m]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        let known = ["url", "transport", "caBundlePath", "isolation"];
        assert_eq!(suggest("transprot", &known), Some("transport"));
        assert_eq!(suggest("ca_bundle_path", &known), Some("caBundlePath"));
        assert_eq!(suggest("Isolation", &known), Some("isolation"));
        assert_eq!(
            suggest("bestEffort", &["fail", "best_effort"]),
            Some("best_effort")
        );
        assert_eq!(suggest("uri", &known), Some("url"));
        assert_eq!(suggest("xyz", &known), None);
        assert_eq!(suggest("jria", &["github", "jira"]), Some("jira"));
        assert_eq!(
            suggest("readOnly", &["title", "readOnlyHint"]),
            Some("readOnlyHint")
        );
        assert_eq!(suggest("command", &known), None);
    }
}
