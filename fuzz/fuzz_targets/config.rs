//! The config loader (`vmcp_config::load_str`: YAML → `${VAR}` resolution → strict decoding →
//! validation → line numbers) and the `.mcp.json` importer (`from_mcp_json`), on any text.
//!
//! Invariants: loading never panics, whatever the text; a config that loads is written back
//! (`to_yaml`) as YAML that loads to an equal config; every error names a line or a key path.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vmcp_config::{from_mcp_json, load_str, to_yaml};

fn env(name: &str) -> Option<String> {
    match name {
        "TOKEN" => Some("s3cr3t".to_owned()),
        "PORT" => Some("9000".to_owned()),
        _ => None,
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match load_str(text, &env) {
        Ok(config) => {
            let written = to_yaml(&config);
            match load_str(&written, &|_| None) {
                Ok(again) => assert!(again == config, "to_yaml changed the config:\n{written}"),
                Err(e) => panic!("to_yaml wrote a config that does not load:\n{written}\n{e}"),
            }
        }
        Err(errors) => {
            assert!(!errors.0.is_empty());
            let _ = errors.to_string();
        }
    }
    let _ = from_mcp_json(text);
});
