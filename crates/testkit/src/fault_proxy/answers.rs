//! The proxy's lies about a backend's answers: it reads each HTTP/1.1 answer the backend sends
//! (headers, then a `Content-Length` body) and stalls it halfway, garbles it, changes its
//! JSON-RPC `id`, or swaps it for the answer to another request. Answers it cannot frame (chunked,
//! an SSE stream, a head over 64 KiB) end the lying on that connection: the rest is copied as it
//! comes, since guessing at framing would corrupt traffic the test did not mean to.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::FaultMode;

/// Largest answer head read before giving up on framing.
const MAX_HEAD: usize = 64 * 1024;
/// What a garbled answer's body becomes (after the first half of the real one).
const GARBAGE: &[u8] = b"\xff\xfe<html>\x00garbage}]";

/// One way of lying.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lie {
    StallMidBody,
    Garbage,
    WrongId,
    OtherAnswer,
}

impl Lie {
    /// The lie a mode tells, if any.
    pub(super) fn of(mode: FaultMode) -> Option<Lie> {
        match mode {
            FaultMode::StallMidBody => Some(Lie::StallMidBody),
            FaultMode::Garbage => Some(Lie::Garbage),
            FaultMode::WrongId => Some(Lie::WrongId),
            FaultMode::OtherAnswer => Some(Lie::OtherAnswer),
            FaultMode::Pass | FaultMode::Refuse | FaultMode::Unauthorized | FaultMode::Delay(_) => {
                None
            }
        }
    }
}

/// State shared by every connection of one proxy.
#[derive(Clone, Default)]
pub(super) struct Lies {
    /// Answers stalled or rewritten so far.
    pub(super) count: Arc<AtomicUsize>,
    /// The last JSON-RPC answer body seen, for [`Lie::OtherAnswer`].
    previous: Arc<Mutex<Option<Vec<u8>>>>,
}

/// What to send for one answer.
enum Out {
    Send(Vec<u8>),
    /// Send these bytes, then nothing more.
    Stall(Vec<u8>),
}

impl Lies {
    /// Copies answers from `server` to `client`, telling `lie` about each one it can frame.
    pub(super) async fn relay<R, W>(&self, lie: Lie, server: &mut R, client: &mut W)
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin,
    {
        let mut buf = Vec::new();
        loop {
            let Some(head_len) = read_head(server, &mut buf).await else {
                let _ = client.write_all(&buf).await;
                return;
            };
            let Some(body_len) = content_length(&buf[..head_len]) else {
                // Not length-framed: forward it and everything after it untouched.
                if client.write_all(&buf).await.is_err() {
                    return;
                }
                let _ = tokio::io::copy(server, client).await;
                return;
            };
            if !read_to(server, &mut buf, head_len + body_len).await {
                let _ = client.write_all(&buf).await;
                return;
            }
            let rest = buf.split_off(head_len + body_len);
            let body = buf.split_off(head_len);
            let out = self.tell(lie, &buf, body);
            buf = rest;
            match out {
                Out::Send(bytes) => {
                    if client.write_all(&bytes).await.is_err() {
                        return;
                    }
                }
                Out::Stall(bytes) => {
                    let _ = client.write_all(&bytes).await;
                    let _ = client.flush().await;
                    // Keep the connection open and silent; read on so the backend never blocks.
                    let mut sink = vec![0u8; 16 * 1024];
                    while server.read(&mut sink).await.is_ok_and(|n| n > 0) {}
                    std::future::pending::<()>().await;
                }
            }
        }
    }

    /// The bytes to send for the answer with `head` and `body`.
    fn tell(&self, lie: Lie, head: &[u8], body: Vec<u8>) -> Out {
        if lie == Lie::StallMidBody {
            return self.stall(head, &body);
        }
        let Some(answer) = json_rpc_answer(&body) else {
            return Out::Send([head, &body].concat());
        };
        let told = match lie {
            Lie::Garbage => [&body[..body.len() / 2], GARBAGE].concat(),
            Lie::WrongId => with_other_id(answer),
            Lie::OtherAnswer => {
                let mut previous = self.previous.lock().unwrap_or_else(|p| p.into_inner());
                match previous.replace(body) {
                    Some(other) => other,
                    // Nothing to swap with yet: this one goes through, and is swapped later.
                    None => return Out::Send([head, previous.as_deref().unwrap_or(&[])].concat()),
                }
            }
            Lie::StallMidBody => return self.stall(head, &body),
        };
        self.count.fetch_add(1, Ordering::Relaxed);
        Out::Send([with_length(head, told.len()).as_slice(), &told].concat())
    }

