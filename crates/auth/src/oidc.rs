//! OpenID Connect bearer tokens: JWTs verified against the issuer's key set (found by discovery
//! or configured, kept current by [`keys`]), and opaque tokens checked by RFC 7662 introspection.
//!
//! A validated token (signature and claims, or an introspection answer) is remembered by its hash
//! for at most [`VALIDATED_TTL`] and never past its expiry, so a client's next request costs a
//! hash, not a signature check (31-74 µs) or an introspection round trip; a revoked token is
//! honoured within that TTL. A JWT is remembered only while the key set it was verified with is
//! current: a fetched set that differs, or keys past `jwksMaxStale`, send it through verification
//! again, so a key removed by the provider stops working at the next fetch, not a TTL later.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

use crate::error::AuthError;
use crate::fetch::{FetchPolicy, Fetcher};
use crate::identity::Identity;
use crate::jose::{self, JoseError};
use crate::secret::Secret;

mod keys;

use keys::{DEFAULT_MAX_STALE, KeyCache};

/// Longest an introspection answer is reused.
pub(crate) const VALIDATED_TTL: Duration = Duration::from_secs(60);
/// Most introspection answers kept.
const VALIDATED_CACHE: usize = 10_000;

/// `incomingAuth.oidc`, resolved.
#[derive(Debug, Clone, Default)]
pub struct OidcSettings {
    /// `issuer`: must equal the token's `iss`; discovery starts from it.
    pub issuer: String,
    /// `audience`: the token's `aud` must contain it.
    pub audience: String,
    /// `clientId`: introspection client authentication.
    pub client_id: Option<String>,
    /// The introspection client secret (`clientSecretEnv`, else `TOOLHIVE_OIDC_CLIENT_SECRET`).
    pub client_secret: Option<Secret>,
    /// `jwksUrl`: when set, discovery is skipped.
    pub jwks_url: Option<String>,
    /// `introspectionUrl`: opaque tokens are checked there.
    pub introspection_url: Option<String>,
    /// `scopes`: advertised; required of every token when `require_scopes`.
    pub scopes: Vec<String>,
    /// `requireScopes` (ours): refuse tokens lacking any of `scopes` with 403 insufficient_scope.
    pub require_scopes: bool,
    /// Who the gateway may fetch from.
    pub fetch: FetchPolicy,
    /// `jwksMaxStale` (ours): how long the cached keys stay usable while the key set cannot be
    /// fetched (None: one hour); past it every token is refused.
    pub jwks_max_stale: Option<Duration>,
}

/// A validated token's identity, when it was validated, and (for a JWT) the key-set generation
/// that verified it.
type Remembered = (Identity, Instant, Option<u64>);

/// Validates bearer tokens for one issuer.
pub struct OidcValidator {
    settings: OidcSettings,
    fetcher: Fetcher,
    keys: KeyCache,
    validated: Mutex<HashMap<[u8; 32], Remembered>>,
}

impl std::fmt::Debug for OidcValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OidcValidator")
            .field("issuer", &self.settings.issuer)
            .field("audience", &self.settings.audience)
            .finish_non_exhaustive()
    }
}

fn now_secs() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

impl OidcValidator {
    /// A validator; nothing is fetched until the first token arrives.
    ///
    /// # Errors
    /// When the fetch policy cannot be honoured (a CA bundle that is not PEM) or a configured URL
    /// is refused by it.
    pub fn new(settings: OidcSettings) -> Result<Self, AuthError> {
        let fetcher =
            Fetcher::new(settings.fetch.clone()).map_err(|e| AuthError::Config(e.to_string()))?;
        for url in [&settings.jwks_url, &settings.introspection_url]
            .into_iter()
            .flatten()
        {
            fetcher
                .check(url)
                .map_err(|e| AuthError::Config(e.to_string()))?;
        }
        if settings.jwks_url.is_none() {
            fetcher
                .check(&settings.issuer)
                .map_err(|e| AuthError::Config(format!("issuer: {e}")))?;
        }
        Ok(Self {
            keys: KeyCache::new(
                settings.issuer.clone(),
                settings.jwks_url.clone(),
                settings.jwks_max_stale.unwrap_or(DEFAULT_MAX_STALE),
                fetcher.clone(),
            ),
            settings,
            fetcher,
            validated: Mutex::new(HashMap::new()),
        })
    }

