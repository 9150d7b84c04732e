//! The helpers other packages use: `fixture_bin`, `FixtureProcess`, the in-process server.

#![allow(clippy::unwrap_used)] // Test helpers: a panic is the failure report.

mod common;

use common::catalogue::initialize;
use common::{Conn, HttpConn, SseConn};
use serde_json::json;
use vmcp_testkit::{FixtureOptions, FixtureProcess, fixture_bin, serve_http_in_process};

#[test]
fn fixture_bin_builds_and_finds_the_binary() {
    let bin = fixture_bin();
    assert!(bin.is_file(), "{}", bin.display());
    assert_eq!(bin, std::path::Path::new(common::BIN));
    assert_eq!(fixture_bin(), bin, "cached");
}

#[tokio::test]
async fn fixture_process_spawns_http_and_sse() {
    let mut http = FixtureProcess::spawn_http(&["--name", "delta"]).await;
    assert!(
        http.url.starts_with("http://127.0.0.1:") && http.url.ends_with("/mcp"),
        "{}",
        http.url
    );
    assert!(http.pid().is_some());
    let mut conn = Conn::Http(HttpConn::new(&http.url));
    initialize(&mut conn, "delta").await;

    let sse = FixtureProcess::spawn_sse(&[]).await;
    assert!(sse.url.ends_with("/sse"), "{}", sse.url);
    let mut conn = Conn::Sse(SseConn::open(&sse.url).await);
    initialize(&mut conn, "fixture").await;

    http.kill().await;
    assert!(http.pid().is_none(), "reaped after kill");
}

#[tokio::test]
async fn a_killed_fixture_restarts_on_its_port() {
    let mut http = FixtureProcess::spawn_http(&["--name", "phoenix"]).await;
    let url = http.url.clone();
    let before = http.pid();
    http.kill().await;
    http.restart().await;
    assert_eq!(http.url, url, "same port");
    assert_ne!(http.pid(), before, "a new process");
    let mut conn = Conn::Http(HttpConn::new(&http.url));
    initialize(&mut conn, "phoenix").await;
}

#[tokio::test]
async fn in_process_http_fixture_serves() {
    let opts = FixtureOptions {
        name: "inproc".to_owned(),
        tools: 3,
        ..FixtureOptions::default()
    };
    let (url, server) = serve_http_in_process(opts).await;
    let mut conn = Conn::Http(HttpConn::new(&url));
    initialize(&mut conn, "inproc").await;
    let called = conn.call_tool("tool_2", json!({})).await;
    assert_eq!(called["content"][0]["text"], "tool_2");
    server.abort();
}
