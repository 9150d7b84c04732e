//! JSON Web Token signature verification against a JSON Web Key Set, on `ring` (already in the
//! build for TLS). Only asymmetric algorithms are accepted — RS256/384/512, PS256/384/512, ES256,
//! ES384 and EdDSA (Ed25519) — so `alg: none` and HMAC tokens (including the "public key as HMAC
//! secret" confusion) are refused before any key is touched. The key must match the token's
//! algorithm family, and its own `alg`/`use`, when present, must agree.

use std::collections::HashMap;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::signature::{self, RsaPublicKeyComponents, UnparsedPublicKey};
use serde_json::{Map, Value};

/// Largest token accepted (bytes). Real access tokens are a few KiB.
pub const MAX_TOKEN_BYTES: usize = 16 * 1024;

/// Why a token was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JoseError {
    /// Not three base64url parts with JSON header and payload: perhaps an opaque token.
    #[error("token is not a JWT")]
    NotAJwt,
    /// Larger than [`MAX_TOKEN_BYTES`].
    #[error("token larger than {MAX_TOKEN_BYTES} bytes")]
    TooLarge,
    /// `alg` is none, HMAC or unknown.
    #[error("signing algorithm {0:?} is not accepted")]
    Algorithm(String),
    /// The header names a critical extension we do not implement.
    #[error("token requires unsupported extensions ({0})")]
    Critical(String),
    /// No key in the set has the token's `kid` (or, without a `kid`, no single candidate).
    #[error("no signing key {0:?} in the issuer's key set")]
    UnknownKey(String),
    /// The key does not fit the algorithm (type, curve, its own `alg` or `use`).
    #[error("key {0:?} cannot verify {1} signatures")]
    KeyMismatch(String, String),
    /// The signature does not verify.
    #[error("signature does not verify")]
    BadSignature,
}

/// One verification key.
#[derive(Clone)]
enum KeyMaterial {
    Rsa { n: Vec<u8>, e: Vec<u8> },
    P256(Vec<u8>),
    P384(Vec<u8>),
    Ed25519(Vec<u8>),
}

#[derive(Clone)]
struct Jwk {
    material: KeyMaterial,
    alg: Option<String>,
}

/// A parsed key set, by `kid`. Keys of unknown types, encryption keys and malformed keys are
/// skipped (counted in [`KeySet::skipped`]).
#[derive(Clone, Default)]
pub struct KeySet {
    keys: HashMap<String, Jwk>,
    /// How many keys of the document could not be used.
    pub skipped: usize,
}

impl std::fmt::Debug for KeySet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut kids: Vec<_> = self.keys.keys().collect();
        kids.sort();
        f.debug_struct("KeySet")
            .field("kids", &kids)
            .field("skipped", &self.skipped)
            .finish()
    }
}

fn b64(v: Option<&Value>) -> Option<Vec<u8>> {
    URL_SAFE_NO_PAD
        .decode(v?.as_str()?.trim_end_matches('='))
        .ok()
}

impl KeySet {
    /// Parses a JWKS document (`{"keys": [...]}`).
    ///
    /// # Errors
    /// When the document is not a JSON object with a `keys` array.
    pub fn parse(doc: &[u8]) -> Result<Self, String> {
        let v: Value = serde_json::from_slice(doc).map_err(|e| format!("not JSON: {e}"))?;
        let keys = v
            .get("keys")
            .and_then(Value::as_array)
            .ok_or("no \"keys\" array")?;
        let mut set = KeySet::default();
        for (i, k) in keys.iter().enumerate() {
            match Self::key(k) {
                Some(jwk) => {
                    let kid = k
                        .get("kid")
                        .and_then(Value::as_str)
                        .map_or_else(|| format!("#{i}"), str::to_string);
                    set.keys.insert(kid, jwk);
                }
                None => set.skipped += 1,
            }
        }
        Ok(set)
    }

    fn key(k: &Value) -> Option<Jwk> {
        if k.get("use")
            .and_then(Value::as_str)
            .is_some_and(|u| u != "sig")
        {
            return None;
        }
        let material = match (
            k.get("kty").and_then(Value::as_str)?,
            k.get("crv").and_then(Value::as_str),
        ) {
            ("RSA", _) => KeyMaterial::Rsa {
                n: b64(k.get("n"))?,
                e: b64(k.get("e"))?,
            },
            ("EC", Some(crv @ ("P-256" | "P-384"))) => {
                let (x, y) = (b64(k.get("x"))?, b64(k.get("y"))?);
                let len = if crv == "P-256" { 32 } else { 48 };
                if x.len() != len || y.len() != len {
                    return None;
                }
                let mut point = Vec::with_capacity(1 + 2 * len);
                point.push(4);
                point.extend_from_slice(&x);
                point.extend_from_slice(&y);
                if crv == "P-256" {
                    KeyMaterial::P256(point)
                } else {
                    KeyMaterial::P384(point)
                }
            }
            ("OKP", Some("Ed25519")) => {
                let x = b64(k.get("x"))?;
                (x.len() == 32).then_some(KeyMaterial::Ed25519(x))?
            }
            _ => return None,
        };
        Some(Jwk {
            material,
            alg: k.get("alg").and_then(Value::as_str).map(str::to_string),
        })
    }

    /// Whether the set has a key with this id.
    pub fn has(&self, kid: &str) -> bool {
        self.keys.contains_key(kid)
    }

