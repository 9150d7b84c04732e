//! Signature verification for every accepted algorithm with keys made here, and every way a token
//! must be refused: none, HMAC (with the public key as secret), wrong key type, curve or `alg`,
//! unknown `kid`, tampering, oversize, critical headers.

use serde_json::{Value, json};

use super::*;
use crate::test_keys::{RSA_JWK, b64u, enc, keys};

fn claims() -> Value {
    json!({"sub": "alice", "iss": "https://idp", "aud": "vmcp"})
}

#[test]
fn every_accepted_algorithm_verifies_with_its_key() {
    let k = keys();
    let set = k.set();
    assert_eq!(set.len(), 5, "{set:?}");
    assert_eq!(
        set.skipped, 2,
        "the HMAC and encryption keys are not usable"
    );
    for (alg, kid) in [
        ("RS256", "rsa"),
        ("RS384", "rsa"),
        ("RS512", "rsa"),
        ("PS256", "rsa-ps"),
        ("PS384", "rsa"),
        ("PS512", "rsa"),
        ("ES256", "p256"),
        ("ES384", "p384"),
        ("EdDSA", "ed"),
    ] {
        let token = k.sign(alg, Some(kid), &claims());
        let got = parse(&token).unwrap().verify(&set);
        assert_eq!(got.map(|c| c["sub"].clone()), Ok(json!("alice")), "{alg}");
    }
}

#[test]
fn none_and_hmac_are_refused_before_any_key_is_used() {
    let k = keys();
    let set = k.set();
    let none = format!("{}.{}.", enc(&json!({"alg": "none"})), enc(&claims()));
    assert_eq!(
        parse(&none).err(),
        Some(JoseError::Algorithm("none".into()))
    );
    // HS256 "signed" with the RSA public key as the shared secret (the classic confusion).
    let hs = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, RSA_JWK.as_bytes());
    let signed = format!(
        "{}.{}",
        enc(&json!({"alg": "HS256", "kid": "rsa"})),
        enc(&claims())
    );
    let tag = ring::hmac::sign(&hs, signed.as_bytes());
    let token = format!("{signed}.{}", b64u(tag.as_ref()));
    assert_eq!(
        parse(&token).err(),
        Some(JoseError::Algorithm("HS256".into()))
    );
    // ... and the oct key in the set is never usable.
    assert!(!set.has("hmac"));
}

#[test]
fn keys_must_match_the_algorithm() {
    let k = keys();
    let set = k.set();
    // An ES256 header pointing at the RSA key; an RS256 header at the EC key.
    let t = k.sign("ES256", Some("rsa"), &claims());
    assert!(matches!(
        parse(&t).unwrap().verify(&set),
        Err(JoseError::KeyMismatch(..))
    ));
    let t = k.sign("RS256", Some("p256"), &claims());
    assert!(matches!(
        parse(&t).unwrap().verify(&set),
        Err(JoseError::KeyMismatch(..))
    ));
    // ES384 at the P-256 key (wrong curve).
    let t = k.sign("ES384", Some("p256"), &claims());
    assert!(matches!(
        parse(&t).unwrap().verify(&set),
        Err(JoseError::KeyMismatch(..))
    ));
    // A key that pins its alg (PS256) refuses RS256 even though the key is RSA.
    let t = k.sign("RS256", Some("rsa-ps"), &claims());
    assert!(matches!(
        parse(&t).unwrap().verify(&set),
        Err(JoseError::KeyMismatch(..))
    ));
}

