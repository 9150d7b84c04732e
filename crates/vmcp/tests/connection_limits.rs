//! Early refusals and connection time limits, on raw sockets against the real binary: a body
//! declared too large is refused before it is sent; slow headers (slow-loris) and idle keep-alive
//! connections are closed; a slow body gets 408; an open SSE stream is never cut as idle.

#![allow(clippy::unwrap_used)] // Test code: a panic is the failure report.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::{Gateway, stdio_backend};

/// Small limits so the test runs quickly; the bounds asserted below are generous multiples.
fn gateway() -> Gateway {
    Gateway::start(&format!(
        "name: limits\nbackends:\n{}server:\n  maxBodyBytes: 1024\n  requestHeaderTimeout: 300ms\n  requestBodyTimeout: 300ms\n  idleConnectionTimeout: 600ms\n",
        stdio_backend("fx", "")
    ))
}

fn connect(gw: &Gateway) -> TcpStream {
    let addr = gw.base.trim_start_matches("http://");
    let s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("read timeout");
    s
}

/// Reads until the peer closes (or the read timeout passes); returns what arrived and whether the
/// connection was closed by the gateway.
fn read_until_closed(s: &mut TcpStream) -> (String, bool) {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return (String::from_utf8_lossy(&out).into_owned(), true),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                return (String::from_utf8_lossy(&out).into_owned(), true);
            }
            Err(_) => return (String::from_utf8_lossy(&out).into_owned(), false),
        }
    }
}

#[test]
fn a_declared_length_past_the_limit_is_refused_before_the_body_is_sent() {
    let gw = gateway();
    let mut s = connect(&gw);
    // Headers only: the 413 must come without a byte of the (10 GB) body.
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 10000000000\r\n\r\n"
    )
    .unwrap();
    let (text, _) = read_until_closed(&mut s);
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    assert!(text.contains("-32600"), "{text}");
    assert!(text.contains("larger than 1024 bytes"), "{text}");
}

#[test]
fn slow_headers_are_cut_off() {
    let gw = gateway();
    let mut s = connect(&gw);
    let started = Instant::now();
    s.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .unwrap();
    // The rest of the headers never comes.
    let (text, closed) = read_until_closed(&mut s);
    assert!(closed, "the connection stayed open with half a request");
    assert!(text.is_empty(), "{text}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "closed only after {:?}",
        started.elapsed()
    );
}

#[test]
fn a_slow_body_gets_408() {
    let gw = gateway();
    let mut s = connect(&gw);
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{{\"jsonrpc\""
    )
    .unwrap();
    let (text, _) = read_until_closed(&mut s);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(text.contains("not received within"), "{text}");
}

#[test]
fn an_idle_keep_alive_connection_is_closed_and_a_busy_one_is_not() {
    let gw = gateway();
    let mut s = connect(&gw);
    // Requests keep a connection alive; each answer is complete.
    for _ in 0..3 {
        s.write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            .unwrap();
        let mut buf = [0u8; 1024];
        let n = s.read(&mut buf).unwrap();
        assert!(buf[..n].starts_with(b"HTTP/1.1 200"));
        // Well inside the 600 ms idle limit, even for a stalled test thread.
        std::thread::sleep(Duration::from_millis(50));
    }
    // Then nothing: closed after the idle limit.
    let started = Instant::now();
    let (_, closed) = read_until_closed(&mut s);
    assert!(closed, "an idle connection stayed open");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "closed only after {:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_open_sse_stream_is_never_cut_as_idle() {
    let gw = gateway();
    let c = common::Client::connect(&gw.url).await;
    let session = c.session.clone().expect("session id");
    let mut s = connect(&gw);
    write!(
        s,
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n"
    )
    .unwrap();
    let mut buf = [0u8; 1024];
    let n = s.read(&mut buf).unwrap();
    assert!(
        buf[..n].starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&buf[..n])
    );
    // Three idle limits later the stream is still open (a read times out instead of ending).
    s.set_read_timeout(Some(Duration::from_millis(1800)))
        .unwrap();
    assert!(
        !matches!(s.read(&mut buf), Ok(0)),
        "the SSE stream was closed as idle"
    );
    assert_eq!(c.delete().await, 200);
}
