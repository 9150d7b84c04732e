//! Turns a loaded config into the running pieces: backends, the core's options, the edge's options.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use serde_json::{Map, Value};
use vmcp_auth::{Authenticator, FetchPolicy, OidcSettings, OutgoingAuth, Secret};
use vmcp_backend::{Backend, BackendSpec, HealthPolicy, Isolation, StdioSpec, TransportSpec};
use vmcp_config::{Config, ConflictStrategy, ToolVisibility, Transport};
use vmcp_config::{IncomingAuthType, OidcConfig};
use vmcp_core::{
    AggregationPolicy, Composites, GatewayOptions, Limit, PartialFailureMode, RateLimiter,
    RateLimits, Strategy, ToolLimits, ToolOverride, WorkloadPolicy,
};
use vmcp_server::{ServingThreads, StatusAccess};

/// The backends of `config`, started (shared stdio backends spawn their process now), with an HTTP
/// connection pool for each serving thread. Each backend's own tasks (a stdio process's pipes) run
/// on one of the serving threads, dealt round-robin, so calls served there need no thread hop.
pub(crate) fn backends(
    config: &Config,
    serving: &ServingThreads,
) -> anyhow::Result<Vec<Arc<Backend>>> {
    let client = vmcp_backend::HttpClient::new(serving.len())?;
    let fh = &config.operational.failure_handling;
    let health = HealthPolicy {
        unhealthy_threshold: fh.unhealthy_threshold,
        circuit: fh.circuit_breaker.enabled.then_some((
            fh.circuit_breaker.failure_threshold,
            fh.circuit_breaker.timeout,
        )),
    };
    let fetch = outgoing_fetch_policy(config)?;
    config
        .backends
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let _on_serving_thread = serving.handle(i).enter();
            let headers: Vec<(String, String)> = b
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let url = || b.url.clone().unwrap_or_default();
            let transport = match b.transport {
                Transport::StreamableHttp => TransportSpec::StreamableHttp {
                    url: url(),
                    headers,
                },
                Transport::Sse => TransportSpec::Sse {
                    url: url(),
                    headers,
                },
                Transport::Stdio => TransportSpec::Stdio(StdioSpec {
                    command: b.command.clone().unwrap_or_default(),
                    args: b.args.clone(),
                    env: b.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
                    cwd: b.cwd.clone(),
                }),
            };
            let auth = match config.outgoing_auth.strategy_for(&b.name) {
                None => OutgoingAuth::None,
                Some(s) => {
                    let path = if config.outgoing_auth.backends.contains_key(&b.name) {
                        format!("outgoingAuth.backends.{}", b.name)
                    } else {
                        "outgoingAuth.default".to_string()
                    };
                    let auth = vmcp_auth::outgoing_auth(
                        &s.kind,
                        &s.raw.0,
                        &|var| std::env::var(var).ok(),
                        fetch.clone(),
                    )
                    .map_err(|e| anyhow::anyhow!("{path}: {e}"))?;
                    if auth.per_caller() && config.incoming_auth.kind != IncomingAuthType::Oidc {
                        anyhow::bail!(
                            "{path}: token_exchange exchanges the caller's token, so incomingAuth.type must be oidc"
                        );
                    }
                    if !matches!(auth, OutgoingAuth::None) && b.transport == Transport::Stdio {
                        anyhow::bail!(
                            "{path}: backend {} runs over stdio, which has no HTTP credential; give it its secrets through env",
                            b.name
                        );
                    }
                    auth
                }
            };
            let spec = BackendSpec {
                id: b.name.clone(),
                transport,
                timeout: config.timeout_for(&b.name),
                isolation: match b.isolation {
                    vmcp_config::Isolation::Shared => Isolation::Shared,
                    vmcp_config::Isolation::PerSession => Isolation::PerSession,
                },
                max_per_session: config.server.max_per_session_processes,
                per_session_idle: config.server.per_session_idle_timeout,
                health,
                auth,
            };
            let client = match &b.ca_bundle_path {
                None => client.clone(),
                Some(path) => {
                    let pem = std::fs::read(path).with_context(|| {
                        format!("backends[{i}].caBundlePath: cannot read {}", path.display())
                    })?;
                    client
                        .trusting(&pem)
                        .with_context(|| format!("backends[{i}].caBundlePath"))?
                }
            };
            Backend::new(spec, client).with_context(|| format!("backend {}", b.name))
        })
        .collect()
}

