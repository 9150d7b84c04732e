//! The classification table, case by case: the reference gateway's cases, with the answers the
//! 2026-07-28 spec and the official conformance suite require where the two differ.

use serde_json::{Map, Value, json};

use super::*;

const M: &str = "2026-07-28";

fn meta(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

fn full() -> Map<String, Value> {
    meta(
        json!({META_PROTOCOL_VERSION: M, META_CLIENT_CAPABILITIES: {}, META_CLIENT_INFO: {"name": "c", "version": "1"}}),
    )
}

fn view<'a>(
    method: &'a str,
    m: Option<&'a Map<String, Value>>,
    header: Option<&'a str>,
) -> RequestView<'a> {
    RequestView {
        method,
        meta: m,
        version_header: header,
        mcp_method: Some(method),
        ..Default::default()
    }
}

fn code(r: Result<Era, Rejection>) -> i64 {
    r.expect_err("expected a rejection").code
}

#[test]
fn legacy_without_any_signal() {
    assert_eq!(classify(&view("tools/call", None, None)), Ok(Era::Legacy));
    assert_eq!(
        classify(&view("tools/call", None, Some("2025-11-25"))),
        Ok(Era::Legacy)
    );
    let log_only = meta(json!({META_LOG_LEVEL: "debug"}));
    assert_eq!(
        classify(&view("tools/list", Some(&log_only), None)),
        Ok(Era::Legacy)
    );
    // A stray Mcp-Method on a Legacy request is not checked.
    let mut v = view("tools/call", None, None);
    v.mcp_method = Some("resources/read");
    assert_eq!(classify(&v), Ok(Era::Legacy));
}

#[test]
fn initialize_is_legacy_unless_its_meta_carries_a_version() {
    // A session-based client's handshake, even with a stray Modern header or reserved keys.
    assert_eq!(
        classify(&view("initialize", None, Some(M))),
        Ok(Era::Legacy)
    );
    let cc = meta(json!({META_CLIENT_CAPABILITIES: {}}));
    assert_eq!(
        classify(&view("initialize", Some(&cc), None)),
        Ok(Era::Legacy)
    );
    // A 2026-07-28 request for the removed method: Modern, so it gets -32601 at 404.
    let m = full();
    assert_eq!(
        classify(&view("initialize", Some(&m), Some(M))),
        Ok(Era::Modern)
    );
}

#[test]
fn well_formed_modern_requests() {
    let m = full();
    assert_eq!(
        classify(&view("tools/list", Some(&m), Some(M))),
        Ok(Era::Modern)
    );
    assert_eq!(
        classify(&view("server/discover", Some(&m), Some(M))),
        Ok(Era::Modern)
    );
    let mut call = view("tools/call", Some(&m), Some(M));
    call.name = Some("echo");
    call.mcp_name = Some("echo");
    assert_eq!(classify(&call), Ok(Era::Modern));
    call.name = Some("héllo wörld");
    call.mcp_name = Some("=?base64?aMOpbGxvIHfDtnJsZA==?=");
    assert_eq!(classify(&call), Ok(Era::Modern));
}

#[test]
fn missing_version_header_is_header_mismatch() {
    let m = full();
    assert_eq!(
        code(classify(&view("tools/list", Some(&m), None))),
        codes::HEADER_MISMATCH
    );
}

