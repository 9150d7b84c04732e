//! OpenID Connect bearer tokens: JWTs verified against the issuer's key set (found by discovery
//! or configured), and opaque tokens checked by RFC 7662 introspection.
//!
//! Keys are cached. A token signed with a key the cache does not have triggers one refresh, at
//! most once per [`MIN_REFRESH`] (a stream of made-up `kid`s cannot make the gateway hammer the
//! identity provider); the set is also refreshed when older than [`MAX_KEY_AGE`]. One refresh runs
//! at a time; other requests use the keys they have meanwhile. A validated token (signature and
//! claims, or an introspection answer) is remembered by its hash for at most [`VALIDATED_TTL`]
//! and never past its expiry, so a client's next request costs a hash, not a signature check
//! (31-74 µs) or an introspection round trip; a revoked key or token is honoured within that TTL.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

use crate::error::AuthError;
use crate::fetch::{FetchPolicy, Fetcher};
use crate::identity::Identity;
use crate::jose::{self, JoseError, KeySet};
use crate::secret::Secret;

/// Least time between two key-set fetches caused by unknown key ids.
pub(crate) const MIN_REFRESH: Duration = Duration::from_secs(10);
/// Key sets older than this are fetched again.
pub(crate) const MAX_KEY_AGE: Duration = Duration::from_secs(15 * 60);
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
}

struct Keys {
    set: Arc<KeySet>,
    fetched: Option<Instant>,
    jwks_url: Option<String>,
    last_attempt: Option<Instant>,
}

/// Validates bearer tokens for one issuer.
pub struct OidcValidator {
    settings: OidcSettings,
    fetcher: Fetcher,
    keys: RwLock<Keys>,
    refreshing: tokio::sync::Mutex<()>,
    validated: Mutex<HashMap<[u8; 32], (Identity, Instant)>>,
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
            keys: RwLock::new(Keys {
                set: Arc::new(KeySet::default()),
                fetched: None,
                jwks_url: settings.jwks_url.clone(),
                last_attempt: None,
            }),
            settings,
            fetcher,
            refreshing: tokio::sync::Mutex::new(()),
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
                let identity = match jose::parse(token) {
                    Ok(jwt) => {
                        let claims = self.verify(&jwt).await?;
                        self.check_claims(&claims, true)?;
                        identity_from(claims, token, &self.settings.issuer)
                    }
                    Err(JoseError::NotAJwt) if self.settings.introspection_url.is_some() => {
                        self.introspect(token).await?
                    }
                    Err(e) => return Err(AuthError::InvalidToken(e.to_string())),
                };
                self.remember(key, &identity);
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

    async fn verify(&self, jwt: &jose::Unverified<'_>) -> Result<Map<String, Value>, AuthError> {
        let (set, stale) = {
            let k = self.keys.read().unwrap_or_else(|p| p.into_inner());
            (
                k.set.clone(),
                k.fetched.is_none_or(|t| t.elapsed() > MAX_KEY_AGE),
            )
        };
        let unknown = jwt.kid.as_deref().is_some_and(|kid| !set.has(kid)) || set.is_empty();
        let set = if unknown || stale {
            self.refresh(unknown).await?.unwrap_or(set)
        } else {
            set
        };
        jwt.verify(&set)
            .map_err(|e| AuthError::InvalidToken(e.to_string()))
    }

    /// Fetches the key set again if allowed now; returns the new set, or None when the current
    /// one must do (another refresh is running, or the last one was too recent).
    async fn refresh(&self, needed: bool) -> Result<Option<Arc<KeySet>>, AuthError> {
        let guard = if needed {
            self.refreshing.lock().await
        } else {
            match self.refreshing.try_lock() {
                Ok(g) => g,
                Err(_) => return Ok(None),
            }
        };
        let (jwks_url, recent, current) = {
            let k = self.keys.read().unwrap_or_else(|p| p.into_inner());
            (
                k.jwks_url.clone(),
                k.last_attempt.is_some_and(|t| t.elapsed() < MIN_REFRESH),
                k.set.clone(),
            )
        };
        if recent {
            // Someone tried a moment ago (perhaps while we waited): use what they got.
            if current.is_empty() {
                return Err(AuthError::Unavailable(
                    "the issuer's signing keys could not be fetched; retrying shortly".into(),
                ));
            }
            return Ok(Some(current));
        }
        self.keys
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .last_attempt = Some(Instant::now());
        let fetched = async {
            let url = match jwks_url {
                Some(u) => u,
                None => self.discover().await?,
            };
            let doc = self.fetcher.get(&url).await.map_err(|e| e.to_string())?;
            let set = KeySet::parse(&doc).map_err(|e| format!("{url}: {e}"))?;
            Ok::<_, String>((url, set))
        }
        .await;
        // The new keys are stored before the next waiter may look (it holds the guard next).
        let outcome = match fetched {
            Ok((url, set)) => {
                tracing::debug!(issuer = %self.settings.issuer, keys = set.len(), skipped = set.skipped, "fetched the issuer's signing keys");
                let set = Arc::new(set);
                let mut k = self.keys.write().unwrap_or_else(|p| p.into_inner());
                k.set = set.clone();
                k.fetched = Some(Instant::now());
                k.jwks_url = Some(url);
                Ok(Some(set))
            }
            Err(why) => {
                tracing::warn!(issuer = %self.settings.issuer, error = %why, "cannot fetch the issuer's signing keys");
                if current.is_empty() {
                    Err(AuthError::Unavailable(format!(
                        "cannot fetch the issuer's signing keys: {why}"
                    )))
                } else {
                    Ok(None)
                }
            }
        };
        drop(guard);
        outcome
    }

    /// OIDC discovery: the `jwks_uri` of the issuer's configuration.
    async fn discover(&self) -> Result<String, String> {
        let url = format!(
            "{}/.well-known/openid-configuration",
            self.settings.issuer.trim_end_matches('/')
        );
        let doc = self.fetcher.get(&url).await.map_err(|e| e.to_string())?;
        let v: Value =
            serde_json::from_slice(&doc).map_err(|_| format!("{url}: not a JSON document"))?;
        if v.get("issuer").and_then(Value::as_str).map(str::trim)
            != Some(self.settings.issuer.trim())
        {
            return Err(format!("{url}: its issuer is not {}", self.settings.issuer));
        }
        v.get("jwks_uri")
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| format!("{url}: no jwks_uri"))
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
        let (identity, at) = cache.get(key)?;
        let fresh = at.elapsed() < VALIDATED_TTL
            && identity
                .claims
                .get("exp")
                .and_then(Value::as_f64)
                .is_some_and(|exp| now_secs() < exp);
        fresh.then(|| identity.clone())
    }

    fn remember(&self, key: [u8; 32], identity: &Identity) {
        let mut cache = self.validated.lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() >= VALIDATED_CACHE {
            cache.retain(|_, (_, at)| at.elapsed() < VALIDATED_TTL);
            if cache.len() >= VALIDATED_CACHE {
                cache.clear();
            }
        }
        cache.insert(key, (identity.clone(), Instant::now()));
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
