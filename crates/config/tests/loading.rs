//! Loading behaviour: defaults, strict keys with paths and lines, env references,
//! error aggregation and formatting.

#![allow(clippy::unwrap_used)] // Test helpers: a panic is the failure report.

mod common;

use std::time::Duration;

use common::{TWO, error_at, errors, load, ok};
use vmcp_config::{
    ConflictStrategy, Isolation, LogLevel, PartialFailureMode, ToolVisibility, Transport,
};

#[test]
fn minimal_config_gets_every_default() {
    let c = ok(TWO);
    assert_eq!(c.name, "vmcp");
    assert_eq!(c.group_ref, None);
    assert_eq!(c.backends[0].transport, Transport::StreamableHttp);
    assert_eq!(c.backends[1].transport, Transport::Stdio);
    assert_eq!(c.backends[1].isolation, Isolation::Shared);
    assert_eq!(c.aggregation.conflict_resolution, ConflictStrategy::Prefix);
    assert_eq!(
        c.aggregation.conflict_resolution_config.prefix_format,
        "{workload}_"
    );
    assert_eq!(c.aggregation.default_tool_visibility, ToolVisibility::Allow);
    assert_eq!(c.operational.log_level, LogLevel::Info);
    assert_eq!(c.operational.timeouts.default, Duration::from_secs(30));
    let fh = &c.operational.failure_handling;
    assert_eq!(fh.health_check_interval, Duration::from_secs(30));
    assert_eq!(fh.unhealthy_threshold, 3);
    assert_eq!(fh.health_check_timeout, Duration::from_secs(10));
    assert_eq!(fh.partial_failure_mode, PartialFailureMode::Fail);
    assert!(!fh.circuit_breaker.enabled);
    assert_eq!(fh.circuit_breaker.failure_threshold, 5);
    assert_eq!(fh.circuit_breaker.timeout, Duration::from_secs(60));
    let s = &c.server;
    assert_eq!((s.host.as_str(), s.port), ("127.0.0.1", 4483));
    assert_eq!(s.session_ttl, Duration::from_secs(1800));
    assert_eq!(s.max_sessions, 10_000);
    assert_eq!(s.max_body_bytes, 4_194_304);
    assert_eq!(s.max_per_session_processes, 64);
    assert_eq!(s.per_session_idle_timeout, Duration::from_secs(600));
    assert_eq!(s.discovery_timeout, Duration::from_secs(15));
    assert!(c.unsupported().is_empty());
}

#[test]
fn server_section_and_timeouts_parse() {
    let c = ok(&format!(
        "{TWO}server:
  host: ${{HOST}}
  port: ${{PORT}}
  sessionTtl: 1h
  maxSessions: 5
  maxBodyBytes: 1024
  allowedOrigins: [\"https://app.example.com\", \"http://localhost:3000\"]
  allowedHosts: [vmcp.internal, \"vmcp.internal:4483\", \"[::1]:80\"]
  maxPerSessionProcesses: 3
  perSessionIdleTimeout: 90s
  discoveryTimeout: 1.5s
  workerThreads: 4
  requestHeaderTimeout: 5s
  requestBodyTimeout: 20s
  idleConnectionTimeout: 2m
  sseKeepAlive: 5s
  shutdownDrain: 25s
operational:
  logLevel: debug
  timeouts:
    default: 1m30s
    perWorkload:
      github: 45s
"
    ));
    assert_eq!(c.server.host, "0.0.0.0");
    assert_eq!(c.server.port, 9000);
    assert_eq!(c.server.session_ttl, Duration::from_secs(3600));
    assert_eq!(c.server.allowed_hosts.len(), 3);
    assert_eq!(c.server.max_per_session_processes, 3);
    assert_eq!(c.server.discovery_timeout, Duration::from_millis(1500));
    assert_eq!(c.server.worker_threads, 4);
    assert_eq!(c.server.request_header_timeout, Duration::from_secs(5));
    assert_eq!(c.server.request_body_timeout, Duration::from_secs(20));
    assert_eq!(c.server.idle_connection_timeout, Duration::from_secs(120));
    assert_eq!(c.server.sse_keep_alive, Duration::from_secs(5));
    assert_eq!(c.server.shutdown_drain, Duration::from_secs(25));
    assert_eq!(c.operational.log_level, LogLevel::Debug);
    assert_eq!(c.timeout_for("github"), Duration::from_secs(45));
    assert_eq!(c.timeout_for("jira"), Duration::from_secs(90));
    assert_eq!(c.timeout_for("unknown"), Duration::from_secs(90));
}

#[test]
fn unknown_nested_key_has_path_and_line() {
    let yaml = "\
name: x
backends:
  - name: a
    command: run
  - name: b
    url: http://b
    transprot: sse
aggregation:
  tools:
    - workload: a
      overrides:
        echo:
          name: say
          descripton: typo
";
    let e = error_at(yaml, "backends[1].transprot", "unknown key");
    assert_eq!(e.line, Some(7));
    assert!(
        e.message.contains("did you mean \"transport\""),
        "{}",
        e.message
    );
    let e = error_at(
        yaml,
        "aggregation.tools[0].overrides.echo.descripton",
        "unknown key",
    );
    assert_eq!(e.line, Some(14));
}

#[test]
fn unknown_top_level_key_is_rejected() {
    let e = error_at(&format!("{TWO}servers: {{}}\n"), "servers", "unknown key");
    assert!(
        e.message.contains("did you mean \"server\""),
        "{}",
        e.message
    );
    assert_eq!(e.line, Some(6));
    let e = error_at(&format!("{TWO}wibble: 1\n"), "wibble", "known keys: ");
    assert!(e.message.contains("backends"));
}

#[test]
fn every_problem_is_reported_at_once_sorted_by_line() {
    let yaml = "\
backends:
  - name: a
    url: ftp://a
  - name: a
    command: x
    headers: {X: y}
server:
  port: 99999
  sessionTtl: soon
operational:
  failureHandling:
    partialFailureMode: bestEffort
bogus: true
";
    let errs = errors(yaml);
    let paths: Vec<&str> = errs.iter().map(|e| e.path.as_str()).collect();
    for p in [
        "backends[0].url",
        "backends[1].name",
        "backends[1].headers",
        "server.port",
        "server.sessionTtl",
        "operational.failureHandling.partialFailureMode",
        "bogus",
    ] {
        assert!(paths.contains(&p), "missing {p} in {paths:?}");
    }
    let lines: Vec<usize> = errs.iter().filter_map(|e| e.line).collect();
    assert!(lines.windows(2).all(|w| w[0] <= w[1]), "{lines:?}");
    let best = error_at(
        yaml,
        "operational.failureHandling.partialFailureMode",
        "best_effort",
    );
    assert!(best.message.contains("did you mean \"best_effort\""));
}

#[test]
fn display_prints_one_problem_per_line() {
    let err = load("backends:\n  - name: a\n    url: nope\n  - command: x\n").expect_err("bad");
    let text = err.to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), err.0.len());
    assert!(
        lines.contains(&"backends[0].url (line 3): \"nope\" must be an http:// or https:// URL"),
        "{text}"
    );
    assert!(
        lines.contains(&"backends[1].name (line 4): is required"),
        "{text}"
    );
}

