//! `incomingAuth` and `outgoingAuth`. The auth type, the OIDC and authz settings and the strategy
//! type are decoded and checked; per-strategy settings are kept loosely typed for the auth crate,
//! which reads them.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use yaml_serde::Value;

use super::RawSection;
use crate::error::{Issues, KeyPath};
use crate::reader::{Choice, Fields, entries};

/// `incomingAuth.type`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum IncomingAuthType {
    /// No client authentication (`anonymous`, the default when `incomingAuth` is absent).
    #[default]
    Anonymous,
    /// ToolHive's `local` mode.
    Local,
    /// OpenID Connect bearer tokens (`oidc`).
    Oidc,
}

impl Choice for IncomingAuthType {
    const NAMES: &'static [(&'static str, Self)] = &[
        ("anonymous", Self::Anonymous),
        ("local", Self::Local),
        ("oidc", Self::Oidc),
    ];
}

impl IncomingAuthType {
    /// The spelling used in the YAML.
    pub fn as_str(self) -> &'static str {
        self.name()
    }
}

/// `incomingAuth.oidc`, with every key ToolHive reads, plus `requireScopes` (ours).
#[derive(Debug, Clone, PartialEq)]
pub struct OidcConfig {
    /// `issuer`: compared with the token's `iss`; OIDC discovery starts from it.
    pub issuer: Option<String>,
    /// `audience`: the token's `aud` must contain it.
    pub audience: Option<String>,
    /// `clientId`: introspection client authentication.
    pub client_id: Option<String>,
    /// `clientSecretEnv`: the environment variable holding the introspection client secret
    /// (ToolHive declares it but reads `TOOLHIVE_OIDC_CLIENT_SECRET`; vmcp reads this, then that).
    pub client_secret_env: Option<String>,
    /// `resource`: the protected resource's URL (RFC 9728), advertised in challenges.
    pub resource: Option<String>,
    /// `jwksUrl`: skips discovery.
    pub jwks_url: Option<String>,
    /// `introspectionUrl`: RFC 7662 endpoint for opaque tokens.
    pub introspection_url: Option<String>,
    /// `scopes`: advertised in challenges and metadata.
    pub scopes: Vec<String>,
    /// `protectedResourceAllowPrivateIp`.
    pub protected_resource_allow_private_ip: bool,
    /// `jwksAllowPrivateIp`.
    pub jwks_allow_private_ip: bool,
    /// `insecureAllowHttp`: allow `http://` issuer, JWKS and introspection URLs.
    pub insecure_allow_http: bool,
    /// `caBundlePath`: PEM trust anchors for the identity provider.
    pub ca_bundle_path: Option<String>,
    /// `requireScopes` (ours, default false): refuse tokens lacking any of `scopes` with 403
    /// `insufficient_scope` (ToolHive only advertises them).
    pub require_scopes: bool,
    /// `jwksMaxStale` (ours, default 1h): how long the cached signing keys stay usable while the
    /// key set cannot be fetched; past it every token is refused (401) until a fetch succeeds.
    pub jwks_max_stale: Option<Duration>,
    /// The section as written, for `init` output.
    pub raw: RawSection,
}

/// `incomingAuth.authz.type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AuthzType {
    /// Cedar policies (`cedar`).
    Cedar,
    /// Everything allowed (`none`).
    None,
}

impl Choice for AuthzType {
    const NAMES: &'static [(&'static str, Self)] = &[("cedar", Self::Cedar), ("none", Self::None)];
}

/// `incomingAuth.authz`, with every key ToolHive reads.
#[derive(Debug, Clone, PartialEq)]
pub struct AuthzConfig {
    /// `type` (required).
    pub kind: Option<AuthzType>,
    /// `policies`: one Cedar policy per string.
    pub policies: Vec<String>,
    /// `entitiesJson`: a JSON string holding a Cedar entities array.
    pub entities_json: Option<String>,
    /// `groupClaimName`: the claim holding groups (dot-paths allowed).
    pub group_claim_name: Option<String>,
    /// `roleClaimName`: a claim whose values are added to the groups.
    pub role_claim_name: Option<String>,
    /// `groupEntityType` (default `THVGroup`).
    pub group_entity_type: Option<String>,
    /// `primaryUpstreamProvider`: needs ToolHive's embedded authorization server (not supported).
    pub primary_upstream_provider: Option<String>,
    /// The section as written, for `init` output.
    pub raw: RawSection,
}

impl AuthzConfig {
    /// Whether Cedar policies are configured.
    pub fn is_cedar(&self) -> bool {
        self.kind == Some(AuthzType::Cedar)
    }
}

fn decode_authz(v: &Value, path: &KeyPath, issues: &Issues) -> Option<AuthzConfig> {
    let mut f = Fields::open(v, path, issues);
    let cfg = AuthzConfig {
        kind: f.choice("type"),
        policies: f.strings("policies"),
        entities_json: f.string("entitiesJson"),
        group_claim_name: f.string("groupClaimName"),
        role_claim_name: f.string("roleClaimName"),
        group_entity_type: f.string("groupEntityType"),
        primary_upstream_provider: f.string("primaryUpstreamProvider"),
        raw: f.raw_self()?,
    };
    f.finish();
    Some(cfg)
}

