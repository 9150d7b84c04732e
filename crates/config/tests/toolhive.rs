//! A ToolHive vMCP config (adapted from ToolHive's `examples/vmcp-config.yaml`, with
//! static backends) loads unchanged; `unsupported()` names what vmcp lacks.

#![allow(clippy::unwrap_used)] // Test helpers: a panic is the failure report.

mod common;

const TOOLHIVE_EXAMPLE: &str = r#"# Virtual MCP Server Configuration Example
name: "engineering-vmcp"
groupRef: "engineering-team"

backends:
  - name: github
    url: https://github-mcp.example.com/mcp
    transport: streamable-http
  - name: jira
    url: http://jira-mcp.default.svc.cluster.local:8080/sse
    transport: sse
    metadata:
      env: prod

incomingAuth:
  type: oidc
  oidc:
    issuer: "https://keycloak.example.com/realms/myrealm"
    clientId: "vmcp-client"
    clientSecretEnv: "VMCP_CLIENT_SECRET"
    audience: "vmcp"
    resource: "http://localhost:4483/mcp"
    scopes: ["openid", "profile", "email"]
  authz:
    type: cedar
    policies:
      - |
        permit(
          principal,
          action == Action::"tools/call",
          resource
        );

outgoingAuth:
  source: inline
  default:
    type: unauthenticated
  backends:
    github:
      type: header_injection
      headerInjection:
        headerName: "Authorization"
        headerValueEnv: "GITHUB_API_TOKEN"
    jira:
      type: token_exchange
      tokenExchange:
        tokenUrl: "https://keycloak.example.com/realms/myrealm/protocol/openid-connect/token"
        clientId: "vmcp-jira-exchange"
        clientSecretEnv: "JIRA_EXCHANGE_SECRET"
        audience: "jira-api"
        scopes: ["read:jira-work", "write:jira-work"]

aggregation:
  conflictResolution: prefix
  conflictResolutionConfig:
    prefixFormat: "{workload}_"
  tools:
    - workload: "github"
      filter: ["create_pr", "merge_pr", "list_issues"]
      overrides:
        create_pr:
          name: "gh_create_pr"
          description: "Create a GitHub pull request"
    - workload: "jira"
      overrides:
        create_issue:
          name: "jira_create_issue"
          description: "Create a Jira issue"

operational:
  timeouts:
    default: 30s
    perWorkload:
      github: 45s
      jira: 30s
  failureHandling:
    healthCheckInterval: 30s
    unhealthyThreshold: 3
    partialFailureMode: fail
    circuitBreaker:
      enabled: true
      failureThreshold: 5
      timeout: 60s

compositeTools:
  - name: "deploy_and_notify"
    description: "Deploy PR with user confirmation and notification"
    parameters:
      type: object
      properties:
        pr_number:
          type: integer
      required: ["pr_number"]
    timeout: "30m"
    steps:
      - id: "merge"
        tool: "github.merge_pr"
        arguments: {pr: "{{.params.pr_number}}"}
        onError:
          action: "abort"
      - id: "confirm_deploy"
        type: "elicitation"
        message: "PR {{.params.pr_number}} merged. Proceed with deployment?"
        dependsOn: ["merge"]
        timeout: "5m"
        # ToolHive's loader accepts an elicitation without `schema` and its server then
        # refuses to start; vmcp reports it at load, so the example carries one.
        schema: {type: object, properties: {proceed: {type: boolean}}}

telemetry:
  endpoint: "localhost:4317"
  serviceName: "engineering-vmcp"
  tracingEnabled: true
  metricsEnabled: true
  samplingRate: "0.1"
  insecure: true
  enablePrometheusMetricsPath: true

audit:
  component: "vmcp-server"
  eventTypes:
    - "mcp_initialize"
    - "mcp_tool_call"
  includeRequestData: true
  maxDataSize: 10000
"#;

#[test]
fn toolhive_example_loads() {
    let c = common::ok(TOOLHIVE_EXAMPLE);
    assert_eq!(c.name, "engineering-vmcp");
    assert_eq!(c.group_ref.as_deref(), Some("engineering-team"));
    assert_eq!(c.backends.len(), 2);
    assert_eq!(c.timeout_for("github"), std::time::Duration::from_secs(45));
    assert_eq!(
        c.outgoing_auth
            .strategy_for("github")
            .map(|s| s.kind.as_str()),
        Some("header_injection")
    );
    assert_eq!(
        c.outgoing_auth
            .strategy_for("other")
            .map(|s| s.kind.as_str()),
        Some("unauthenticated")
    );
    assert_eq!(c.composite_tools.len(), 1);
    assert!(
        !c.unsupported().iter().any(|u| u == "telemetry"),
        "telemetry is supported"
    );
    let audit = c.audit.as_ref().expect("audit block");
    assert!(
        audit.is_on(),
        "ToolHive: the block's presence turns auditing on"
    );
    assert_eq!(audit.component.as_deref(), Some("vmcp-server"));
    assert_eq!(audit.event_types, ["mcp_initialize", "mcp_tool_call"]);
    assert!(audit.include_request_data && !audit.include_response_data);
    assert_eq!(audit.max_data_size, 10000);
    assert!(audit.detect_application_errors);
}

#[test]
fn toolhive_quickstart_loads_with_group_ref_only() {
    // ToolHive's README quick start: no static backends, so discovery is needed.
    let c = common::ok(
        r#"name: "my-vmcp"
groupRef: "my-team"
incomingAuth:
  type: anonymous
outgoingAuth:
  source: inline
  default:
    type: unauthenticated
aggregation:
  conflictResolution: prefix
  conflictResolutionConfig:
    prefixFormat: "{workload}_"
"#,
    );
    assert_eq!(
        c.unsupported(),
        ["groupRef (discovering backends from a ToolHive group)"]
    );
}

#[test]
fn unsupported_lists_each_feature() {
    let c = common::ok(&format!(
        "{}aggregation:
  tools:
    - workload: a
      toolConfigRef: {{name: x}}
optimizer: {{}}
codeMode: {{enabled: false}}
sessionStorage: {{provider: memory}}
rateLimiting: {{shared: {{maxTokens: 1, refillPeriod: 1s}}}}
outgoingAuth:
  source: discovered
  default: {{type: aws_sts, awsSts: {{region: eu-west-1}}}}
passthroughHeaders: [X-Tenant]
incomingAuth: {{type: local}}
",
        common::ONE_STDIO
    ));
    assert_eq!(
        c.unsupported(),
        [
            "outgoingAuth.source: discovered",
            "outgoingAuth.default: aws_sts",
            "aggregation.tools[0].toolConfigRef",
        ]
    );
}
