//! The fixture over MCP Streamable HTTP: sessions, JSON and SSE answers, GET stream, DELETE.

#![allow(clippy::unwrap_used)] // Test helpers: a panic is the failure report.

mod common;

use std::time::Duration;

use common::catalogue::{check_all, initialize};
use common::{Conn, HttpConn, spawn_listening};
use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::process::Child;

const PING: &str = r#"{"jsonrpc":"2.0","id":99,"method":"ping"}"#;

/// A fixture with an initialized session.
async fn session(args: &[&str]) -> (Child, HttpConn) {
    let (child, base) = spawn_listening("http", args).await;
    let mut conn = Conn::Http(HttpConn::new(&format!("{base}/mcp")));
    initialize(&mut conn, "fixture").await;
    let Conn::Http(conn) = conn else {
        unreachable!()
    };
    assert!(
        conn.session.is_some(),
        "initialize answer carries Mcp-Session-Id"
    );
    (child, conn)
}

#[tokio::test]
async fn http_json_serves_the_catalogue() {
    let (_child, base) = spawn_listening("http", &["--name", "beta", "--tools", "60"]).await;
    let mut conn = Conn::Http(HttpConn::new(&format!("{base}/mcp")));
    check_all(&mut conn, "beta", 60, true).await;
}

#[tokio::test]
async fn http_sse_responses_serve_the_catalogue() {
    let (_child, base) = spawn_listening("http", &["--sse-responses"]).await;
    let mut conn = Conn::Http(HttpConn::new(&format!("{base}/mcp")));
    check_all(&mut conn, "fixture", 0, true).await;
}

#[tokio::test]
async fn http_stateless_serves_without_sessions() {
    let (_child, base) = spawn_listening("http", &["--stateless"]).await;
    let mut conn = HttpConn::new(&format!("{base}/mcp"));
    let answer = conn.post(common::initialize_params().to_string()).await;
    assert!(answer.headers().get("mcp-session-id").is_none());
    let get = conn
        .client
        .get(&conn.url)
        .header("accept", "text/event-stream")
        .send()
        .await;
    assert_eq!(get.expect("GET").status(), 405);
    conn.session = None;
    let mut conn = Conn::Http(conn);
    check_all(&mut conn, "fixture", 0, false).await;
}

#[tokio::test]
async fn http_requests_without_or_with_unknown_session_are_rejected() {
    let (_child, mut conn) = session(&[]).await;
    conn.session = None;
    assert_eq!(conn.post(PING.to_owned()).await.status(), 400);
    conn.session = Some("no-such-session".to_owned());
    assert_eq!(conn.post(PING.to_owned()).await.status(), 404);
}

#[tokio::test]
async fn http_forget_session_answers_then_404() {
    let (_child, conn) = session(&[]).await;
    let mut conn = Conn::Http(conn);
    let answer = conn.call_tool("forget_session", json!({})).await;
    assert_eq!(answer["isError"], false);
    let Conn::Http(conn) = conn else {
        unreachable!()
    };
    assert_eq!(conn.post(PING.to_owned()).await.status(), 404);
}

#[tokio::test]
async fn http_notification_is_accepted_with_202() {
    let (_child, conn) = session(&[]).await;
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let answer = conn.post(note.to_owned()).await;
    assert_eq!(answer.status(), 202);
    assert!(answer.text().await.expect("body").is_empty());
}

#[tokio::test]
async fn http_malformed_json_is_400_with_parse_error() {
    let (_child, conn) = session(&[]).await;
    let answer = conn.post("{oops".to_owned()).await;
    assert_eq!(answer.status(), 400);
    let body: Value = serde_json::from_slice(&answer.bytes().await.expect("body")).expect("JSON");
    assert_eq!(body["error"]["code"], -32700);
}

#[tokio::test]
async fn http_garbage_answers_200_with_a_non_json_body() {
    let (_child, conn) = session(&["--sse-responses"]).await;
    let call = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"garbage"}}"#;
    let answer = conn.post(call.to_owned()).await;
    assert_eq!(answer.status(), 200);
    assert_eq!(answer.headers()["content-type"], "application/json");
    assert_eq!(answer.text().await.expect("body"), "not json{");
}

#[tokio::test]
async fn http_get_stream_stays_open_until_delete() {
    let (_child, conn) = session(&[]).await;
    let session = conn.session.clone().expect("session");
    let get = conn
        .client
        .get(&conn.url)
        .header("accept", "text/event-stream");
    let stream = get
        .header("mcp-session-id", &session)
        .send()
        .await
        .expect("GET");
    assert_eq!(stream.status(), 200);
    assert!(
        stream.headers()["content-type"]
            .to_str()
            .expect("ascii")
            .starts_with("text/event-stream")
    );
    let mut body = stream.bytes_stream();
    let idle = tokio::time::timeout(Duration::from_millis(300), body.next()).await;
    assert!(idle.is_err(), "nothing is sent on the GET stream");

    let delete = conn
        .client
        .delete(&conn.url)
        .header("mcp-session-id", &session)
        .send()
        .await;
    assert_eq!(delete.expect("DELETE").status(), 200);
    let ended = tokio::time::timeout(Duration::from_secs(5), body.next()).await;
    assert!(ended.expect("stream ends after DELETE").is_none());
    assert_eq!(conn.post(PING.to_owned()).await.status(), 404);
}

#[tokio::test]
async fn http_crash_exits_with_status_3() {
    let (mut child, conn) = session(&[]).await;
    let call = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"crash"}}"#;
    let request = conn
        .client
        .post(&conn.url)
        .header("mcp-session-id", conn.session.as_deref().expect("session"));
    assert!(request.body(call).send().await.is_err(), "no answer");
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
    assert_eq!(status.expect("exits").expect("wait").code(), Some(3));
}

#[cfg(unix)]
#[tokio::test]
async fn http_exits_cleanly_on_sigterm() {
    let (mut child, _base) = spawn_listening("http", &[]).await;
    let pid = child.id().expect("pid").to_string();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status();
    assert!(killed.expect("run kill").success());
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
    assert_eq!(status.expect("exits").expect("wait").code(), Some(0));
}
