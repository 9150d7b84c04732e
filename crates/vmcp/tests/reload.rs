//! Live reload through the binary, with clients connected: SIGHUP (and `--watch`) adds, removes
//! and restarts backends while sessions survive and are told what changed; an invalid file is
//! refused with `validate`'s messages and the running config stays; keys that cannot change live
//! are reported.

#![allow(clippy::unwrap_used)] // Test helpers: a panic is the failure report.

mod common;

use std::time::{Duration, Instant};

use common::eras::{Answerer, ModernClient, rmcp_legacy};
use common::{Client, Gateway, eventually, stdio_backend};
use serde_json::json;

fn hangup(gw: &Gateway) {
    let status = std::process::Command::new("kill")
        .args(["-HUP", &gw.pid().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

fn config(backends: &[(&str, &str)], extra: &str) -> String {
    let mut yaml = "name: reload\nbackends:\n".to_owned();
    for (name, served_as) in backends {
        // `--name` is what the backend's whoami answers: changing it changes the backend.
        yaml.push_str(&stdio_backend(name, "").replace(
            &format!("\"--name\", \"{name}\""),
            &format!("\"--name\", \"{served_as}\""),
        ));
    }
    yaml.push_str(extra);
    yaml
}

/// The gateway's logs without terminal colours.
fn plain_logs(gw: &Gateway) -> String {
    let mut out = String::new();
    let mut in_escape = false;
    for ch in gw.logs().chars() {
        match (in_escape, ch) {
            (false, '\u{1b}') => in_escape = true,
            (true, 'm') => in_escape = false,
            (true, _) => {}
            (false, c) => out.push(c),
        }
    }
    out
}

async fn wait_logs(gw: &Gateway, needle: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !plain_logs(gw).contains(needle) {
        assert!(
            Instant::now() < deadline,
            "no {needle:?} in logs:\n{}",
            plain_logs(gw)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn prefixed(tools: &[String], backend: &str) -> bool {
    tools.iter().any(|t| t.starts_with(&format!("{backend}_")))
}

#[tokio::test(flavor = "multi_thread")]
async fn sighup_adds_changes_and_removes_backends_while_sessions_go_on() {
    let gw = Gateway::start(&config(&[("notes", "notes")], ""));
    let c = Client::connect(&gw.url).await;
    let modern = ModernClient::new(&gw.url);
    let mut events = common::eras::legacy_stream(&c).await;
    assert!(prefixed(&c.tool_names().await, "notes"));
    let notes_process = common::children_matching(gw.pid(), "notes");

    // Add a backend.
    std::fs::write(
        &gw.config_path,
        config(&[("notes", "notes"), ("extra", "extra")], ""),
    )
    .unwrap();
    hangup(&gw);
    let change = events.next(Duration::from_secs(10)).await.expect("told");
    assert_eq!(
        change["method"], "notifications/tools/list_changed",
        "{change}"
    );
    let tools = c.tool_names().await;
    assert!(
        prefixed(&tools, "extra") && prefixed(&tools, "notes"),
        "{tools:?}"
    );
    let r = c.call("extra_whoami", json!({})).await;
    assert_eq!(r["result"]["content"][0]["text"], "extra", "{r}");
    // The unchanged backend kept its process.
    assert_eq!(common::children_matching(gw.pid(), "notes"), notes_process);
    // Modern clients see it too.
    let listed = modern.ok("tools/list", json!({})).await;
    assert!(
        listed["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "extra_whoami")
    );

    // Change a backend: it is restarted with its new settings.
    std::fs::write(
        &gw.config_path,
        config(&[("notes", "notes"), ("extra", "renamed")], ""),
    )
    .unwrap();
    hangup(&gw);
    wait_logs(&gw, "restarted=[\"extra\"]").await;
    let answered = eventually(Duration::from_secs(10), || {
        let c = c.clone();
        async move {
            let r = c.call("extra_whoami", json!({})).await;
            r["result"]["content"][0]["text"] == "renamed"
        }
    })
    .await;
    assert!(
        answered,
        "the changed backend answers with its new settings"
    );

    // Remove it.
    std::fs::write(&gw.config_path, config(&[("notes", "notes")], "")).unwrap();
    hangup(&gw);
    let mut told = false;
    for _ in 0..5 {
        match events.next(Duration::from_secs(10)).await {
            Some(e) if e["method"] == "notifications/tools/list_changed" => {
                if !prefixed(&c.tool_names().await, "extra") {
                    told = true;
                    break;
                }
            }
            Some(_) => {}
            None => break,
        }
    }
    assert!(told, "the session is told the backend left");
    let r = c.call("notes_echo", json!({"text": "same session"})).await;
    assert_eq!(r["result"]["content"][0]["text"], "same session", "{r}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_invalid_file_is_refused_with_validate_messages_and_the_running_config_stays() {
    let gw = Gateway::start(&config(&[("notes", "notes")], ""));
    let c = Client::connect(&gw.url).await;
    std::fs::write(
        &gw.config_path,
        "name: reload\nbackends:\n  - name: broken\n    transport: stdio\naggregation:\n  conflictResolution: sideways\n",
    )
    .unwrap();
    hangup(&gw);
    wait_logs(&gw, "config reload refused").await;
    let logs = plain_logs(&gw);
    // The same messages `vmcp validate` prints for this file.
    let (_, out, err) =
        common::run_cli(&["validate", "--config", gw.config_path.to_str().unwrap()]);
    let validate = format!("{out}{err}");
    let first_problem = validate
        .lines()
        .find(|l| l.contains("conflictResolution"))
        .unwrap_or_else(|| panic!("validate output: {validate}"))
        .trim();
    assert!(
        logs.contains(first_problem),
        "{first_problem:?} not in:\n{logs}"
    );
    // Still serving the old config.
    assert!(prefixed(&c.tool_names().await, "notes"));
    let r = c.call("notes_echo", json!({"text": "alive"})).await;
    assert_eq!(r["result"]["content"][0]["text"], "alive", "{r}");
}

#[tokio::test(flavor = "multi_thread")]
async fn keys_that_cannot_change_live_are_reported_and_keep_their_values() {
    let gw = Gateway::start(&config(&[("notes", "notes")], ""));
    let c = Client::connect(&gw.url).await;
    std::fs::write(
        &gw.config_path,
        config(
            &[("notes", "notes"), ("extra", "extra")],
            "server:\n  port: 1\n  maxSessions: 3\n",
        ),
    )
    .unwrap();
    hangup(&gw);
    wait_logs(&gw, "cannot change while serving").await;
    assert!(
        plain_logs(&gw).contains("server (listen address"),
        "{}",
        plain_logs(&gw)
    );
    // The rest of the file applied.
    let added = eventually(Duration::from_secs(10), || {
        let c = c.clone();
        async move { prefixed(&c.tool_names().await, "extra") }
    })
    .await;
    assert!(added);
}

#[tokio::test(flavor = "multi_thread")]
async fn watch_reloads_when_the_file_changes() {
    let gw = Gateway::start_with(&config(&[("notes", "notes")], ""), &["--watch"]);
    let c = Client::connect(&gw.url).await;
    let mut events = common::eras::legacy_stream(&c).await;
    std::fs::write(
        &gw.config_path,
        config(&[("notes", "notes"), ("extra", "extra")], ""),
    )
    .unwrap();
    let change = events
        .next(Duration::from_secs(10))
        .await
        .expect("told without a signal");
    assert_eq!(change["method"], "notifications/tools/list_changed");
    assert!(prefixed(&c.tool_names().await, "extra"));
}

/// An independent client (rmcp, the official Rust SDK) keeps its session across reloads and is
/// told about the change.
#[tokio::test(flavor = "multi_thread")]
async fn an_rmcp_client_keeps_its_session_and_is_told_about_a_reload() {
    let gw = Gateway::start(&config(&[("notes", "notes")], ""));
    let peer = Answerer::new("peer", json!({}));
    let client = rmcp_legacy(&gw.url, peer.clone()).await;
    gw.wait_streams(1).await;
    std::fs::write(
        &gw.config_path,
        config(&[("notes", "notes"), ("extra", "extra")], ""),
    )
    .unwrap();
    hangup(&gw);
    peer.wait_for("notifications/tools/list_changed", 1).await;
    let tools: Vec<String> = client
        .list_all_tools()
        .await
        .expect("tools/list in the same session")
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert!(
        prefixed(&tools, "extra") && prefixed(&tools, "notes"),
        "{tools:?}"
    );
}
