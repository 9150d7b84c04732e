//! The YAML that follows the harness's own gateway config in every gateway it starts: the
//! `incomingAuth` block `--oidc` writes and the `--config-extra` file, with the file's
//! placeholders filled in.
//!
//! `incomingAuth` is one key holding both who may call (`type`, `oidc`) and what they may do
//! (`authz`), so a file that brings Cedar policies and `--oidc` meet in it. The rule: `--oidc`
//! owns `incomingAuth.type` and `incomingAuth.oidc` (a file setting either is refused, since
//! one of the two would silently lose), and every other key of the file's `incomingAuth`
//! (`authz`) is merged into the block `--oidc` writes. Without `--oidc` the file goes in as written.
//! Likewise `--redis` owns `sessionStorage`.

use anyhow::{Context, bail};
use yaml_serde::{Mapping, Value};

/// Replaced by the run's scratch directory (configs and logs; removed after a clean run).
pub(crate) const SCRATCH: &str = "{scratch}";
/// Replaced by the address of an OTLP/HTTP sink the harness starts when the file names it.
pub(crate) const OTLP: &str = "{otlp}";

const INCOMING_AUTH: &str = "incomingAuth";
const SESSION_STORAGE: &str = "sessionStorage";
/// The `incomingAuth` keys `--oidc` writes itself.
const OIDC_OWNS: [&str; 2] = ["type", "oidc"];

/// What to append to every gateway config: `incoming_auth` (the block `--oidc` generates, if
/// any) with the file's own `incomingAuth` keys merged in, then the rest of `extra` (the
/// `--config-extra` text named `origin`, placeholders already filled).
///
/// # Errors
/// When `extra` is not a YAML mapping, or sets what a flag writes itself (`incomingAuth.type`
/// or `.oidc` under `--oidc`, `sessionStorage` under `--redis`).
pub(crate) fn compose(
    extra: &str,
    origin: &str,
    incoming_auth: Option<&serde_json::Value>,
    redis: bool,
) -> anyhow::Result<String> {
    if incoming_auth.is_none() && !redis {
        return Ok(extra.to_owned());
    }
    let mut file = match yaml_serde::from_str::<Value>(extra)
        .with_context(|| format!("--config-extra {origin} is not YAML"))?
    {
        Value::Mapping(m) => m,
        Value::Null => Mapping::new(),
        _ => bail!("--config-extra {origin} must be a mapping of top-level config keys"),
    };
    if redis && file.contains_key(SESSION_STORAGE) {
        bail!(
            "--config-extra {origin} sets sessionStorage, which --redis writes itself (pointing at \
             the redis-server it starts): remove it from the file, or drop --redis"
        );
    }
    let Some(generated) = incoming_auth else {
        return Ok(extra.to_owned());
    };
    let mut block = match yaml_serde::to_value(generated)? {
        Value::Mapping(m) => m,
        _ => bail!("the generated incomingAuth is not a mapping"),
    };
    let Some(own) = file.shift_remove(INCOMING_AUTH) else {
        return Ok(format!("{}{extra}", yaml_block(INCOMING_AUTH, block)?));
    };
    let Value::Mapping(own) = own else {
        bail!("--config-extra {origin}: incomingAuth must be a mapping");
    };
    for (key, value) in own {
        if let Some(name) = key.as_str().filter(|k| OIDC_OWNS.contains(k)) {
            bail!(
                "--config-extra {origin} sets incomingAuth.{name}, which --oidc writes itself \
                 (type oidc, trusting the harness's own provider): remove it from the file (its \
                 other incomingAuth keys, such as authz, are merged in), or drop --oidc to use \
                 the file's incomingAuth as written"
            );
        }
        block.insert(key, value);
    }
    let mut out = yaml_block(INCOMING_AUTH, block)?;
    if !file.is_empty() {
        out.push_str(&yaml_serde::to_string(&Value::Mapping(file))?);
    }
    Ok(out)
}

