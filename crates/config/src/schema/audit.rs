//! `audit`: ToolHive's audit keys, plus two of ours that say what happens when the audit log
//! cannot be written (`onWriteFailure`, `writeTimeout`).

use std::time::Duration;

use yaml_serde::Value;

use crate::error::{Issues, KeyPath};
use crate::reader::{Choice, Fields};
use crate::schema::RawSection;

/// Event type names accepted by `eventTypes` and `excludeEventTypes` (ToolHive's list, and
/// vmcp's definition-pinning events; `sse_connection` events are emitted but cannot be
/// filtered, as in ToolHive).
pub const AUDIT_EVENT_TYPES: &[&str] = &[
    "mcp_initialize",
    "mcp_tool_call",
    "mcp_tools_list",
    "mcp_resource_read",
    "mcp_resources_list",
    "mcp_prompt_get",
    "mcp_prompts_list",
    "mcp_notification",
    "mcp_ping",
    "mcp_logging",
    "mcp_completion",
    "mcp_roots_list_changed",
    "vmcp_workflow_started",
    "vmcp_workflow_completed",
    "vmcp_workflow_failed",
    "vmcp_workflow_timed_out",
    "vmcp_workflow_step_started",
    "vmcp_workflow_step_completed",
    "vmcp_workflow_step_failed",
    "vmcp_workflow_step_skipped",
    "vmcp_definition_changed",
    "vmcp_definition_approved",
    "mcp_request",
    "http_request",
];

/// `audit.onWriteFailure`: what requests do while audit lines cannot be written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum AuditFailureMode {
    /// Keep serving; lines that cannot be queued are dropped and counted (`open`, the default).
    #[default]
    Open,
    /// Refuse requests with 503 until lines can be written again (`closed`).
    Closed,
}

impl Choice for AuditFailureMode {
    const NAMES: &'static [(&'static str, Self)] =
        &[("open", Self::Open), ("closed", Self::Closed)];
}

/// `audit`. The block's presence turns auditing on (as in ToolHive), unless `enabled: false`.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditConfig {
    /// `enabled` as written; ToolHive ignores it, vmcp honours an explicit `false`.
    pub enabled: Option<bool>,
    /// `component` written in every event (default `vmcp-server`).
    pub component: Option<String>,
    /// `eventTypes`: allow-list (empty: all).
    pub event_types: Vec<String>,
    /// `excludeEventTypes`: deny-list, wins over `eventTypes`.
    pub exclude_event_types: Vec<String>,
    /// `includeRequestData`: the request body as `data.request`.
    pub include_request_data: bool,
    /// `includeResponseData`: the response body as `data.response`.
    pub include_response_data: bool,
    /// `detectApplicationErrors` (default true): a 2xx answer carrying a JSON-RPC error is
    /// `application_error` instead of `success`.
    pub detect_application_errors: bool,
    /// `maxDataSize`: bytes of request or response data kept (default 1024; 0 means 1024).
    pub max_data_size: usize,
    /// `maxDelegationDepth` (default 10): how many `act` links of a token are recorded.
    pub max_delegation_depth: u32,
    /// `logFile`: appended to (created with mode 0600); absent: standard output.
    pub log_file: Option<String>,
    /// `onWriteFailure` (ours; default `open`).
    pub on_write_failure: AuditFailureMode,
    /// `writeTimeout` (ours; default 1s): the longest a request waits for room in the audit
    /// queue before `onWriteFailure` applies.
    pub write_timeout: Duration,
    /// The section as written, for `init` output.
    pub raw: RawSection,
}

impl Default for AuditConfig {
    fn default() -> Self {
        Self {
            enabled: None,
            component: None,
            event_types: Vec::new(),
            exclude_event_types: Vec::new(),
            include_request_data: false,
            include_response_data: false,
            detect_application_errors: true,
            max_data_size: 1024,
            max_delegation_depth: 10,
            log_file: None,
            on_write_failure: AuditFailureMode::Open,
            write_timeout: Duration::from_secs(1),
            raw: RawSection(serde_json::Value::Object(serde_json::Map::new())),
        }
    }
}

impl AuditConfig {
    /// Whether events are written: the block is present and not `enabled: false`.
    pub fn is_on(&self) -> bool {
        self.enabled != Some(false)
    }
}

pub(crate) fn decode_audit(v: &Value, path: &KeyPath, issues: &Issues) -> AuditConfig {
    let mut f = Fields::open(v, path, issues);
    let d = AuditConfig::default();
    let max_data_size = match f.uint::<usize>("maxDataSize") {
        None | Some(0) => d.max_data_size,
        Some(n) => n,
    };
    let cfg = AuditConfig {
        enabled: f.bool("enabled"),
        component: f.string("component").filter(|c| !c.is_empty()),
        event_types: f.strings("eventTypes"),
        exclude_event_types: f.strings("excludeEventTypes"),
        include_request_data: f.bool("includeRequestData").unwrap_or(false),
        include_response_data: f.bool("includeResponseData").unwrap_or(false),
        detect_application_errors: f.bool("detectApplicationErrors").unwrap_or(true),
        max_data_size,
        max_delegation_depth: f
            .uint("maxDelegationDepth")
            .unwrap_or(d.max_delegation_depth),
        log_file: f.string("logFile").filter(|p| !p.is_empty()),
        on_write_failure: f.choice("onWriteFailure").unwrap_or_default(),
        write_timeout: f.duration("writeTimeout").unwrap_or(d.write_timeout),
        raw: f.raw_self().unwrap_or(d.raw),
    };
    f.finish();
    cfg
}
