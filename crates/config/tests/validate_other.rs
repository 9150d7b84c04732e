//! Validation rules for `operational`, `server`, auth sections and the rest.

#![allow(clippy::unwrap_used)] // Test helpers: a panic is the failure report.

mod common;

use common::{ONE_STDIO, TWO, error_at, ok};

#[test]
fn operational_rules() {
    let yaml = format!(
        "{TWO}operational:
  logLevel: loud
  timeouts:
    default: 0s
    perWorkload:
      github: 30
      gitlab: 5s
  failureHandling:
    healthCheckInterval: 5s
    healthCheckTimeout: 5s
    unhealthyThreshold: 0
    circuitBreaker:
      enabled: true
      failureThreshold: 0
      timeout: 500ms
"
    );
    error_at(&yaml, "operational.logLevel", "must be one of");
    error_at(&yaml, "operational.timeouts.default", "must be positive");
    error_at(
        &yaml,
        "operational.timeouts.perWorkload.github",
        "missing unit",
    );
    error_at(
        &yaml,
        "operational.timeouts.perWorkload.gitlab",
        "not a configured backend",
    );
    error_at(
        &yaml,
        "operational.failureHandling.healthCheckTimeout",
        "must be less than healthCheckInterval",
    );
    error_at(
        &yaml,
        "operational.failureHandling.unhealthyThreshold",
        "positive",
    );
    error_at(
        &yaml,
        "operational.failureHandling.circuitBreaker.failureThreshold",
        "at least 1",
    );
    error_at(
        &yaml,
        "operational.failureHandling.circuitBreaker.timeout",
        "at least 1s",
    );
}

#[test]
fn health_check_timeout_default_stays_below_a_short_interval() {
    let c = ok(&format!(
        "{ONE_STDIO}operational:\n  failureHandling:\n    healthCheckInterval: 4s\n"
    ));
    let fh = &c.operational.failure_handling;
    assert_eq!(fh.health_check_timeout, std::time::Duration::from_secs(2));
}