#[test]
fn reserved_key_without_version() {
    let ci = meta(json!({META_CLIENT_INFO: {}}));
    assert_eq!(
        code(classify(&view("tools/call", Some(&ci), None))),
        codes::INVALID_PARAMS
    );
    let cc = meta(json!({META_CLIENT_CAPABILITIES: {}}));
    assert_eq!(
        code(classify(&view("tools/call", Some(&cc), None))),
        codes::INVALID_PARAMS
    );
    // With a Modern header the body version is still a missing required field (spec: -32602).
    assert_eq!(
        code(classify(&view("tools/call", Some(&cc), Some(M)))),
        codes::INVALID_PARAMS
    );
    // An explicit non-Modern header wins over stray reserved keys.
    assert_eq!(
        classify(&view("tools/call", Some(&cc), Some("2025-11-25"))),
        Ok(Era::Legacy)
    );
    assert_eq!(
        classify(&view("tools/call", Some(&ci), Some("1999-01-01"))),
        Ok(Era::Legacy)
    );
    // Wrong-typed or empty versions count as missing.
    for bad in [json!(7), json!(""), json!(null)] {
        let m = meta(json!({META_PROTOCOL_VERSION: bad, META_CLIENT_CAPABILITIES: {}}));
        assert_eq!(
            code(classify(&view("tools/list", Some(&m), None))),
            codes::INVALID_PARAMS
        );
        assert_eq!(
            code(classify(&view("tools/list", Some(&m), Some(M)))),
            codes::INVALID_PARAMS
        );
    }
}

#[test]
fn header_only_signal_without_meta_is_invalid_params() {
    let r = classify(&view("tools/list", None, Some(M))).unwrap_err();
    assert_eq!(r.code, codes::INVALID_PARAMS);
    assert!(r.message.contains(META_PROTOCOL_VERSION), "{}", r.message);
}

#[test]
fn header_is_compared_before_the_body_version_is_checked() {
    // The suite's header-mismatch probe: a Modern header over an unknown body version.
    let m = meta(json!({META_PROTOCOL_VERSION: "v999.0.0", META_CLIENT_CAPABILITIES: {}}));
    assert_eq!(
        code(classify(&view("server/discover", Some(&m), Some(M)))),
        codes::HEADER_MISMATCH
    );
    // Agreeing on a version the gateway does not serve, or no header: -32022 listing ours.
    let m = meta(json!({META_PROTOCOL_VERSION: "2099-01-01", META_CLIENT_CAPABILITIES: {}}));
    let r = classify(&view("tools/call", Some(&m), Some("2099-01-01"))).unwrap_err();
    assert_eq!(r.code, codes::UNSUPPORTED_PROTOCOL_VERSION);
    let m = meta(json!({META_PROTOCOL_VERSION: "1.0", META_CLIENT_CAPABILITIES: {}}));
    let r = classify(&view("tools/call", Some(&m), None)).unwrap_err();
    assert_eq!(r.code, codes::UNSUPPORTED_PROTOCOL_VERSION);
    let data = r.data.unwrap();
    assert_eq!(data["requested"], "1.0");
    assert_eq!(data["supported"][0], M);
}

#[test]
fn header_body_version_mismatch() {
    let m = full();
    assert_eq!(
        code(classify(&view("tools/call", Some(&m), Some("2099-01-01")))),
        codes::HEADER_MISMATCH
    );
    assert_eq!(
        code(classify(&view("tools/call", Some(&m), Some("2025-11-25")))),
        codes::HEADER_MISMATCH
    );
}

#[test]
fn missing_or_wrong_typed_capabilities_are_invalid_params() {
    let m = meta(json!({META_PROTOCOL_VERSION: M}));
    let r = classify(&view("tools/call", Some(&m), Some(M))).unwrap_err();
    assert_eq!(r.code, codes::INVALID_PARAMS);
    assert!(
        r.message.contains(META_CLIENT_CAPABILITIES),
        "{}",
        r.message
    );
    let m = meta(json!({META_PROTOCOL_VERSION: M, META_CLIENT_CAPABILITIES: []}));
    assert_eq!(
        code(classify(&view("tools/call", Some(&m), Some(M)))),
        codes::INVALID_PARAMS
    );
}

