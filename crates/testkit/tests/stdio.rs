//! The fixture over stdio: newline-delimited JSON-RPC on a child's stdin/stdout.

#![allow(clippy::unwrap_used)] // Test helpers: a panic is the failure report.

mod common;

use std::time::Duration;

use common::catalogue::check_all;
use common::{Conn, StdioConn};
use serde_json::{Value, json};

async fn exit_code(conn: &mut StdioConn) -> Option<i32> {
    let status = tokio::time::timeout(Duration::from_secs(10), conn.child.wait()).await;
    status.expect("child exits").expect("wait").code()
}

#[tokio::test]
async fn stdio_serves_the_catalogue() {
    let mut conn = Conn::Stdio(Box::new(StdioConn::spawn(&[
        "--name", "alpha", "--tools", "120",
    ])));
    check_all(&mut conn, "alpha", 120, false).await;
}

#[tokio::test]
async fn stdio_malformed_json_is_parse_error() {
    let mut conn = StdioConn::spawn(&[]);
    conn.send_line("{not json").await;
    let answer: Value = serde_json::from_str(&conn.next_line().await).expect("JSON");
    assert_eq!(answer["error"]["code"], -32700);
    assert_eq!(answer["id"], Value::Null);
}

#[tokio::test]
async fn stdio_garbage_writes_a_non_json_line_then_keeps_serving() {
    let mut conn = StdioConn::spawn(&[]);
    conn.send_line(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"garbage"}}"#)
        .await;
    assert_eq!(conn.next_line().await, "this is not json");
    let mut conn = Conn::Stdio(Box::new(conn));
    assert_eq!(conn.result("ping", json!({})).await, json!({}));
}

#[tokio::test]
async fn stdio_sleep_does_not_hold_up_other_requests() {
    let mut conn = StdioConn::spawn(&[]);
    conn.send_line(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":400}}}"#).await;
    conn.send_line(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#)
        .await;
    let first: Value = serde_json::from_str(&conn.next_line().await).expect("JSON");
    assert_eq!(first["id"], 2);
    let second: Value = serde_json::from_str(&conn.next_line().await).expect("JSON");
    assert_eq!(second["result"]["content"][0]["text"], "slept 400");
}

#[tokio::test]
async fn stdio_crash_exits_with_status_3() {
    let mut conn = StdioConn::spawn(&[]);
    conn.send_line(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"crash"}}"#)
        .await;
    assert_eq!(exit_code(&mut conn).await, Some(3));
}

#[tokio::test]
async fn stdio_exits_cleanly_when_stdin_closes() {
    let mut conn = StdioConn::spawn(&[]);
    conn.send_line(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .await;
    let StdioConn {
        mut child,
        stdin,
        mut lines,
        ..
    } = conn;
    drop(stdin);
    let answer = lines
        .next_line()
        .await
        .expect("read")
        .expect("answer before exit");
    assert!(answer.contains(r#""id":1"#), "{answer}");
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
    assert_eq!(status.expect("exits").expect("wait").code(), Some(0));
}

#[cfg(unix)]
#[tokio::test]
async fn stdio_exits_cleanly_on_sigterm() {
    let mut conn = StdioConn::spawn(&[]);
    // An answer proves the signal handlers are installed.
    conn.send_line(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .await;
    conn.next_line().await;
    let pid = conn.child.id().expect("pid").to_string();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status();
    assert!(killed.expect("run kill").success());
    assert_eq!(exit_code(&mut conn).await, Some(0));
}
