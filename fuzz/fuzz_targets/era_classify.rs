//! Legacy/Modern classification of a client request (`vmcp_proto::era::classify`), on a request
//! read as the edge reads it. Checks that a request is only ever Modern when everything the
//! 2026-07-28 spec requires holds (the version header and `_meta` agree on 2026-07-28, client
//! capabilities are an object, `Mcp-Method` and `Mcp-Name` mirror the body), that a request with
//! no Modern signal is Legacy, and that every refusal has one of the three codes the spec gives.
#![no_main]

#[path = "common/request.rs"]
mod request;

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use vmcp_proto::era::{self, Era, RequestView};
use vmcp_proto::{codes, mcp_name, revision};

fn trim(v: &str) -> &str {
    v.trim_matches([' ', '\t'])
}

fuzz_target!(|data: &[u8]| {
    let req = request::Request::read(data);
    let (method, params) = req.call().unwrap_or_default();
    let meta = params
        .as_ref()
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object);
    let target = if method == "resources/read" {
        "uri"
    } else {
        "name"
    };
    let view = RequestView {
        method: &method,
        meta,
        version_header: req.header("mcp-protocol-version"),
        mcp_method: req.header("mcp-method"),
        mcp_name: req.header("mcp-name"),
        name: params
            .as_ref()
            .and_then(|p| p.get(target))
            .and_then(Value::as_str),
    };
    let has = |k: &str| meta.is_some_and(|m| m.contains_key(k));
    let signalled = view.version_header.map(trim) == Some(revision::MODERN)
        || has(era::META_PROTOCOL_VERSION)
        || has(era::META_CLIENT_INFO)
        || has(era::META_CLIENT_CAPABILITIES);
    match era::classify(&view) {
        Ok(Era::Modern) => {
            assert_eq!(view.version_header.map(trim), Some(revision::MODERN));
            let m = meta.expect("a Modern request has _meta");
            assert_eq!(
                m.get(era::META_PROTOCOL_VERSION).and_then(Value::as_str),
                Some(revision::MODERN)
            );
            assert!(
                m.get(era::META_CLIENT_CAPABILITIES)
                    .is_some_and(Value::is_object)
            );
            assert_eq!(view.mcp_method.map(trim), Some(method.as_str()));
            if era::names_a_target(&method) {
                let decoded = view.mcp_name.map(trim).and_then(mcp_name::decode);
                assert_eq!(
                    decoded.as_deref(),
                    view.name,
                    "Mcp-Name does not mirror the body"
                );
                assert!(view.name.is_some());
            }
        }
        Ok(Era::Legacy) => {}
        Err(rejection) => {
            assert!(signalled, "a request without a Modern signal was refused");
            assert!(
                [
                    codes::INVALID_PARAMS,
                    codes::HEADER_MISMATCH,
                    codes::UNSUPPORTED_PROTOCOL_VERSION
                ]
                .contains(&rejection.code),
                "{rejection:?}"
            );
            let _ = serde_json::to_vec(&rejection.data);
        }
    }
    if !signalled || (method == "initialize" && !has(era::META_PROTOCOL_VERSION)) {
        assert_eq!(era::classify(&view), Ok(Era::Legacy));
    }
});
