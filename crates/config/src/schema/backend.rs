//! `backends[]`: ToolHive's `StaticBackendConfig` plus our additions (stdio `command`,
//! `args`, `env`, `cwd`; `isolation`; static `headers`).
//!
//! Semantic checks (name syntax, url per transport, ...) live in `validate::backends`.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use yaml_serde::Value;

use crate::error::{Issues, KeyPath};
use crate::reader::{Choice, Fields, seq};

/// How vmcp talks to a backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transport {
    /// MCP streamable HTTP (`streamable-http`); the default for a backend with a `url`.
    StreamableHttp,
    /// The 2024-11-05 HTTP+SSE transport (`sse`).
    Sse,
    /// A child process speaking MCP over stdin/stdout (`stdio`); the default for a
    /// backend with a `command`.
    Stdio,
}

impl Choice for Transport {
    const NAMES: &'static [(&'static str, Self)] = &[
        ("streamable-http", Self::StreamableHttp),
        ("sse", Self::Sse),
        ("stdio", Self::Stdio),
    ];
}

impl Transport {
    /// Whether this transport reaches the backend over HTTP (`url`, `headers` apply).
    pub fn is_http(self) -> bool {
        !matches!(self, Self::Stdio)
    }

    /// The spelling used in the YAML.
    pub fn as_str(self) -> &'static str {
        self.name()
    }
}

/// Whether one backend connection serves every client session, or each gets its own.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Isolation {
    /// One connection (one child process for stdio) shared by all sessions (`shared`).
    #[default]
    Shared,
    /// One connection per client session (`perSession`), capped by
    /// `server.maxPerSessionProcesses` for stdio and reaped when the session ends or idles.
    PerSession,
}

impl Choice for Isolation {
    const NAMES: &'static [(&'static str, Self)] =
        &[("shared", Self::Shared), ("perSession", Self::PerSession)];
}

/// ToolHive's backend `type`: empty for a workload, `entry` for an MCPServerEntry
/// (a remote server reached directly, which may carry its own `caBundlePath`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum BackendKind {
    /// `type` absent or empty.
    #[default]
    Workload,
    /// `type: entry`.
    Entry,
}

impl Choice for BackendKind {
    const NAMES: &'static [(&'static str, Self)] = &[("", Self::Workload), ("entry", Self::Entry)];
}

/// One backend MCP server (`backends[]`).
///
/// After validation: `url` is `Some` exactly for HTTP transports, `command` is `Some`
/// exactly for stdio. `Debug` redacts `env` and `headers` values (they hold secrets).
#[derive(Clone, PartialEq, Eq)]
pub struct BackendConfig {
    /// Unique name, `^[a-zA-Z0-9][a-zA-Z0-9._-]*$`; used for prefixes and routing.
    pub name: String,
    /// Base URL of an HTTP backend (`http://` or `https://`).
    pub url: Option<String>,
    /// Transport; defaults to `stdio` when `command` is set, else `streamable-http`.
    pub transport: Transport,
    /// ToolHive's `type` (`entry` or empty).
    pub kind: BackendKind,
    /// PEM CA bundle for TLS to this backend (ToolHive: only for `type: entry`).
    pub ca_bundle_path: Option<PathBuf>,
    /// Free-form labels.
    pub metadata: BTreeMap<String, String>,
    /// Program to run (stdio only).
    pub command: Option<String>,
    /// Its arguments (stdio only).
    pub args: Vec<String>,
    /// Extra environment for the child (stdio only); values are secrets.
    pub env: BTreeMap<String, String>,
    /// Working directory of the child (stdio only). `load_file` resolves a relative
    /// path against the config file's directory.
    pub cwd: Option<PathBuf>,
    /// Shared or per-session connection.
    pub isolation: Isolation,
    /// Static HTTP headers sent on every request (HTTP only); values are secrets.
    pub headers: BTreeMap<String, String>,
}

impl fmt::Debug for BackendConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BackendConfig")
            .field("name", &self.name)
            .field("url", &self.url)
            .field("transport", &self.transport)
            .field("kind", &self.kind)
            .field("ca_bundle_path", &self.ca_bundle_path)
            .field("metadata", &self.metadata)
            .field("command", &self.command)
            .field("args", &self.args)
            .field("env", &Redacted(&self.env))
            .field("cwd", &self.cwd)
            .field("isolation", &self.isolation)
            .field("headers", &Redacted(&self.headers))
            .finish()
    }
}

/// Prints a map's keys with every value replaced.
struct Redacted<'a>(&'a BTreeMap<String, String>);

impl fmt::Debug for Redacted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.0.keys().map(|k| (k, "<redacted>")))
            .finish()
    }
}

/// Decodes `backends` (a list).
pub(crate) fn decode_backends(v: &Value, path: &KeyPath, issues: &Issues) -> Vec<BackendConfig> {
    seq(v, path, issues)
        .map(|(item, p)| decode_backend(item, &p, issues))
        .collect()
}

fn decode_backend(v: &Value, path: &KeyPath, issues: &Issues) -> BackendConfig {
    let mut f = Fields::open(v, path, issues);
    let name = f.string("name").unwrap_or_else(|| {
        issues.push_new(&path.key("name"), "is required");
        String::new()
    });
    let url = f.string("url");
    let command = f.string("command");
    let transport = f.choice("transport").unwrap_or(if command.is_some() {
        Transport::Stdio
    } else {
        Transport::StreamableHttp
    });
    let backend = BackendConfig {
        name,
        url,
        transport,
        kind: f.choice("type").unwrap_or_default(),
        ca_bundle_path: f.string("caBundlePath").map(PathBuf::from),
        metadata: f.string_map("metadata"),
        command,
        args: f.strings("args"),
        env: f.string_map("env"),
        cwd: f.string("cwd").map(PathBuf::from),
        isolation: f.choice("isolation").unwrap_or_default(),
        headers: f.string_map("headers"),
    };
    f.finish();
    backend
}
