//! The key set's life through the validator, against the scripted provider of `oidc::tests`: a
//! removed key stops verifying at the next fetch (remembered tokens included), an unknown `kid`
//! brings a rotated-in key at once, a flood of unknown `kid`s costs one fetch, and a provider that
//! stays unreachable past `jwksMaxStale` makes every token fail closed with one log line a minute.
//! Time is moved by ageing the cache's instants, never by sleeping.

use std::io::Write;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;

use super::super::tests::{claims, server, settings, setup};
use super::*;
use crate::error::AuthError;
use crate::oidc::OidcValidator;
use crate::test_keys::keys;

fn hits(script: &crate::oidc::tests::Script) -> usize {
    script.jwks_hits.load(Ordering::SeqCst)
}

fn without(set: &Value, kid: &str) -> Value {
    let mut set = set.clone();
    if let Some(keys) = set["keys"].as_array_mut() {
        keys.retain(|k| k["kid"] != kid);
    }
    set
}

#[tokio::test]
async fn a_removed_key_stops_verifying_at_the_next_periodic_fetch() {
    let (k, v, script) = setup().await;
    let rsa = k.sign("RS256", Some("rsa"), &claims());
    assert!(v.validate(&rsa).await.is_ok());
    *script.jwks.lock().unwrap() = without(&k.jwks, "rsa");
    // Before the set is due, the remembered token is served as it was.
    assert!(v.validate(&rsa).await.is_ok());
    assert_eq!(hits(&script), 1);
    // Once due (5 min, not 15), the set is fetched again and replaces the cached one: the removed
    // key is gone, even for the remembered token, and the keys that stayed still verify.
    v.keys.age_by(MAX_KEY_AGE + Duration::from_secs(1));
    match v.validate(&rsa).await {
        Err(AuthError::InvalidToken(m)) => assert!(m.contains("\"rsa\""), "{m}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(hits(&script), 2);
    let p256 = k.sign("ES256", Some("p256"), &claims());
    assert!(v.validate(&p256).await.is_ok());
    assert_eq!(hits(&script), 2, "one fetch: the others are rate-limited");
}

#[tokio::test]
async fn an_unknown_kid_brings_the_rotated_set_and_retires_the_removed_key_at_once() {
    let (k, v, script) = setup().await;
    let old = k.sign("RS256", Some("rsa"), &claims());
    assert!(v.validate(&old).await.is_ok());
    // The provider rotates: the RSA key is now published as rsa-2026 only.
    let mut set = without(&k.jwks, "rsa");
    let mut rotated = k.jwks["keys"][0].clone();
    rotated["kid"] = json!("rsa-2026");
    set["keys"].as_array_mut().unwrap().push(rotated);
    *script.jwks.lock().unwrap() = set;
    // Ten seconds after the last fetch (not fifteen minutes), a token of the new key is accepted.
    v.keys.age_by(MIN_REFRESH);
    let new = k.sign("RS256", Some("rsa-2026"), &claims());
    assert!(v.validate(&new).await.is_ok());
    assert_eq!(hits(&script), 2);
    // The old kid was remembered a moment ago; the new generation retires it without waiting
    // for the remembered-token TTL.
    assert!(matches!(
        v.validate(&old).await,
        Err(AuthError::InvalidToken(_))
    ));
    assert_eq!(
        hits(&script),
        2,
        "a refused kid right after a fetch fetches nothing"
    );
}

#[tokio::test]
async fn a_rotated_in_key_while_the_provider_is_down_is_unavailable_not_invalid() {
    let (k, v, script) = setup().await;
    assert!(
        v.validate(&k.sign("RS256", Some("rsa"), &claims()))
            .await
            .is_ok()
    );
    // The provider becomes unreachable and starts signing with a key the cache has not seen.
    script.down.store(true, Ordering::SeqCst);
    let mut set = k.jwks.clone();
    set["keys"][0]["kid"] = json!("rsa-2026");
    *script.jwks.lock().unwrap() = set;
    v.keys.age_by(MIN_REFRESH);
    let new = k.sign("RS256", Some("rsa-2026"), &claims());
    // The token may well be good: 503 naming the fetch, never 401 (which tells a client to drop it).
    match v.validate(&new).await {
        Err(AuthError::Unavailable(m)) => {
            assert!(
                m.contains("rsa-2026") && m.contains("cannot be fetched now"),
                "{m}"
            )
        }
        other => panic!("{other:?}"),
    }
    // Within the refresh interval the same answer, without another fetch.
    let fetched = hits(&script);
    assert!(matches!(
        v.validate(&new).await,
        Err(AuthError::Unavailable(_))
    ));
    assert_eq!(hits(&script), fetched);
    // Tokens of the cached keys still verify meanwhile.
    assert!(
        v.validate(&k.sign("ES256", Some("p256"), &claims()))
            .await
            .is_ok()
    );
    // Once the provider answers again, the next refresh brings the key.
    script.down.store(false, Ordering::SeqCst);
    v.keys.age_by(MIN_REFRESH);
    assert!(v.validate(&new).await.is_ok());
    // With the provider reachable, an unknown kid is an invalid token again.
    assert!(matches!(
        v.validate(&k.sign("RS256", Some("bogus"), &claims())).await,
        Err(AuthError::InvalidToken(_))
    ));
}

#[tokio::test]
async fn an_unknown_key_of_a_token_newer_than_the_set_is_unavailable_until_refetched() {
    use super::super::tests::{now, with};
    let (k, v, script) = setup().await;
    assert!(
        v.validate(&k.sign("RS256", Some("rsa"), &claims()))
            .await
            .is_ok()
    );
    // The provider rotates right after the fetch; fetches are rate-limited for 10 s.
    let mut set = k.jwks.clone();
    set["keys"][0]["kid"] = json!("rsa-next");
    *script.jwks.lock().unwrap() = set;
    let fresh = k.sign(
        "RS256",
        Some("rsa-next"),
        &with(claims(), "iat", json!(now())),
    );
    match v.validate(&fresh).await {
        Err(AuthError::Unavailable(m)) => assert!(m.contains("newer than the signing keys"), "{m}"),
        other => panic!("{other:?}"),
    }
    // A token issued before the set was fetched would have its key in it: refused.
    let old = k.sign(
        "RS256",
        Some("rsa-old"),
        &with(claims(), "iat", json!(now() - 120)),
    );
    assert!(matches!(
        v.validate(&old).await,
        Err(AuthError::InvalidToken(_))
    ));
    // Nor is an `iat` far in the future believed: a forged token must not earn "retry" forever.
    let forged = k.sign(
        "RS256",
        Some("rsa-later"),
        &with(claims(), "iat", json!(now() + 3600)),
    );
    assert!(matches!(
        v.validate(&forged).await,
        Err(AuthError::InvalidToken(_))
    ));
    assert_eq!(hits(&script), 1, "nothing fetched within the interval");
    // Once the interval has passed, the fresh token's key is fetched and accepted.
    v.keys.age_by(MIN_REFRESH);
    assert!(v.validate(&fresh).await.is_ok());
    assert_eq!(hits(&script), 2);
}

#[tokio::test]
async fn a_concurrent_flood_of_unknown_kids_costs_one_fetch_per_interval() {
    let (k, v, script) = setup().await;
    assert!(
        v.validate(&k.sign("EdDSA", Some("ed"), &claims()))
            .await
            .is_ok()
    );
    *script.delay.lock().unwrap() = Duration::from_millis(200);
    v.keys.age_by(MIN_REFRESH);
    let v = Arc::new(v);
    let flood: Vec<_> = (0..64)
        .map(|i| {
            let (v, t) = (
                v.clone(),
                k.sign("EdDSA", Some(&format!("made-up-{i}")), &claims()),
            );
            tokio::spawn(async move { v.validate(&t).await })
        })
        .collect();
    for call in flood {
        assert!(matches!(
            call.await.unwrap(),
            Err(AuthError::InvalidToken(_))
        ));
    }
    assert_eq!(hits(&script), 2, "one fetch for 64 concurrent unknown kids");
}

/// Log lines written while `set` is the thread's subscriber (the tests' runtime is one thread).
#[derive(Clone, Default)]
struct Lines(Arc<Mutex<Vec<u8>>>);

impl Write for Lines {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Lines {
    fn set(&self) -> tracing::subscriber::DefaultGuard {
        let lines = self.clone();
        tracing::subscriber::set_default(
            tracing_subscriber::fmt()
                .with_writer(move || lines.clone())
                .with_ansi(false)
                .finish(),
        )
    }
    fn count(&self, needle: &str) -> usize {
        String::from_utf8_lossy(&self.0.lock().unwrap())
            .lines()
            .filter(|l| l.contains(needle))
            .count()
    }
}

#[tokio::test]
async fn keys_unreachable_past_max_stale_fail_closed_and_within_it_still_verify() {
    let lines = Lines::default();
    let _logs = lines.set();
    let (k, v, script) = setup().await;
    let remembered = k.sign("ES256", Some("p256"), &claims());
    assert!(v.validate(&remembered).await.is_ok());
    script.down.store(true, Ordering::SeqCst);
    // Due for a fetch that fails: the cached keys still verify (within the default hour).
    v.keys.age_by(MAX_KEY_AGE + Duration::from_secs(1));
    let fresh = k.sign("ES384", Some("p384"), &claims());
    assert!(v.validate(&fresh).await.is_ok());
    assert_eq!(hits(&script), 2);
    v.keys
        .age_by(DEFAULT_MAX_STALE - MAX_KEY_AGE - Duration::from_secs(60));
    assert!(
        v.validate(&remembered).await.is_ok(),
        "59 min: still within"
    );

    // Past an hour without a successful fetch: every token is refused with 401, remembered ones
    // too, and however many requests come, one fetch per interval and one log line.
    v.keys.age_by(Duration::from_secs(120));
    for _ in 0..50 {
        for token in [&remembered, &fresh] {
            match v.validate(token).await {
                Err(e @ AuthError::InvalidToken(_)) => {
                    assert_eq!(e.status(), 401);
                    assert!(e.to_string().contains("jwksMaxStale"), "{e}");
                }
                other => panic!("{other:?}"),
            }
        }
    }
    assert_eq!(
        hits(&script),
        4,
        "fetches at 0, 5 and 59 min, and one past the hour"
    );
    assert_eq!(
        lines.count("refusing every token"),
        1,
        "one line, not one per request"
    );
    assert_eq!(
        lines.count("cannot fetch the issuer's signing keys"),
        3,
        "each failed fetch is logged once"
    );

    // The provider is back: the next attempt restores service.
    script.down.store(false, Ordering::SeqCst);
    v.keys.age_by(MIN_REFRESH);
    assert!(v.validate(&fresh).await.is_ok());
    assert!(v.validate(&remembered).await.is_ok());
    assert_eq!(lines.count("tokens are accepted again"), 1);
}

#[tokio::test]
async fn max_stale_is_configurable_even_below_the_fetch_period() {
    let k = keys();
    let (base, script) = server(k.jwks.clone()).await;
    let mut s = settings(&base);
    s.jwks_max_stale = Some(Duration::from_secs(120));
    let v = OidcValidator::new(s).unwrap();
    let t = k.sign("RS256", Some("rsa"), &claims());
    assert!(v.validate(&t).await.is_ok());
    // Two minutes is less than the 5 min fetch period: the keys are fetched when they reach it,
    // so a reachable provider never sees its tokens refused.
    v.keys.age_by(Duration::from_secs(121));
    assert!(v.validate(&t).await.is_ok());
    assert_eq!(hits(&script), 2);
    script.down.store(true, Ordering::SeqCst);
    v.keys.age_by(Duration::from_secs(119));
    assert!(v.validate(&t).await.is_ok());
    v.keys.age_by(Duration::from_secs(2));
    assert!(matches!(
        v.validate(&t).await,
        Err(AuthError::InvalidToken(_))
    ));
}
