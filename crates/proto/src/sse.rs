//! Server-Sent Events framing: writing events, and an incremental parser for reading them.

/// One parsed SSE event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Event {
    /// The `event:` field (empty means the default, "message").
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// The `id:` field, if any.
    pub id: Option<String>,
}

/// Frames `data` (a single JSON document, so it has no newlines) as one `message` event.
pub fn message_event(data: &[u8], id: Option<&str>) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + 32);
    out.extend_from_slice(b"event: message\n");
    if let Some(id) = id {
        out.extend_from_slice(b"id: ");
        out.extend_from_slice(id.as_bytes());
        out.push(b'\n');
    }
    // serde_json never emits raw newlines, but a backend's bytes might: split defensively.
    for line in data.split(|b| *b == b'\n') {
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(line.strip_suffix(b"\r").unwrap_or(line));
        out.push(b'\n');
    }
    out.push(b'\n');
    out
}

/// Incremental SSE parser: feed it chunks as they arrive, collect complete events.
///
/// ```
/// let mut p = vmcp_proto::sse::Parser::default();
/// assert!(p.feed(b"event: message\ndata: {\"a\"").is_empty());
/// let ev = p.feed(b":1}\n\n");
/// assert_eq!(ev[0].data, "{\"a\":1}");
/// ```
#[derive(Debug, Default)]
pub struct Parser {
    buf: Vec<u8>,
    /// How much of `buf` (the partial line) is known to hold no newline: a line trickled in tiny
    /// chunks is scanned once, not once per chunk (which was quadratic).
    scanned: usize,
    current: Event,
    has_data: bool,
    /// The `id:` buffer, which persists across events (an event without `id:` keeps the last).
    id_buffer: Option<String>,
    /// The last event id of the stream, committed at each event boundary (even one with no data,
    /// such as a priming event).
    last_event_id: Option<String>,
    /// The reconnection time the server asked for with `retry:`, in milliseconds.
    retry_ms: Option<u64>,
}

/// Upper bound on one buffered line, so a peer that never sends a newline cannot grow memory.
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// The stream broke the SSE framing rules we enforce.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineTooLong;

