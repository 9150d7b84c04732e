//! Micro-benchmarks of the gateway's per-request hot paths, through the public APIs of
//! `vmcp-proto` and `vmcp-core`: classifying a request (envelope parse, Legacy/Modern era),
//! routing (catalog lookup, URI template match), rewriting envelopes (request to the backend,
//! answer to the client), stripping reserved `_meta`, list cursors, and SSE framing.
//!
//! Run with `cargo bench -p vmcp-bench --bench hot_paths`.

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use vmcp_core::{AggregationPolicy, BackendCapabilities, Catalog, UriTemplate};
use vmcp_proto::cursor::{self, Position};
use vmcp_proto::era::{self, RequestView};
use vmcp_proto::{Message, jsonrpc, meta, sse};

const CLIENT_CALL: &[u8] = br#"{"jsonrpc":"2.0","id":4711,"method":"tools/call","params":{"name":"b5_echo","arguments":{"text":"hello"},"_meta":{"progressToken":7}}}"#;
const BACKEND_ANSWER: &[u8] = br#"{"id":99,"jsonrpc":"2.0","result":{"content":[{"text":"hello","type":"text"}],"isError":false}}"#;

fn classify(c: &mut Criterion) {
    c.bench_function("classify/parse_tools_call", |b| {
        b.iter(|| {
            let msg = Message::parse(black_box(CLIENT_CALL));
            matches!(msg, Ok(Message::Request { ref method, .. }) if method == "tools/call")
        });
    });
    c.bench_function("classify/parse_backend_answer", |b| {
        b.iter(|| Message::parse(black_box(BACKEND_ANSWER)));
    });
    let legacy = RequestView {
        method: "tools/call",
        version_header: Some("2025-11-25"),
        name: Some("b5_echo"),
        ..Default::default()
    };
    c.bench_function("classify/era_legacy", |b| {
        b.iter(|| era::classify(black_box(&legacy)));
    });
    let meta = json!({
        era::META_PROTOCOL_VERSION: "2026-07-28",
        era::META_CLIENT_INFO: {"name": "bench", "version": "1"},
        era::META_CLIENT_CAPABILITIES: {},
    });
    let modern = RequestView {
        method: "tools/call",
        meta: meta.as_object(),
        version_header: Some("2026-07-28"),
        mcp_method: Some("tools/call"),
        mcp_name: Some("b5_echo"),
        name: Some("b5_echo"),
    };
    c.bench_function("classify/era_modern", |b| {
        b.iter(|| era::classify(black_box(&modern)));
    });
}

/// 10 backends `b0..b9` with `echo` plus 100 trivial tools each, as in scenario 3.
fn catalog() -> Catalog {
    let caps = (0..10)
        .map(|b| BackendCapabilities {
            backend: format!("b{b}"),
            tools: std::iter::once("echo".to_owned())
                .chain((0..100).map(|i| format!("tool_{i}")))
                .map(|name| json!({"name": name, "description": "A trivial tool.", "inputSchema": {"type": "object", "properties": {}}}))
                .collect(),
            ..Default::default()
        })
        .collect::<Vec<_>>();
    Catalog::build(&AggregationPolicy::default(), caps, Vec::new()).unwrap_or_default()
}

fn routing(c: &mut Criterion) {
    let cat = catalog();
    assert!(
        cat.tool("b5_tool_50").is_some(),
        "catalog routes b5_tool_50"
    );
    c.bench_function("route/catalog_tool_hit", |b| {
        b.iter(|| cat.tool(black_box("b5_tool_50")).map(|r| r.original.len()));
    });
    c.bench_function("route/catalog_tool_miss", |b| {
        b.iter(|| cat.tool(black_box("b5_no_such_tool")).is_some());
    });
    let template = UriTemplate::parse("file:///{project}/src/{path}");
    c.bench_function("route/uri_template_match", |b| {
        b.iter(|| {
            template
                .as_ref()
                .is_some_and(|t| t.matches(black_box("file:///vmcp/src/main.rs")))
        });
    });
    c.bench_function("route/catalog_build_10x101", |b| b.iter(catalog));
}

/// 50 backends of 100 tools each with a realistic schema (5,000 tools), as `toolPinning` screens
/// them on every catalog refresh.
fn pinned_catalog() -> Vec<BackendCapabilities> {
    (0..50)
        .map(|b| BackendCapabilities {
            backend: format!("b{b}"),
            tools: (0..100)
                .map(|i| json!({
                    "name": format!("tool_{i}"),
                    "description": format!("Tool {i} of backend {b}: reads the given path and returns its text, with metadata."),
                    "inputSchema": {"type": "object", "properties": {
                        "path": {"type": "string", "description": "Where to read"},
                        "limit": {"type": "integer", "minimum": 1, "maximum": 1000},
                        "mode": {"enum": ["text", "binary"]}},
                        "required": ["path"], "additionalProperties": false},
                    "annotations": {"readOnlyHint": true, "openWorldHint": false},
                }))
                .collect(),
            ..Default::default()
        })
        .collect()
}

