//! How aggregation names, hides and rewrites capabilities: the core's own view of the config's
//! `aggregation` section (the binary maps one to the other, so the core does not parse YAML).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// The tool conflict strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Strategy {
    /// Every tool gets its backend's prefix.
    #[default]
    Prefix,
    /// Bare names; a collision goes to the backend earliest in the priority order.
    Priority,
    /// Bare names; every collision must be resolved by an override.
    Manual,
}

/// What to do when some backends fail discovery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PartialFailureMode {
    /// Any failing backend fails discovery.
    #[default]
    Fail,
    /// Serve what the healthy backends offer.
    BestEffort,
}

/// A per-tool override.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolOverride {
    /// New name (before conflict resolution).
    pub name: Option<String>,
    /// New description.
    pub description: Option<String>,
    /// Annotation fields to set (only the ones configured).
    pub annotations: Map<String, Value>,
}

/// Per-backend tool settings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WorkloadPolicy {
    /// If non-empty, only these (backend-original) tool names are advertised.
    pub filter: Vec<String>,
    /// Advertise none of this backend's tools.
    pub exclude_all: bool,
    /// Overrides keyed by the backend's original tool name.
    pub overrides: BTreeMap<String, ToolOverride>,
}

/// The aggregation rules.
#[derive(Debug, Clone, PartialEq)]
pub struct AggregationPolicy {
    /// Tool conflict strategy.
    pub strategy: Strategy,
    /// Prefix format, with `{workload}` standing for the backend name.
    pub prefix_format: String,
    /// Backend order for the priority strategy.
    pub priority_order: Vec<String>,
    /// Per-backend tool settings.
    pub workloads: BTreeMap<String, WorkloadPolicy>,
    /// Advertise no backend tools at all.
    pub exclude_all_tools: bool,
    /// Advertise tools only from backends listed in `workloads`.
    pub deny_unlisted: bool,
    /// Composite tools, advertised when every step's tool resolves.
    pub composites: crate::composite::Composites,
    /// The optimizer: when set, `tools/list` shows `find_tool` and `call_tool` instead.
    pub optimizer: Option<crate::optimizer::OptimizerSettings>,
}

impl Default for AggregationPolicy {
    fn default() -> Self {
        Self {
            strategy: Strategy::Prefix,
            prefix_format: "{workload}_".into(),
            priority_order: Vec::new(),
            workloads: BTreeMap::new(),
            exclude_all_tools: false,
            deny_unlisted: false,
            composites: crate::composite::Composites::default(),
            optimizer: None,
        }
    }
}

impl AggregationPolicy {
    /// `name` with `backend`'s prefix.
    pub fn prefixed(&self, backend: &str, name: &str) -> String {
        let mut s = self.prefix_format.replace("{workload}", backend);
        s.push_str(name);
        s
    }

    /// The rank of `backend` in the priority order (lower wins), if listed.
    pub fn rank(&self, backend: &str) -> Option<usize> {
        self.priority_order.iter().position(|b| b == backend)
    }

    /// Whether a backend tool (by its original name) is advertised.
    pub fn advertises_tool(&self, backend: &str, original: &str) -> bool {
        if self.exclude_all_tools {
            return false;
        }
        match self.workloads.get(backend) {
            None => !self.deny_unlisted,
            Some(w) if w.exclude_all => false,
            Some(w) if !w.filter.is_empty() => w.filter.iter().any(|f| f == original),
            Some(_) => true,
        }
    }
}
