//! `requestState` of a composite tool that asks a 2026-07-28 client: the workflow's state
//! (every ended step's results) encrypted and authenticated with ChaCha20-Poly1305 under a key
//! made at startup, bound (as associated data) to the caller, the tool, its definition and a
//! digest of its arguments, with an expiry, and usable once. The client carries it but cannot
//! read it (steps may call tools it cannot see), change it, replay it, or use it for another
//! caller or call.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::{Duration, SystemTime};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use serde_json::{Value, json};

use crate::Identity;

/// Largest state handed to a client (it comes back in a request body).
pub(crate) const MAX_STATE_BYTES: usize = 1024 * 1024;
/// Most states remembered at once (to refuse replays).
const MAX_OUTSTANDING: usize = 100_000;
/// How long after its expiry a state still opens, as timed out (its questions then take their
/// `onCancel` path); later it is refused, and forgotten.
const GRACE_SECS: u64 = 3600;

/// The key: one installed with [`install_key`] (shared by replicas), else one made at first use
/// (this process only); `None` when the OS gave no randomness (then nothing is sealed or opened).
fn key() -> Option<Arc<LessSafeKey>> {
    let mut slot = KEY.write().unwrap_or_else(|p| p.into_inner());
    if slot.is_none() {
        let mut bytes = [0u8; 32];
        if getrandom::fill(&mut bytes).is_err() {
            tracing::error!("no OS randomness: composite tools cannot ask 2026-07-28 clients");
            return None;
        }
        *slot = Some(Arc::new(LessSafeKey::new(
            UnboundKey::new(&CHACHA20_POLY1305, &bytes).ok()?,
        )));
    }
    slot.clone()
}

static KEY: RwLock<Option<Arc<LessSafeKey>>> = RwLock::new(None);

/// Seals and opens states with `bytes` from now on, so that a state one replica handed out opens
/// on any replica holding the same key. States sealed under an earlier key no longer open.
pub fn install_key(bytes: &[u8; 32]) {
    if let Ok(k) = UnboundKey::new(&CHACHA20_POLY1305, bytes) {
        *KEY.write().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(LessSafeKey::new(k)));
    }
}

/// Nonces of states already used, with their expiry.
fn used() -> &'static Mutex<HashMap<[u8; NONCE_LEN], u64>> {
    static USED: OnceLock<Mutex<HashMap<[u8; NONCE_LEN], u64>>> = OnceLock::new();
    USED.get_or_init(|| Mutex::new(HashMap::new()))
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// What a state is bound to: who asked, which tool (and which definition of it), with which
/// arguments.
fn binding(identity: &Identity, tool: &str, definition: u64, arguments: &Value) -> Vec<u8> {
    let args = vmcp_workflow::to_sorted_json(arguments);
    let digest = ring::digest::digest(&ring::digest::SHA256, args.as_bytes());
    let b = json!({
        "tool": tool,
        "definition": definition,
        "iss": identity.issuer,
        "sub": identity.subject,
        "args": URL_SAFE_NO_PAD.encode(digest.as_ref()),
    });
    b.to_string().into_bytes()
}

/// The call a state belongs to.
pub(crate) struct Call<'a> {
    pub(crate) identity: &'a Identity,
    pub(crate) tool: &'a str,
    pub(crate) definition: u64,
    pub(crate) arguments: &'a Value,
}

/// Seals `state` for the client to echo back within `expires_in`.
///
/// # Errors
/// The state is larger than [`MAX_STATE_BYTES`], or there is no key.
pub(crate) fn seal(call: &Call<'_>, state: Value, expires_in: Duration) -> Result<String, String> {
    let key = key().ok_or("no OS randomness to seal the workflow's state")?;
    let payload = json!({"exp": now_secs() + expires_in.as_secs().max(1), "state": state});
    let mut body = serde_json::to_vec(&payload).map_err(|e| e.to_string())?;
    if body.len() > MAX_STATE_BYTES {
        return Err(format!(
            "the workflow's state ({} bytes) is too large to hand to the client (at most {MAX_STATE_BYTES})",
            body.len()
        ));
    }
    let mut nonce = [0u8; NONCE_LEN];
    getrandom::fill(&mut nonce).map_err(|_| "no OS randomness to seal the workflow's state")?;
    let aad = binding(call.identity, call.tool, call.definition, call.arguments);
    key.seal_in_place_append_tag(
        Nonce::assume_unique_for_key(nonce),
        Aad::from(&aad),
        &mut body,
    )
    .map_err(|_| "cannot seal the workflow's state")?;
    let mut out = nonce.to_vec();
    out.extend_from_slice(&body);
    Ok(URL_SAFE_NO_PAD.encode(out))
}

/// A state opened for its call.
#[derive(Debug)]
pub(crate) struct Opened {
    pub(crate) state: Value,
    /// The questions' time ran out (the state is still good: its steps are handled as timed out).
    pub(crate) expired: bool,
    /// The state's nonce and expiry, for [`claim_shared`].
    nonce: [u8; NONCE_LEN],
    exp: u64,
}

/// Records a state's use where every replica sees it (`SET NX` until its grace ends), so a state
/// used on one replica is refused on the others. If Redis cannot answer, this replica's own record
/// (in [`open`]) still stands and the request goes on: a composite's retry is not failed over it.
///
/// # Errors
/// The state was already used on another replica.
pub(crate) async fn claim_shared(
    redis: &vmcp_redis::Client,
    prefix: &str,
    opened: &Opened,
) -> Result<(), &'static str> {
    let key = format!(
        "{prefix}used-state:{}",
        URL_SAFE_NO_PAD.encode(opened.nonce)
    );
    let until = (opened.exp + GRACE_SECS).to_string();
    match redis
        .call(&[
            b"SET",
            key.as_bytes(),
            b"1",
            b"NX",
            b"EXAT",
            until.as_bytes(),
        ])
        .await
    {
        Ok(vmcp_redis::Value::Nil) => Err("requestState was already used: each can be used once"),
        Ok(_) => Ok(()),
        Err(e) => {
            tracing::warn!(error = %e, "cannot record a requestState's use in Redis; only this replica will refuse its replay");
            Ok(())
        }
    }
}

