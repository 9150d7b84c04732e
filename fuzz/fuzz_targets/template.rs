//! The Go-template engine (`vmcp_template`): parse and execute. Templates come from the config
//! (composite tools' arguments, outputs and conditions); the data they run on comes from clients
//! (`.params`) and backends (`.steps.<id>.output`).
//!
//! Input: the template, then optionally a NUL byte and the JSON data (else a realistic default).
//! Invariants: neither parse nor render panics or overflows the stack; output stays within
//! `MAX_OUTPUT_BYTES`; a template without actions renders as its source; rendering is
//! deterministic; `root_references` never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use vmcp_template::{MAX_OUTPUT_BYTES, Template};

fuzz_target!(|data: &[u8]| {
    let (src, json) = match data.iter().position(|b| *b == 0) {
        Some(i) => (&data[..i], Some(&data[i + 1..])),
        None => (data, None),
    };
    let Ok(src) = std::str::from_utf8(src) else {
        return;
    };
    let data: Value = match json {
        Some(j) => serde_json::from_slice(j).unwrap_or(Value::Null),
        None => json!({
            "params": {"env": "prod", "count": 3, "ratio": 0.5, "tags": ["a", "b"], "loud": true,
                "nested": {"k": null, "list": [1, {"x": "y"}]}},
            "steps": {"fetch": {"status": "completed", "output": {"text": "hi", "items": [1, 2, 3]}},
                "ask": {"action": "accept", "content": {"ok": true}}},
            "workflow": {"id": "wf-1", "step_count": 2}
        }),
    };
    let Ok(template) = Template::parse(src) else {
        return;
    };
    let _ = template.root_references();
    let first = template.render(&data);
    if let Ok(out) = &first {
        assert!(out.len() <= MAX_OUTPUT_BYTES);
        if template.is_plain() {
            assert_eq!(out, src, "a plain template renders as its source");
        }
    }
    let second = template.render(&data);
    assert_eq!(
        first.as_ref().map_err(ToString::to_string),
        second.as_ref().map_err(ToString::to_string),
        "rendering is not deterministic"
    );
});
