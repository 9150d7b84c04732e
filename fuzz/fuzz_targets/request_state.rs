//! The requestState unsealer (`vmcp_core` `request_state::open`, through its `fuzzing` entry
//! points): what a Modern client sends back as `requestState`.
//!
//! Two modes, by the first byte. `0`: the rest is the plaintext of a state sealed with the right
//! key for the right call (everything after decryption: payload, expiry, the used-state record).
//! Anything else: the whole input is the state a client sent. Invariants: a forged or altered
//! state never opens (the fuzzer cannot produce a valid tag, so an `Ok` here is a forgery unless
//! the input is a seed sealed with the fuzz key); an opened state is never opened twice.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vmcp_core::fuzzing::{open_state, seal_raw_and_open};

fuzz_target!(|data: &[u8]| {
    match data.split_first() {
        Some((0, plaintext)) => {
            if let Ok((state, _)) = seal_raw_and_open(plaintext) {
                // Only a JSON payload with an expiry that has not long passed opens.
                let payload: serde_json::Value =
                    serde_json::from_slice(plaintext).expect("an opened payload is JSON");
                assert_eq!(payload.get("state").cloned().unwrap_or_default(), state);
            }
        }
        _ => {
            let sealed = String::from_utf8_lossy(data);
            if open_state(&sealed).is_ok() {
                assert!(
                    open_state(&sealed).is_err(),
                    "a requestState opened twice: {sealed:?}"
                );
            }
        }
    }
});