    /// How many usable keys the set has.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether the set has no usable key.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// A token split into its parts, its header read, nothing verified yet.
pub struct Unverified<'t> {
    signed: &'t str,
    signature: Vec<u8>,
    payload: Vec<u8>,
    /// `alg` from the header.
    pub alg: String,
    /// `kid` from the header.
    pub kid: Option<String>,
}

/// Splits and decodes a compact JWS; checks the algorithm is one we accept.
///
/// # Errors
/// [`JoseError::NotAJwt`], [`JoseError::TooLarge`], [`JoseError::Algorithm`] or
/// [`JoseError::Critical`].
pub fn parse(token: &str) -> Result<Unverified<'_>, JoseError> {
    if token.len() > MAX_TOKEN_BYTES {
        return Err(JoseError::TooLarge);
    }
    let mut parts = token.split('.');
    let (Some(h), Some(p), Some(s), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(JoseError::NotAJwt);
    };
    let decode = |part: &str| URL_SAFE_NO_PAD.decode(part).map_err(|_| JoseError::NotAJwt);
    let header: Map<String, Value> =
        serde_json::from_slice(&decode(h)?).map_err(|_| JoseError::NotAJwt)?;
    let payload = decode(p)?;
    let signature = decode(s)?;
    let alg = header
        .get("alg")
        .and_then(Value::as_str)
        .ok_or(JoseError::NotAJwt)?
        .to_string();
    if family(&alg).is_none() {
        return Err(JoseError::Algorithm(alg));
    }
    if let Some(crit) = header.get("crit") {
        return Err(JoseError::Critical(crit.to_string()));
    }
    Ok(Unverified {
        signed: &token[..h.len() + 1 + p.len()],
        signature,
        payload,
        alg,
        kid: header
            .get("kid")
            .and_then(Value::as_str)
            .map(str::to_string),
    })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Family {
    Rsa,
    P256,
    P384,
    Ed25519,
}

fn family(alg: &str) -> Option<Family> {
    Some(match alg {
        "RS256" | "RS384" | "RS512" | "PS256" | "PS384" | "PS512" => Family::Rsa,
        "ES256" => Family::P256,
        "ES384" => Family::P384,
        "EdDSA" => Family::Ed25519,
        _ => return None,
    })
}

impl Unverified<'_> {
    /// The payload's `iat`, unverified: only to tell a key newer than the cached set from an
    /// unknown one, never to accept anything.
    pub fn issued_at(&self) -> Option<u64> {
        #[derive(serde::Deserialize)]
        struct Iat {
            iat: Option<u64>,
        }
        serde_json::from_slice::<Iat>(&self.payload).ok()?.iat
    }

    /// Verifies the signature with the set's key and returns the claims.
    ///
    /// # Errors
    /// [`JoseError::UnknownKey`], [`JoseError::KeyMismatch`], [`JoseError::BadSignature`], or
    /// [`JoseError::NotAJwt`] when the payload is not a JSON object.
    pub fn verify(&self, keys: &KeySet) -> Result<Map<String, Value>, JoseError> {
        let family = family(&self.alg).ok_or_else(|| JoseError::Algorithm(self.alg.clone()))?;
        let (kid, jwk) = match &self.kid {
            Some(kid) => (
                kid.clone(),
                keys.keys
                    .get(kid)
                    .ok_or_else(|| JoseError::UnknownKey(kid.clone()))?,
            ),
            // Without a kid, only an unambiguous set will do.
            None => match keys.keys.iter().collect::<Vec<_>>().as_slice() {
                [(kid, jwk)] => ((*kid).clone(), *jwk),
                _ => return Err(JoseError::UnknownKey(String::new())),
            },
        };
        let mismatch = || JoseError::KeyMismatch(kid.clone(), self.alg.clone());
        if jwk.alg.as_deref().is_some_and(|a| a != self.alg) {
            return Err(mismatch());
        }
        let msg = self.signed.as_bytes();
        let sig = &self.signature;
        let ok = match (&jwk.material, family) {
            (KeyMaterial::Rsa { n, e }, Family::Rsa) => {
                let params: &signature::RsaParameters = match self.alg.as_str() {
                    "RS256" => &signature::RSA_PKCS1_2048_8192_SHA256,
                    "RS384" => &signature::RSA_PKCS1_2048_8192_SHA384,
                    "RS512" => &signature::RSA_PKCS1_2048_8192_SHA512,
                    "PS256" => &signature::RSA_PSS_2048_8192_SHA256,
                    "PS384" => &signature::RSA_PSS_2048_8192_SHA384,
                    _ => &signature::RSA_PSS_2048_8192_SHA512,
                };
                RsaPublicKeyComponents { n, e }
                    .verify(params, msg, sig)
                    .is_ok()
            }
            (KeyMaterial::P256(point), Family::P256) => {
                UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, point)
                    .verify(msg, sig)
                    .is_ok()
            }
            (KeyMaterial::P384(point), Family::P384) => {
                UnparsedPublicKey::new(&signature::ECDSA_P384_SHA384_FIXED, point)
                    .verify(msg, sig)
                    .is_ok()
            }
            (KeyMaterial::Ed25519(x), Family::Ed25519) => {
                UnparsedPublicKey::new(&signature::ED25519, x)
                    .verify(msg, sig)
                    .is_ok()
            }
            _ => return Err(mismatch()),
        };
        if !ok {
            return Err(JoseError::BadSignature);
        }
        match serde_json::from_slice(&self.payload) {
            Ok(Value::Object(claims)) => Ok(claims),
            _ => Err(JoseError::NotAJwt),
        }
    }
}

#[cfg(test)]
mod tests;