/// The composite tools, compiled (templates parsed once, for every call).
fn composites(config: &Config) -> anyhow::Result<Composites> {
    let compiled = config
        .composite_tools
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let wf = vmcp_workflow::Workflow::compile(c)
                .with_context(|| format!("compositeTools[{i}] ({})", c.name))?;
            let capped = wf.capped_retries();
            if !capped.is_empty() {
                tracing::warn!(composite = %c.name, steps = ?capped, "retryCount above {} is capped at {}", vmcp_workflow::MAX_RETRIES, vmcp_workflow::MAX_RETRIES);
            }
            Ok(Arc::new(wf))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(Composites(Arc::new(compiled)))
}

/// The core's options from the `aggregation`, `compositeTools` and `operational` sections.
pub(crate) fn gateway_options(
    config: &Config,
    redis: Option<&Arc<vmcp_redis::Client>>,
) -> anyhow::Result<GatewayOptions> {
    let agg = &config.aggregation;
    let workloads = agg
        .tools
        .iter()
        .map(|w| {
            let overrides = w
                .overrides
                .iter()
                .map(|(tool, o)| {
                    let mut annotations = Map::new();
                    if let Some(a) = &o.annotations {
                        let mut set = |k: &str, v: Option<Value>| {
                            if let Some(v) = v {
                                annotations.insert(k.to_string(), v);
                            }
                        };
                        set("title", a.title.clone().map(Value::String));
                        set("readOnlyHint", a.read_only_hint.map(Value::Bool));
                        set("destructiveHint", a.destructive_hint.map(Value::Bool));
                        set("idempotentHint", a.idempotent_hint.map(Value::Bool));
                        set("openWorldHint", a.open_world_hint.map(Value::Bool));
                    }
                    let o = ToolOverride {
                        name: o.name.clone(),
                        description: o.description.clone(),
                        annotations,
                    };
                    (tool.clone(), o)
                })
                .collect();
            let policy = WorkloadPolicy {
                filter: w.filter.clone(),
                exclude_all: w.exclude_all,
                overrides,
            };
            (w.workload.clone(), policy)
        })
        .collect();
    let policy = AggregationPolicy {
        strategy: match agg.conflict_resolution {
            ConflictStrategy::Prefix => Strategy::Prefix,
            ConflictStrategy::Priority => Strategy::Priority,
            ConflictStrategy::Manual => Strategy::Manual,
        },
        prefix_format: agg.conflict_resolution_config.prefix_format.clone(),
        priority_order: agg.conflict_resolution_config.priority_order.clone(),
        workloads,
        exclude_all_tools: agg.exclude_all_tools,
        deny_unlisted: agg.default_tool_visibility == ToolVisibility::Deny,
        composites: composites(config)?,
        optimizer: match &config.optimizer {
            Some(o) => Some(vmcp_core::OptimizerSettings {
                max_tools: usize::try_from(o.max_tools_to_return).unwrap_or(8),
                semantic: crate::embedder::semantic(o)?,
                ranking: match o.ranking {
                    vmcp_config::SearchRanking::Vmcp => vmcp_core::Ranking::Vmcp,
                    vmcp_config::SearchRanking::ToolHive => vmcp_core::Ranking::ToolHive,
                },
            }),
            None => None,
        },
    };
    Ok(GatewayOptions {
        policy,
        partial_failure: match config.operational.failure_handling.partial_failure_mode {
            vmcp_config::PartialFailureMode::Fail => PartialFailureMode::Fail,
            vmcp_config::PartialFailureMode::BestEffort => PartialFailureMode::BestEffort,
        },
        discovery_timeout: config.server.discovery_timeout,
        rate_limiter: config
            .rate_limiting
            .as_ref()
            .map(|r| rate_limiter(r, &config.name, redis)),
        // ToolHive debounces health-driven changes to the check interval; past 5 s that delays a
        // recovered backend's return for nothing (flapping is already damped to one change per 5 s).
        health_debounce: config
            .operational
            .failure_handling
            .health_check_interval
            .min(std::time::Duration::from_secs(5)),
        used_states: redis.map(|r| (r.clone(), key_prefix(config))),
        ..GatewayOptions::default()
    })
}

