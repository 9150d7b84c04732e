//! `aggregation`: conflict resolution, per-workload tool filters and overrides, and
//! the default tool visibility (ToolHive's `AggregationConfig`).

use std::collections::BTreeMap;

use yaml_serde::Value;

use crate::error::{Issues, KeyPath};
use crate::reader::{Choice, Fields, entries, seq};

/// How tool names that collide across backends are resolved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum ConflictStrategy {
    /// Every tool is advertised as `prefixFormat` applied to its backend name (`prefix`).
    #[default]
    Prefix,
    /// The first backend in `priorityOrder` that has the name keeps it (`priority`).
    Priority,
    /// Conflicts must be resolved by explicit overrides (`manual`).
    Manual,
}

impl Choice for ConflictStrategy {
    const NAMES: &'static [(&'static str, Self)] = &[
        ("prefix", Self::Prefix),
        ("priority", Self::Priority),
        ("manual", Self::Manual),
    ];
}

/// Whether a backend with no `tools[]` entry has its tools advertised.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum ToolVisibility {
    /// Advertised (`allow`).
    #[default]
    Allow,
    /// Not advertised (`deny`); tools stay routable for composite tools.
    Deny,
}

impl Choice for ToolVisibility {
    const NAMES: &'static [(&'static str, Self)] = &[("allow", Self::Allow), ("deny", Self::Deny)];
}

/// `aggregation`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AggregationConfig {
    /// `conflictResolution` (default `prefix`).
    pub conflict_resolution: ConflictStrategy,
    /// `conflictResolutionConfig`.
    pub conflict_resolution_config: ConflictResolutionConfig,
    /// `tools[]`: per-workload filters and overrides.
    pub tools: Vec<WorkloadToolConfig>,
    /// `excludeAllTools`: advertise no backend tool (they stay routable).
    pub exclude_all_tools: bool,
    /// `defaultToolVisibility` (default `allow`).
    pub default_tool_visibility: ToolVisibility,
}

impl AggregationConfig {
    /// The `tools[]` entry for a workload, if any.
    pub fn tools_for(&self, workload: &str) -> Option<&WorkloadToolConfig> {
        self.tools.iter().find(|t| t.workload == workload)
    }
}

/// `conflictResolutionConfig`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConflictResolutionConfig {
    /// `prefixFormat` (default `{workload}_`); `{workload}` is replaced by the backend
    /// name. Used for tools under `prefix` and for prompts under every strategy.
    pub prefix_format: String,
    /// `priorityOrder`: backend names, highest priority first.
    pub priority_order: Vec<String>,
}

/// The default `prefixFormat`.
pub const DEFAULT_PREFIX_FORMAT: &str = "{workload}_";

impl Default for ConflictResolutionConfig {
    fn default() -> Self {
        Self {
            prefix_format: DEFAULT_PREFIX_FORMAT.to_owned(),
            priority_order: Vec::new(),
        }
    }
}

/// One `aggregation.tools[]` entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkloadToolConfig {
    /// `workload`: the backend name this entry applies to.
    pub workload: String,
    /// `toolConfigRef` (Kubernetes MCPToolConfig; parsed, not supported).
    pub tool_config_ref: Option<ToolConfigRef>,
    /// `filter`: allow-list of backend tool names to advertise; empty means no filter.
    pub filter: Vec<String>,
    /// `overrides`, keyed by the backend's original tool name.
    pub overrides: BTreeMap<String, ToolOverride>,
    /// `excludeAll`: advertise none of this workload's tools.
    pub exclude_all: bool,
}

/// `toolConfigRef`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolConfigRef {
    /// `name` of the MCPToolConfig resource.
    pub name: String,
}

/// One entry of `overrides`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolOverride {
    /// `name`: the new tool name (used for advertising and routing).
    pub name: Option<String>,
    /// `description`: the new description.
    pub description: Option<String>,
    /// `annotations`: fields to replace; absent fields pass through from the backend.
    pub annotations: Option<AnnotationsOverride>,
}

