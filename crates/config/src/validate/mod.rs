//! Semantic validation of a decoded [`Config`]: ToolHive's validator rules plus ours,
//! every problem collected (never stopping at the first).
//!
//! One submodule per section. Rules that name other backends ("workload must be a
//! configured backend") apply when backends are listed statically, which is the only
//! way vmcp learns of them.

mod aggregation;
mod audit;
mod auth;
mod backends;
mod composite;
mod operational;
mod optimizer;
mod rate_limit;
mod server;
mod session_storage;
mod telemetry;

use std::collections::BTreeSet;

use crate::error::{Issues, KeyPath};
use crate::schema::Config;

/// Runs every rule over `config`, recording problems in `issues`.
pub(crate) fn validate(config: &Config, issues: &Issues) {
    let root = KeyPath::root();
    if config.name.trim().is_empty() {
        issues.push_new(&root.key("name"), "must not be empty");
    }
    if config.backends.is_empty() && config.group_ref.is_none() {
        issues.push_new(
            &root.key("backends"),
            "at least one backend is required (vmcp does not discover ToolHive groups)",
        );
    }
    backends::check(config, issues);
    aggregation::check(config, issues);
    operational::check(config, issues);
    auth::check(config, issues);
    server::check(&config.server, &root.key("server"), issues);
    if let Some(a) = &config.audit {
        audit::check(a, &root.key("audit"), issues);
    }
    if let Some(t) = &config.telemetry {
        telemetry::check(t, &root.key("telemetry"), issues);
    }
    if let Some(o) = &config.optimizer {
        optimizer::check(o, &root.key("optimizer"), issues);
    }
    if let Some(r) = &config.rate_limiting {
        rate_limit::check(r, &root.key("rateLimiting"), issues);
    }
    check_passthrough_headers(config, issues);
    composite::check(config, issues);
    if let Some(s) = &config.session_storage {
        session_storage::check(s, &root.key("sessionStorage"), issues);
    }
}

/// Names of the statically listed backends, or `None` when there are none (then
/// references to backends cannot be checked).
fn backend_names(config: &Config) -> Option<BTreeSet<&str>> {
    (!config.backends.is_empty()).then(|| config.backends.iter().map(|b| b.name.as_str()).collect())
}

/// Records an error if `name` is not a configured backend.
fn check_backend_ref(names: Option<&BTreeSet<&str>>, name: &str, path: &KeyPath, issues: &Issues) {
    if let Some(names) = names
        && !name.is_empty()
        && !names.contains(name)
    {
        let list: Vec<&str> = names.iter().copied().collect();
        let mut message = format!("{name:?} is not a configured backend");
        match crate::reader::suggest(name, &list) {
            Some(s) => message.push_str(&format!(" (did you mean {s:?}?)")),
            None => message.push_str(&format!(" (backends: {})", list.join(", "))),
        }
        issues.push_new(path, message);
    }
}

/// Headers a configuration may neither set nor forward: routing, hop-by-hop,
/// smuggling and spoofing vectors (ToolHive's restricted set), plus the MCP session
/// headers vmcp manages itself.
const RESTRICTED_HEADERS: &[&str] = &[
    "host",
    "connection",
    "keep-alive",
    "te",
    "trailer",
    "upgrade",
    "http2-settings",
    "proxy-authorization",
    "proxy-authenticate",
    "proxy-connection",
    "transfer-encoding",
    "content-length",
    "forwarded",
    "x-forwarded-for",
    "x-forwarded-host",
    "x-forwarded-proto",
    "x-real-ip",
    "mcp-session-id",
    "mcp-protocol-version",
];

/// Why `name` cannot be used as a configured header name, if it cannot.
fn header_name_problem(name: &str) -> Option<String> {
    let is_tchar = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if name.is_empty() {
        Some("header name must not be empty".to_owned())
    } else if !name.chars().all(is_tchar) {
        Some(format!("invalid header name {name:?}"))
    } else if RESTRICTED_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
        Some(format!("{name:?} is a restricted header and cannot be set"))
    } else {
        None
    }
}

fn check_passthrough_headers(config: &Config, issues: &Issues) {
    let path = KeyPath::root().key("passthroughHeaders");
    for (i, name) in config.passthrough_headers.iter().enumerate() {
        let lower = name.to_ascii_lowercase();
        let problem = if lower == "authorization" || lower == "cookie" {
            Some(format!(
                "{name:?} cannot be forwarded: it carries the caller's credentials"
            ))
        } else if ["x-forwarded-", "proxy-", "mcp-"]
            .iter()
            .any(|p| lower.starts_with(p))
            || [
                "content-type",
                "accept",
                "expect",
                "last-event-id",
                "set-cookie",
            ]
            .contains(&lower.as_str())
        {
            // Proxy and MCP transport headers are the gateway's own on each hop.
            Some(format!(
                "{name:?} is set by the gateway itself and cannot be forwarded"
            ))
        } else {
            header_name_problem(name)
        };
        if let Some(p) = problem {
            issues.push_new(&path.index(i), p);
        }
    }
}

/// Why `path` is not acceptable as an absolute, traversal-free file path, if it is not.
fn absolute_path_problem(path: &std::path::Path) -> Option<&'static str> {
    let text = path.to_string_lossy();
    if text.contains('\0') || text.contains("..") {
        Some("contains invalid path characters")
    } else if !path.is_absolute() {
        Some("must be an absolute path")
    } else {
        None
    }
}

/// Whether `url` is an `http://` or `https://` URL with a host.
fn is_http_url(url: &str) -> bool {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"));
    match rest {
        Some(rest) => {
            let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
            !authority.is_empty() && !url.chars().any(|c| c.is_whitespace() || c.is_control())
        }
        None => false,
    }
}