/// The rate limiter of `rateLimiting`: buckets in Redis, shared by every replica, with
/// `sessionStorage: redis`; otherwise in this process's memory (one instance; ToolHive needs
/// Redis even for one).
fn rate_limiter(
    r: &vmcp_config::RateLimitConfig,
    name: &str,
    redis: Option<&Arc<vmcp_redis::Client>>,
) -> Arc<RateLimiter> {
    let limit = |b: &vmcp_config::BucketConfig| Limit {
        max_tokens: b.max_tokens,
        refill_period: b.refill_period,
    };
    let tools = r
        .tools
        .iter()
        .map(|t| {
            let limits = ToolLimits {
                shared: t.shared.as_ref().map(limit),
                per_user: t.per_user.as_ref().map(limit),
            };
            (t.name.clone(), limits)
        })
        .collect();
    let limits = RateLimits {
        shared: r.shared.as_ref().map(limit),
        per_user: r.per_user.as_ref().map(limit),
        tools,
    };
    let limiter = match redis {
        Some(client) => {
            // ToolHive's key namespace: the Kubernetes namespace, `local` outside a cluster.
            let namespace = std::env::var("VMCP_NAMESPACE")
                .ok()
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| "local".to_owned());
            let store = vmcp_core::RedisStore::new(client.clone(), &namespace, name);
            RateLimiter::new(limits, Arc::new(store))
        }
        None => RateLimiter::in_memory(limits),
    };
    Arc::new(limiter.fail_closed(r.fail_closed))
}

/// The Redis client of `sessionStorage: {provider: redis}`, shared by sessions, the bus between
/// replicas and rate limits: one endpoint (`address`, `username`, `db`, `tls`) for all three.
/// Nothing connects yet, since Redis may come up after the gateway; the TLS files are read now,
/// so a missing or unreadable one stops the start, naming its key.
pub(crate) fn redis(config: &Config) -> anyhow::Result<Option<Arc<vmcp_redis::Client>>> {
    let Some(s) = config.session_storage.as_ref() else {
        return Ok(None);
    };
    if s.provider != vmcp_config::SessionProvider::Redis {
        return Ok(None);
    }
    let endpoint = s.endpoint().map_err(|problems| {
        let each: Vec<String> = problems
            .into_iter()
            .map(|(key, message)| format!("sessionStorage.{key}: {message}"))
            .collect();
        anyhow::anyhow!(each.join("; "))
    })?;
    let tls = if endpoint.tls {
        let t = s.tls.clone().unwrap_or_default();
        let files = vmcp_redis::TlsFiles {
            ca_file: t.ca_file.map(Into::into),
            cert_file: t.cert_file.map(Into::into),
            key_file: t.key_file.map(Into::into),
            server_name: t.server_name,
        };
        Some(vmcp_redis::Tls::new(&files).map_err(|e| anyhow::anyhow!("sessionStorage.tls: {e}"))?)
    } else {
        None
    };
    let redis = vmcp_redis::Config {
        address: endpoint.address,
        db: endpoint.db,
        username: endpoint.username,
        // ToolHive's variable, so a deployment's Secret works unchanged.
        password: std::env::var("THV_SESSION_REDIS_PASSWORD")
            .ok()
            .filter(|p| !p.is_empty()),
        tls,
        timeout: REDIS_TIMEOUT,
    };
    Ok(Some(Arc::new(vmcp_redis::Client::new(redis))))
}

/// The prefix of every Redis key of `sessionStorage` (ToolHive's default unless set).
pub(crate) fn key_prefix(config: &Config) -> String {
    config
        .session_storage
        .as_ref()
        .and_then(|s| s.key_prefix.clone())
        .unwrap_or_else(|| vmcp_server::DEFAULT_KEY_PREFIX.to_owned())
}

/// Upper bound on each Redis call and connect: a slow Redis costs a request at most this.
const REDIS_TIMEOUT: Duration = Duration::from_secs(1);

/// The incoming authenticator of `incomingAuth`.
pub(crate) fn authenticator(config: &Config) -> anyhow::Result<Authenticator> {
    let auth = &config.incoming_auth;
    Ok(match (auth.kind, &auth.oidc) {
        (IncomingAuthType::Anonymous, _) => Authenticator::Anonymous,
        (IncomingAuthType::Local, _) => Authenticator::local(),
        (IncomingAuthType::Oidc, None) => anyhow::bail!("incomingAuth.oidc is required"),
        (IncomingAuthType::Oidc, Some(o)) => {
            let (settings, resource) = oidc_settings(o)?;
            Authenticator::oidc(settings, resource).context("incomingAuth.oidc")?
        }
    })
}

