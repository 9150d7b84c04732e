//! `requestState` of a composite tool that asks a 2026-07-28 client: the workflow's state
//! (every ended step's results) encrypted and authenticated with ChaCha20-Poly1305 under a key
//! made at startup, bound (as associated data) to the caller, the tool, its definition and a
//! digest of its arguments, with an expiry, and usable once. The client carries it but cannot
//! read it (steps may call tools it cannot see), change it, replay it, or use it for another
//! caller or call.

#[cfg(feature = "fuzzing")]
pub(crate) mod fuzzing;
mod used;

use std::hash::BuildHasher;
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::{Duration, SystemTime};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use serde_json::{Value, json};

use crate::Identity;

/// Largest state handed to a client (it comes back in a request body).
pub(crate) const MAX_STATE_BYTES: usize = 1024 * 1024;
/// How long after its expiry a state still opens, as timed out (its questions then take their
/// `onCancel` path); later it is refused, and forgotten.
const GRACE_SECS: u64 = 3600;

/// The keys states are sealed and opened with: the first seals, every one opens (a rotation
/// window, while replicas move from one key to the next).
struct Keyring {
    keys: Vec<(KeyId, LessSafeKey)>,
}

/// Names a key inside every sealed state, so a state opens with the key that sealed it. Derived
/// from the key (a hash prefix), so operators never configure one and two keys never share one
/// by mistake.
type KeyId = [u8; KEY_ID_LEN];
const KEY_ID_LEN: usize = 4;

fn key_id(bytes: &[u8; 32]) -> KeyId {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    ctx.update(b"vmcp requestState key id\0");
    ctx.update(bytes);
    let digest = ctx.finish();
    let mut id = [0u8; KEY_ID_LEN];
    id.copy_from_slice(&digest.as_ref()[..KEY_ID_LEN]);
    id
}

impl Keyring {
    fn new(keys: &[[u8; 32]]) -> Option<Self> {
        let keys = keys
            .iter()
            .map(|k| {
                UnboundKey::new(&CHACHA20_POLY1305, k)
                    .ok()
                    .map(|u| (key_id(k), LessSafeKey::new(u)))
            })
            .collect::<Option<Vec<_>>>()?;
        (!keys.is_empty()).then_some(Self { keys })
    }

    fn sealing(&self) -> (&KeyId, &LessSafeKey) {
        let (id, key) = &self.keys[0];
        (id, key)
    }

    fn opening(&self, id: &[u8]) -> Option<&LessSafeKey> {
        self.keys.iter().find(|(k, _)| k == id).map(|(_, key)| key)
    }
}

/// The keys: those installed with [`install_keys`] (shared by replicas), else one made at first
/// use (this process only); `None` when the OS gave no randomness (then nothing is sealed or
/// opened).
fn keyring() -> Option<Arc<Keyring>> {
    let mut slot = KEYS.write().unwrap_or_else(|p| p.into_inner());
    if slot.is_none() {
        let mut bytes = [0u8; 32];
        if getrandom::fill(&mut bytes).is_err() {
            tracing::error!("no OS randomness: composite tools cannot ask 2026-07-28 clients");
            return None;
        }
        *slot = Some(Arc::new(Keyring::new(&[bytes])?));
    }
    slot.clone()
}

static KEYS: RwLock<Option<Arc<Keyring>>> = RwLock::new(None);

/// Seals states with the first of `keys` and opens states sealed with any of them from now on,
/// so that a state one replica handed out opens on any replica holding the same keys. States
/// sealed under a key not in `keys` no longer open. Returns the hex id of the sealing key (it
/// travels in every state), or `None` when `keys` is empty.
pub fn install_keys(keys: &[[u8; 32]]) -> Option<String> {
    let ring = Keyring::new(keys)?;
    let id = ring
        .sealing()
        .0
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    *KEYS.write().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(ring));
    Some(id)
}

/// States already used on this replica.
fn used() -> &'static Mutex<used::Used<[u8; NONCE_LEN]>> {
    static USED: OnceLock<Mutex<used::Used<[u8; NONCE_LEN]>>> = OnceLock::new();
    USED.get_or_init(|| Mutex::new(used::Used::new()))
}

/// Who a use is counted against: issuer and subject, hashed with a per-process seed.
fn caller_of(identity: &Identity) -> used::Caller {
    static SEED: OnceLock<std::collections::hash_map::RandomState> = OnceLock::new();
    SEED.get_or_init(Default::default)
        .hash_one((&identity.issuer, &identity.subject))
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
    let keys = keyring().ok_or("no OS randomness to seal the workflow's state")?;
    seal_with(&keys, call, state, expires_in)
}

