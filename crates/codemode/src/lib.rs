//! Code mode (`execute_tool_script`, issue 26): a Starlark script with tool-calling builtins.
//!
//! The engine ([`run`]) evaluates one script with `starlark` 0.13.0, following ToolHive's
//! `pkg/script` behaviour (docs/code-mode-design.md, sections 1-3): the script body is wrapped in
//! `def __main__():` so it may `return` at top level, every bound tool is a function, and
//! `call_tool` and `parallel` are builtins. The engine never runs inside the gateway: a one-statement
//! memory bomb such as `[0] * 2000000000` aborts the process that evaluates it, so scripts run in a
//! short-lived worker process ([`worker::serve_worker`]) that the host drives through
//! [`worker::run_in_worker`], one JSON line per message.
//!
//! No custom `StarlarkValue` types are defined: their derives expand to `unsafe impl`, and the
//! workspace forbids `unsafe`. Per-script state lives in a `thread_local!` instead.

mod convert;
mod engine;
mod natives;
mod sanitize;
mod state;
pub mod worker;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use convert::{MAX_DEPTH, parse_tool_result};
pub use engine::run;
pub use sanitize::sanitize_tool_name;
pub use state::TOO_MANY_STEPS;

/// Prefix of every engine failure, as ToolHive's `internal/core/execute.go` writes it.
pub const FAILED_PREFIX: &str = "script execution failed: ";
/// Largest total of `print` output one script may produce (bytes, newlines excluded).
pub const MAX_LOG_BYTES: usize = 1024 * 1024;
/// Largest Starlark heap a script may grow, checked before every statement.
pub const MAX_HEAP_BYTES: usize = 256 * 1024 * 1024;
/// Largest tool result or script result (bytes of JSON).
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
/// Deepest Starlark call stack (frames).
pub const MAX_CALLSTACK: usize = 50;

/// A tool the script may call, by its advertised (original) name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolInfo {
    /// Advertised name; `call_tool` takes this name, tool functions get its sanitised form.
    pub name: String,
    /// The tool's description (kept for the worker protocol and the tool description text).
    #[serde(default)]
    pub description: String,
}

/// One script run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Job {
    /// The script body, as the client sent it (not yet wrapped).
    pub script: String,
    /// The `data` argument: each key becomes a variable of the script.
    #[serde(default)]
    pub data: Map<String, Value>,
    /// The tools the caller may call (the virtual tool itself excluded).
    #[serde(default)]
    pub tools: Vec<ToolInfo>,
    /// Most statements the script may execute (ToolHive's `stepLimit`, default 100000).
    pub step_limit: u64,
    /// Most inner calls of one `parallel` round running at once (enforced by the host).
    pub parallel_max_concurrency: usize,
}

/// How a script ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The script returned `value` (JSON `null` for `None`), printing `logs` on the way.
    Ok {
        /// The returned value, converted to JSON.
        value: Value,
        /// One entry per `print` call, in order.
        logs: Vec<String>,
    },
    /// The script failed; the message already starts with [`FAILED_PREFIX`] where ToolHive's does.
    Err(String),
}

impl Outcome {
    /// A failure with ToolHive's `script execution failed: ` prefix.
    pub fn failed(message: impl std::fmt::Display) -> Self {
        Outcome::Err(format!("{FAILED_PREFIX}{message}"))
    }
}

/// What the engine needs from whoever runs the inner calls.
pub trait ToolHost {
    /// Calls tool `name` (its advertised name) with `arguments` (a JSON object) and returns the
    /// MCP `CallToolResult` JSON, or an error message (such as `call denied by authorization
    /// policy`), which fails the script.
    fn call(&mut self, name: &str, arguments: Value) -> Result<Value, String>;

    /// Runs one `parallel` round: every call, results in the same order. The default runs them
    /// one after the other; a real host runs them concurrently, at most
    /// [`Job::parallel_max_concurrency`] at a time.
    fn call_batch(&mut self, calls: Vec<(String, Value)>) -> Vec<Result<Value, String>> {
        calls
            .into_iter()
            .map(|(name, arguments)| self.call(&name, arguments))
            .collect()
    }
}

/// ToolHive's `buildResult`: the MCP `CallToolResult` of `execute_tool_script`.
///
/// A text item holding the JSON of the returned value and, when `print` was used, a second text
/// item `Script logs:\n` + the lines joined by `\n`. A failure is an `isError` result with its
/// message. No `structuredContent`.
pub fn result_content(outcome: &Outcome) -> Value {
    match outcome {
        Outcome::Ok { value, logs } => {
            let text = serde_json::to_string(value).unwrap_or_else(|_| "null".to_owned());
            let mut content = vec![text_item(text)];
            if !logs.is_empty() {
                content.push(text_item(format!("Script logs:\n{}", logs.join("\n"))));
            }
            serde_json::json!({ "content": content })
        }
        Outcome::Err(message) => serde_json::json!({
            "isError": true,
            "content": [text_item(message.clone())],
        }),
    }
}

fn text_item(text: String) -> Value {
    serde_json::json!({ "type": "text", "text": text })
}

#[cfg(test)]
mod tests;