fn oidc_settings(o: &OidcConfig) -> anyhow::Result<(OidcSettings, Option<String>)> {
    let set = |v: &Option<String>| v.clone().filter(|s| !s.is_empty());
    // ToolHive declares clientSecretEnv but reads TOOLHIVE_OIDC_CLIENT_SECRET: read the one the
    // config names, then that.
    let client_secret = match set(&o.client_secret_env) {
        Some(var) => Some(
            std::env::var(&var)
                .ok()
                .filter(|v| !v.is_empty())
                .with_context(|| {
                    format!(
                        "incomingAuth.oidc.clientSecretEnv: environment variable {var} is not set"
                    )
                })?,
        ),
        None => std::env::var("TOOLHIVE_OIDC_CLIENT_SECRET")
            .ok()
            .filter(|v| !v.is_empty()),
    };
    let ca_bundle_pem = match set(&o.ca_bundle_path) {
        Some(path) => Some(
            std::fs::read(&path)
                .with_context(|| format!("incomingAuth.oidc.caBundlePath: cannot read {path}"))?,
        ),
        None => None,
    };
    let insecure_env = std::env::var("INSECURE_DISABLE_URL_VALIDATION").as_deref() == Ok("true");
    let audience = set(&o.audience).unwrap_or_default();
    // ToolHive documents resource as defaulting to the audience but does not do it; vmcp does,
    // when the audience is a URL, so clients always find the metadata.
    let resource = set(&o.resource).or_else(|| {
        (audience.starts_with("https://") || audience.starts_with("http://"))
            .then(|| audience.clone())
    });
    let settings = OidcSettings {
        issuer: set(&o.issuer).unwrap_or_default(),
        audience,
        client_id: set(&o.client_id),
        client_secret: client_secret.map(Secret::new),
        jwks_url: set(&o.jwks_url),
        introspection_url: set(&o.introspection_url),
        scopes: o.scopes.clone(),
        require_scopes: o.require_scopes,
        jwks_max_stale: o.jwks_max_stale,
        fetch: FetchPolicy {
            allow_http: o.insecure_allow_http || insecure_env,
            allow_private: o.jwks_allow_private_ip || o.protected_resource_allow_private_ip,
            ca_bundle_pem,
            timeout: None,
        },
    };
    Ok((settings, resource))
}

/// How the gateway may reach token endpoints (token exchange): under the same rules, keys and
/// trust anchors as the identity provider (`incomingAuth.oidc`): HTTPS unless `insecureAllowHttp`,
/// no private addresses unless an `*AllowPrivateIp` key allows them.
fn outgoing_fetch_policy(config: &Config) -> anyhow::Result<FetchPolicy> {
    Ok(match &config.incoming_auth.oidc {
        Some(o) => oidc_settings(o)?.0.fetch,
        None => FetchPolicy::default(),
    })
}

/// Who may read `/status`: as configured, else authenticated callers when incoming auth is OIDC
/// (it names every backend) and anyone otherwise.
pub(crate) fn status_access(config: &Config) -> StatusAccess {
    match config.server.status_access {
        Some(vmcp_config::StatusAccess::Public) => StatusAccess::Public,
        Some(vmcp_config::StatusAccess::Authenticated) => StatusAccess::Authenticated,
        Some(vmcp_config::StatusAccess::Disabled) => StatusAccess::Disabled,
        None if config.incoming_auth.kind == IncomingAuthType::Oidc => StatusAccess::Authenticated,
        None => StatusAccess::Public,
    }
}

/// Metrics and traces as `telemetry` says (none without the section); installed before the router
/// is built, which mounts `/metrics` only when it is on.
pub(crate) fn telemetry(config: &Config) -> anyhow::Result<Option<vmcp_telemetry::Telemetry>> {
    let Some(t) = &config.telemetry else {
        return Ok(None);
    };
    let installed = vmcp_telemetry::install(t, &config.name, tokio::runtime::Handle::current())
        .context("telemetry")?;
    vmcp_telemetry::backends_discovered(config.backends.len() as u64);
    Ok(Some(installed))
}
