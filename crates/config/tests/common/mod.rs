//! Helpers shared by the integration tests.
#![allow(dead_code, unreachable_pub, missing_docs)]

use vmcp_config::{Config, ConfigError, ConfigErrors, load_str};

pub fn env(name: &str) -> Option<String> {
    match name {
        "TOKEN" => Some("s3cr3t".to_owned()),
        "PORT" => Some("9000".to_owned()),
        "HOST" => Some("0.0.0.0".to_owned()),
        _ => None,
    }
}

pub fn load(yaml: &str) -> Result<Config, ConfigErrors> {
    load_str(yaml, &env)
}

pub fn ok(yaml: &str) -> Config {
    load(yaml).unwrap_or_else(|e| panic!("expected a valid config, got:\n{e}"))
}

pub fn errors(yaml: &str) -> Vec<ConfigError> {
    match load(yaml) {
        Ok(_) => panic!("expected errors, config loaded:\n{yaml}"),
        Err(e) => e.0,
    }
}

/// Asserts that loading `yaml` reports an error at `path` whose message contains
/// `needle`, and returns it.
pub fn error_at(yaml: &str, path: &str, needle: &str) -> ConfigError {
    let all = errors(yaml);
    all.iter()
        .find(|e| e.path == path && e.message.contains(needle))
        .cloned()
        .unwrap_or_else(|| panic!("no error at {path} containing {needle:?}; got:\n{all:#?}"))
}

/// A minimal valid document with these backends (YAML list items, indented 2).
pub const ONE_STDIO: &str = "backends:\n  - name: a\n    command: run-a\n";

pub const TWO: &str = "\
backends:
  - name: github
    url: https://gh.example.com/mcp
  - name: jira
    command: jira-mcp
";