    /// The settings.
    pub fn settings(&self) -> &OidcSettings {
        &self.settings
    }

    /// Validates `token` and returns who it names.
    ///
    /// # Errors
    /// [`AuthError::InvalidToken`] with the reason, [`AuthError::InsufficientScope`], or
    /// [`AuthError::Unavailable`] when the identity provider cannot be reached to decide.
    pub async fn validate(&self, token: &str) -> Result<Identity, AuthError> {
        let key = token_key(token);
        let identity = match self.remembered(&key) {
            Some(identity) => identity,
            None => {
                let (identity, generation) = match jose::parse(token) {
                    Ok(jwt) => {
                        let keys = self
                            .keys
                            .for_kid(jwt.kid.as_deref(), || jwt.issued_at())
                            .await?;
                        let verified = match jwt.verify(&keys.set) {
                            // The key may have been replaced under the same kid.
                            Err(JoseError::BadSignature) => match self
                                .keys
                                .after_bad_signature(keys.generation, jwt.issued_at())
                                .await?
                            {
                                Some(fresh) => {
                                    jwt.verify(&fresh.set).map(|c| (c, fresh.generation))
                                }
                                None => Err(JoseError::BadSignature),
                            },
                            other => other.map(|c| (c, keys.generation)),
                        };
                        let (claims, generation) =
                            verified.map_err(|e| AuthError::InvalidToken(e.to_string()))?;
                        self.check_claims(&claims, true)?;
                        (
                            identity_from(claims, token, &self.settings.issuer),
                            Some(generation),
                        )
                    }
                    Err(JoseError::NotAJwt) if self.settings.introspection_url.is_some() => {
                        (self.introspect(token).await?, None)
                    }
                    Err(e) => return Err(AuthError::InvalidToken(e.to_string())),
                };
                self.remember(key, &identity, generation);
                identity
            }
        };
        if self.settings.require_scopes {
            let granted = identity.scopes();
            let missing: Vec<String> = self
                .settings
                .scopes
                .iter()
                .filter(|s| !granted.contains(&s.as_str()))
                .cloned()
                .collect();
            if !missing.is_empty() {
                return Err(AuthError::InsufficientScope(missing));
            }
        }
        Ok(identity)
    }

    fn check_claims(
        &self,
        claims: &Map<String, Value>,
        iss_required: bool,
    ) -> Result<(), AuthError> {
        let bad = |why: String| Err(AuthError::InvalidToken(why));
        match claims.get("iss").and_then(Value::as_str) {
            Some(iss) if iss.trim() == self.settings.issuer.trim() => {}
            Some(iss) => return bad(format!("issuer {iss:?} is not {:?}", self.settings.issuer)),
            None if iss_required => return bad("token has no issuer (iss)".into()),
            None => {}
        }
        let aud_ok = match claims.get("aud") {
            Some(Value::String(a)) => *a == self.settings.audience,
            Some(Value::Array(a)) => a.iter().any(|x| *x == self.settings.audience.as_str()),
            _ => false,
        };
        if !aud_ok {
            return bad(format!("audience is not {:?}", self.settings.audience));
        }
        let now = now_secs();
        match claims.get("exp").and_then(Value::as_f64) {
            Some(exp) if now < exp => {}
            Some(_) => return bad("token expired".into()),
            None => return bad("token has no expiry (exp)".into()),
        }
        if let Some(nbf) = claims.get("nbf")
            && nbf.as_f64().is_none_or(|nbf| now < nbf)
        {
            return bad("token not valid yet (nbf)".into());
        }
        match claims.get("sub").and_then(Value::as_str) {
            Some(s) if !s.is_empty() => Ok(()),
            _ => bad("token has no subject (sub)".into()),
        }
    }

