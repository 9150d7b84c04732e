//! SSE framing: `vmcp_proto::sse::Parser` as the backend readers drive it (chunks as they come
//! off the socket, each event's data through `Message::parse`, an HTTP+SSE backend's `endpoint`
//! event resolved by `vmcp_backend`'s reader).
//!
//! Invariants: the events, the last event id and the retry time do not depend on how the stream
//! is cut into chunks (whole, one byte at a time, or cut where the input's bytes say); a
//! message the gateway relays (`message_event`) reads back as the same message; an `endpoint`
//! event never sends the gateway's POSTs to another origin.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vmcp_proto::Message;
use vmcp_proto::sse::{self, Event, Parser};

const BACKEND: &str = "https://mcp.example:8443/sse?tenant=a";

fn read(chunks: impl Iterator<Item = Vec<u8>>) -> (Vec<Event>, Option<String>, Option<u64>) {
    let mut p = Parser::default();
    let mut events = Vec::new();
    for chunk in chunks {
        events.extend(
            p.try_feed(&chunk)
                .expect("inputs are shorter than MAX_LINE"),
        );
    }
    (events, p.last_event_id().map(str::to_string), p.retry_ms())
}

/// Chunk lengths taken from the stream's own bytes (1 to 16), so the fuzzer controls the cuts.
fn cuts(data: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut rest = data;
    let mut i = 0;
    while !rest.is_empty() {
        let n = (usize::from(data[i % data.len()]) % 16 + 1).min(rest.len());
        out.push(rest[..n].to_vec());
        rest = &rest[n..];
        i += 1;
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let whole = read(std::iter::once(data.to_vec()));
    assert_eq!(
        read(cuts(data).into_iter()),
        whole,
        "depends on the chunking"
    );
    // One byte per chunk (a trickling backend) only on short inputs: it is what makes a slow
    // parser show, and long inputs would make every run slow.
    if data.len() <= 4096 {
        assert_eq!(read(data.iter().map(|b| vec![*b])), whole, "byte by byte");
    }

    // A reconnect in the middle drops the half line and keeps going.
    let mut p = Parser::default();
    let (a, b) = data.split_at(data.len() / 2);
    let _ = p.try_feed(a);
    p.reconnected();
    let _ = p.try_feed(b);

    for ev in &whole.0 {
        if ev.event == "endpoint" {
            if let Ok(url) = vmcp_backend::fuzzing::sse_post_url(BACKEND, &ev.data) {
                assert!(
                    url.starts_with("https://mcp.example:8443/"),
                    "endpoint {:?} resolved off the backend's origin: {url}",
                    ev.data
                );
            }
            continue;
        }
        let Ok(message) = Message::parse(ev.data.as_bytes()) else {
            continue;
        };
        // The gateway relays a message as its serialisation in one `message` event.
        let bytes = message.to_bytes();
        let relayed = read(std::iter::once(sse::message_event(&bytes, None))).0;
        assert_eq!(relayed.len(), 1);
        assert_eq!(relayed[0].event, "message");
        assert_eq!(
            Message::parse(relayed[0].data.as_bytes()).as_ref(),
            Ok(&message)
        );
    }
});