/// `overrides.<tool>.annotations`; `None` means "keep the backend's value".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AnnotationsOverride {
    /// `title`.
    pub title: Option<String>,
    /// `readOnlyHint`.
    pub read_only_hint: Option<bool>,
    /// `destructiveHint`.
    pub destructive_hint: Option<bool>,
    /// `idempotentHint`.
    pub idempotent_hint: Option<bool>,
    /// `openWorldHint`.
    pub open_world_hint: Option<bool>,
}

/// Decodes `aggregation`.
pub(crate) fn decode_aggregation(v: &Value, path: &KeyPath, issues: &Issues) -> AggregationConfig {
    let mut f = Fields::open(v, path, issues);
    let crc = match f.value("conflictResolutionConfig") {
        Some((v, p)) => decode_crc(v, &p, issues),
        None => ConflictResolutionConfig::default(),
    };
    let tools = match f.value("tools") {
        Some((v, p)) => seq(v, &p, issues)
            .map(|(item, ip)| decode_workload(item, &ip, issues))
            .collect(),
        None => Vec::new(),
    };
    let agg = AggregationConfig {
        conflict_resolution: f.choice("conflictResolution").unwrap_or_default(),
        conflict_resolution_config: crc,
        tools,
        exclude_all_tools: f.bool("excludeAllTools").unwrap_or(false),
        default_tool_visibility: f.choice("defaultToolVisibility").unwrap_or_default(),
    };
    f.finish();
    agg
}

fn decode_crc(v: &Value, path: &KeyPath, issues: &Issues) -> ConflictResolutionConfig {
    let mut f = Fields::open(v, path, issues);
    let crc = ConflictResolutionConfig {
        prefix_format: f
            .string("prefixFormat")
            .unwrap_or_else(|| DEFAULT_PREFIX_FORMAT.to_owned()),
        priority_order: f.strings("priorityOrder"),
    };
    f.finish();
    crc
}

fn decode_workload(v: &Value, path: &KeyPath, issues: &Issues) -> WorkloadToolConfig {
    let mut f = Fields::open(v, path, issues);
    let tool_config_ref = f.value("toolConfigRef").map(|(v, p)| {
        let mut r = Fields::open(v, &p, issues);
        let name = r.string("name").unwrap_or_default();
        r.finish();
        ToolConfigRef { name }
    });
    let overrides = match f.value("overrides") {
        Some((v, p)) => entries(v, &p, issues)
            .map(|(name, item, ip)| (name, decode_override(item, &ip, issues)))
            .collect(),
        None => BTreeMap::new(),
    };
    let w = WorkloadToolConfig {
        workload: f.string("workload").unwrap_or_default(),
        tool_config_ref,
        filter: f.strings("filter"),
        overrides,
        exclude_all: f.bool("excludeAll").unwrap_or(false),
    };
    f.finish();
    w
}

/// An `annotations` block (tool overrides and composite tools share its keys).
pub(crate) fn decode_annotations(
    v: &Value,
    path: &KeyPath,
    issues: &Issues,
) -> AnnotationsOverride {
    let mut a = Fields::open(v, path, issues);
    let ann = AnnotationsOverride {
        title: a.string("title"),
        read_only_hint: a.bool("readOnlyHint"),
        destructive_hint: a.bool("destructiveHint"),
        idempotent_hint: a.bool("idempotentHint"),
        open_world_hint: a.bool("openWorldHint"),
    };
    a.finish();
    ann
}

fn decode_override(v: &Value, path: &KeyPath, issues: &Issues) -> ToolOverride {
    let mut f = Fields::open(v, path, issues);
    let annotations = f
        .value("annotations")
        .map(|(v, p)| decode_annotations(v, &p, issues));
    // Go reads an empty string as "not set"; so do we.
    let o = ToolOverride {
        name: f.string("name").filter(|s| !s.is_empty()),
        description: f.string("description").filter(|s| !s.is_empty()),
        annotations,
    };
    f.finish();
    o
}