#[test]
fn server_rules() {
    let yaml = format!(
        "{ONE_STDIO}server:
  host: http://0.0.0.0
  port: -1
  maxSessions: 0
  sessionTtl: 0s
  maxPerSessionProcesses: 0
  requestHeaderTimeout: 0s
  idleConnectionTimeout: 0s
  sseKeepAlive: 0s
  shutdownDrain: 0s
  allowedOrigins:
    - \"*\"
    - https://app.example.com/
    - app.example.com
    - https://ok.example.com:8443
  allowedHosts: [\"https://x\", \"ok:80\", \"bad:port\"]
"
    );
    error_at(&yaml, "server.host", "not an address");
    error_at(&yaml, "server.port", "non-negative integer");
    error_at(&yaml, "server.maxSessions", "at least 1");
    error_at(&yaml, "server.sessionTtl", "must be positive");
    error_at(&yaml, "server.maxPerSessionProcesses", "at least 1");
    error_at(&yaml, "server.requestHeaderTimeout", "must be positive");
    error_at(&yaml, "server.idleConnectionTimeout", "must be positive");
    error_at(&yaml, "server.sseKeepAlive", "must be positive");
    error_at(&yaml, "server.shutdownDrain", "must be positive");
    error_at(&yaml, "server.allowedOrigins[0]", "wildcards");
    error_at(&yaml, "server.allowedOrigins[1]", "no path");
    error_at(&yaml, "server.allowedOrigins[2]", "not an origin");
    error_at(&yaml, "server.allowedHosts[0]", "not a Host header value");
    error_at(&yaml, "server.allowedHosts[2]", "not a Host header value");
    let errs = common::errors(&yaml);
    assert!(!errs.iter().any(|e| e.path == "server.allowedOrigins[3]"));
    assert!(!errs.iter().any(|e| e.path == "server.allowedHosts[1]"));
}

#[test]
fn incoming_auth_rules() {
    error_at(
        &format!("{ONE_STDIO}incomingAuth:\n  type: oidc\n"),
        "incomingAuth.oidc",
        "required when type is oidc",
    );
    let yaml = format!(
        "{ONE_STDIO}incomingAuth:\n  type: oidc\n  oidc:\n    issuer: keycloak\n    caBundlePath: rel/ca.pem\n  authz:\n    type: cedar\n"
    );
    error_at(&yaml, "incomingAuth.oidc.issuer", "http:// or https://");
    error_at(&yaml, "incomingAuth.oidc.audience", "is required");
    error_at(&yaml, "incomingAuth.oidc.caBundlePath", "absolute");
    error_at(
        &yaml,
        "incomingAuth.authz.policies",
        "required when type is cedar",
    );
    error_at(
        &format!("{ONE_STDIO}incomingAuth:\n  type: anonymous\n  oidc: {{issuer: x}}\n"),
        "incomingAuth.oidc",
        "type is anonymous",
    );
    error_at(
        &format!("{ONE_STDIO}incomingAuth:\n  type: basic\n"),
        "incomingAuth.type",
        "anonymous, local, oidc",
    );
    // OIDC keys are strict: a typo is an unknown key with a suggestion, not silently ignored.
    let yaml = format!(
        "{ONE_STDIO}incomingAuth:\n  type: oidc\n  oidc:\n    issuer: https://idp\n    audience: vmcp\n    jwksUri: https://idp/jwks\n    jwksUrl: idp/jwks\n    requireScopes: true\n"
    );
    error_at(&yaml, "incomingAuth.oidc.jwksUri", "unknown key");
    error_at(&yaml, "incomingAuth.oidc.jwksUrl", "http:// or https://");
    error_at(&yaml, "incomingAuth.oidc.requireScopes", "needs scopes");
    // jwksMaxStale (ours): a duration of at least a minute; absent means the auth crate's 1h.
    let oidc = |stale: &str| {
        format!(
            "{ONE_STDIO}incomingAuth:\n  type: oidc\n  oidc:\n    issuer: https://idp\n    audience: vmcp\n{stale}"
        )
    };
    let stale = "incomingAuth.oidc.jwksMaxStale";
    error_at(&oidc("    jwksMaxStale: 10s\n"), stale, "at least 1m");
    error_at(
        &oidc("    jwksMaxStale: forever\n"),
        stale,
        "invalid duration",
    );
    let max_stale = |yaml: &str| ok(yaml).incoming_auth.oidc.and_then(|o| o.jwks_max_stale);
    assert_eq!(
        max_stale(&oidc("    jwksMaxStale: 2h\n")),
        Some(std::time::Duration::from_secs(7200))
    );
    assert_eq!(max_stale(&oidc("")), None);
    // authz keys are strict too, with ToolHive's rules.
    let yaml = format!(
        "{ONE_STDIO}incomingAuth:\n  type: anonymous\n  authz:\n    type: cedar\n    policies: [\"permit(principal, action, resource);\"]\n    groupEntityType: \"My::Group\"\n    entitiesJson: \"{{}}\"\n    groupClaim: groups\n"
    );
    error_at(
        &yaml,
        "incomingAuth.authz.groupEntityType",
        "plain Cedar type",
    );
    error_at(&yaml, "incomingAuth.authz.entitiesJson", "JSON array");
    error_at(&yaml, "incomingAuth.authz.groupClaim", "unknown key");
}

#[test]
fn outgoing_auth_rules() {
    let backends = "backends:\n  - {name: a, command: x}\n  - {name: a2, command: x}\n  - {name: a3, command: x}\n";
    let yaml = format!(
        "{backends}outgoingAuth:
  source: inline
  default:
    type: magic
  backends:
    a:
      type: header_injection
      headerInjection:
        headerName: Authorization
    b:
      type: token_exchange
    a2:
      type: obo
      obo: {{tokenUrl: https://t, clientSecret: x, clientSecretEnv: Y}}
    a3:
      type: unauthenticated
      extra: 1
"
    );
    error_at(&yaml, "outgoingAuth.default.type", "must be one of");
    error_at(
        &yaml,
        "outgoingAuth.backends.a.headerInjection",
        "one of headerValue or headerValueEnv is required",
    );
    error_at(&yaml, "outgoingAuth.backends.b", "not a configured backend");
    error_at(
        &yaml,
        "outgoingAuth.backends.a2.obo.clientSecretEnv",
        "only one of",
    );
    error_at(&yaml, "outgoingAuth.backends.a3.extra", "unknown key");
    error_at(
        &format!("{ONE_STDIO}outgoingAuth:\n  source: k8s\n"),
        "outgoingAuth.source",
        "inline, discovered",
    );
}

#[test]
fn passthrough_headers_and_session_storage_rules() {
    let yaml = format!(
        "{ONE_STDIO}passthroughHeaders: [X-Tenant, Authorization, Host, \"\", \"a b\", X-Forwarded-Port, Mcp-Param-Region, Accept]\nsessionStorage:\n  provider: redis\n"
    );
    error_at(&yaml, "passthroughHeaders[1]", "credentials");
    error_at(&yaml, "passthroughHeaders[2]", "restricted");
    error_at(&yaml, "passthroughHeaders[3]", "must not be empty");
    error_at(&yaml, "passthroughHeaders[4]", "invalid header name");
    for i in 5..8 {
        error_at(
            &yaml,
            &format!("passthroughHeaders[{i}]"),
            "set by the gateway",
        );
    }
    error_at(
        &yaml,
        "sessionStorage.address",
        "required when provider is redis",
    );
    // ToolHive: an empty provider is memory.
    let empty = ok(&format!("{ONE_STDIO}sessionStorage: {{}}\n"));
    assert_eq!(
        empty.session_storage.unwrap().provider,
        vmcp_config::SessionProvider::Memory
    );
    error_at(
        &format!("{ONE_STDIO}sessionStorage: {{provider: redis, address: redis}}\n"),
        "sessionStorage.address",
        "is not host:port",
    );
    error_at(
        &format!(
            "{ONE_STDIO}sessionStorage: {{provider: redis, address: \"r:6379\", keyPrefix: vmcp}}\n"
        ),
        "sessionStorage.keyPrefix",
        "must end with ':'",
    );
    let redis = ok(&format!(
        "{ONE_STDIO}sessionStorage: {{provider: redis, address: \"redis.ns.svc:6379\", db: 3, keyPrefix: \"team:\"}}\nrateLimiting: {{failClosed: true, shared: {{maxTokens: 1, refillPeriod: 1s}}}}\n"
    ));
    let s = redis.session_storage.unwrap();
    assert_eq!((s.db, s.key_prefix.as_deref()), (3, Some("team:")));
    assert!(redis.rate_limiting.unwrap().fail_closed);
}

/// `sessionStorage.address` takes ToolHive's host:port or a redis:// / rediss:// URL;
/// `username` and `tls` are ours; each mistake is reported at its key.
#[test]
fn session_storage_urls_users_and_tls() {
    let s = ok(&format!(
        "{ONE_STDIO}sessionStorage:\n  provider: redis\n  address: rediss://cache.example.com:6380/1\n  username: vmcp\n  tls: {{caFile: /etc/redis/ca.pem, serverName: cache.internal}}\n"
    ))
    .session_storage
    .unwrap();
    let e = s.endpoint().unwrap();
    assert_eq!(e.address, "cache.example.com:6380");
    assert!(e.tls);
    assert_eq!((e.username.as_deref(), e.db), (Some("vmcp"), 1));
    assert_eq!(
        s.tls.unwrap().server_name.as_deref(),
        Some("cache.internal")
    );

    let bad = |storage: &str| format!("{ONE_STDIO}sessionStorage:\n  provider: redis\n{storage}");
    error_at(
        &bad("  address: rediss://app:pw@r:6380\n"),
        "sessionStorage.address",
        "THV_SESSION_REDIS_PASSWORD",
    );
    error_at(
        &bad("  address: redis://r:6379\n  tls: {caFile: /ca.pem}\n"),
        "sessionStorage.tls",
        "use rediss://",
    );
    error_at(
        &bad("  address: \"r:6379\"\n  tls: {certFile: /c.pem}\n"),
        "sessionStorage.tls.keyFile",
        "required with certFile",
    );
    error_at(
        &bad("  address: \"r:6379\"\n  tls: {caFile: ca.pem}\n"),
        "sessionStorage.tls.caFile",
        "absolute path",
    );
    error_at(
        &bad("  address: \"r:6379\"\n  tls: {cafile: /ca.pem}\n"),
        "sessionStorage.tls.cafile",
        "unknown key",
    );
    error_at(
        &bad("  address: redis://bob@r:6379\n  username: alice\n"),
        "sessionStorage.username",
        "differs",
    );
}

#[test]
fn composite_tool_names_are_required_and_unique() {
    let yaml = format!(
        "{ONE_STDIO}compositeTools:\n  - name: x\n    steps: []\n  - name: x\n  - description: y\ncompositeToolRefs:\n  - name: r\n  - name: r\n"
    );
    error_at(&yaml, "compositeTools[1].name", "duplicate");
    error_at(&yaml, "compositeTools[2].name", "is required");
    error_at(&yaml, "compositeToolRefs[1].name", "duplicate");
}

#[test]
fn audit_keys_are_checked_and_defaulted_as_toolhive_does() {
    let c = ok(&format!("{ONE_STDIO}audit: {{}}\n"));
    let a = c.audit.as_ref().expect("audit");
    assert!(a.is_on());
    assert_eq!((a.max_data_size, a.max_delegation_depth), (1024, 10));
    assert_eq!(a.on_write_failure, vmcp_config::AuditFailureMode::Open);
    // maxDataSize 0 means the default; an explicit `enabled: false` turns the trail off.
    let c = ok(&format!(
        "{ONE_STDIO}audit:\n  enabled: false\n  maxDataSize: 0\n  onWriteFailure: closed\n"
    ));
    let a = c.audit.as_ref().expect("audit");
    assert!(!a.is_on());
    assert_eq!(a.max_data_size, 1024);
    assert_eq!(a.on_write_failure, vmcp_config::AuditFailureMode::Closed);
    let yaml = format!(
        "{ONE_STDIO}audit:\n  eventTypes: [mcp_tool_call, sse_connection]\n  excludeEventTypes: [mcp_tools_lst]\n  maxDataSize: -1\n  maxDelegationDepth: 0\n  writeTimeout: 2m\n  logfile: x\n"
    );
    // ToolHive's filter lists cannot name sse_connection either.
    error_at(&yaml, "audit.eventTypes[1]", "unknown event type");
    error_at(
        &yaml,
        "audit.excludeEventTypes[0]",
        "did you mean \"mcp_tools_list\"",
    );
    error_at(&yaml, "audit.maxDataSize", "non-negative integer");
    error_at(&yaml, "audit.maxDelegationDepth", "at least 1");
    error_at(&yaml, "audit.writeTimeout", "between");
    error_at(&yaml, "audit.logfile", "did you mean \"logFile\"");
}

#[test]
fn optimizer_keys_are_read_as_toolhive_reads_them() {
    let c = ok(&format!("{ONE_STDIO}optimizer: {{}}\n"));
    let o = c
        .optimizer
        .as_ref()
        .expect("the block's presence turns it on");
    assert_eq!(o.max_tools_to_return, 8);
    assert_eq!(o.hybrid_search_semantic_ratio, 0.5);
    assert_eq!(o.semantic_distance_threshold, 1.0);
    assert_eq!(o.ranking, vmcp_config::SearchRanking::Vmcp);
    assert_eq!(
        o.embedding_service_timeout,
        std::time::Duration::from_secs(30)
    );
    let c = ok(&format!(
        "{ONE_STDIO}optimizer:
  ranking: toolhive
"
    ));
    assert_eq!(
        c.optimizer.as_ref().unwrap().ranking,
        vmcp_config::SearchRanking::ToolHive
    );
    error_at(
        &format!(
            "{ONE_STDIO}optimizer:
  ranking: bm25
"
        ),
        "optimizer.ranking",
        "toolhive",
    );
    let c = ok(&format!(
        "{ONE_STDIO}optimizer:\n  embeddingService: http://tei:8080\n  embeddingProvider: openai\n  embeddingModel: text-embedding-3-small\n  embeddingHeaders: {{X-Org: acme}}\n  maxToolsToReturn: 12\n  hybridSearchSemanticRatio: \"0.7\"\n  semanticDistanceThreshold: 0.4\n"
    ));
    let o = c.optimizer.as_ref().unwrap();
    assert_eq!(o.embedding_provider, vmcp_config::EmbeddingProvider::OpenAi);
    assert_eq!(
        (o.max_tools_to_return, o.hybrid_search_semantic_ratio),
        (12, 0.7)
    );
    assert_eq!(o.semantic_distance_threshold, 0.4);
    let yaml = format!(
        "{ONE_STDIO}optimizer:\n  embeddingService: ftp://x\n  embeddingProvider: openai\n  embeddingHeaders: {{Authorization: x, \"bad name\": y}}\n  maxToolsToReturn: 51\n  hybridSearchSemanticRatio: lots\n  semanticDistanceThreshold: 3\n  embeddingBackend: ollama\n"
    );
    error_at(&yaml, "optimizer.embeddingService", "http:// or https://");
    error_at(
        &yaml,
        "optimizer.embeddingModel",
        "required when embeddingProvider is openai",
    );
    error_at(
        &yaml,
        "optimizer.embeddingHeaders.Authorization",
        "set by vmcp itself",
    );
    error_at(&yaml, "optimizer.embeddingHeaders.bad name", "");
    error_at(&yaml, "optimizer.maxToolsToReturn", "between 1 and 50");
    error_at(
        &yaml,
        "optimizer.hybridSearchSemanticRatio",
        "expected a number",
    );
    error_at(
        &yaml,
        "optimizer.semanticDistanceThreshold",
        "between 0 and 2",
    );
    error_at(&yaml, "optimizer.embeddingBackend", "unknown key");
}

#[test]
fn the_local_embedder_needs_a_model_directory_and_no_service() {
    let c = ok(&format!(
        "{ONE_STDIO}optimizer:\n  embeddingProvider: local\n  embeddingModelPath: /models/all-MiniLM-L6-v2\n  embeddingCacheFile: /var/cache/vmcp/embeddings.bin\n"
    ));
    let o = c.optimizer.as_ref().unwrap();
    assert_eq!(o.embedding_provider, vmcp_config::EmbeddingProvider::Local);
    assert!(o.semantic());
    assert_eq!(
        o.embedding_cache_file.as_deref(),
        Some("/var/cache/vmcp/embeddings.bin")
    );
    error_at(
        &format!("{ONE_STDIO}optimizer: {{embeddingProvider: local}}\n"),
        "optimizer.embeddingModelPath",
        "required when embeddingProvider is local",
    );
    error_at(
        &format!(
            "{ONE_STDIO}optimizer: {{embeddingProvider: local, embeddingModelPath: /m, embeddingService: http://tei}}\n"
        ),
        "optimizer.embeddingService",
        "must not be set when embeddingProvider is local",
    );
    error_at(
        &format!("{ONE_STDIO}optimizer: {{embeddingModelPath: /m}}\n"),
        "optimizer.embeddingModelPath",
        "only with embeddingProvider: local",
    );
    let keyword_only = ok(&format!("{ONE_STDIO}optimizer: {{}}\n"));
    assert!(!keyword_only.optimizer.unwrap().semantic());
}

#[test]
fn code_mode_keys_default_as_toolhive_and_refuse_what_it_would_swallow() {
    use std::time::Duration;
    use vmcp_config::CodeModeConfig;
    // Omitted and zero values take ToolHive's defaults (its Go fields are zero when omitted).
    for block in [
        "{enabled: true}",
        "{enabled: true, stepLimit: 0, parallelMaxConcurrency: 0, toolCallTimeout: 0s}",
    ] {
        let c = ok(&format!("{ONE_STDIO}codeMode: {block}\n"));
        let m = c.code_mode.as_ref().unwrap();
        assert!(m.enabled);
        assert_eq!(m.step_limit, CodeModeConfig::DEFAULT_STEP_LIMIT);
        assert_eq!(m.parallel_max_concurrency, 10);
        assert_eq!(m.tool_call_timeout, Duration::from_secs(30));
    }
    let c = ok(&format!(
        "{ONE_STDIO}codeMode: {{enabled: true, stepLimit: 5000, parallelMaxConcurrency: 3, toolCallTimeout: 1m30s}}\n"
    ));
    let m = c.code_mode.as_ref().unwrap();
    assert_eq!(
        (
            m.step_limit,
            m.parallel_max_concurrency,
            m.tool_call_timeout
        ),
        (5000, 3, Duration::from_secs(90))
    );
    // A block without `enabled: true` loads and does nothing.
    assert!(
        !ok(&format!("{ONE_STDIO}codeMode: {{stepLimit: 10}}\n"))
            .code_mode
            .unwrap()
            .enabled
    );

    let yaml = format!(
        "{ONE_STDIO}codeMode:\n  enabled: yes please\n  stepLimit: -5\n  parallelMaxConcurrency: many\n  toolCallTimeout: soon\n  stepLimits: 10\n"
    );
    error_at(&yaml, "codeMode.enabled", "");
    error_at(&yaml, "codeMode.stepLimit", "non-negative integer");
    error_at(
        &yaml,
        "codeMode.parallelMaxConcurrency",
        "non-negative integer",
    );
    error_at(&yaml, "codeMode.toolCallTimeout", "");
    error_at(&yaml, "codeMode.stepLimits", "did you mean \"stepLimit\"");
}