/// `key:` and `value` below it, as top-level YAML.
fn yaml_block(key: &str, value: Mapping) -> anyhow::Result<String> {
    let mut top = Mapping::new();
    top.insert(Value::from(key), Value::Mapping(value));
    Ok(yaml_serde::to_string(&Value::Mapping(top))?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn generated() -> serde_json::Value {
        json!({"type": "oidc", "oidc": {"issuer": "http://127.0.0.1:9", "audience": "a"}})
    }

    fn parse(yaml: &str) -> Value {
        yaml_serde::from_str(yaml).expect("valid YAML")
    }

    #[test]
    fn without_flags_the_file_goes_in_as_written() {
        let extra = "audit: {logFile: /tmp/a.log}\n# a comment\n";
        assert_eq!(compose(extra, "x.yaml", None, false).expect("ok"), extra);
    }

    #[test]
    fn oidc_writes_incoming_auth_and_merges_the_files_authz() {
        let only = compose("", "-", Some(&generated()), false).expect("ok");
        assert_eq!(parse(&only)["incomingAuth"]["type"], "oidc");
        let extra = "incomingAuth:\n    authz:\n        type: cedar\n        policies: ['permit(principal, action, resource);']\naudit: {logFile: /tmp/a.log}\n";
        let out = parse(&compose(extra, "p.yaml", Some(&generated()), false).expect("ok"));
        assert_eq!(out["incomingAuth"]["type"], "oidc");
        assert_eq!(out["incomingAuth"]["oidc"]["issuer"], "http://127.0.0.1:9");
        assert_eq!(out["incomingAuth"]["authz"]["type"], "cedar");
        assert_eq!(out["audit"]["logFile"], "/tmp/a.log");
    }

    #[test]
    fn a_file_that_sets_what_a_flag_owns_is_refused() {
        let err = compose(
            "incomingAuth: {type: anonymous}\n",
            "p.yaml",
            Some(&generated()),
            false,
        )
        .expect_err("type is --oidc's");
        assert!(err.to_string().contains("incomingAuth.type"), "{err}");
        let err = compose("sessionStorage: {provider: memory}\n", "p.yaml", None, true)
            .expect_err("sessionStorage is --redis's");
        assert!(err.to_string().contains("sessionStorage"), "{err}");
        assert!(
            compose("- a\n", "p.yaml", None, true).is_err(),
            "not a mapping"
        );
    }

    /// The committed production example, as `--oidc --redis` compose it, loads in vmcp's own
    /// config loader with OIDC, Cedar and Redis, and its 50 policies compile without findings.
    #[test]
    fn the_production_example_loads_in_vmcp() {
        let extra = include_str!("../configs/production.yaml")
            .replace(SCRATCH, "/tmp/vmcp-bench-test")
            .replace(OTLP, "127.0.0.1:4318");
        let generated = json!({"type": "oidc", "oidc": {"issuer": "http://127.0.0.1:9",
            "audience": "vmcp-bench", "insecureAllowHttp": true, "jwksAllowPrivateIp": true}});
        let tail = compose(&extra, "production.yaml", Some(&generated), true).expect("composes");
        let config = format!(
            "{}{}{tail}",
            crate::setup::gateway_config(&[crate::setup::Backend::Http {
                name: "fx",
                url: "http://127.0.0.1:1/mcp",
            }]),
            crate::setup::redis_session_storage(6379),
        );
        let loaded = vmcp_config::load_str(&config, &|_| None)
            .unwrap_or_else(|e| panic!("vmcp refuses the config: {e}\n{config}"));
        assert_eq!(
            loaded.incoming_auth.kind,
            vmcp_config::IncomingAuthType::Oidc
        );
        let authz = loaded.incoming_auth.authz.expect("authz merged in");
        assert!(authz.is_cedar());
        assert_eq!(authz.policies.len(), 50);
        let storage = loaded.session_storage.expect("sessionStorage");
        assert_eq!(storage.provider, vmcp_config::SessionProvider::Redis);
        assert!(loaded.audit.is_some() && loaded.telemetry.is_some());
        assert!(loaded.rate_limiting.is_some());
        let settings = vmcp_policy::PolicySettings {
            policies: authz.policies,
            entities_json: None,
            groups: vmcp_policy::GroupRules {
                group_claim: None,
                role_claim: None,
                group_type: "THVGroup".to_owned(),
            },
            server_name: loaded.name,
        };
        assert_eq!(vmcp_policy::lint(&settings), Vec::new());
        vmcp_policy::CedarAuthorizer::new(settings).expect("the policies compile");
    }
}
