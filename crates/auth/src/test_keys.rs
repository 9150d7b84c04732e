//! Test signing keys of every accepted kind, their JWKS, and a token signer (tests only).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::SystemRandom;
use ring::signature::{self as sig, EcdsaKeyPair, Ed25519KeyPair, KeyPair, RsaKeyPair};
use serde_json::{Value, json};

use crate::jose::KeySet;

pub(crate) const RSA_DER: &[u8] = include_bytes!("jose/test_rsa_key.der");
pub(crate) const RSA_JWK: &str = include_str!("jose/test_rsa_public.jwk.json");

pub(crate) fn enc(v: &Value) -> String {
    URL_SAFE_NO_PAD.encode(serde_json::to_vec(v).unwrap())
}

pub(crate) fn b64u(b: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(b)
}

/// Keys of every kind, their JWKS, and a signer per algorithm.
pub(crate) struct Keys {
    rsa: RsaKeyPair,
    p256: EcdsaKeyPair,
    p384: EcdsaKeyPair,
    ed: Ed25519KeyPair,
    pub(crate) jwks: Value,
}

pub(crate) fn keys() -> Keys {
    let rng = SystemRandom::new();
    let rsa = RsaKeyPair::from_der(RSA_DER).unwrap();
    let p256 = {
        let doc =
            EcdsaKeyPair::generate_pkcs8(&sig::ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        EcdsaKeyPair::from_pkcs8(&sig::ECDSA_P256_SHA256_FIXED_SIGNING, doc.as_ref(), &rng).unwrap()
    };
    let p384 = {
        let doc =
            EcdsaKeyPair::generate_pkcs8(&sig::ECDSA_P384_SHA384_FIXED_SIGNING, &rng).unwrap();
        EcdsaKeyPair::from_pkcs8(&sig::ECDSA_P384_SHA384_FIXED_SIGNING, doc.as_ref(), &rng).unwrap()
    };
    let ed =
        Ed25519KeyPair::from_pkcs8(Ed25519KeyPair::generate_pkcs8(&rng).unwrap().as_ref()).unwrap();
    let ec_jwk = |kid: &str, crv: &str, point: &[u8]| {
        let half = (point.len() - 1) / 2;
        json!({"kty": "EC", "crv": crv, "kid": kid, "use": "sig",
            "x": b64u(&point[1..1 + half]), "y": b64u(&point[1 + half..])})
    };
    let mut rsa_jwk: Value = serde_json::from_str(RSA_JWK).unwrap();
    rsa_jwk["kid"] = json!("rsa");
    let mut rsa_ps = rsa_jwk.clone();
    rsa_ps["kid"] = json!("rsa-ps");
    rsa_ps["alg"] = json!("PS256");
    let jwks = json!({"keys": [
        rsa_jwk,
        rsa_ps,
        ec_jwk("p256", "P-256", p256.public_key().as_ref()),
        ec_jwk("p384", "P-384", p384.public_key().as_ref()),
        {"kty": "OKP", "crv": "Ed25519", "kid": "ed", "x": b64u(ed.public_key().as_ref())},
        {"kty": "oct", "kid": "hmac", "k": b64u(b"shared")},
        {"kty": "RSA", "kid": "enc", "use": "enc", "n": "AQAB", "e": "AQAB"},
    ]});
    Keys {
        rsa,
        p256,
        p384,
        ed,
        jwks,
    }
}

impl Keys {
    pub(crate) fn set(&self) -> KeySet {
        KeySet::parse(&serde_json::to_vec(&self.jwks).unwrap()).unwrap()
    }

    pub(crate) fn sign(&self, alg: &str, kid: Option<&str>, claims: &Value) -> String {
        let mut header = json!({"alg": alg, "typ": "JWT"});
        if let Some(kid) = kid {
            header["kid"] = json!(kid);
        }
        let signed = format!("{}.{}", enc(&header), enc(claims));
        let rng = SystemRandom::new();
        let s = match alg {
            "RS256" | "RS384" | "RS512" | "PS256" | "PS384" | "PS512" => {
                let pad: &dyn sig::RsaEncoding = match alg {
                    "RS256" => &sig::RSA_PKCS1_SHA256,
                    "RS384" => &sig::RSA_PKCS1_SHA384,
                    "RS512" => &sig::RSA_PKCS1_SHA512,
                    "PS256" => &sig::RSA_PSS_SHA256,
                    "PS384" => &sig::RSA_PSS_SHA384,
                    _ => &sig::RSA_PSS_SHA512,
                };
                let mut out = vec![0; self.rsa.public().modulus_len()];
                self.rsa
                    .sign(pad, &rng, signed.as_bytes(), &mut out)
                    .unwrap();
                out
            }
            "ES256" => self
                .p256
                .sign(&rng, signed.as_bytes())
                .unwrap()
                .as_ref()
                .to_vec(),
            "ES384" => self
                .p384
                .sign(&rng, signed.as_bytes())
                .unwrap()
                .as_ref()
                .to_vec(),
            "EdDSA" => self.ed.sign(signed.as_bytes()).as_ref().to_vec(),
            _ => b"not a signature".to_vec(),
        };
        format!("{signed}.{}", b64u(&s))
    }
}
