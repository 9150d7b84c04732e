//! `toolPinning` (vmcp's key; ToolHive has none): what the gateway does when a backend changes a
//! tool, prompt or resource template it already served. Each definition the model reads is
//! fingerprinted on first sight; `warn` reports a change, `enforce` also withholds the changed
//! item until `vmcp tools approve` accepts it.

use yaml_serde::Value;

use crate::error::{Issues, KeyPath};
use crate::reader::{Choice, Fields};
use crate::schema::RawSection;

/// `toolPinning.mode`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PinMode {
    /// Nothing is fingerprinted (the default).
    #[default]
    Off,
    /// Changes are logged, counted, audited and shown on the status page; still served.
    Warn,
    /// As `warn`, and a changed definition is withheld until approved.
    Enforce,
}

impl Choice for PinMode {
    const NAMES: &'static [(&'static str, Self)] = &[
        ("off", Self::Off),
        ("warn", Self::Warn),
        ("enforce", Self::Enforce),
    ];
}

impl PinMode {
    /// The spelling in a config file.
    pub fn as_str(self) -> &'static str {
        self.name()
    }
}

/// `toolPinning`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolPinningConfig {
    /// `mode` (default off).
    pub mode: PinMode,
    /// `store`: the pin file (default: `<config stem>.pins.json` beside the config; relative
    /// paths are relative to the config's directory). With `sessionStorage: redis` the pins
    /// live in Redis and this is not used.
    pub store: Option<String>,
    /// The section as written, for `init` output.
    pub raw: RawSection,
}

pub(crate) fn decode_tool_pinning(v: &Value, path: &KeyPath, issues: &Issues) -> ToolPinningConfig {
    let mut f = Fields::open(v, path, issues);
    let cfg = ToolPinningConfig {
        mode: f.choice("mode").unwrap_or_default(),
        store: f.string("store").filter(|s| !s.trim().is_empty()),
        raw: f
            .raw_self()
            .unwrap_or_else(|| RawSection(serde_json::Value::Object(serde_json::Map::new()))),
    };
    f.finish();
    cfg
}
