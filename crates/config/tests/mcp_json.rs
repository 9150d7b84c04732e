//! `from_mcp_json` for the Claude Desktop, Cursor and VS Code file shapes.

#![allow(clippy::unwrap_used)] // Test helpers: a panic is the failure report.

use vmcp_config::{Transport, from_mcp_json, load_str, to_yaml};

#[test]
fn claude_desktop_stdio_servers_in_sorted_order() {
    let c = from_mcp_json(
        r#"{
          "globalShortcut": "Ctrl+Space",
          "mcpServers": {
            "sqlite": {"command": "uvx", "args": ["mcp-server-sqlite", "--db", "/tmp/x.db"]},
            "filesystem": {
              "command": "npx",
              "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/u"],
              "env": {"DEBUG": "1", "PRICE": "$5"}
            }
          }
        }"#,
    )
    .expect("converts");
    let names: Vec<&str> = c.backends.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["filesystem", "sqlite"]);
    let fs = &c.backends[0];
    assert_eq!(fs.transport, Transport::Stdio);
    assert_eq!(fs.command.as_deref(), Some("npx"));
    assert_eq!(fs.args.len(), 3);
    assert_eq!(fs.env["PRICE"], "$5");
    // Written out for `vmcp init`, it loads back to the same configuration.
    let reloaded = load_str(&to_yaml(&c), &|_| None).expect("reloads");
    assert_eq!(reloaded, c);
}

#[test]
fn cursor_url_servers_default_to_streamable_http() {
    let c = from_mcp_json(
        r#"{"mcpServers": {
            "remote": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer x"}},
            "legacy": {"url": "http://localhost:8000/sse", "transport": "sse"},
            "off": {"command": "never", "disabled": true}
        }}"#,
    )
    .expect("converts");
    let names: Vec<&str> = c.backends.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["legacy", "remote"]);
    assert_eq!(c.backends[0].transport, Transport::Sse);
    assert_eq!(c.backends[1].transport, Transport::StreamableHttp);
    assert_eq!(c.backends[1].headers["Authorization"], "Bearer x");
}

#[test]
fn vs_code_servers_with_types_and_odd_names() {
    let c = from_mcp_json(
        r#"{
          "inputs": [{"type": "promptString", "id": "token"}],
          "servers": {
            "github/copilot": {"type": "http", "url": "https://api.example.com/mcp"},
            "My Server": {"type": "stdio", "command": "node", "args": ["server.js"], "cwd": "/srv"},
            "events": {"type": "sse", "url": "https://events.example.com/sse"}
          }
        }"#,
    )
    .expect("converts");
    let names: Vec<&str> = c.backends.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["My-Server", "events", "github-copilot"]);
    assert_eq!(
        c.backends[0].cwd.as_deref(),
        Some(std::path::Path::new("/srv"))
    );
    assert_eq!(c.backends[1].transport, Transport::Sse);
    assert_eq!(c.backends[2].transport, Transport::StreamableHttp);
}

#[test]
fn malformed_entries_are_all_reported() {
    let err = from_mcp_json(
        r#"{"mcpServers": {
            "a": {"type": "websocket", "url": "ws://x"},
            "b": {},
            "c": {"command": "x", "args": "not-a-list"},
            "d": {"url": "ftp://x"}
        }}"#,
    )
    .expect_err("bad");
    let text = err.to_string();
    assert!(
        text.contains("mcpServers.a.type: unknown transport \"websocket\""),
        "{text}"
    );
    assert!(
        text.contains("mcpServers.b: has neither command nor url"),
        "{text}"
    );
    assert!(
        text.contains("mcpServers.c.args: expected a list of strings"),
        "{text}"
    );
    assert!(from_mcp_json("{}").is_err());
    assert!(from_mcp_json("not json").is_err());
}

#[test]
fn invalid_converted_values_are_caught_by_validation() {
    let err = from_mcp_json(r#"{"mcpServers": {"d": {"url": "ftp://x"}}}"#).expect_err("bad");
    assert!(err.to_string().contains("backends[0].url"), "{err}");
}
