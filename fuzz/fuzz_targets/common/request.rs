//! The input format of the request targets: an HTTP request's head without its request line
//! (`Name: value` lines), a blank line, then the JSON-RPC body, so seeds read like real requests.

use http::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

/// A request as the edge sees it after hyper: headers that are valid HTTP, and the body.
pub struct Request<'a> {
    /// The header lines hyper would accept (others are dropped, as hyper refuses them).
    pub headers: HeaderMap,
    /// The body bytes.
    pub body: &'a [u8],
}

impl<'a> Request<'a> {
    /// Splits `data` at the first blank line.
    pub fn read(data: &'a [u8]) -> Self {
        let split = data
            .windows(2)
            .position(|w| w == b"\n\n")
            .map_or((data, &data[data.len()..]), |i| {
                (&data[..i], &data[i + 2..])
            });
        let mut headers = HeaderMap::new();
        for line in split.0.split(|b| *b == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let Some(colon) = line.iter().position(|b| *b == b':') else {
                continue;
            };
            let value = &line[colon + 1..];
            let value = value.strip_prefix(b" ").unwrap_or(value);
            if let (Ok(name), Ok(value)) = (
                HeaderName::from_bytes(&line[..colon]),
                HeaderValue::from_bytes(value),
            ) {
                headers.append(name, value);
            }
        }
        Self {
            headers,
            body: split.1,
        }
    }

    /// The first value of `name` as text, as the edge reads headers (`to_str`).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The body's method and params, when it is one JSON-RPC request or notification.
    pub fn call(&self) -> Option<(String, Option<Value>)> {
        match vmcp_proto::Message::parse(self.body).ok()? {
            vmcp_proto::Message::Request { method, params, .. }
            | vmcp_proto::Message::Notification { method, params } => Some((method, params)),
            _ => None,
        }
    }
}