/// `incomingAuth`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IncomingAuthConfig {
    /// `type`.
    pub kind: IncomingAuthType,
    /// `oidc`.
    pub oidc: Option<OidcConfig>,
    /// `authz`.
    pub authz: Option<AuthzConfig>,
}

/// `outgoingAuth.source`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum OutgoingAuthSource {
    /// Strategies are written in this file (`inline`, the default).
    #[default]
    Inline,
    /// Discovered from Kubernetes resources (`discovered`; not supported).
    Discovered,
}

impl Choice for OutgoingAuthSource {
    const NAMES: &'static [(&'static str, Self)] =
        &[("inline", Self::Inline), ("discovered", Self::Discovered)];
}

/// `outgoingAuth`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OutgoingAuthConfig {
    /// `source`.
    pub source: OutgoingAuthSource,
    /// `default`: strategy for backends without their own entry.
    pub default: Option<BackendAuthStrategy>,
    /// `backends`: strategy per backend name.
    pub backends: BTreeMap<String, BackendAuthStrategy>,
}

impl OutgoingAuthConfig {
    /// The strategy for a backend: its own entry, else `default`, else none.
    pub fn strategy_for(&self, backend: &str) -> Option<&BackendAuthStrategy> {
        self.backends.get(backend).or(self.default.as_ref())
    }
}

/// Strategy types ToolHive defines (`type`).
pub const STRATEGY_TYPES: &[&str] = &[
    "unauthenticated",
    "header_injection",
    "token_exchange",
    "upstream_inject",
    "aws_sts",
    "obo",
    "xaa",
];

/// One outgoing auth strategy. `Debug` shows only the type: the body holds secrets.
#[derive(Clone, PartialEq)]
pub struct BackendAuthStrategy {
    /// `type`, one of [`STRATEGY_TYPES`].
    pub kind: String,
    /// The whole strategy mapping as written (`headerInjection`, `tokenExchange`, ...).
    pub raw: RawSection,
}

impl fmt::Debug for BackendAuthStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BackendAuthStrategy")
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

/// Decodes `incomingAuth`.
pub(crate) fn decode_incoming(v: &Value, path: &KeyPath, issues: &Issues) -> IncomingAuthConfig {
    let mut f = Fields::open(v, path, issues);
    let cfg = IncomingAuthConfig {
        kind: f.choice("type").unwrap_or_default(),
        oidc: f
            .value("oidc")
            .and_then(|(v, p)| decode_oidc(v, &p, issues)),
        authz: f
            .value("authz")
            .and_then(|(v, p)| decode_authz(v, &p, issues)),
    };
    f.finish();
    cfg
}

fn decode_oidc(v: &Value, path: &KeyPath, issues: &Issues) -> Option<OidcConfig> {
    let mut f = Fields::open(v, path, issues);
    let cfg = OidcConfig {
        issuer: f.string("issuer"),
        audience: f.string("audience"),
        client_id: f.string("clientId"),
        client_secret_env: f.string("clientSecretEnv"),
        resource: f.string("resource"),
        jwks_url: f.string("jwksUrl"),
        introspection_url: f.string("introspectionUrl"),
        scopes: f.strings("scopes"),
        protected_resource_allow_private_ip: f
            .bool("protectedResourceAllowPrivateIp")
            .unwrap_or(false),
        jwks_allow_private_ip: f.bool("jwksAllowPrivateIp").unwrap_or(false),
        insecure_allow_http: f.bool("insecureAllowHttp").unwrap_or(false),
        ca_bundle_path: f.string("caBundlePath"),
        require_scopes: f.bool("requireScopes").unwrap_or(false),
        jwks_max_stale: f.duration("jwksMaxStale"),
        raw: f.raw_self()?,
    };
    f.finish();
    Some(cfg)
}

/// Decodes `outgoingAuth`.
pub(crate) fn decode_outgoing(v: &Value, path: &KeyPath, issues: &Issues) -> OutgoingAuthConfig {
    let mut f = Fields::open(v, path, issues);
    let backends = match f.value("backends") {
        Some((v, p)) => entries(v, &p, issues)
            .filter_map(|(name, item, ip)| Some((name, decode_strategy(item, &ip, issues)?)))
            .collect(),
        None => BTreeMap::new(),
    };
    let cfg = OutgoingAuthConfig {
        source: f.choice("source").unwrap_or_default(),
        default: f
            .value("default")
            .and_then(|(v, p)| decode_strategy(v, &p, issues)),
        backends,
    };
    f.finish();
    cfg
}

fn decode_strategy(v: &Value, path: &KeyPath, issues: &Issues) -> Option<BackendAuthStrategy> {
    let mut f = Fields::open(v, path, issues);
    let kind = f.string("type");
    for key in [
        "headerInjection",
        "tokenExchange",
        "upstreamInject",
        "awsSts",
        "obo",
        "xaa",
    ] {
        f.value(key);
    }
    let raw = f.raw_self();
    f.finish();
    let Some(kind) = kind else {
        issues.push_new(&path.key("type"), "is required");
        return None;
    };
    Some(BackendAuthStrategy { kind, raw: raw? })
}
