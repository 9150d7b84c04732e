use serde_json::{Value, json};

use super::*;

#[test]
fn stamps_complete_cache_hints_and_our_server_info_over_a_forged_one() {
    let forged = json!({"tools": [], "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "evil"}, "trace": 1}});
    let v = stamp("tools/list", forged, "grp");
    assert_eq!(v["resultType"], "complete");
    assert_eq!(v["ttlMs"], 0);
    assert_eq!(v["cacheScope"], "private");
    assert_eq!(
        v["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "vmcp"
    );
    assert_eq!(v["_meta"]["trace"], 1);
}

#[test]
fn keeps_input_required_and_adds_no_cache_hints_to_calls() {
    let v = stamp(
        "tools/call",
        json!({"resultType": "input_required", "inputRequests": {}}),
        "g",
    );
    assert_eq!(v["resultType"], "input_required");
    assert!(v.get("ttlMs").is_none());
    let v = stamp("tools/call", json!({"content": []}), "g");
    assert_eq!(v["resultType"], "complete");
    assert!(v.get("cacheScope").is_none());
}

/// The spec's own example results (shared/spec/2026-07-28/schema-examples, beside the repository)
/// as vectors: stamping a result with its envelope fields removed gives back the example's
/// `resultType`, cache hints exactly where the schema requires them (one example omits them where
/// the schema requires them), every payload field unchanged, and our serverInfo.
#[test]
fn spec_examples_round_trip_through_the_envelope() {
    let spec = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/spec/2026-07-28"
    );
    let dir = format!("{spec}/schema-examples");
    if let Err(e) = std::fs::metadata(&dir) {
        // A plain clone has no ../shared; CI (CI=true) has it and must not skip.
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "the spec's schema examples must sit beside the repository ({dir}): {e}"
        );
        eprintln!(
            "note: skipping: the spec's schema examples are not beside the repository ({dir}: {e})"
        );
        return;
    }
    let schema: Value =
        serde_json::from_slice(&std::fs::read(format!("{spec}/schema.json")).unwrap()).unwrap();
    let requires_ttl = |folder: &str| {
        let def = &schema["$defs"][folder.trim_end_matches("Response")];
        def["required"]
            .as_array()
            .is_some_and(|r| r.iter().any(|k| k == "ttlMs"))
    };
    let cases = [
        ("DiscoverResultResponse", "server/discover"),
        ("ListToolsResultResponse", "tools/list"),
        ("ListResourcesResultResponse", "resources/list"),
        (
            "ListResourceTemplatesResultResponse",
            "resources/templates/list",
        ),
        ("ListPromptsResultResponse", "prompts/list"),
        ("ReadResourceResultResponse", "resources/read"),
        ("CallToolResultResponse", "tools/call"),
        ("GetPromptResultResponse", "prompts/get"),
        ("CompleteResultResponse", "completion/complete"),
    ];
    let mut checked = 0;
    for (folder, method) in cases {
        let entries = std::fs::read_dir(format!("{dir}/{folder}")).unwrap_or_else(|e| {
            panic!(
                "the spec's schema examples must sit beside the repository ({dir}/{folder}): {e}"
            )
        });
        for entry in entries.flatten() {
            let example: Value =
                serde_json::from_slice(&std::fs::read(entry.path()).unwrap()).unwrap();
            let expected = &example["result"];
            let mut bare = expected.clone();
            let obj = bare.as_object_mut().unwrap();
            for k in ["resultType", "ttlMs", "cacheScope", "_meta"] {
                obj.remove(k);
            }
            let stamped = stamp(method, bare, "g");
            let path = entry.path().display().to_string();
            assert_eq!(stamped["resultType"], expected["resultType"], "{path}");
            assert_eq!(
                stamped.get("ttlMs").is_some(),
                requires_ttl(folder),
                "{path}"
            );
            assert_eq!(
                stamped.get("cacheScope").is_some(),
                requires_ttl(folder),
                "{path}"
            );
            for (k, v) in expected.as_object().unwrap() {
                if !["resultType", "ttlMs", "cacheScope", "_meta"].contains(&k.as_str()) {
                    assert_eq!(&stamped[k], v, "{path}: {k}");
                }
            }
            assert_eq!(
                stamped["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "vmcp",
                "{path}"
            );
            checked += 1;
        }
    }
    assert!(checked >= cases.len(), "only {checked} examples found");
}