/// Opens a state this gateway sealed for this call, once.
///
/// # Errors
/// Why it cannot be used, in words for the client.
pub(crate) fn open(sealed: &str, call: &Call<'_>) -> Result<Opened, &'static str> {
    const BAD: &str = "requestState was not issued by this gateway for this caller, tool and arguments, or was changed";
    let key = key().ok_or(BAD)?;
    let mut raw = URL_SAFE_NO_PAD.decode(sealed).map_err(|_| BAD)?;
    if raw.len() <= NONCE_LEN {
        return Err(BAD);
    }
    let mut nonce = [0u8; NONCE_LEN];
    nonce.copy_from_slice(&raw[..NONCE_LEN]);
    let aad = binding(call.identity, call.tool, call.definition, call.arguments);
    let body = key
        .open_in_place(
            Nonce::assume_unique_for_key(nonce),
            Aad::from(&aad),
            &mut raw[NONCE_LEN..],
        )
        .map_err(|_| BAD)?;
    let mut payload: Value = serde_json::from_slice(body).map_err(|_| BAD)?;
    let exp = payload.get("exp").and_then(Value::as_u64).unwrap_or(0);
    let now = now_secs();
    if exp + GRACE_SECS < now {
        return Err("requestState has expired; call the tool again");
    }
    {
        let mut used = used().lock().unwrap_or_else(|p| p.into_inner());
        if used.len() >= MAX_OUTSTANDING / 2 {
            used.retain(|_, e| *e + GRACE_SECS >= now);
        }
        if used.len() >= MAX_OUTSTANDING {
            return Err("too many questions outstanding; call the tool again later");
        }
        if used.insert(nonce, exp).is_some() {
            return Err("requestState was already used: each can be used once");
        }
    }
    Ok(Opened {
        state: payload
            .get_mut("state")
            .map(Value::take)
            .unwrap_or(Value::Null),
        expired: exp < now,
        nonce,
        exp,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn alice() -> Identity {
        Identity {
            subject: Some("alice".into()),
            issuer: Some("https://idp".into()),
            claims: Arc::default(),
            token: None,
        }
    }

    fn call<'a>(identity: &'a Identity, tool: &'a str, arguments: &'a Value) -> Call<'a> {
        Call {
            identity,
            tool,
            definition: 7,
            arguments,
        }
    }

    #[test]
    fn state_opens_once_only_for_its_call_and_unchanged_and_is_not_readable() {
        let args = json!({"b": 1, "a": [2]});
        let a = alice();
        let state = json!({"steps": {"x": {"status": "completed", "output": "top-secret"}}});
        let seal_one = || {
            seal(
                &call(&a, "deploy", &args),
                state.clone(),
                Duration::from_secs(60),
            )
            .unwrap()
        };
        let sealed = seal_one();
        let raw = URL_SAFE_NO_PAD.decode(&sealed).unwrap();
        assert!(
            !String::from_utf8_lossy(&raw).contains("top-secret"),
            "encrypted"
        );
        // Key order of the arguments does not matter.
        let same = json!({"a": [2], "b": 1});
        let opened = open(&sealed, &call(&a, "deploy", &same)).unwrap();
        assert_eq!(opened.state, state);
        assert!(!opened.expired);
        assert!(
            open(&sealed, &call(&a, "deploy", &same))
                .unwrap_err()
                .contains("already used")
        );

        let anon = Identity::anonymous();
        for (who, tool, arguments) in [
            (&anon, "deploy", &args),
            (&a, "other", &args),
            (&a, "deploy", &json!({"b": 2, "a": [2]})),
        ] {
            let sealed = seal_one();
            assert!(open(&sealed, &call(who, tool, arguments)).is_err());
        }
        let other_definition = Call {
            definition: 8,
            ..call(&a, "deploy", &args)
        };
        assert!(open(&seal_one(), &other_definition).is_err());
        // Flip one byte anywhere.
        let mut raw = URL_SAFE_NO_PAD.decode(seal_one()).unwrap();
        let i = raw.len() / 2;
        raw[i] ^= 1;
        assert!(open(&URL_SAFE_NO_PAD.encode(raw), &call(&a, "deploy", &args)).is_err());
        for junk in ["", "garbage!", "AAAA", "a.b"] {
            assert!(open(junk, &call(&a, "deploy", &args)).is_err());
        }
    }

    #[test]
    fn an_expired_state_opens_as_expired() {
        let args = json!({});
        let a = alice();
        let sealed = seal(&call(&a, "t", &args), json!({"k": 1}), Duration::ZERO).unwrap();
        std::thread::sleep(Duration::from_millis(2100));
        let opened = open(&sealed, &call(&a, "t", &args)).unwrap();
        assert!(opened.expired);
        assert_eq!(opened.state, json!({"k": 1}));
    }

    #[test]
    fn oversized_state_is_refused_when_sealed() {
        let big = json!({"x": "y".repeat(MAX_STATE_BYTES)});
        let a = alice();
        assert!(seal(&call(&a, "t", &json!({})), big, Duration::from_secs(1)).is_err());
    }
}