fn seal_with(
    keys: &Keyring,
    call: &Call<'_>,
    state: Value,
    expires_in: Duration,
) -> Result<String, String> {
    let (id, key) = keys.sealing();
    let payload =
        json!({"exp": now_secs().saturating_add(expires_in.as_secs().max(1)), "state": state});
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
    let mut out = Vec::with_capacity(KEY_ID_LEN + NONCE_LEN + body.len());
    out.extend_from_slice(id);
    out.extend_from_slice(&nonce);
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
    let until = opened.exp.saturating_add(GRACE_SECS).to_string();
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

/// Why a state does not open, whatever the reason (no oracle for which check failed).
const BAD: &str = "requestState was not issued by this gateway for this caller, tool and arguments, or was changed";

/// Opens a state this gateway sealed for this call, once.
///
/// # Errors
/// Why it cannot be used, in words for the client.
pub(crate) fn open(sealed: &str, call: &Call<'_>) -> Result<Opened, &'static str> {
    let keys = keyring().ok_or(BAD)?;
    open_with(&keys, sealed, call)
}

fn open_with(keys: &Keyring, sealed: &str, call: &Call<'_>) -> Result<Opened, &'static str> {
    let mut raw = URL_SAFE_NO_PAD.decode(sealed).map_err(|_| BAD)?;
    if raw.len() <= KEY_ID_LEN + NONCE_LEN {
        return Err(BAD);
    }
    let (id, rest) = raw.split_at_mut(KEY_ID_LEN);
    let key = keys.opening(id).ok_or(BAD)?;
    let (nonce_bytes, sealed_body) = rest.split_at_mut(NONCE_LEN);
    let mut nonce = [0u8; NONCE_LEN];
    nonce.copy_from_slice(nonce_bytes);
    let aad = binding(call.identity, call.tool, call.definition, call.arguments);
    let body = key
        .open_in_place(
            Nonce::assume_unique_for_key(nonce),
            Aad::from(&aad),
            sealed_body,
        )
        .map_err(|_| BAD)?;
    let mut payload: Value = serde_json::from_slice(body).map_err(|_| BAD)?;
    let exp = payload.get("exp").and_then(Value::as_u64).unwrap_or(0);
    let now = now_secs();
    let until = exp.saturating_add(GRACE_SECS);
    if until < now {
        return Err("requestState has expired; call the tool again");
    }
    let recorded = used().lock().unwrap_or_else(|p| p.into_inner()).record(
        nonce,
        caller_of(call.identity),
        until,
        now,
    );
    match recorded {
        Ok(()) => {}
        Err(used::Refused::AlreadyUsed) => {
            return Err("requestState was already used: each can be used once");
        }
        Err(used::Refused::CallerOverShare) => {
            return Err("too many of your questions are outstanding; call the tool again later");
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
    fn states_name_their_key_and_open_during_a_rotation_window_only() {
        let args = json!({});
        let a = alice();
        let (old, new) = ([1u8; 32], [2u8; 32]);
        let ring = |keys: &[[u8; 32]]| Keyring::new(keys).unwrap();
        let sealed = seal_with(
            &ring(&[old]),
            &call(&a, "t", &args),
            json!(1),
            Duration::from_secs(60),
        )
        .unwrap();
        let raw = URL_SAFE_NO_PAD.decode(&sealed).unwrap();
        assert_eq!(
            raw[..KEY_ID_LEN],
            key_id(&old),
            "the key id travels in the state"
        );
        assert_ne!(key_id(&old), key_id(&new));
        // Step 1 of a rotation: the new key accepted, the old one still sealing; step 2: the new
        // one sealing, the old one accepted. A state sealed under the old key opens in both.
        let seal_old = || {
            seal_with(
                &ring(&[old]),
                &call(&a, "t", &args),
                json!(1),
                Duration::from_secs(60),
            )
            .unwrap()
        };
        for keys in [[old, new], [new, old]] {
            let opened = open_with(&ring(&keys), &seal_old(), &call(&a, "t", &args));
            assert!(opened.is_ok(), "{keys:?}");
        }
        // Step 3: the old key dropped.
        assert_eq!(
            open_with(&ring(&[new]), &sealed, &call(&a, "t", &args)).unwrap_err(),
            BAD
        );
        // The new primary seals with its own id.
        let resealed = seal_with(
            &ring(&[new, old]),
            &call(&a, "t", &args),
            json!(1),
            Duration::from_secs(60),
        )
        .unwrap();
        assert_eq!(
            URL_SAFE_NO_PAD.decode(resealed).unwrap()[..KEY_ID_LEN],
            key_id(&new)
        );
        // A forged id naming no key, and a state sealed with a key nobody holds, are refused.
        let stranger = seal_with(
            &ring(&[[9u8; 32]]),
            &call(&a, "t", &args),
            json!(1),
            Duration::from_secs(60),
        )
        .unwrap();
        assert_eq!(
            open_with(&ring(&[new, old]), &stranger, &call(&a, "t", &args)).unwrap_err(),
            BAD
        );
        assert!(install_keys(&[]).is_none());
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
