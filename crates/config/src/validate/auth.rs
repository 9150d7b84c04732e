//! Rules for `incomingAuth` and `outgoingAuth`, after ToolHive's validator and YAML
//! loader: OIDC and authz requirements, known strategy types and the fields each
//! one requires. The bodies are loosely typed, so the checks read JSON.

use serde_json::Value as Json;

use super::{absolute_path_problem, backend_names, check_backend_ref};
use crate::error::{Issues, KeyPath};
use crate::schema::{AuthzType, BackendAuthStrategy, Config, IncomingAuthType, STRATEGY_TYPES};

fn is_cedar_identifier(t: &str) -> bool {
    let mut chars = t.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

pub(super) fn check(config: &Config, issues: &Issues) {
    check_incoming(config, issues);
    let path = KeyPath::root().key("outgoingAuth");
    let out = &config.outgoing_auth;
    if let Some(s) = &out.default {
        check_strategy(s, &path.key("default"), issues);
    }
    let names = backend_names(config);
    for (name, s) in &out.backends {
        let p = path.key("backends").key(name);
        check_backend_ref(names.as_ref(), name, &p, issues);
        check_strategy(s, &p, issues);
    }
}

fn text<'j>(v: Option<&'j Json>, key: &str) -> Option<&'j str> {
    v?.get(key)?.as_str().filter(|s| !s.is_empty())
}

fn check_incoming(config: &Config, issues: &Issues) {
    let inc = &config.incoming_auth;
    let path = KeyPath::root().key("incomingAuth");
    match (inc.kind, &inc.oidc) {
        (IncomingAuthType::Oidc, None) => {
            issues.push_new(&path.key("oidc"), "is required when type is oidc");
        }
        (IncomingAuthType::Oidc, Some(o)) => {
            let opath = path.key("oidc");
            fn nonempty(v: &Option<String>) -> Option<&str> {
                v.as_deref().filter(|s| !s.is_empty())
            }
            match nonempty(&o.issuer) {
                None => issues.push_new(&opath.key("issuer"), "is required"),
                Some(i) if !super::is_http_url(i) => issues.push_new(
                    &opath.key("issuer"),
                    format!("{i:?} must be an http:// or https:// URL"),
                ),
                Some(_) => {}
            }
            if nonempty(&o.audience).is_none() {
                issues.push_new(&opath.key("audience"), "is required");
            }
            for (key, url) in [
                ("jwksUrl", &o.jwks_url),
                ("introspectionUrl", &o.introspection_url),
                ("resource", &o.resource),
            ] {
                if let Some(u) = nonempty(url)
                    && !super::is_http_url(u)
                {
                    issues.push_new(
                        &opath.key(key),
                        format!("{u:?} must be an http:// or https:// URL"),
                    );
                }
            }
            if let Some(ca) = nonempty(&o.ca_bundle_path)
                && let Some(problem) = absolute_path_problem(std::path::Path::new(ca))
            {
                issues.push_new(&opath.key("caBundlePath"), problem);
            }
            // Keys are fetched at most every 10 s and each fetch may take 5 s: a shorter bound
            // would refuse tokens between two fetches.
            if let Some(d) = o.jwks_max_stale
                && d < std::time::Duration::from_secs(60)
            {
                issues.push_new(&opath.key("jwksMaxStale"), "must be at least 1m");
            }
            if o.require_scopes && o.scopes.is_empty() {
                issues.push_new(
                    &opath.key("requireScopes"),
                    "needs scopes: list the scopes every token must grant",
                );
            }
        }
        (kind, Some(_)) => issues.push_new(
            &path.key("oidc"),
            format!(
                "is set but type is {}; set type: oidc or remove it",
                kind.as_str()
            ),
        ),
        (_, None) => {}
    }
    if let Some(authz) = &inc.authz {
        let apath = path.key("authz");
        match authz.kind {
            Some(AuthzType::Cedar) => {
                if authz.policies.is_empty() {
                    issues.push_new(&apath.key("policies"), "are required when type is cedar");
                }
                if let Some(t) = &authz.group_entity_type
                    && !is_cedar_identifier(t)
                {
                    issues.push_new(
                        &apath.key("groupEntityType"),
                        format!(
                            "{t:?} is not a plain Cedar type name (letters, digits, '_'; no '::')"
                        ),
                    );
                }
                if let Some(json) = &authz.entities_json
                    && !json.trim().is_empty()
                    && !serde_json::from_str::<Json>(json).is_ok_and(|v| v.is_array())
                {
                    issues.push_new(
                        &apath.key("entitiesJson"),
                        "must be a JSON array of Cedar entities (as a string)",
                    );
                }
            }
            Some(AuthzType::None) => {}
            None => issues.push_new(&apath.key("type"), "is required (cedar or none)"),
        }
    }
}

fn check_strategy(s: &BackendAuthStrategy, path: &KeyPath, issues: &Issues) {
    if !STRATEGY_TYPES.contains(&s.kind.as_str()) {
        issues.push_new(
            &path.key("type"),
            format!(
                "must be one of: {} (got {:?})",
                STRATEGY_TYPES.join(", "),
                s.kind
            ),
        );
        return;
    }
    let (section, required): (&str, &[&str]) = match s.kind.as_str() {
        "header_injection" => ("headerInjection", &["headerName"]),
        "token_exchange" => ("tokenExchange", &["tokenUrl"]),
        "upstream_inject" => ("upstreamInject", &[]),
        "aws_sts" => ("awsSts", &["region"]),
        "obo" => ("obo", &["tokenUrl"]),
        "xaa" => ("xaa", &["idpTokenUrl", "targetTokenUrl", "targetAudience"]),
        _ => return,
    };
    let body = s.raw.get(section).filter(|v| v.is_object());
    let spath = path.key(section);
    if body.is_none() {
        issues.push_new(&spath, format!("is required when type is {}", s.kind));
        return;
    }
    for key in required {
        if text(body, key).is_none() {
            issues.push_new(&spath.key(key), "is required");
        }
    }
    let exclusive = |a: &str, b: &str, need_one: bool| match (text(body, a), text(body, b)) {
        (Some(_), Some(_)) => {
            issues.push_new(&spath.key(b), format!("only one of {a} or {b} may be set"));
        }
        (None, None) if need_one => {
            issues.push_new(&spath, format!("one of {a} or {b} is required"));
        }
        _ => {}
    };
    match s.kind.as_str() {
        "header_injection" => exclusive("headerValue", "headerValueEnv", true),
        "obo" => exclusive("clientSecret", "clientSecretEnv", false),
        "xaa" => {
            let tt = text(body, "subjectTokenType");
            const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
            if tt.is_some_and(|t| t != ID_TOKEN) {
                issues.push_new(
                    &spath.key("subjectTokenType"),
                    format!("only {ID_TOKEN:?} is accepted"),
                );
            }
        }
        _ => {}
    }
}
