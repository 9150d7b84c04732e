//! JWT/JWS parsing before and at the signature check: the `Authorization` header as the edge
//! reads it (`bearer`), the compact JWS split and header checks (`jose::parse`), verification
//! against a key set of every accepted kind (`Unverified::verify`), and the key set document an
//! identity provider serves (`KeySet::parse`, fed the same bytes).
//!
//! Invariants: an accepted token names an accepted algorithm and no `crit`; a token verifies
//! only with a key of its algorithm's family (and the key's own `alg` when it has one), and not
//! once its signature is altered; verified claims are a JSON object (`verify`'s type).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use vmcp_auth::jose::{self, KeySet};

/// Public keys of every kind (RSA from crates/auth's test key; the others made for the seeds).
const JWKS: &str = include_str!("jose_jwks.json");

fn keys() -> &'static KeySet {
    static KEYS: OnceLock<KeySet> = OnceLock::new();
    KEYS.get_or_init(|| KeySet::parse(JWKS.as_bytes()).expect("the fuzz key set parses"))
}

fuzz_target!(|data: &[u8]| {
    let _ = KeySet::parse(data);
    let Ok(token) = vmcp_auth::fuzzing::bearer(Some(data)) else {
        return;
    };
    let Ok(jwt) = jose::parse(token) else {
        return;
    };
    assert!(
        [
            "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA"
        ]
        .contains(&jwt.alg.as_str()),
        "accepted algorithm {:?}",
        jwt.alg
    );
    if jwt.verify(keys()).is_err() {
        return;
    }
    let kid = jwt.kid.as_deref().unwrap_or_default();
    let family_ok = match kid {
        "rsa" => jwt.alg.starts_with("RS") || jwt.alg.starts_with("PS"),
        "rsa-ps" => jwt.alg == "PS256",
        "p256" => jwt.alg == "ES256",
        "p384" => jwt.alg == "ES384",
        "ed" => jwt.alg == "EdDSA",
        _ => false,
    };
    assert!(family_ok, "kid {kid:?} verified a {} token", jwt.alg);
    // The same token with its signature's last character changed must not verify.
    let mut altered = token.to_string();
    let last = altered.pop().unwrap_or('A');
    altered.push(if last == 'A' { 'Q' } else { 'A' });
    if let Ok(again) = jose::parse(&altered) {
        assert!(
            again.verify(keys()).is_err(),
            "an altered signature verifies"
        );
    }
});
