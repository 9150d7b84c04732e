//! `requestState` of a composite tool that asks a 2026-07-28 client: the workflow's state
//! sealed with HMAC-SHA256 under a key made at startup, bound to the caller, the tool, a digest
//! of its arguments and an expiry, as the spec's multi round-trip rules ask. A client can carry
//! it but not read it usefully, change it, replay it for another caller or call, or keep it
//! past the question's timeout.

use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::hmac;
use serde_json::{Value, json};

use crate::Identity;

/// Largest state handed to a client (it comes back in a request body).
pub(crate) const MAX_STATE_BYTES: usize = 1024 * 1024;

fn key() -> &'static hmac::Key {
    static KEY: OnceLock<hmac::Key> = OnceLock::new();
    KEY.get_or_init(|| {
        let mut bytes = [0u8; 32];
        if getrandom::fill(&mut bytes).is_err() {
            // No OS randomness: a key nobody can predict is impossible, so no state verifies.
            bytes = [0u8; 32];
            tracing::error!("no OS randomness: composite tools cannot ask 2026-07-28 clients");
        }
        hmac::Key::new(hmac::HMAC_SHA256, &bytes)
    })
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// What the state is bound to: who asked, which tool, with which arguments.
fn binding(identity: &Identity, tool: &str, arguments: &Value) -> Value {
    let args = vmcp_workflow::to_sorted_json(arguments);
    let digest = ring::digest::digest(&ring::digest::SHA256, args.as_bytes());
    json!({
        "tool": tool,
        "iss": identity.issuer,
        "sub": identity.subject,
        "args": URL_SAFE_NO_PAD.encode(digest.as_ref()),
    })
}

/// Seals `state` for the client to echo back.
///
/// # Errors
/// The state is larger than [`MAX_STATE_BYTES`].
pub(crate) fn seal(
    identity: &Identity,
    tool: &str,
    arguments: &Value,
    state: Value,
    expires_in: Duration,
) -> Result<String, String> {
    let payload = json!({
        "v": 1,
        "for": binding(identity, tool, arguments),
        "exp": now_secs() + expires_in.as_secs().max(1),
        "state": state,
    });
    let body = serde_json::to_vec(&payload).map_err(|e| e.to_string())?;
    if body.len() > MAX_STATE_BYTES {
        return Err(format!(
            "the workflow's state ({} bytes) is too large to hand to the client (at most {MAX_STATE_BYTES})",
            body.len()
        ));
    }
    let tag = hmac::sign(key(), &body);
    Ok(format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(&body),
        URL_SAFE_NO_PAD.encode(tag.as_ref())
    ))
}

/// Opens a state this gateway sealed for this caller, tool and arguments, before it expired.
///
/// # Errors
/// Why it cannot be used, in words for the client.
pub(crate) fn open(
    sealed: &str,
    identity: &Identity,
    tool: &str,
    arguments: &Value,
) -> Result<Value, &'static str> {
    const BAD: &str = "requestState was not issued by this gateway for this call, or was changed";
    let (body, tag) = sealed.split_once('.').ok_or(BAD)?;
    let body = URL_SAFE_NO_PAD.decode(body).map_err(|_| BAD)?;
    let tag = URL_SAFE_NO_PAD.decode(tag).map_err(|_| BAD)?;
    hmac::verify(key(), &body, &tag).map_err(|_| BAD)?;
    let mut payload: Value = serde_json::from_slice(&body).map_err(|_| BAD)?;
    if payload.get("for") != Some(&binding(identity, tool, arguments)) {
        return Err("requestState belongs to another caller, tool or set of arguments");
    }
    if payload.get("exp").and_then(Value::as_u64).unwrap_or(0) < now_secs() {
        return Err("requestState has expired: the question's time ran out; call the tool again");
    }
    Ok(payload
        .get_mut("state")
        .map(Value::take)
        .unwrap_or(Value::Null))
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

    #[test]
    fn state_opens_only_for_its_caller_tool_and_arguments_and_unchanged() {
        let args = json!({"b": 1, "a": [2]});
        let state = json!({"steps": {"x": {"status": "completed"}}});
        let sealed = seal(
            &alice(),
            "deploy",
            &args,
            state.clone(),
            Duration::from_secs(60),
        )
        .unwrap();
        // Key order of the arguments does not matter.
        let same = json!({"a": [2], "b": 1});
        assert_eq!(open(&sealed, &alice(), "deploy", &same).unwrap(), state);
        assert!(open(&sealed, &Identity::anonymous(), "deploy", &args).is_err());
        assert!(open(&sealed, &alice(), "other", &args).is_err());
        assert!(open(&sealed, &alice(), "deploy", &json!({"b": 2, "a": [2]})).is_err());
        // Flip one character of the payload or the tag.
        let (body, tag) = sealed.split_once('.').unwrap();
        let mut forged = body.to_owned();
        forged.replace_range(5..6, if &body[5..6] == "A" { "B" } else { "A" });
        assert!(open(&format!("{forged}.{tag}"), &alice(), "deploy", &args).is_err());
        assert!(open("garbage", &alice(), "deploy", &args).is_err());
        assert!(open("a.b", &alice(), "deploy", &args).is_err());
    }

    #[test]
    fn expired_state_is_refused() {
        let args = json!({});
        let sealed = seal(&alice(), "t", &args, json!({}), Duration::from_secs(1)).unwrap();
        // Make it expired by sealing a payload dated in the past with the same key.
        let (body, _) = sealed.split_once('.').unwrap();
        let mut payload: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(body).unwrap()).unwrap();
        payload["exp"] = json!(now_secs() - 10);
        let body = serde_json::to_vec(&payload).unwrap();
        let tag = hmac::sign(key(), &body);
        let old = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(&body),
            URL_SAFE_NO_PAD.encode(tag.as_ref())
        );
        assert!(
            open(&old, &alice(), "t", &args)
                .unwrap_err()
                .contains("expired")
        );
    }

    #[test]
    fn oversized_state_is_refused_when_sealed() {
        let big = json!({"x": "y".repeat(MAX_STATE_BYTES)});
        assert!(seal(&alice(), "t", &json!({}), big, Duration::from_secs(1)).is_err());
    }
}
