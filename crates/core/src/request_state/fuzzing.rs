//! The requestState unsealer as a client's bytes reach it, for the fuzz target (feature
//! `fuzzing`): one fixed key and one fixed call, so a fuzzer can feed states sealed for it.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::aead::{Aad, NONCE_LEN, Nonce};
use serde_json::{Value, json};

use super::{Call, KEY_ID_LEN, Keyring, binding, open_with};
use crate::Identity;

/// The fuzz key (also in the seed corpus's sealed states): never a real deployment's.
pub const FUZZ_KEY: [u8; 32] = [7; 32];

fn keyring() -> Result<&'static Keyring, &'static str> {
    static RING: OnceLock<Option<Keyring>> = OnceLock::new();
    RING.get_or_init(|| Keyring::new(&[FUZZ_KEY]))
        .as_ref()
        .ok_or("no key")
}

/// The caller the fuzz states are bound to; `n` names a fresh caller, so the used-state record
/// (bounded per caller) does not fill up and refuse every later open.
fn caller(n: u64) -> Identity {
    Identity {
        subject: Some(format!("fuzz-{n}")),
        issuer: Some("https://idp.example".into()),
        ..Identity::default()
    }
}

fn open_for(sealed: &str, identity: &Identity) -> Result<(Value, bool), &'static str> {
    let arguments = json!({"env": "prod"});
    let call = Call {
        identity,
        tool: "deploy",
        definition: 1,
        arguments: &arguments,
    };
    open_with(keyring()?, sealed, &call).map(|o| (o.state, o.expired))
}

/// Opens a requestState a client sent back, for the fixed call of caller `fuzz-0`: the state
/// and whether its questions timed out.
///
/// # Errors
/// The refusal the client would get.
pub fn open_state(sealed: &str) -> Result<(Value, bool), &'static str> {
    open_for(sealed, &caller(0))
}

/// Seals `plaintext` (any bytes, as if the gateway had sealed them) for a fresh caller and opens
/// it: reaches everything after decryption (payload, expiry, used-state record), which forged
/// bytes never pass.
///
/// # Errors
/// The refusal the client would get.
pub fn seal_raw_and_open(plaintext: &[u8]) -> Result<(Value, bool), &'static str> {
    static CALLERS: AtomicU64 = AtomicU64::new(1);
    let identity = caller(CALLERS.fetch_add(1, Ordering::Relaxed));
    let (id, key) = keyring()?.sealing();
    let mut nonce = [0u8; NONCE_LEN];
    getrandom::fill(&mut nonce).map_err(|_| "no randomness")?;
    let aad = binding(&identity, "deploy", 1, &json!({"env": "prod"}));
    let mut body = plaintext.to_vec();
    key.seal_in_place_append_tag(
        Nonce::assume_unique_for_key(nonce),
        Aad::from(&aad),
        &mut body,
    )
    .map_err(|_| "cannot seal")?;
    let mut raw = Vec::with_capacity(KEY_ID_LEN + NONCE_LEN + body.len());
    raw.extend_from_slice(id);
    raw.extend_from_slice(&nonce);
    raw.extend_from_slice(&body);
    let sealed = URL_SAFE_NO_PAD.encode(raw);
    open_for(&sealed, &identity)
}

/// Seals `state` for the fixed call of caller `fuzz-0` as the gateway does (for the seed corpus).
///
/// # Errors
/// As the gateway's sealing.
pub fn seal_state(state: Value, expires_in_secs: u64) -> Result<String, String> {
    let identity = caller(0);
    let arguments = json!({"env": "prod"});
    let call = Call {
        identity: &identity,
        tool: "deploy",
        definition: 1,
        arguments: &arguments,
    };
    super::seal_with(
        keyring()?,
        &call,
        state,
        std::time::Duration::from_secs(expires_in_secs),
    )
}
