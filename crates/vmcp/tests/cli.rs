//! The command line: validate, init, version.

#![allow(clippy::unwrap_used)] // Test helpers: a panic is the failure report.

mod common;

use common::{run_cli, temp_path};

#[test]
fn version_prints_the_version() {
    let (status, out, _) = run_cli(&["version"]);
    assert!(status.success());
    assert_eq!(out.trim(), format!("vmcp {}", env!("CARGO_PKG_VERSION")));
}

#[test]
fn validate_lists_every_problem_with_path_and_line_and_fails() {
    let path = temp_path("yaml");
    std::fs::write(
        &path,
        "name: bad\nbackends:\n  - name: a\n    transport: carrier-pigeon\n  - name: b\n    transport: stdio\n    colour: blue\naggregation:\n  conflictResolution: priority\n",
    )
    .unwrap();
    let (status, _, err) = run_cli(&["validate", "--config", path.to_str().unwrap()]);
    assert!(!status.success());
    assert!(err.contains("backends[0].transport (line 4)"), "{err}");
    assert!(err.contains("backends[1].colour (line 7)"), "{err}");
    assert!(err.contains("backends[1].command"), "{err}");
    assert!(err.contains("priorityOrder"), "{err}");
    let _ = std::fs::remove_file(path);
}

#[test]
fn validate_accepts_the_starter_and_quickstart_configs() {
    let (status, starter, _) = run_cli(&["init"]);
    assert!(status.success());
    let path = temp_path("yaml");
    std::fs::write(&path, starter).unwrap();
    let (status, out, err) = run_cli(&["validate", "--config", path.to_str().unwrap()]);
    assert!(status.success(), "{out}{err}");
    let quickstart = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/quickstart.yaml"
    );
    let (status, out, err) = run_cli(&["validate", "--config", quickstart]);
    assert!(status.success(), "{out}{err}");
    let _ = std::fs::remove_file(path);
}

#[test]
fn validate_flags_unsupported_keys_and_serve_refuses_them() {
    let path = temp_path("yaml");
    std::fs::write(&path, "name: x\nbackends:\n  - name: a\n    url: http://127.0.0.1:1/mcp\ncodeMode: {enabled: true}\n").unwrap();
    let (status, out, _) = run_cli(&["validate", "--config", path.to_str().unwrap()]);
    assert!(!status.success());
    assert!(out.contains("not supported yet: codeMode"), "{out}");
    let (status, _, err) = run_cli(&["serve", "--config", path.to_str().unwrap(), "--port", "0"]);
    assert!(!status.success());
    assert!(err.contains("not supported yet: codeMode"), "{err}");
    let _ = std::fs::remove_file(path);
}

#[test]
fn unauthenticated_serving_on_a_network_address_must_be_asked_for() {
    let path = temp_path("yaml");
    let base = "name: x\nbackends:\n  - name: a\n    url: http://127.0.0.1:1/mcp\n";
    std::fs::write(&path, base).unwrap();
    let (status, _, err) = run_cli(&[
        "serve",
        "--config",
        path.to_str().unwrap(),
        "--host",
        "0.0.0.0",
        "--port",
        "0",
    ]);
    assert!(!status.success());
    assert!(err.contains("allowAnonymousOnNetwork"), "{err}");
    // A token exchange needs a caller token: incoming OIDC.
    std::fs::write(
        &path,
        format!("{base}outgoingAuth:\n  default:\n    type: token_exchange\n    tokenExchange: {{tokenUrl: https://idp/token}}\n"),
    )
    .unwrap();
    let (status, _, err) = run_cli(&["serve", "--config", path.to_str().unwrap(), "--port", "0"]);
    assert!(!status.success());
    assert!(err.contains("incomingAuth.type must be oidc"), "{err}");
    let _ = std::fs::remove_file(path);
}

#[test]
fn init_from_mcp_json_converts_claude_desktop_servers() {
    let path = temp_path("json");
    std::fs::write(
        &path,
        r#"{"mcpServers": {"files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]}, "remote": {"url": "https://mcp.example.com/mcp"}}}"#,
    )
    .unwrap();
    let (status, out, err) = run_cli(&["init", "--from-mcp-json", path.to_str().unwrap()]);
    assert!(status.success(), "{err}");
    assert!(out.contains("name: files"), "{out}");
    assert!(out.contains("transport: stdio"), "{out}");
    assert!(out.contains("https://mcp.example.com/mcp"), "{out}");
    let yaml = temp_path("yaml");
    std::fs::write(&yaml, &out).unwrap();
    let (status, o, e) = run_cli(&["validate", "--config", yaml.to_str().unwrap()]);
    assert!(status.success(), "{o}{e}");
    let _ = std::fs::remove_file(path);
    let _ = std::fs::remove_file(yaml);
}

#[test]
fn json_log_format_writes_one_json_object_per_line() {
    let path = temp_path("yaml");
    // A config serve refuses after logging has started: the refusal is logged as JSON.
    std::fs::write(
        &path,
        "name: x\nbackends:\n  - name: a\n    url: http://127.0.0.1:1/mcp\n",
    )
    .unwrap();
    let mut gw = common::Gateway::start_with(
        &std::fs::read_to_string(&path).unwrap(),
        &["--log-format", "json", "--debug"],
    );
    let _ = gw.terminate();
    let logs = gw.logs();
    let lines: Vec<&str> = logs.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(!lines.is_empty(), "no logs");
    for line in lines {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        assert!(
            v.get("level").is_some() && v.get("fields").is_some(),
            "{line}"
        );
    }
    let _ = std::fs::remove_file(path);
}