#[test]
fn whitespace_around_header_values_is_not_part_of_them() {
    let m = full();
    let mut v = view("tools/call", Some(&m), Some(" 2026-07-28\t"));
    v.name = Some("echo");
    v.mcp_method = Some(" tools/call ");
    v.mcp_name = Some("  echo  ");
    assert_eq!(classify(&v), Ok(Era::Modern));
    // Whitespace inside a value is still a difference.
    v.mcp_name = Some("ec ho");
    assert_eq!(code(classify(&v)), codes::HEADER_MISMATCH);
}

#[test]
fn mcp_method_must_be_present_and_match() {
    let m = full();
    let mut v = view("tools/list", Some(&m), Some(M));
    v.mcp_method = None;
    assert_eq!(code(classify(&v)), codes::HEADER_MISMATCH);
    v.mcp_method = Some("prompts/list");
    assert_eq!(code(classify(&v)), codes::HEADER_MISMATCH);
}

#[test]
fn mcp_name_must_be_present_decodable_and_match() {
    let m = full();
    let mut v = view("tools/call", Some(&m), Some(M));
    v.name = Some("echo");
    assert_eq!(code(classify(&v)), codes::HEADER_MISMATCH, "missing");
    v.mcp_name = Some("=?base64?b3RoZXItdG9vbA==?=");
    assert_eq!(
        code(classify(&v)),
        codes::HEADER_MISMATCH,
        "encoded other-tool"
    );
    v.mcp_name = Some("=?base64?!!!?=");
    let r = classify(&v).unwrap_err();
    assert!(r.message.contains("malformed"), "{}", r.message);
    // resources/read mirrors the URI.
    let mut r = view("resources/read", Some(&m), Some(M));
    r.name = Some("file:///a b.txt");
    r.mcp_name = Some("=?base64?ZmlsZTovLy9hIGIudHh0?=");
    assert_eq!(classify(&r), Ok(Era::Modern));
    // Methods without a target ignore Mcp-Name.
    let mut l = view("tools/list", Some(&m), Some(M));
    l.mcp_name = Some("x");
    assert_eq!(classify(&l), Ok(Era::Modern));
}

/// Every request example of the spec (shared/spec/2026-07-28/schema-examples, beside the
/// repository), sent with the headers a conforming client derives from it, is Modern.
#[test]
fn spec_request_examples_classify_as_modern() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/spec/2026-07-28/schema-examples"
    );
    let folders = match std::fs::read_dir(dir) {
        Ok(f) => f,
        // A plain clone has no ../shared; CI (CI=true) has it and must not skip.
        Err(e) if std::env::var("CI").as_deref() != Ok("true") => {
            eprintln!(
                "note: skipping: the spec's schema examples are not beside the repository ({dir}: {e})"
            );
            return;
        }
        Err(e) => panic!("the spec's schema examples must sit beside the repository ({dir}): {e}"),
    };
    let mut checked = 0;
    for folder in folders.flatten() {
        let name = folder.file_name().to_string_lossy().to_string();
        if !name.ends_with("Request") {
            continue;
        }
        for file in std::fs::read_dir(folder.path()).unwrap().flatten() {
            let v: Value = serde_json::from_slice(&std::fs::read(file.path()).unwrap()).unwrap();
            let Some(method) = v["method"].as_str() else {
                continue;
            };
            let params = &v["params"];
            let Some(meta) = params.get("_meta").and_then(Value::as_object) else {
                continue;
            };
            let version = meta.get(META_PROTOCOL_VERSION).and_then(Value::as_str);
            let key = if method == "resources/read" {
                "uri"
            } else {
                "name"
            };
            let target = params.get(key).and_then(Value::as_str);
            let encoded = target.map(crate::mcp_name::encode);
            let view = RequestView {
                method,
                meta: Some(meta),
                version_header: version,
                mcp_method: Some(method),
                mcp_name: encoded.as_deref(),
                name: target,
            };
            assert_eq!(
                classify(&view),
                Ok(Era::Modern),
                "{}",
                file.path().display()
            );
            checked += 1;
        }
    }
    assert!(checked >= 5, "only {checked} request examples found");
}
