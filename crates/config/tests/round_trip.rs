//! `starter_config` and `to_yaml`: what vmcp writes, it reads back unchanged.

#![allow(clippy::unwrap_used)] // Test helpers: a panic is the failure report.

mod common;

use vmcp_config::{load_str, starter_config, to_yaml};

#[test]
fn starter_config_loads_cleanly_and_is_supported() {
    let c = load_str(&starter_config(), &|_| None).expect("starter loads");
    assert_eq!(c.backends.len(), 2);
    assert!(
        c.backends
            .iter()
            .any(|b| b.transport == vmcp_config::Transport::Stdio)
    );
    assert!(c.backends.iter().any(|b| b.transport.is_http()));
    assert!(c.unsupported().is_empty(), "{:?}", c.unsupported());
    assert!(
        starter_config().contains("# "),
        "starter should be commented"
    );
}

#[test]
fn to_yaml_round_trips_a_rich_config() {
    let c = common::ok(
        "name: rich
groupRef: team
backends:
  - name: gh
    url: https://gh.example.com/mcp
    transport: sse
    type: entry
    caBundlePath: /etc/ca.pem
    headers: {Authorization: \"Bearer ${TOKEN}\", X-Cost: \"$$9\"}
    metadata: {env: prod}
  - name: local
    command: run
    args: [\"--flag\", \"true\", \"30\"]
    env: {A: \"1\"}
    cwd: /tmp
    isolation: perSession
incomingAuth:
  type: oidc
  oidc: {issuer: https://idp, audience: vmcp, scopes: [openid]}
  authz: {type: cedar, policies: [\"permit(principal, action, resource);\"]}
outgoingAuth:
  source: inline
  default: {type: unauthenticated}
  backends:
    gh: {type: header_injection, headerInjection: {headerName: X-Key, headerValue: v}}
aggregation:
  conflictResolution: priority
  conflictResolutionConfig: {prefixFormat: \"{workload}.\", priorityOrder: [gh, local]}
  excludeAllTools: true
  tools:
    - workload: gh
      filter: [a]
      toolConfigRef: {name: cfg}
      overrides:
        a: {name: b, annotations: {title: T, readOnlyHint: true}}
      excludeAll: true
compositeTools:
  - name: flow
    description: A flow
    steps: [{id: s1, tool: gh.a, arguments: {x: \"{{.params.x}}\"}}]
compositeToolRefs: [{name: ref}]
operational:
  logLevel: warn
  timeouts: {default: 1m30s, perWorkload: {gh: 250ms}}
  failureHandling:
    healthCheckInterval: 1h
    healthCheckTimeout: 1.5s
    partialFailureMode: best_effort
    circuitBreaker: {enabled: true, failureThreshold: 2, timeout: 2s}
metadata: {owner: me}
telemetry: {endpoint: \"localhost:4317\", tracingEnabled: true, samplingRate: \"0.1\", headers: {x: y}}
audit: {component: vmcp}
optimizer: {embeddingService: http://e}
codeMode: {enabled: true, stepLimit: 10}
sessionStorage: {provider: redis, address: \"r:6379\", db: 2, keyPrefix: \"p:\", username: app, tls: {caFile: /etc/redis/ca.pem, certFile: /etc/redis/c.pem, keyFile: /etc/redis/c.key, serverName: r.internal}}
rateLimiting:
  shared: {maxTokens: 100, refillPeriod: {duration: 1m0s}}
  perUser: {maxTokens: 10, refillPeriod: 90s}
  tools: [{name: gh.a, perUser: {maxTokens: 1, refillPeriod: 250ms}}]
  failClosed: true
passthroughHeaders: [X-Tenant]
server:
  host: 0.0.0.0
  port: 0
  sessionTtl: 5m
  allowedOrigins: [\"https://app.example.com\"]
  allowedHosts: [vmcp.internal]
  maxPerSessionProcesses: 2
  workerThreads: 3
  requestHeaderTimeout: 7s
  idleConnectionTimeout: 45s
  sseKeepAlive: 20s
  shutdownDrain: 25s
  allowAnonymousOnNetwork: true
  statusAccess: disabled
",
    );
    let text = to_yaml(&c);
    let back = load_str(&text, &|_| None).unwrap_or_else(|e| panic!("{e}\n---\n{text}"));
    assert_eq!(back, c, "\n{text}");
    // Secrets and dollars survive literally.
    assert_eq!(back.backends[0].headers["Authorization"], "Bearer s3cr3t");
    assert_eq!(back.backends[0].headers["X-Cost"], "$9");
}

#[test]
fn to_yaml_of_minimal_config_is_short() {
    let c = common::ok(common::ONE_STDIO);
    let text = to_yaml(&c);
    assert_eq!(load_str(&text, &|_| None).expect("reloads"), c);
    assert!(!text.contains("server:"), "{text}");
    assert!(!text.contains("operational:"), "{text}");
}
