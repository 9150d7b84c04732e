//! Rules for `backends[]`: name syntax and uniqueness, what each transport requires
//! and forbids, ToolHive's `type`/`caBundlePath` rules, env and header syntax.

use std::collections::BTreeMap;

use super::{absolute_path_problem, header_name_problem, is_http_url};
use crate::error::{Issues, KeyPath};
use crate::schema::{BackendConfig, BackendKind, Config};

pub(super) fn check(config: &Config, issues: &Issues) {
    let mut first_index: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, b) in config.backends.iter().enumerate() {
        let path = KeyPath::root().key("backends").index(i);
        if !b.name.is_empty() {
            if !valid_name(&b.name) {
                issues.push_new(
                    &path.key("name"),
                    format!(
                        "{:?} is not a valid backend name (letters, digits, '.', '_', '-'; \
                         starting with a letter or digit)",
                        b.name
                    ),
                );
            }
            if let Some(first) = first_index.insert(&b.name, i) {
                first_index.insert(&b.name, first);
                issues.push_new(
                    &path.key("name"),
                    format!(
                        "duplicate backend name {:?} (also backends[{first}])",
                        b.name
                    ),
                );
            }
        }
        check_kind(b, &path, issues);
        if b.transport.is_http() {
            check_http(b, &path, issues);
        } else {
            check_stdio(b, &path, issues);
        }
    }
}

/// `^[a-zA-Z0-9][a-zA-Z0-9._-]*$`
fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

fn check_kind(b: &BackendConfig, path: &KeyPath, issues: &Issues) {
    if b.kind == BackendKind::Entry && !b.transport.is_http() {
        issues.push_new(&path.key("type"), "type entry needs an http or sse backend");
    }
    if let Some(ca) = &b.ca_bundle_path {
        let p = path.key("caBundlePath");
        if b.kind != BackendKind::Entry {
            issues.push_new(&p, "is only valid when type is entry");
        } else if let Some(problem) = absolute_path_problem(ca) {
            issues.push_new(&p, problem);
        }
    }
}

fn check_http(b: &BackendConfig, path: &KeyPath, issues: &Issues) {
    let transport = b.transport.as_str();
    match &b.url {
        None => issues.push_new(
            &path.key("url"),
            format!("is required for {transport} backends"),
        ),
        Some(url) if !is_http_url(url) => issues.push_new(
            &path.key("url"),
            format!("{url:?} must be an http:// or https:// URL"),
        ),
        Some(_) => {}
    }
    let stdio_only = [
        ("command", b.command.is_some()),
        ("args", !b.args.is_empty()),
        ("env", !b.env.is_empty()),
        ("cwd", b.cwd.is_some()),
    ];
    for (key, present) in stdio_only {
        if present {
            issues.push_new(
                &path.key(key),
                format!("only applies to stdio backends (this one is {transport})"),
            );
        }
    }
    for (name, value) in &b.headers {
        let p = path.key("headers").key(name);
        if let Some(problem) = header_name_problem(name) {
            issues.push_new(&p, problem);
        } else if value.chars().any(|c| c.is_control() && c != '\t') {
            // The value is a secret: say what is wrong without echoing it.
            issues.push_new(&p, "header value must not contain control characters");
        }
    }
}

fn check_stdio(b: &BackendConfig, path: &KeyPath, issues: &Issues) {
    if b.url.is_some() {
        issues.push_new(
            &path.key("url"),
            "must be absent for stdio backends (set command instead)",
        );
    }
    match &b.command {
        None => issues.push_new(&path.key("command"), "is required for stdio backends"),
        Some(c) if c.trim().is_empty() => {
            issues.push_new(&path.key("command"), "must not be empty");
        }
        Some(_) => {}
    }
    if !b.headers.is_empty() {
        issues.push_new(
            &path.key("headers"),
            "only applies to http backends (use env for stdio)",
        );
    }
    for name in b.env.keys() {
        if name.is_empty() || name.contains(['=', '\0']) {
            issues.push_new(
                &path.key("env").key(name),
                format!("{name:?} is not a valid environment variable name"),
            );
        }
    }
}