fn pins(c: &mut Criterion) {
    use vmcp_core::pins::{PinBook, PinKind, fingerprint, model_view, screen};
    let caps = pinned_catalog();
    let one = &caps[0].tools[0];
    c.bench_function("pins/fingerprint_one_tool", |b| {
        b.iter(|| fingerprint(&model_view(PinKind::Tool, black_box(one))));
    });
    let mut book = PinBook::default();
    let _ = screen(&mut book, &mut caps.clone(), true, "t0");
    assert_eq!(
        book.all_pins().count(),
        5000,
        "every tool pinned on first sight"
    );
    c.bench_function("pins/screen_5000_unchanged", |b| {
        b.iter_batched(
            || caps.clone(),
            // Returned, so criterion drops them outside the measurement.
            |mut fresh| {
                let changed = screen(&mut book, &mut fresh, true, "t1").changed;
                (fresh, changed)
            },
            criterion::BatchSize::LargeInput,
        );
    });
    c.bench_function("pins/first_sight_5000", |b| {
        b.iter_batched(
            || (PinBook::default(), caps.clone()),
            |(mut empty, mut fresh)| {
                let changed = screen(&mut empty, &mut fresh, true, "t0").changed;
                (empty, fresh, changed)
            },
            criterion::BatchSize::LargeInput,
        );
    });
    c.bench_function("pins/catalog_build_5000 (for scale)", |b| {
        b.iter_batched(
            || caps.clone(),
            |fresh| Catalog::build(&AggregationPolicy::default(), fresh, Vec::new()),
            criterion::BatchSize::LargeInput,
        );
    });
}

fn envelopes(c: &mut Criterion) {
    let cat = catalog();
    let result = json!({"content": [{"type": "text", "text": "hello"}], "isError": false});
    c.bench_function("envelope/response_bytes", |b| {
        b.iter(|| jsonrpc::response_bytes(black_box(&json!(4711)), black_box(&result)));
    });
    // The whole per-call rewrite a gateway does, from client bytes to backend bytes and back.
    c.bench_function("envelope/forward_tools_call_round_trip", |b| {
        b.iter(|| {
            let Ok(Message::Request { id, params, .. }) = Message::parse(black_box(CLIENT_CALL))
            else {
                return Vec::new();
            };
            let mut params = params.unwrap_or(Value::Null);
            let name = params["name"].as_str().unwrap_or_default().to_owned();
            if let Some(route) = cat.tool(&name) {
                params["name"] = Value::from(route.original.as_str());
            }
            meta::strip_reserved(&mut params);
            let upstream = jsonrpc::request_bytes(&json!(99), "tools/call", Some(&params));
            black_box(upstream);
            match Message::parse(black_box(BACKEND_ANSWER)) {
                Ok(Message::Response { result, .. }) => jsonrpc::response_bytes(&id, &result),
                _ => Vec::new(),
            }
        });
    });
}

fn meta_strip(c: &mut Criterion) {
    let with_meta = json!({
        "content": [],
        "_meta": {
            "io.modelcontextprotocol/serverInfo": {"name": "x"},
            "io.modelcontextprotocol/related-task": {"taskId": "t"},
            "traceparent": "00-abc-def-01"
        }
    });
    c.bench_function("meta/strip_reserved_3_keys", |b| {
        b.iter_batched_ref(
            || with_meta.clone(),
            meta::strip_reserved,
            criterion::BatchSize::SmallInput,
        );
    });
    let mut without = json!({"content": [], "isError": false});
    c.bench_function("meta/strip_reserved_no_meta", |b| {
        b.iter(|| meta::strip_reserved(black_box(&mut without)));
    });
}

fn cursors(c: &mut Criterion) {
    let pos = Position {
        last: "b3_tool_999".to_owned(),
        next: 4000,
    };
    let token = cursor::encode("tools", &pos);
    c.bench_function("cursor/encode", |b| {
        b.iter(|| cursor::encode(black_box("tools"), black_box(&pos)));
    });
    c.bench_function("cursor/decode", |b| {
        b.iter(|| cursor::decode(black_box("tools"), black_box(&token)));
    });
    // 5,000 names in their backends' order, as scenario 4 pages them (1,000 a page).
    let names: Vec<String> = (0..5)
        .flat_map(|b| (0..1000).map(move |i| format!("p{b}_tool_{i}")))
        .collect();
    let mid = cursor::page(&names, String::as_str, None, 1000).1;
    c.bench_function("cursor/page_of_5000_from_cursor", |b| {
        b.iter(|| cursor::page(&names, String::as_str, black_box(mid.as_ref()), 1000).1);
    });
}

fn sse_framing(c: &mut Criterion) {
    let event = sse::message_event(BACKEND_ANSWER, None);
    c.bench_function("sse/message_event", |b| {
        b.iter(|| sse::message_event(black_box(BACKEND_ANSWER), None));
    });
    c.bench_function("sse/parse_one_event", |b| {
        b.iter(|| sse::Parser::default().feed(black_box(&event)));
    });
}

criterion_group!(
    benches,
    classify,
    routing,
    pins,
    envelopes,
    meta_strip,
    cursors,
    sse_framing
);
criterion_main!(benches);
