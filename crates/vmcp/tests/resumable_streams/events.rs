//! Reading SSE events as the wire carries them (ids, `retry` fields, comments) and the requests
//! that open or resume streams.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{Client, JSON_AND_SSE, http};

const WAIT: Duration = Duration::from_secs(20);

/// One SSE event as the wire carries it (a comment is an event of its own here).
#[derive(Debug, Default, Clone)]
pub struct Event {
    pub id: Option<String>,
    pub retry: Option<u64>,
    pub data: String,
    pub comment: bool,
}

impl Event {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.data).unwrap_or(Value::Null)
    }
}

/// Reads SSE events, ids, `retry` fields and comments included.
pub struct Events {
    resp: reqwest::Response,
    buf: String,
}

impl Events {
    pub fn new(resp: reqwest::Response) -> Self {
        let ctype = resp.headers()["content-type"].to_str().unwrap().to_owned();
        assert!(ctype.starts_with("text/event-stream"), "{ctype}");
        Events {
            resp,
            buf: String::new(),
        }
    }

    /// The next event or comment; None when the stream ends.
    pub async fn next(&mut self) -> Option<Event> {
        tokio::time::timeout(WAIT, self.next_inner())
            .await
            .expect("an SSE event in time")
    }

    async fn next_inner(&mut self) -> Option<Event> {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                let mut ev = Event::default();
                for line in block.lines() {
                    if line.starts_with(':') {
                        ev.comment = true;
                    } else if let Some(v) = line.strip_prefix("id: ") {
                        ev.id = Some(v.to_owned());
                    } else if let Some(v) = line.strip_prefix("retry: ") {
                        ev.retry = v.parse().ok();
                    } else if let Some(v) = line.strip_prefix("data:") {
                        ev.data.push_str(v.strip_prefix(' ').unwrap_or(v));
                    }
                }
                return Some(ev);
            }
            match self.resp.chunk().await {
                Ok(Some(c)) => self.buf.push_str(&String::from_utf8_lossy(&c)),
                _ => return None,
            }
        }
    }

    /// Every event until the stream ends, comments left out.
    pub async fn rest(&mut self) -> Vec<Event> {
        let mut out = Vec::new();
        while let Some(ev) = self.next().await {
            if !ev.comment {
                out.push(ev);
            }
        }
        out
    }
}

pub fn post(c: &Client, body: &Value) -> reqwest::RequestBuilder {
    http()
        .post(&c.url)
        .header("content-type", "application/json")
        .header("accept", JSON_AND_SSE)
        .header("mcp-session-id", c.session.clone().unwrap())
        .header("mcp-protocol-version", &c.version)
        .json(body)
}

/// `GET` on the session, resuming after `last` when given.
pub async fn get(c: &Client, last: Option<&str>) -> reqwest::Response {
    let mut req = http()
        .get(&c.url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", c.session.clone().unwrap())
        .header("mcp-protocol-version", &c.version);
    if let Some(last) = last {
        req = req.header("last-event-id", last);
    }
    req.send().await.unwrap()
}

pub fn call(id: u64, tool: &str, args: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": args, "_meta": {"progressToken": id}}})
}

/// Asserts the stream's event ids are `<stream>:<n>` with one stream and `n` counting up by one.
pub fn assert_numbered(events: &[Event]) {
    let ids: Vec<&str> = events.iter().map(|e| e.id.as_deref().unwrap()).collect();
    let (stream, first) = ids[0].rsplit_once(':').unwrap();
    let first: u64 = first.parse().unwrap();
    for (i, id) in ids.iter().enumerate() {
        assert_eq!(*id, format!("{stream}:{}", first + i as u64), "{ids:?}");
    }
}
