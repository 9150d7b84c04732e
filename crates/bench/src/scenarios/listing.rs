//! Walking `tools/list` through its cursors, timing each page. Cursors are found by a byte
//! search so that the client's own JSON parsing stays out of the timings; pages are parsed
//! (and tools counted) afterwards.

use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use bytes::Bytes;
use serde_json::Value;

use crate::http::{Edge, McpSession};

/// Most pages followed, so a cursor loop cannot hang the harness.
const MAX_PAGES: usize = 1000;

/// One walk through every page.
pub(crate) struct Walk {
    /// Round trip of each page.
    pub(crate) pages: Vec<Duration>,
    /// The page bodies.
    bodies: Vec<Bytes>,
}

impl Walk {
    /// Total time of the walk.
    pub(crate) fn total(&self) -> Duration {
        self.pages.iter().sum()
    }

    /// Bytes of all pages.
    pub(crate) fn bytes(&self) -> usize {
        self.bodies.iter().map(Bytes::len).sum()
    }

    /// Tools listed over all pages.
    ///
    /// # Errors
    /// When a page is not a `tools/list` result.
    pub(crate) fn tools(&self) -> anyhow::Result<usize> {
        let mut n = 0;
        for body in &self.bodies {
            let v: Value = serde_json::from_slice(body).context("tools/list page is not JSON")?;
            n += v["result"]["tools"]
                .as_array()
                .with_context(|| format!("not a tools/list result: {}", crate::http::text(body)))?
                .len();
        }
        Ok(n)
    }
}

/// Lists every tool of `session`, following `nextCursor`.
///
/// # Errors
/// When a page fails.
pub(crate) async fn walk(
    session: &mut McpSession,
    id: &mut u64,
    edge: Edge,
) -> anyhow::Result<Walk> {
    let headers = edge.request_headers("tools/list", None)?;
    let mut walk = Walk {
        pages: Vec::new(),
        bodies: Vec::new(),
    };
    let mut cursor: Option<String> = None;
    loop {
        *id += 1;
        let mut params = serde_json::Map::new();
        if let Some(c) = &cursor {
            params.insert("cursor".into(), Value::String(c.clone()));
        }
        if let Some(meta) = edge.request_meta() {
            params.insert("_meta".into(), meta);
        }
        let params = Value::Object(params);
        let body =
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{params}}}"#);
        let sent = Instant::now();
        let page = session.request_with(Bytes::from(body), &headers).await?;
        walk.pages.push(sent.elapsed());
        cursor = next_cursor(&page);
        walk.bodies.push(page);
        if cursor.is_none() {
            return Ok(walk);
        }
        if walk.pages.len() >= MAX_PAGES {
            bail!("more than {MAX_PAGES} tools/list pages");
        }
    }
}

/// The `nextCursor` of a page (the last one in the body: it follows the tools).
fn next_cursor(page: &[u8]) -> Option<String> {
    const KEY: &[u8] = br#""nextCursor":""#;
    let at = page.windows(KEY.len()).rposition(|w| w == KEY)? + KEY.len();
    let len = page[at..].iter().position(|b| *b == b'"')?;
    Some(String::from_utf8_lossy(&page[at..at + len]).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_next_cursor() {
        let page = br#"{"id":1,"result":{"tools":[],"nextCursor":"eyJrIjoidG9vbHMifQ"}}"#;
        assert_eq!(next_cursor(page).as_deref(), Some("eyJrIjoidG9vbHMifQ"));
        assert_eq!(next_cursor(br#"{"id":1,"result":{"tools":[]}}"#), None);
    }
}
