//! vmcp configuration: ToolHive vMCP's YAML schema (so ToolHive users bring their
//! files), our additive `server` section and stdio backends, strict loading, env
//! references, and validation that reports every problem at once.
//!
//! This crate does no network I/O and starts nothing; it only reads the config file
//! (`load_file`). Loading runs in stages that all write to one problem list:
//! parse YAML → resolve `${VAR}` → decode strictly (unknown keys are errors) →
//! validate → attach line numbers.
//!
//! ```
//! let yaml = "
//! backends:
//!   - name: fetch
//!     command: uvx
//!     args: [mcp-server-fetch]
//! ";
//! let config = vmcp_config::load_str(yaml, &|_| None).expect("valid");
//! assert_eq!(config.backends[0].transport, vmcp_config::Transport::Stdio);
//! assert_eq!(config.timeout_for("fetch"), std::time::Duration::from_secs(30));
//!
//! let errors = vmcp_config::load_str("backends:\n  - name: x\n    urll: http://a\n", &|_| None)
//!     .expect_err("typo");
//! assert!(errors.to_string().contains("backends[0].urll (line 3): unknown key"));
//! ```

mod duration;
mod env;
mod error;
mod locate;
mod mcp_json;
mod reader;
mod schema;
mod starter;
mod unsupported;
mod validate;
mod yaml_out;

use std::path::Path;

pub use duration::{format_duration, parse_duration};
pub use error::{ConfigError, ConfigErrors};
pub use mcp_json::from_mcp_json;
pub use schema::*;
pub use starter::starter_config;

use error::{Issues, KeyPath};
use locate::Locator;

/// Reads, parses, env-resolves and validates a configuration file. Environment
/// references read the process environment; a relative backend `cwd` is taken
/// relative to the file's directory.
///
/// # Errors
///
/// The file cannot be read, or any problem in it (all of them, with key paths and
/// lines).
pub fn load_file(path: &Path) -> Result<Config, ConfigErrors> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigErrors::single(format!("cannot read {}: {e}", path.display())))?;
    let mut config = load_str(&text, &|name| std::env::var(name).ok())?;
    let dir = path.parent().unwrap_or(Path::new(""));
    for b in &mut config.backends {
        if let Some(cwd) = b.cwd.as_mut().filter(|c| c.is_relative()) {
            *cwd = dir.join(&*cwd);
        }
    }
    Ok(config)
}

/// Parses, env-resolves and validates configuration text; `env` looks up variables
/// for `${VAR}` references.
///
/// # Errors
///
/// Every problem found: YAML syntax (with its line), unset variables, unknown keys,
/// wrong types, and validation failures, each with its key path and line.
pub fn load_str(yaml: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<Config, ConfigErrors> {
    let mut value: yaml_serde::Value = yaml_serde::from_str(yaml).map_err(|e| {
        ConfigErrors(vec![ConfigError {
            path: String::new(),
            line: e.location().map(|l| l.line()),
            message: format!("invalid YAML: {e}"),
        }])
    })?;
    value
        .apply_merge()
        .map_err(|e| ConfigErrors::single(format!("invalid YAML merge key: {e}")))?;
    let issues = Issues::default();
    env::resolve_tree(&mut value, &KeyPath::root(), env, &issues);
    let config = schema::decode(&value, &issues);
    validate::validate(&config, &issues);
    finish(config, issues, Some(&Locator::new(yaml)))
}

/// Serialises a configuration as YAML that [`load_str`] reads back to an equal value
/// (sections at their defaults are omitted).
pub fn to_yaml(config: &Config) -> String {
    yaml_serde::to_string(&yaml_out::to_value(config)).unwrap_or_default()
}

/// `Ok(config)` when nothing was recorded, else every issue with its line, by line.
fn finish(
    config: Config,
    issues: Issues,
    locator: Option<&Locator<'_>>,
) -> Result<Config, ConfigErrors> {
    if issues.is_empty() {
        return Ok(config);
    }
    let mut errors: Vec<ConfigError> = issues
        .into_vec()
        .into_iter()
        .map(|i| ConfigError {
            line: locator.and_then(|l| l.line_of(&i.path.0)),
            path: i.path.to_string(),
            message: i.message,
        })
        .collect();
    errors.sort_by_key(|e| e.line.unwrap_or(usize::MAX));
    Err(ConfigErrors(errors))
}