    /// A token validated a moment ago, still before its expiry.
    fn remembered(&self, key: &[u8; 32]) -> Option<Identity> {
        let cache = self.validated.lock().unwrap_or_else(|p| p.into_inner());
        let (identity, at, generation) = cache.get(key)?;
        let fresh = at.elapsed() < VALIDATED_TTL
            && generation.is_none_or(|g| self.keys.still_current(g))
            && identity
                .claims
                .get("exp")
                .and_then(Value::as_f64)
                .is_some_and(|exp| now_secs() < exp);
        fresh.then(|| identity.clone())
    }

    fn remember(&self, key: [u8; 32], identity: &Identity, generation: Option<u64>) {
        let mut cache = self.validated.lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() >= VALIDATED_CACHE {
            cache.retain(|_, (_, at, _)| at.elapsed() < VALIDATED_TTL);
            if cache.len() >= VALIDATED_CACHE {
                cache.clear();
            }
        }
        cache.insert(key, (identity.clone(), Instant::now(), generation));
    }

    /// RFC 7662 introspection of an opaque token.
    async fn introspect(&self, token: &str) -> Result<Identity, AuthError> {
        let url = self
            .settings
            .introspection_url
            .as_deref()
            .unwrap_or_default();
        let basic = match (&self.settings.client_id, &self.settings.client_secret) {
            (Some(id), Some(secret)) => Some((id.as_str(), secret.expose())),
            _ => None,
        };
        let (status, body) = self
            .fetcher
            .post_form(
                url,
                &[("token", token), ("token_type_hint", "access_token")],
                basic,
            )
            .await
            .map_err(|e| AuthError::Unavailable(format!("token introspection failed: {e}")))?;
        match status {
            200 => {}
            // The endpoint refusing the gateway's own client credentials is a configuration
            // problem, not the caller's.
            401 | 403 => {
                return Err(AuthError::Unavailable(format!(
                    "token introspection refused the gateway's client credentials (HTTP {status})"
                )));
            }
            // Other refusals are about the token (oidc-provider answers 400 for tokens it will
            // not introspect).
            400..=499 => {
                return Err(AuthError::InvalidToken(format!(
                    "token introspection refused the token (HTTP {status})"
                )));
            }
            _ => {
                return Err(AuthError::Unavailable(format!(
                    "token introspection answered HTTP {status}"
                )));
            }
        }
        let claims = match serde_json::from_slice(&body) {
            Ok(Value::Object(m)) => m,
            _ => {
                return Err(AuthError::Unavailable(
                    "token introspection answered something that is not a JSON object".into(),
                ));
            }
        };
        if claims.get("active") != Some(&Value::Bool(true)) {
            return Err(AuthError::InvalidToken("token is not active".into()));
        }
        self.check_claims(&claims, false)?;
        let mut claims = claims;
        claims.remove("active");
        Ok(identity_from(claims, token, &self.settings.issuer))
    }
}

fn token_key(token: &str) -> [u8; 32] {
    ring::digest::digest(&ring::digest::SHA256, token.as_bytes())
        .as_ref()
        .try_into()
        .unwrap_or([0; 32])
}

/// The identity a validated token names; an introspection answer without `iss` is vouched for by
/// the configured issuer.
fn identity_from(claims: Map<String, Value>, token: &str, issuer: &str) -> Identity {
    Identity {
        subject: claims
            .get("sub")
            .and_then(Value::as_str)
            .map(str::to_string),
        issuer: Some(
            claims
                .get("iss")
                .and_then(Value::as_str)
                .unwrap_or(issuer)
                .to_string(),
        ),
        claims: Arc::new(claims),
        token: Some(Secret::new(token)),
    }
}

#[cfg(test)]
mod tests;
