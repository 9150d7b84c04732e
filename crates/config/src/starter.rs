//! `starter_config`: the commented YAML that `vmcp init` writes.

/// A commented, valid starter configuration with one stdio and one HTTP backend.
///
/// ```
/// let text = vmcp_config::starter_config();
/// let config = vmcp_config::load_str(&text, &|_| None).expect("starter config loads");
/// assert_eq!(config.backends.len(), 2);
/// ```
pub fn starter_config() -> String {
    STARTER.to_owned()
}

const STARTER: &str = r#"# vmcp configuration. The schema is ToolHive vMCP's: its files load unchanged.
# Check this file with `vmcp validate --config vmcp.yaml`; run with `vmcp serve`.
# Strings may use ${VAR} or ${VAR:-default} to read the environment ($$ is a literal $).

name: my-vmcp

# The MCP servers to put behind one endpoint. Names must be unique and are used to
# prefix tool names (see aggregation below).
backends:
  # A local server started as a child process, speaking MCP over stdin/stdout.
  - name: everything
    transport: stdio
    command: npx
    args: ["-y", "@modelcontextprotocol/server-everything"]
    # env:
    #   API_KEY: ${EVERYTHING_API_KEY}
    # One child shared by all clients (default), or one per client session:
    # isolation: perSession

  # A remote server reached over streamable HTTP (or `transport: sse`).
  - name: remote
    url: http://127.0.0.1:8080/mcp
    transport: streamable-http
    # headers:
    #   Authorization: Bearer ${REMOTE_TOKEN}

# Who may connect. anonymous: no client authentication (keep the server on loopback).
incomingAuth:
  type: anonymous

# How vmcp authenticates to backends.
outgoingAuth:
  source: inline
  default:
    type: unauthenticated

# How tools from several backends are combined.
aggregation:
  conflictResolution: prefix       # prefix | priority | manual
  conflictResolutionConfig:
    prefixFormat: "{workload}_"    # everything_echo, remote_fetch, ...
  # tools:
  #   - workload: everything
  #     filter: ["echo", "add"]     # advertise only these
  #     overrides:
  #       echo:
  #         name: say
  #         description: Repeat a message back.

operational:
  timeouts:
    default: 30s
    # perWorkload:
    #   remote: 60s
  failureHandling:
    healthCheckInterval: 30s
    unhealthyThreshold: 3
    partialFailureMode: fail       # fail | best_effort

# vmcp's own HTTP listener and limits (all optional; defaults shown).
server:
  host: 127.0.0.1
  port: 4483
  sessionTtl: 30m
  maxSessions: 10000
  maxSessionsPerIdentity: 100   # per issuer+subject; all anonymous callers count as one
  # Browser origins and Host headers allowed besides loopback ones:
  # allowedOrigins: ["https://app.example.com"]
  # allowedHosts: ["vmcp.internal:4483"]
"#;