#[test]
fn type_errors_are_reported_once() {
    let yaml = "backends:\n  - name: a\n    url: [1, 2]\n";
    let errs = errors(yaml);
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert_eq!(errs[0].path, "backends[0].url");
    assert!(errs[0].message.contains("expected a string, found a list"));
}

#[test]
fn yaml_syntax_error_reports_its_line() {
    let errs = errors("name: x\nbackends:\n  - name: a\n   bad: [\n");
    assert_eq!(errs.len(), 1);
    assert!(errs[0].line.is_some_and(|l| l >= 3), "{errs:?}");
    assert!(errs[0].message.starts_with("invalid YAML"));
}

#[test]
fn env_references_resolve_and_unset_ones_are_errors() {
    let c = ok("backends:
  - name: a
    url: https://a/mcp
    headers:
      Authorization: Bearer ${TOKEN}
      X-Price: $$5 ${MISSING:-none}
");
    assert_eq!(c.backends[0].headers["Authorization"], "Bearer s3cr3t");
    assert_eq!(c.backends[0].headers["X-Price"], "$5 none");

    let yaml = "backends:\n  - name: a\n    command: run\n    env:\n      KEY: ${API_KEY}\n";
    let e = error_at(yaml, "backends[0].env.KEY", "API_KEY is not set");
    assert_eq!(e.line, Some(5));
}

#[test]
fn unset_variable_in_a_typed_field_is_reported_once() {
    let errs = errors(&format!("{TWO}server:\n  port: ${{NOPE}}\n"));
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert_eq!(errs[0].path, "server.port");
    assert!(errs[0].message.contains("NOPE is not set"));
}

#[test]
fn debug_redacts_header_and_env_values() {
    let c = ok("backends:
  - name: a
    url: https://a/mcp
    headers:
      Authorization: Bearer ${TOKEN}
  - name: b
    command: run
    env:
      API_KEY: ${TOKEN}
outgoingAuth:
  backends:
    a:
      type: header_injection
      headerInjection:
        headerName: X-Key
        headerValue: ${TOKEN}
");
    let debug = format!("{c:?}");
    assert!(!debug.contains("s3cr3t"), "{debug}");
    assert!(debug.contains("Authorization") && debug.contains("API_KEY"));
}

#[test]
fn empty_document_needs_a_backend() {
    let e = error_at("", "backends", "at least one backend");
    assert_eq!(e.line, None);
    let e = error_at("# nothing\n", "backends", "at least one backend");
    assert_eq!(e.line, None);
}

#[test]
fn load_file_resolves_relative_cwd_and_reports_missing_file() {
    let dir = std::env::temp_dir().join(format!("vmcp-config-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let file = dir.join("vmcp.yaml");
    std::fs::write(
        &file,
        "backends:\n  - name: a\n    command: run\n    cwd: work\n",
    )
    .expect("write");
    let c = vmcp_config::load_file(&file).expect("loads");
    assert_eq!(
        c.backends[0].cwd.as_deref(),
        Some(dir.join("work").as_path())
    );
    std::fs::remove_dir_all(&dir).expect("cleanup");

    let err = vmcp_config::load_file(&dir.join("missing.yaml")).expect_err("missing");
    assert!(err.to_string().contains("cannot read"));
}