    /// The head and half the body (an empty body goes through: there is no middle to stop in).
    fn stall(&self, head: &[u8], body: &[u8]) -> Out {
        if body.is_empty() {
            return Out::Send(head.to_vec());
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        Out::Stall([head, &body[..body.len() / 2]].concat())
    }
}

/// Reads until `buf` holds a whole head; its length (up to and with the blank line), or None
/// when the stream ends or the head is too long.
async fn read_head<R: AsyncRead + Unpin>(server: &mut R, buf: &mut Vec<u8>) -> Option<usize> {
    let mut chunk = vec![0u8; 16 * 1024];
    loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            return Some(at + 4);
        }
        if buf.len() > MAX_HEAD {
            return None;
        }
        match server.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

/// Reads until `buf` holds `len` bytes; false when the stream ends first.
async fn read_to<R: AsyncRead + Unpin>(server: &mut R, buf: &mut Vec<u8>, len: usize) -> bool {
    let mut chunk = vec![0u8; 16 * 1024];
    while buf.len() < len {
        match server.read(&mut chunk).await {
            Ok(0) | Err(_) => return false,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    true
}

/// The `Content-Length` of a head, unless it is chunked or has none.
fn content_length(head: &[u8]) -> Option<usize> {
    let text = std::str::from_utf8(head).ok()?;
    let mut length = None;
    for line in text.split("\r\n").skip(1) {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let name = name.trim().to_ascii_lowercase();
        if name == "transfer-encoding" {
            return None;
        }
        if name == "content-length" {
            length = value.trim().parse().ok();
        }
    }
    length
}

/// `head` with its `Content-Length` set to `len`.
fn with_length(head: &[u8], len: usize) -> Vec<u8> {
    let text = String::from_utf8_lossy(head);
    let lines: Vec<String> = text
        .trim_end_matches("\r\n")
        .split("\r\n")
        .map(|line| match line.split_once(':') {
            Some((name, _)) if name.trim().eq_ignore_ascii_case("content-length") => {
                format!("{name}: {len}")
            }
            _ => line.to_owned(),
        })
        .collect();
    format!("{}\r\n\r\n", lines.join("\r\n")).into_bytes()
}

/// The body as a JSON-RPC answer (an object with an `id` and a `result` or `error`).
fn json_rpc_answer(body: &[u8]) -> Option<Value> {
    let v: Value = serde_json::from_slice(body).ok()?;
    let is_answer = v.get("id").is_some_and(|id| !id.is_null())
        && (v.get("result").is_some() || v.get("error").is_some());
    is_answer.then_some(v)
}

/// The answer with an id no request had: a number moved by a prime, a string suffixed.
fn with_other_id(mut answer: Value) -> Vec<u8> {
    let other = match &answer["id"] {
        Value::Number(n) => Value::from(n.as_i64().unwrap_or(0).wrapping_add(7919)),
        Value::String(s) => Value::from(format!("{s}-not-yours")),
        _ => Value::from("not-yours"),
    };
    answer["id"] = other;
    serde_json::to_vec(&answer).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &[u8] =
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 40\r\n\r\n";

    #[test]
    fn framing_reads_the_length_and_refuses_chunked() {
        assert_eq!(content_length(HEAD), Some(40));
        assert_eq!(
            content_length(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"),
            None
        );
        let head = with_length(HEAD, 7);
        assert_eq!(content_length(&head), Some(7));
        assert!(head.ends_with(b"\r\n\r\n"));
    }

    #[test]
    fn each_lie_changes_what_it_says() {
        let lies = Lies::default();
        let first = br#"{"jsonrpc":"2.0","id":1,"result":{"a":1}}"#.to_vec();
        let second = br#"{"jsonrpc":"2.0","id":2,"result":{"b":2}}"#.to_vec();
        let body_of = |out: Out| match out {
            Out::Send(b) => b[b.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4..].to_vec(),
            Out::Stall(_) => panic!("stalled"),
        };
        let wrong: Value =
            serde_json::from_slice(&body_of(lies.tell(Lie::WrongId, HEAD, first.clone()))).unwrap();
        assert_eq!(wrong["id"], 7920);
        assert_eq!(wrong["result"]["a"], 1);
        assert!(
            serde_json::from_slice::<Value>(&body_of(lies.tell(Lie::Garbage, HEAD, first.clone())))
                .is_err()
        );
        assert_eq!(
            body_of(lies.tell(Lie::OtherAnswer, HEAD, first.clone())),
            first
        );
        assert_eq!(body_of(lies.tell(Lie::OtherAnswer, HEAD, second)), first);
        match lies.tell(Lie::StallMidBody, HEAD, first.clone()) {
            Out::Stall(b) => assert_eq!(b.len(), HEAD.len() + first.len() / 2),
            Out::Send(_) => panic!("sent whole"),
        }
        // Not a JSON-RPC answer: untouched.
        let plain = b"hello".to_vec();
        assert_eq!(body_of(lies.tell(Lie::WrongId, HEAD, plain.clone())), plain);
    }
}
