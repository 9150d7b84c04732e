//! Scenario 4: `tools/list` paging through 5,000 aggregated tools (5 backends x 1,000), warm
//! cache, one session: each walk follows every cursor to the end.

use serde_json::json;

use super::listing;
use crate::cli::Settings;
use crate::http::Edge;
use crate::procs::Env;
use crate::report::Section;
use crate::setup::{Stack, TOOLS_ONLY};
use crate::stats::{Latency, fmt};

const BACKENDS: usize = 5;
const TOOLS: usize = 1000;

/// Runs scenario 4.
pub(crate) async fn run(env: &Env, s: &Settings) -> anyhow::Result<Section> {
    let stack = Stack::http(env, "paging", "p", BACKENDS, TOOLS, TOOLS_ONLY).await?;
    let mut section = Section::new(
        "paging",
        "4. tools/list paging, 5 backends x 1,000 tools (both client revisions, warm cache)",
        &[
            "edge",
            "tools",
            "pages",
            "bytes/walk",
            "walks",
            "walk p50",
            "walk p99",
            "page p50",
            "page p99",
        ],
    );
    let mut json_rows = Vec::new();
    for edge in [Edge::Legacy, Edge::Modern] {
        let mut session = edge.open(&stack.gateway.url).await?;
        let (mut walks, mut pages) = (Vec::new(), Vec::new());
        let (mut tools, mut page_count, mut bytes, mut id) = (0, 0, 0, 0);
        for _ in 0..s.iterations {
            let walk = listing::walk(&mut session, &mut id, edge).await?;
            walks.push(u64::try_from(walk.total().as_nanos()).unwrap_or(u64::MAX));
            pages.extend(
                walk.pages
                    .iter()
                    .map(|p| u64::try_from(p.as_nanos()).unwrap_or(u64::MAX)),
            );
            tools = walk.tools()?;
            page_count = walk.pages.len();
            bytes = walk.bytes();
        }
        session.close().await;
        let (walk, page) = (Latency::of(&mut walks), Latency::of(&mut pages));
        section.rows.push(vec![
            edge.label().to_string(),
            tools.to_string(),
            page_count.to_string(),
            bytes.to_string(),
            walk.count.to_string(),
            fmt(walk.p50),
            fmt(walk.p99),
            fmt(page.p50),
            fmt(page.p99),
        ]);
        json_rows.push(json!({
            "edge": edge.label(),
            "tools": tools,
            "pages": page_count,
            "bytes_per_walk": bytes,
            "walk": walk.to_json(),
            "page": page.to_json(),
        }));
    }
    stack.stop().await;
    section.json = json!(json_rows);
    Ok(section)
}
