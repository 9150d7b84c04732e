//! `codeMode`: ToolHive's keys for `execute_tool_script` (a Starlark script that calls tools).
//! The block does nothing without `enabled: true`. Unset or zero values take ToolHive's defaults
//! (its Go fields are zero when omitted); a negative number or a wrong type is an error here,
//! where ToolHive silently falls back to the default.

use std::time::Duration;

use yaml_serde::Value;

use crate::error::{Issues, KeyPath};
use crate::reader::Fields;
use crate::schema::RawSection;

/// `codeMode`.
#[derive(Debug, Clone, PartialEq)]
pub struct CodeModeConfig {
    /// `enabled` (default false).
    pub enabled: bool,
    /// `stepLimit`: Starlark steps per script (default 100,000).
    pub step_limit: u64,
    /// `parallelMaxConcurrency`: calls `parallel()` runs at once (default 10).
    pub parallel_max_concurrency: usize,
    /// `toolCallTimeout`: bound on each inner tool call (default 30s).
    pub tool_call_timeout: Duration,
    /// The section as written, for `init` output.
    pub raw: RawSection,
}

impl CodeModeConfig {
    /// ToolHive's default step limit (`script.DefaultStepLimit`).
    pub const DEFAULT_STEP_LIMIT: u64 = 100_000;
    /// ToolHive's default `parallel()` concurrency.
    pub const DEFAULT_PARALLEL: usize = 10;
    /// ToolHive's default per-call timeout.
    pub const DEFAULT_TOOL_CALL_TIMEOUT: Duration = Duration::from_secs(30);
    /// ToolHive's fixed wall clock for a whole script (not configurable there either).
    pub const SCRIPT_TIMEOUT: Duration = Duration::from_secs(60);
}

impl Default for CodeModeConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            step_limit: Self::DEFAULT_STEP_LIMIT,
            parallel_max_concurrency: Self::DEFAULT_PARALLEL,
            tool_call_timeout: Self::DEFAULT_TOOL_CALL_TIMEOUT,
            raw: RawSection(serde_json::Value::Object(serde_json::Map::new())),
        }
    }
}

pub(crate) fn decode_code_mode(v: &Value, path: &KeyPath, issues: &Issues) -> CodeModeConfig {
    let mut f = Fields::open(v, path, issues);
    let d = CodeModeConfig::default();
    let cfg = CodeModeConfig {
        enabled: f.bool("enabled").unwrap_or(d.enabled),
        step_limit: f
            .uint::<u64>("stepLimit")
            .filter(|&n| n > 0)
            .unwrap_or(d.step_limit),
        parallel_max_concurrency: f
            .uint::<usize>("parallelMaxConcurrency")
            .filter(|&n| n > 0)
            .unwrap_or(d.parallel_max_concurrency),
        tool_call_timeout: f
            .duration("toolCallTimeout")
            .filter(|t| !t.is_zero())
            .unwrap_or(d.tool_call_timeout),
        raw: f.raw_self().unwrap_or(d.raw),
    };
    f.finish();
    cfg
}
