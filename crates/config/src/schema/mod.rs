//! The configuration model: ToolHive vMCP's schema (field names as theirs, in
//! camelCase in the YAML) plus our additive `server` section and stdio backends.
//!
//! Every defaulted value is filled in at load, so consumers read plain values
//! (`config.operational.timeouts.default` is a `Duration`). Sections we parse but do
//! not implement yet are kept as [`RawSection`] and listed by `Config::unsupported`.
//! Each submodule owns one section: its types and how it is decoded.

mod aggregation;
mod audit;
mod auth;
mod backend;
mod code_mode;
mod composite;
mod operational;
mod optimizer;
mod rate_limit;
mod server;
mod session_storage;
mod telemetry;
mod tool_pinning;

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use yaml_serde::Value;

pub use aggregation::{
    AggregationConfig, AnnotationsOverride, ConflictResolutionConfig, ConflictStrategy,
    DEFAULT_PREFIX_FORMAT, ToolConfigRef, ToolOverride, ToolVisibility, WorkloadToolConfig,
};
pub use audit::{AUDIT_EVENT_TYPES, AuditConfig, AuditFailureMode};
pub use auth::{
    AuthzConfig, AuthzType, BackendAuthStrategy, IncomingAuthConfig, IncomingAuthType, OidcConfig,
    OutgoingAuthConfig, OutgoingAuthSource, STRATEGY_TYPES,
};
pub use backend::{BackendConfig, BackendKind, Isolation, Transport};
pub use code_mode::CodeModeConfig;
pub use composite::{
    CompositeToolConfig, DEFAULT_STEP_TIMEOUT, DEFAULT_WORKFLOW_TIMEOUT, ElicitAction, ErrorAction,
    OnError, OutputConfig, OutputProperty, OutputType, StepConfig, StepKind,
};
pub use operational::{
    CircuitBreakerConfig, FailureHandlingConfig, LogLevel, OperationalConfig, PartialFailureMode,
    TimeoutConfig,
};
pub use optimizer::{EmbeddingProvider, OptimizerConfig, SearchRanking};
pub use rate_limit::{BucketConfig, RateLimitConfig, ToolRateLimit};
pub use server::{ServerConfig, StatusAccess};
pub use session_storage::{
    DEFAULT_REDIS_PORT, EndpointProblem, RedisEndpoint, RedisTlsConfig, SessionProvider,
    SessionStorageConfig,
};
pub use telemetry::{DEFAULT_SAMPLING_RATE, TelemetryConfig};
pub use tool_pinning::{PinMode, ToolPinningConfig};

use crate::error::{Issues, KeyPath};
use crate::reader::{Fields, seq};

/// The default `name` when the file has none.
pub const DEFAULT_NAME: &str = "vmcp";

/// A whole vmcp configuration file.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// `name` of this virtual server (default `vmcp`).
    pub name: String,
    /// `groupRef`: the ToolHive group (optional here; a label when backends are static).
    pub group_ref: Option<String>,
    /// `backends[]`.
    pub backends: Vec<BackendConfig>,
    /// `incomingAuth` (default anonymous).
    pub incoming_auth: IncomingAuthConfig,
    /// `outgoingAuth` (default: inline, no strategies).
    pub outgoing_auth: OutgoingAuthConfig,
    /// `aggregation`.
    pub aggregation: AggregationConfig,
    /// `compositeTools[]`.
    pub composite_tools: Vec<CompositeToolConfig>,
    /// `compositeToolRefs[]` (Kubernetes only; not supported).
    pub composite_tool_refs: Vec<CompositeToolRef>,
    /// `operational`.
    pub operational: OperationalConfig,
    /// `metadata`: free-form labels.
    pub metadata: BTreeMap<String, String>,
    /// `telemetry`: metrics and traces (the block's presence turns them on).
    pub telemetry: Option<TelemetryConfig>,
    /// `audit`.
    pub audit: Option<AuditConfig>,
    /// `optimizer` (parsed and validated; serving it is not implemented yet).
    pub optimizer: Option<OptimizerConfig>,
    /// `codeMode` (parsed and validated; serving it is not implemented yet).
    pub code_mode: Option<CodeModeConfig>,
    /// `toolPinning`: fingerprints of served definitions, and what a change does (vmcp's key).
    pub tool_pinning: Option<ToolPinningConfig>,
    /// `sessionStorage`: `memory`, or Redis shared by replicas.
    pub session_storage: Option<SessionStorageConfig>,
    /// `rateLimiting`: token buckets, in memory (no Redis needed, unlike ToolHive).
    pub rate_limiting: Option<RateLimitConfig>,
    /// `passthroughHeaders`: client request headers forwarded to every backend.
    pub passthrough_headers: Vec<String>,
    /// `server`: our additive section.
    pub server: ServerConfig,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            name: DEFAULT_NAME.to_owned(),
            group_ref: None,
            backends: Vec::new(),
            incoming_auth: IncomingAuthConfig::default(),
            outgoing_auth: OutgoingAuthConfig::default(),
            aggregation: AggregationConfig::default(),
            composite_tools: Vec::new(),
            composite_tool_refs: Vec::new(),
            operational: OperationalConfig::default(),
            metadata: BTreeMap::new(),
            telemetry: None,
            audit: None,
            optimizer: None,
            code_mode: None,
            tool_pinning: None,
            session_storage: None,
            rate_limiting: None,
            passthrough_headers: Vec::new(),
            server: ServerConfig::default(),
        }
    }
}

