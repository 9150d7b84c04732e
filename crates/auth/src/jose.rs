//! JSON Web Token signature verification against a JSON Web Key Set, by the `jsonwebtoken` crate
//! with ring (the binary's TLS crypto) as its provider (`jose/ring_provider.rs`). In front of
//! it, thin checks where the crate is more lenient than a gateway should be: a size cap before
//! anything is parsed, exactly three strict base64url parts with a JSON header, only asymmetric
//! algorithms (RS256/384/512, PS256/384/512, ES256, ES384, EdDSA), so `alg: none` and HMAC tokens
//! (the "public key as HMAC secret" confusion) are refused before any key is touched, any `crit`
//! refused (the crate accepts `b64`), and the key chosen by `kid`, of the token's algorithm
//! family and curve, with its own `alg`/`use` agreeing. Claims (`iss`, `aud`, `exp`, `nbf`) are
//! checked by the caller, with its own messages.

use std::collections::HashMap;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
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

/// RSA moduli accepted, in bits (ring's bounds: below is breakable, above is slow to verify).
const RSA_BITS: std::ops::RangeInclusive<usize> = 2048..=8192;

mod ring_provider;

/// One verification key: the crate's key, and what the thin checks need to know of it.
#[derive(Clone)]
struct Jwk {
    key: DecodingKey,
    family: Family,
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
        let (key, family) = match (
            k.get("kty").and_then(Value::as_str)?,
            k.get("crv").and_then(Value::as_str),
        ) {
            ("RSA", _) => {
                let (n, e) = (b64(k.get("n"))?, b64(k.get("e"))?);
                let leading = n.iter().take_while(|b| **b == 0).count();
                let bits = (n.len() - leading) * 8;
                if !RSA_BITS.contains(&bits) || e.is_empty() {
                    return None;
                }
                (DecodingKey::from_rsa_raw_components(&n, &e), Family::Rsa)
            }
            ("EC", Some(crv @ ("P-256" | "P-384"))) => {
                let (x, y) = (b64(k.get("x"))?, b64(k.get("y"))?);
                let (len, family) = if crv == "P-256" {
                    (32, Family::P256)
                } else {
                    (48, Family::P384)
                };
                if x.len() != len || y.len() != len {
                    return None;
                }
                // The crate reads an EC key as an uncompressed SEC1 point.
                let mut point = Vec::with_capacity(1 + 2 * len);
                point.push(4);
                point.extend_from_slice(&x);
                point.extend_from_slice(&y);
                (DecodingKey::from_ec_der(&point), family)
            }
            ("OKP", Some("Ed25519")) => {
                let x = b64(k.get("x"))?;
                if x.len() != 32 {
                    return None;
                }
                (DecodingKey::from_ed_der(&x), Family::Ed25519)
            }
            _ => return None,
        };
        Some(Jwk {
            key,
            family,
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
    token: &'t str,
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
    decode(s)?;
    let alg = header
        .get("alg")
        .and_then(Value::as_str)
        .ok_or(JoseError::NotAJwt)?
        .to_string();
    if accepted(&alg).is_none() {
        return Err(JoseError::Algorithm(alg));
    }
    if let Some(crit) = header.get("crit") {
        return Err(JoseError::Critical(crit.to_string()));
    }
    Ok(Unverified {
        token,
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

/// The accepted algorithms: the crate's name for each, and the key family it needs.
fn accepted(alg: &str) -> Option<(Algorithm, Family)> {
    Some(match alg {
        "RS256" => (Algorithm::RS256, Family::Rsa),
        "RS384" => (Algorithm::RS384, Family::Rsa),
        "RS512" => (Algorithm::RS512, Family::Rsa),
        "PS256" => (Algorithm::PS256, Family::Rsa),
        "PS384" => (Algorithm::PS384, Family::Rsa),
        "PS512" => (Algorithm::PS512, Family::Rsa),
        "ES256" => (Algorithm::ES256, Family::P256),
        "ES384" => (Algorithm::ES384, Family::P384),
        "EdDSA" => (Algorithm::EdDSA, Family::Ed25519),
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
        let (algorithm, family) =
            accepted(&self.alg).ok_or_else(|| JoseError::Algorithm(self.alg.clone()))?;
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
        if jwk.family != family || jwk.alg.as_deref().is_some_and(|a| a != self.alg) {
            return Err(mismatch());
        }
        // The signature only: the caller checks the claims, with its own messages.
        ring_provider::install();
        let mut validation = Validation::new(algorithm);
        validation.required_spec_claims.clear();
        validation.validate_exp = false;
        validation.validate_aud = false;
        match jsonwebtoken::decode::<Map<String, Value>>(self.token, &jwk.key, &validation) {
            Ok(data) => Ok(data.claims),
            Err(e) => Err(match e.kind() {
                ErrorKind::InvalidSignature => JoseError::BadSignature,
                ErrorKind::InvalidEcdsaKey
                | ErrorKind::InvalidEddsaKey
                | ErrorKind::InvalidRsaKey(_)
                | ErrorKind::InvalidKeyFormat
                | ErrorKind::InvalidAlgorithm => mismatch(),
                _ => JoseError::NotAJwt,
            }),
        }
    }
}

#[cfg(test)]
mod tests;
