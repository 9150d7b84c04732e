//! `Config::unsupported`: the keys that parse and validate but that vmcp does not
//! implement yet, so `serve` can refuse to start instead of ignoring them.

use crate::schema::{Config, OutgoingAuthSource};

impl Config {
    /// Paths of configured features that are parsed but not implemented yet, e.g.
    /// `compositeToolRefs`, `codeMode`,
    /// `outgoingAuth.backends.github: header_injection`. Empty when everything
    /// configured is supported. `serve` refuses to start when this is not empty.
    pub fn unsupported(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut add = |s: String| out.push(s);
        if self.backends.is_empty() && self.group_ref.is_some() {
            add("groupRef (discovering backends from a ToolHive group)".to_owned());
        }
        if let Some(authz) = &self.incoming_auth.authz
            && authz.primary_upstream_provider.is_some()
        {
            add("incomingAuth.authz.primaryUpstreamProvider (needs ToolHive's embedded authorization server)".to_owned());
        }
        let out_auth = &self.outgoing_auth;
        if out_auth.source == OutgoingAuthSource::Discovered {
            add("outgoingAuth.source: discovered".to_owned());
        }
        let implemented = ["unauthenticated", "header_injection", "token_exchange"];
        if let Some(s) = out_auth
            .default
            .as_ref()
            .filter(|s| !implemented.contains(&s.kind.as_str()))
        {
            add(format!("outgoingAuth.default: {}", s.kind));
        }
        for (name, s) in &out_auth.backends {
            if !implemented.contains(&s.kind.as_str()) {
                add(format!("outgoingAuth.backends.{name}: {}", s.kind));
            }
        }
        for (i, t) in self.aggregation.tools.iter().enumerate() {
            if t.tool_config_ref.is_some() {
                add(format!("aggregation.tools[{i}].toolConfigRef"));
            }
        }
        if !self.composite_tool_refs.is_empty() {
            add("compositeToolRefs".to_owned());
        }
        if self.code_mode.as_ref().is_some_and(|c| c.enabled) {
            add("codeMode".to_owned());
        }
        out
    }
}