#[test]
fn unknown_kid_tampering_and_a_missing_kid_are_refused() {
    let k = keys();
    let set = k.set();
    let t = k.sign("RS256", Some("rotated-away"), &claims());
    assert_eq!(
        parse(&t).unwrap().verify(&set).err(),
        Some(JoseError::UnknownKey("rotated-away".into()))
    );
    // A changed payload under the original signature.
    let t = k.sign("ES256", Some("p256"), &claims());
    let mut parts: Vec<&str> = t.split('.').collect();
    let forged = enc(&json!({"sub": "admin", "iss": "https://idp", "aud": "vmcp"}));
    parts[1] = &forged;
    let forged = parts.join(".");
    assert_eq!(
        parse(&forged).unwrap().verify(&set).err(),
        Some(JoseError::BadSignature)
    );
    // No kid with several keys: ambiguous.
    let t = k.sign("EdDSA", None, &claims());
    assert!(matches!(
        parse(&t).unwrap().verify(&set),
        Err(JoseError::UnknownKey(_))
    ));
    // No kid with exactly one key: that key.
    let one =
        KeySet::parse(&serde_json::to_vec(&json!({"keys": [k.jwks["keys"][4].clone()]})).unwrap())
            .unwrap();
    assert!(parse(&t).unwrap().verify(&one).is_ok());
}

#[test]
fn malformed_oversized_and_critical_tokens_are_refused() {
    for bad in ["", "abc", "a.b", "a.b.c.d", "!!.!!.!!", "e30.e30"] {
        assert_eq!(parse(bad).err(), Some(JoseError::NotAJwt), "{bad:?}");
    }
    // A header that is JSON but has no alg.
    let t = format!("{}.{}.", enc(&json!({"typ": "JWT"})), enc(&claims()));
    assert_eq!(parse(&t).err(), Some(JoseError::NotAJwt));
    let huge = format!(
        "{}.{}.x",
        enc(&json!({"alg": "RS256"})),
        "A".repeat(MAX_TOKEN_BYTES)
    );
    assert_eq!(parse(&huge).err(), Some(JoseError::TooLarge));
    let crit = format!(
        "{}.{}.eA",
        enc(&json!({"alg": "RS256", "crit": ["b64"], "b64": false})),
        enc(&claims())
    );
    assert!(matches!(parse(&crit), Err(JoseError::Critical(_))));
    // A payload that is not an object, correctly signed.
    let k = keys();
    let t = k.sign("EdDSA", Some("ed"), &json!(["not", "claims"]));
    assert_eq!(
        parse(&t).unwrap().verify(&k.set()).err(),
        Some(JoseError::NotAJwt)
    );
}

#[test]
fn a_key_set_that_is_not_one_is_an_error() {
    assert!(KeySet::parse(b"nope").is_err());
    assert!(KeySet::parse(b"{\"keys\": 5}").is_err());
    let set = KeySet::parse(
        b"{\"keys\": [{\"kty\": \"EC\", \"crv\": \"P-256\", \"x\": \"AA\", \"y\": \"AA\"}]}",
    )
    .unwrap();
    assert!(set.is_empty());
    assert_eq!(set.skipped, 1);
}

#[test]
fn rsa_keys_outside_2048_to_8192_bits_are_not_usable() {
    let rsa = |bytes: usize| {
        let mut n = vec![0xc5u8; bytes];
        n[0] = 0x80;
        json!({"kty": "RSA", "kid": format!("n{bytes}"), "n": b64u(&n), "e": "AQAB"})
    };
    // A leading zero byte does not make a modulus longer.
    let mut padded = vec![0u8; 1];
    padded.extend(vec![0xc5u8; 2048 / 8]);
    let doc = json!({"keys": [rsa(1024 / 8), rsa(2048 / 8), rsa(8192 / 8), rsa(8200 / 8),
        {"kty": "RSA", "kid": "padded", "n": b64u(&padded), "e": "AQAB"},
        {"kty": "RSA", "kid": "no-e", "n": b64u(&[0xc5u8; 256]), "e": ""}]});
    let set = KeySet::parse(&serde_json::to_vec(&doc).unwrap()).unwrap();
    assert!(
        set.has("n256") && set.has("n1024") && set.has("padded"),
        "{set:?}"
    );
    assert!(
        !set.has("n128") && !set.has("n1025") && !set.has("no-e"),
        "{set:?}"
    );
    assert_eq!(set.skipped, 3);
}