impl Config {
    /// The request timeout for a backend: its `perWorkload` entry, else the default.
    pub fn timeout_for(&self, backend: &str) -> Duration {
        let t = &self.operational.timeouts;
        t.per_workload.get(backend).copied().unwrap_or(t.default)
    }

    /// The backend with this name.
    pub fn backend(&self, name: &str) -> Option<&BackendConfig> {
        self.backends.iter().find(|b| b.name == name)
    }
}

/// A section kept as written (converted to JSON) until it is implemented.
///
/// `Debug` prints only the top-level keys: these sections can hold credentials
/// (telemetry headers, auth settings).
#[derive(Clone, PartialEq)]
pub struct RawSection(pub serde_json::Value);

impl fmt::Debug for RawSection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            serde_json::Value::Object(map) => {
                f.debug_set().entries(map.keys()).finish()?;
                f.write_str(" (values redacted)")
            }
            serde_json::Value::Array(items) => write!(f, "[{} items]", items.len()),
            _ => f.write_str("<redacted>"),
        }
    }
}

impl RawSection {
    /// The value at a top-level key, if this is a mapping.
    pub fn get(&self, key: &str) -> Option<&serde_json::Value> {
        self.0.get(key)
    }
}

/// `compositeToolRefs[]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompositeToolRef {
    /// `name` of the VirtualMCPCompositeToolDefinition resource.
    pub name: String,
}

/// Decodes a whole document (already env-resolved). Never fails: problems go to
/// `issues` and the value read so far is returned, so validation can still run.
pub(crate) fn decode(root: &Value, issues: &Issues) -> Config {
    let path = KeyPath::root();
    let mut f = Fields::open(root, &path, issues);
    let d = Config::default();
    let backends = f
        .value("backends")
        .map(|(v, p)| backend::decode_backends(v, &p, issues))
        .unwrap_or_default();
    let incoming_auth = f
        .value("incomingAuth")
        .map(|(v, p)| auth::decode_incoming(v, &p, issues))
        .unwrap_or_default();
    let outgoing_auth = f
        .value("outgoingAuth")
        .map(|(v, p)| auth::decode_outgoing(v, &p, issues))
        .unwrap_or_default();
    let aggregation = f
        .value("aggregation")
        .map(|(v, p)| aggregation::decode_aggregation(v, &p, issues))
        .unwrap_or_default();
    let composite_tools = f
        .value("compositeTools")
        .map(|(v, p)| {
            seq(v, &p, issues)
                .map(|(item, ip)| composite::decode_composite(item, &ip, issues))
                .collect()
        })
        .unwrap_or_default();
    let composite_tool_refs = f
        .value("compositeToolRefs")
        .map(|(v, p)| {
            seq(v, &p, issues)
                .map(|(item, ip)| {
                    let mut r = Fields::open(item, &ip, issues);
                    let name = r.string("name").unwrap_or_default();
                    r.finish();
                    CompositeToolRef { name }
                })
                .collect()
        })
        .unwrap_or_default();
    let operational = f
        .value("operational")
        .map(|(v, p)| operational::decode_operational(v, &p, issues))
        .unwrap_or_default();
    let session_storage = f
        .value("sessionStorage")
        .map(|(v, p)| session_storage::decode_session_storage(v, &p, issues));
    let server = f
        .value("server")
        .map(|(v, p)| server::decode_server(v, &p, issues))
        .unwrap_or_default();
    let config = Config {
        name: f.string("name").unwrap_or(d.name),
        group_ref: f.string("groupRef"),
        backends,
        incoming_auth,
        outgoing_auth,
        aggregation,
        composite_tools,
        composite_tool_refs,
        operational,
        metadata: f.string_map("metadata"),
        telemetry: f
            .value("telemetry")
            .map(|(v, p)| telemetry::decode_telemetry(v, &p, issues)),
        audit: f
            .value("audit")
            .map(|(v, p)| audit::decode_audit(v, &p, issues)),
        optimizer: f
            .value("optimizer")
            .map(|(v, p)| optimizer::decode_optimizer(v, &p, issues)),
        code_mode: f
            .value("codeMode")
            .map(|(v, p)| code_mode::decode_code_mode(v, &p, issues)),
        tool_pinning: f
            .value("toolPinning")
            .map(|(v, p)| tool_pinning::decode_tool_pinning(v, &p, issues)),
        session_storage,
        rate_limiting: f
            .value("rateLimiting")
            .map(|(v, p)| rate_limit::decode_rate_limiting(v, &p, issues)),
        passthrough_headers: f.strings("passthroughHeaders"),
        server,
    };
    f.finish();
    config
}
