//! The fixture over the legacy HTTP+SSE transport (2024-11-05).

#![allow(clippy::unwrap_used)] // Test helpers: a panic is the failure report.

mod common;

use common::catalogue::check_all;
use common::{Conn, SseConn, http_client, spawn_listening};
use serde_json::Value;

#[tokio::test]
async fn sse_serves_the_catalogue() {
    let (_child, base) = spawn_listening("sse", &["--name", "gamma", "--tools", "50"]).await;
    let mut conn = Conn::Sse(SseConn::open(&format!("{base}/sse")).await);
    check_all(&mut conn, "gamma", 50, false).await;
}

#[tokio::test]
async fn sse_post_to_unknown_session_is_404() {
    let (_child, base) = spawn_listening("sse", &[]).await;
    let url = format!("{base}/messages?sessionId=nope");
    let answer = http_client()
        .post(url)
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .send()
        .await;
    assert_eq!(answer.expect("POST").status(), 404);
}

#[tokio::test]
async fn sse_malformed_json_is_400_with_parse_error() {
    let (_child, base) = spawn_listening("sse", &[]).await;
    let conn = SseConn::open(&format!("{base}/sse")).await;
    let answer = conn.post("{oops".to_owned()).await;
    assert_eq!(answer.status(), 400);
    let body: Value = serde_json::from_slice(&answer.bytes().await.expect("body")).expect("JSON");
    assert_eq!(body["error"]["code"], -32700);
}

#[tokio::test]
async fn sse_garbage_sends_a_non_json_message_event() {
    let (_child, base) = spawn_listening("sse", &[]).await;
    let mut conn = SseConn::open(&format!("{base}/sse")).await;
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"garbage"}}"#;
    assert_eq!(conn.post(call.to_owned()).await.status(), 202);
    assert_eq!(
        conn.next_event().await,
        ("message".to_owned(), "not json{".to_owned())
    );
}

#[tokio::test]
async fn sse_post_to_the_stream_url_is_405_so_clients_can_fall_back() {
    let (_child, base) = spawn_listening("sse", &[]).await;
    let answer = http_client()
        .post(format!("{base}/sse"))
        .body("{}")
        .send()
        .await;
    assert_eq!(answer.expect("POST").status(), 405);
}