impl Parser {
    /// The stream's last event id (what a client sends as `Last-Event-ID` to resume it).
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_event_id.as_deref()
    }

    /// The reconnection time the server asked for (`retry:`), in milliseconds.
    pub fn retry_ms(&self) -> Option<u64> {
        self.retry_ms
    }

    /// Continues on a new connection to the same stream (after a reconnect): a partial line of
    /// the old connection is dropped; the last event id and reconnection time are kept.
    pub fn reconnected(&mut self) {
        self.buf.clear();
        self.scanned = 0;
        self.current = Event::default();
        self.has_data = false;
    }

    /// Feeds a chunk and returns the events it completed.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<Event> {
        self.try_feed(chunk).unwrap_or_default()
    }

    /// Feeds a chunk; fails if a single line grows past [`MAX_LINE`].
    ///
    /// # Errors
    /// [`LineTooLong`] when the buffered partial line exceeds the limit.
    pub fn try_feed(&mut self, chunk: &[u8]) -> Result<Vec<Event>, LineTooLong> {
        self.buf.extend_from_slice(chunk);
        let mut events = Vec::new();
        let mut start = 0;
        let mut from = self.scanned;
        while let Some(pos) = self.buf[from..].iter().position(|b| *b == b'\n') {
            let end = from + pos;
            let line = &self.buf[start..end];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let line = String::from_utf8_lossy(line).into_owned();
            start = end + 1;
            from = start;
            if let Some(ev) = self.line(&line) {
                events.push(ev);
            }
        }
        self.buf.drain(..start);
        self.scanned = self.buf.len();
        if self.buf.len() > MAX_LINE {
            self.buf.clear();
            self.scanned = 0;
            return Err(LineTooLong);
        }
        Ok(events)
    }

    fn line(&mut self, line: &str) -> Option<Event> {
        if line.is_empty() {
            self.last_event_id.clone_from(&self.id_buffer);
            if !self.has_data {
                self.current = Event::default();
                return None;
            }
            self.has_data = false;
            return Some(std::mem::take(&mut self.current));
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => self.current.event = value.to_string(),
            "data" => {
                if self.has_data {
                    self.current.data.push('\n');
                }
                self.current.data.push_str(value);
                self.has_data = true;
            }
            // An id with NUL is ignored (WHATWG event-stream interpretation).
            "id" if !value.contains('\0') => {
                self.current.id = Some(value.to_string());
                self.id_buffer = Some(value.to_string());
            }
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                self.retry_ms = value.parse().ok();
            }
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_trickled_in_tiny_chunks_parses_as_when_whole() {
        let long = "x".repeat(100_000);
        let stream = format!("id: 1\ndata: {long}\n\ndata: a\r\ndata: b\r\n\r\nid: 9\n\n");
        let whole = Parser::default().feed(stream.as_bytes());
        for size in [1, 3, 4096] {
            let mut p = Parser::default();
            let mut got = Vec::new();
            for chunk in stream.as_bytes().chunks(size) {
                got.extend(p.feed(chunk));
            }
            assert_eq!(got, whole, "chunks of {size}");
            assert_eq!(p.last_event_id(), Some("9"));
        }
        assert_eq!(whole.len(), 2);
        assert_eq!(whole[0].data, long);
        assert_eq!(whole[1].data, "a\nb");
    }

    #[test]
    fn parses_split_events_comments_and_multiline_data() {
        let mut p = Parser::default();
        let mut all = p.feed(b": keepalive\n\nevent: endpoint\r\ndata: /messages?x=1\r\n\r\n");
        all.extend(p.feed(b"data: a\ndata: b\nid: 7\n"));
        all.extend(p.feed(b"\n"));
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].event, "endpoint");
        assert_eq!(all[0].data, "/messages?x=1");
        assert_eq!(all[1].data, "a\nb");
        assert_eq!(all[1].id.as_deref(), Some("7"));
    }

    #[test]
    fn tracks_the_last_event_id_and_the_retry_time_across_events() {
        let mut p = Parser::default();
        // A priming event: an id and empty data, then the reconnection time.
        let ev = p.feed(b"id: 3\ndata: \n\nretry: 500\n\n");
        assert_eq!(ev.len(), 1);
        assert_eq!(p.last_event_id(), Some("3"));
        assert_eq!(p.retry_ms(), Some(500));
        // An event without id keeps the last one; a bad retry is ignored.
        p.feed(b"data: {}\nretry: soon\n\n");
        assert_eq!(p.last_event_id(), Some("3"));
        assert_eq!(p.retry_ms(), Some(500));
        // An id-only event (no data) still moves the last id; one with NUL is ignored.
        p.feed(b"id: 9\n\nid: a\0b\n\n");
        assert_eq!(p.last_event_id(), Some("9"));
        // After a reconnect a half line of the old connection is not glued to the new one.
        p.feed(b"data: {\"half");
        p.reconnected();
        let ev = p.feed(b"data: {}\nid: 10\n\n");
        assert_eq!(ev[0].data, "{}");
        assert_eq!(p.last_event_id(), Some("10"));
    }

    #[test]
    fn message_event_round_trips() {
        let framed = message_event(br#"{"x":1}"#, Some("5"));
        let ev = Parser::default().feed(&framed);
        assert_eq!(
            ev,
            vec![Event {
                event: "message".into(),
                data: r#"{"x":1}"#.into(),
                id: Some("5".into())
            }]
        );
    }

    #[test]
    fn over_long_line_is_refused() {
        let mut p = Parser::default();
        let big = vec![b'a'; MAX_LINE + 1];
        assert_eq!(p.try_feed(&big), Err(LineTooLong));
    }
}
