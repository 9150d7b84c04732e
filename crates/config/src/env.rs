//! Environment references in string values: `${VAR}`, `${VAR:-default}`, and `$$` for a
//! literal dollar. Resolved once, on the parsed YAML tree, before decoding.
//!
//! A `$` not followed by `{` or `$` is kept as written, so `$HOME` or a lone price
//! sign pass through. Like the shell, `:-` also applies when the variable is set but
//! empty. Mapping keys are never expanded.

use yaml_serde::Value;

use crate::error::{Issues, KeyPath};

/// Why a string could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EnvProblem {
    /// `${NAME}` without a default, and `NAME` is not set.
    Unset(String),
    /// A `${` with no closing brace, or an invalid variable name.
    Malformed(String),
}

impl EnvProblem {
    fn message(&self) -> String {
        match self {
            Self::Unset(name) => format!(
                "environment variable {name} is not set (set it, or write ${{{name}:-default}})"
            ),
            Self::Malformed(why) => why.clone(),
        }
    }
}

/// Expands the references in one string.
///
/// # Errors
///
/// Every unset variable (without a default) and malformed reference in `input`.
pub(crate) fn expand(
    input: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String, Vec<EnvProblem>> {
    let mut out = String::with_capacity(input.len());
    let mut problems = Vec::new();
    let mut rest = input;
    while let Some(pos) = rest.find('$') {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
        } else if let Some(body_start) = after.strip_prefix('{') {
            let Some(close) = body_start.find('}') else {
                problems.push(EnvProblem::Malformed(format!(
                    "unterminated ${{ in {input:?} (write $$ for a literal dollar)"
                )));
                return Err(problems);
            };
            let body = &body_start[..close];
            let (name, default) = match body.split_once(":-") {
                Some((n, d)) => (n, Some(d)),
                None => (body, None),
            };
            if !valid_name(name) {
                problems.push(EnvProblem::Malformed(format!(
                    "invalid environment variable name {name:?} in ${{{body}}}"
                )));
            } else {
                match (env(name), default) {
                    (Some(v), Some(d)) if v.is_empty() => out.push_str(d),
                    (Some(v), _) => out.push_str(&v),
                    (None, Some(d)) => out.push_str(d),
                    (None, None) => problems.push(EnvProblem::Unset(name.to_owned())),
                }
            }
            rest = &body_start[close + 1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(problems)
    }
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// Expands every string scalar in `value` in place; problems go to `issues` with the
/// key path of the string that holds them.
pub(crate) fn resolve_tree(
    value: &mut Value,
    path: &KeyPath,
    env: &dyn Fn(&str) -> Option<String>,
    issues: &Issues,
) {
    match value {
        Value::String(s) if s.contains('$') => match expand(s, env) {
            Ok(expanded) => *s = expanded,
            Err(problems) => {
                for p in problems {
                    issues.push(path, p.message());
                }
            }
        },
        Value::Sequence(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                resolve_tree(item, &path.index(i), env, issues);
            }
        }
        Value::Mapping(map) => {
            for (k, v) in map.iter_mut() {
                let key = match k {
                    Value::String(s) => s.clone(),
                    other => crate::reader::scalar_text(other),
                };
                resolve_tree(v, &path.key(&key), env, issues);
            }
        }
        Value::Tagged(tagged) => resolve_tree(&mut tagged.value, path, env, issues),
        _ => {}
    }
}

/// Escapes `$` as `$$` in every string scalar, so text written by `to_yaml` reads back
/// unchanged through [`resolve_tree`].
pub(crate) fn escape_tree(value: &mut Value) {
    match value {
        Value::String(s) if s.contains('$') => *s = s.replace('$', "$$"),
        Value::Sequence(items) => items.iter_mut().for_each(escape_tree),
        Value::Mapping(map) => map.values_mut().for_each(escape_tree),
        Value::Tagged(tagged) => escape_tree(&mut tagged.value),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "HOME" => Some("/home/u".into()),
            "EMPTY" => Some(String::new()),
            "TOKEN" => Some("s3cr3t".into()),
            _ => None,
        }
    }

    fn ok(s: &str) -> String {
        expand(s, &env).unwrap_or_else(|e| panic!("{s}: {e:?}"))
    }

    #[test]
    fn expands_set_and_default() {
        assert_eq!(ok("${HOME}/x"), "/home/u/x");
        assert_eq!(ok("Bearer ${TOKEN}"), "Bearer s3cr3t");
        assert_eq!(ok("${MISSING:-fallback}"), "fallback");
        assert_eq!(ok("${MISSING:-}"), "");
        assert_eq!(ok("${EMPTY:-d}"), "d");
        assert_eq!(ok("${EMPTY}"), "");
        assert_eq!(ok("${HOME:-d}"), "/home/u");
        assert_eq!(ok("${A_B:-x}${TOKEN}"), "xs3cr3t");
    }

    #[test]
    fn dollar_escapes_and_bare_dollars() {
        assert_eq!(ok("$$"), "$");
        assert_eq!(ok("$${HOME}"), "${HOME}");
        assert_eq!(ok("cost $5"), "cost $5");
        assert_eq!(ok("$HOME"), "$HOME");
        assert_eq!(ok("end$"), "end$");
    }

    #[test]
    fn reports_every_unset_variable() {
        let err = expand("${A}-${B}-${HOME}", &env).expect_err("unset");
        assert_eq!(
            err,
            vec![EnvProblem::Unset("A".into()), EnvProblem::Unset("B".into())]
        );
    }

    #[test]
    fn rejects_malformed_references() {
        for input in ["${HOME", "${1X}", "${}", "${A-B}"] {
            let err = expand(input, &env).expect_err(input);
            assert!(
                matches!(err.as_slice(), [EnvProblem::Malformed(_)]),
                "{input}: {err:?}"
            );
        }
    }

    #[test]
    fn escape_then_expand_is_identity() {
        for s in ["plain", "$", "$$", "${X}", "a$b${c}$$"] {
            let mut v = Value::String(s.into());
            escape_tree(&mut v);
            let Value::String(escaped) = v else {
                panic!("not a string")
            };
            assert_eq!(ok(&escaped), s);
        }
    }
}
