//! The lean pool against a hand-written HTTP/1.1 server, so reuse, closing and cancellation are
//! observed on the wire rather than through hyper's own view of them.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http::HeaderMap;
use http_body_util::BodyExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

use super::H1Pool;

/// What the test server does with each request it reads.
#[derive(Clone, Copy)]
enum Behaviour {
    /// Answers `{"n":K}` and keeps the connection.
    Answer,
    /// Answers, then closes the connection (as a backend's keep-alive timeout would).
    AnswerThenClose,
    /// Answers 202 with an empty body.
    Accepted,
    /// Never answers.
    Hang,
}

struct Server {
    url: reqwest::Url,
    connections: Arc<AtomicUsize>,
    /// Each request's head as read, and `"EOF"` whenever a client closes a connection.
    seen: mpsc::UnboundedReceiver<String>,
}

async fn server(behaviour: Behaviour) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp?x=1", listener.local_addr().unwrap())
        .parse()
        .unwrap();
    let connections = Arc::new(AtomicUsize::new(0));
    let (tx, seen) = mpsc::unbounded_channel();
    let count = connections.clone();
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            count.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(serve_connection(stream, behaviour, tx.clone()));
        }
    });
    Server {
        url,
        connections,
        seen,
    }
}

async fn serve_connection(
    mut stream: TcpStream,
    behaviour: Behaviour,
    seen: mpsc::UnboundedSender<String>,
) {
    let mut buf = Vec::new();
    let mut answered = 0;
    loop {
        let Some(head_end) = find(&buf, b"\r\n\r\n") else {
            let mut chunk = [0u8; 4096];
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => {
                    let _ = seen.send("EOF".into());
                    return;
                }
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
            continue;
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
        let length: usize = head
            .lines()
            .find_map(|l| {
                l.to_ascii_lowercase()
                    .strip_prefix("content-length:")
                    .map(|v| v.trim().parse().unwrap())
            })
            .unwrap_or(0);
        if buf.len() < head_end + 4 + length {
            let mut chunk = [0u8; 4096];
            let n = stream.read(&mut chunk).await.unwrap_or(0);
            if n == 0 {
                return;
            }
            buf.extend_from_slice(&chunk[..n]);
            continue;
        }
        buf.drain(..head_end + 4 + length);
        let _ = seen.send(head);
        answered += 1;
        let response = match behaviour {
            Behaviour::Answer | Behaviour::AnswerThenClose => {
                let body = format!("{{\"n\":{answered}}}");
                format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                    body.len()
                )
            }
            Behaviour::Accepted => "HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n".into(),
            Behaviour::Hang => {
                // Wait for the client to give up.
                let mut chunk = [0u8; 64];
                while matches!(stream.read(&mut chunk).await, Ok(n) if n > 0) {}
                let _ = seen.send("EOF".into());
                return;
            }
        };
        stream.write_all(response.as_bytes()).await.unwrap();
        if matches!(behaviour, Behaviour::AnswerThenClose) {
            return;
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

async fn post(pool: &Arc<H1Pool>, body: &'static str) -> (u16, Bytes) {
    let response = pool
        .post(HeaderMap::new(), Bytes::from_static(body.as_bytes()))
        .await
        .expect("post");
    let status = response.status().as_u16();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, body)
}

#[tokio::test]
async fn sequential_posts_share_one_connection_and_carry_host_and_target() {
    let mut s = server(Behaviour::Answer).await;
    let pool = H1Pool::for_url(&s.url, 1).unwrap();
    for n in 1..=3 {
        let (status, body) = post(&pool, "{}").await;
        assert_eq!(status, 200);
        assert_eq!(body, format!("{{\"n\":{n}}}"));
    }
    assert_eq!(s.connections.load(Ordering::SeqCst), 1);
    let head = s.seen.recv().await.unwrap();
    let port = s.url.port().unwrap();
    assert!(head.starts_with("POST /mcp?x=1 HTTP/1.1\r\n"), "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains(&format!("host: 127.0.0.1:{port}")),
        "{head}"
    );
    assert!(head.contains("content-length: 2"), "{head}");
}

#[tokio::test]
async fn a_body_dropped_unread_closes_its_connection() {
    let mut s = server(Behaviour::Answer).await;
    let pool = H1Pool::for_url(&s.url, 1).unwrap();
    let response = pool.post(HeaderMap::new(), Bytes::new()).await.unwrap();
    drop(response);
    let (status, _) = post(&pool, "{}").await;
    assert_eq!(status, 200);
    assert_eq!(s.connections.load(Ordering::SeqCst), 2);
    let mut saw_eof = false;
    while let Ok(Some(m)) = tokio::time::timeout(Duration::from_millis(500), s.seen.recv()).await {
        saw_eof |= m == "EOF";
    }
    assert!(saw_eof, "the half-read connection was not closed");
}

#[tokio::test]
async fn an_empty_answer_returns_its_connection_without_being_read() {
    let s = server(Behaviour::Accepted).await;
    let pool = H1Pool::for_url(&s.url, 1).unwrap();
    for _ in 0..3 {
        let response = pool.post(HeaderMap::new(), Bytes::new()).await.unwrap();
        assert_eq!(response.status().as_u16(), 202);
    }
    assert_eq!(s.connections.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_connection_the_backend_closed_is_replaced() {
    let s = server(Behaviour::AnswerThenClose).await;
    let pool = H1Pool::for_url(&s.url, 1).unwrap();
    for _ in 0..3 {
        let (status, body) = post(&pool, "{}").await;
        assert_eq!(status, 200);
        assert_eq!(body, "{\"n\":1}");
        // Let the client side notice the close, as it would between real calls.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(s.connections.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn dropping_a_request_in_flight_closes_the_connection() {
    let mut s = server(Behaviour::Hang).await;
    let pool = H1Pool::for_url(&s.url, 1).unwrap();
    let pending = pool.post(HeaderMap::new(), Bytes::from_static(b"{}"));
    assert!(
        tokio::time::timeout(Duration::from_millis(200), pending)
            .await
            .is_err()
    );
    let mut events = Vec::new();
    while let Ok(Some(m)) = tokio::time::timeout(Duration::from_secs(2), s.seen.recv()).await {
        let eof = m == "EOF";
        events.push(m);
        if eof {
            break;
        }
    }
    assert_eq!(events.last().map(String::as_str), Some("EOF"), "{events:?}");
}

#[tokio::test]
async fn a_refused_connection_is_a_clear_error() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url: reqwest::Url = format!("http://{}/mcp", listener.local_addr().unwrap())
        .parse()
        .unwrap();
    drop(listener);
    let pool = H1Pool::for_url(&url, 1).unwrap();
    let err = pool
        .post(HeaderMap::new(), Bytes::new())
        .await
        .err()
        .unwrap();
    assert!(err.starts_with("cannot connect to 127.0.0.1:"), "{err}");
}

#[test]
fn only_plain_http_urls_without_credentials_get_a_pool() {
    let pool = |u: &str| H1Pool::for_url(&u.parse().unwrap(), 2);
    assert!(pool("https://example.com/mcp").is_none());
    assert!(pool("http://user:secret@example.com/mcp").is_none());
    let p = pool("http://[::1]:8080/a/b?q=1").unwrap();
    assert_eq!(p.address, "[::1]:8080");
    assert_eq!(p.host, "[::1]:8080");
    assert_eq!(p.target, "/a/b?q=1");
    let p = pool("http://backend.internal/").unwrap();
    assert_eq!(p.address, "backend.internal:80");
    assert_eq!(p.host, "backend.internal");
    assert_eq!(p.target, "/");
    assert_eq!(p.idle.len(), 2);
}
