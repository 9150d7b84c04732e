//! The credential each backend gets (`outgoingAuth`): nothing, a static header, or a token
//! exchanged (RFC 8693) for the caller's own. The caller's token itself never reaches a backend.
//!
//! Exchanged tokens are cached per subject token until shortly before they expire (a day at
//! most, whatever `expires_in` the endpoint answers), with one exchange in flight per subject
//! token: concurrent misses wait for it and take its outcome, a failure included (ToolHive
//! exchanges on every backend request). A failure is not cached: the next request tries again.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::error::AuthError;
use crate::fetch::{FetchPolicy, Fetcher};
use crate::identity::Identity;
use crate::secret::Secret;

/// An exchanged token is reused until this long before it expires.
const EXPIRY_SKEW: Duration = Duration::from_secs(30);
/// Lifetime assumed when the token endpoint does not say (`expires_in` absent or unreadable).
const DEFAULT_LIFETIME: Duration = Duration::from_secs(300);
/// Longest an exchanged token is cached, whatever the endpoint claims: `expires_in` is the token
/// endpoint's word, and `Instant + Duration` panics on overflow (u64::MAX seconds did).
const MAX_LIFETIME: Duration = Duration::from_secs(24 * 60 * 60);
/// Most cached exchanges per backend.
const CACHE_CAP: usize = 10_000;

const GRANT_TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ACCESS_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:access_token";

/// How one backend is authenticated.
#[derive(Debug, Clone, Default)]
pub enum OutgoingAuth {
    /// Nothing added (`unauthenticated`).
    #[default]
    None,
    /// A static header on every request (`header_injection`).
    Header {
        /// The header name.
        name: String,
        /// Its value.
        value: Secret,
    },
    /// A token exchanged for the caller's (`token_exchange`).
    TokenExchange(Arc<TokenExchange>),
}

impl OutgoingAuth {
    /// Whether the credential depends on who calls (so each caller's view must be discovered with
    /// its own credential, and backend sessions are not shared between callers).
    pub fn per_caller(&self) -> bool {
        matches!(self, OutgoingAuth::TokenExchange(_))
    }

    /// The secret values this credential puts on the wire for a caller with `token`: the injected
    /// header value, the client secret, and the caller's exchanged token if one is cached (so
    /// they can be kept out of audit lines).
    pub fn secrets(&self, token: Option<&Secret>) -> Vec<Secret> {
        match self {
            OutgoingAuth::None => Vec::new(),
            OutgoingAuth::Header { value, .. } => vec![value.clone()],
            OutgoingAuth::TokenExchange(x) => x
                .settings
                .client_secret
                .iter()
                .cloned()
                .chain(token.and_then(|t| x.cached(&key_of(t))))
                .collect(),
        }
    }

    /// The `Authorization` value (or other header) for a request made for `caller`; None when
    /// nothing is added. Per-caller strategies need a caller with a token.
    ///
    /// # Errors
    /// No caller token to exchange, or the exchange failed.
    pub async fn header_for(
        &self,
        caller: Option<&Identity>,
    ) -> Result<Option<(String, Secret)>, AuthError> {
        match self {
            OutgoingAuth::None => Ok(None),
            OutgoingAuth::Header { name, value } => Ok(Some((name.clone(), value.clone()))),
            OutgoingAuth::TokenExchange(x) => {
                let subject = caller.and_then(|c| c.token.as_ref()).ok_or_else(|| {
                    AuthError::InvalidToken(
                        "this backend needs the caller's token for exchange, and the request has none".into(),
                    )
                })?;
                let token = x.exchange(subject).await?;
                Ok(Some((
                    "authorization".into(),
                    Secret::new(format!("Bearer {}", token.expose())),
                )))
            }
        }
    }
}

/// `tokenExchange`, resolved.
#[derive(Debug, Clone, Default)]
pub struct ExchangeSettings {
    /// `tokenUrl`.
    pub token_url: String,
    /// `clientId`.
    pub client_id: Option<String>,
    /// `clientSecret` or the value of `clientSecretEnv`.
    pub client_secret: Option<Secret>,
    /// `audience`.
    pub audience: Option<String>,
    /// `scopes`, sent space-joined.
    pub scopes: Vec<String>,
    /// `subjectTokenType` as a URN (default the access-token type).
    pub subject_token_type: String,
    /// Who may be reached.
    pub fetch: FetchPolicy,
}

/// The full URN of a `subjectTokenType` as ToolHive accepts it (short names or URNs).
///
/// # Errors
/// An unknown type.
pub fn subject_token_type(value: Option<&str>) -> Result<String, String> {
    Ok(match value.unwrap_or("") {
        "" | "access_token" | "urn:ietf:params:oauth:token-type:access_token" => ACCESS_TOKEN_TYPE,
        "id_token" | "urn:ietf:params:oauth:token-type:id_token" => {
            "urn:ietf:params:oauth:token-type:id_token"
        }
        "jwt" | "urn:ietf:params:oauth:token-type:jwt" => "urn:ietf:params:oauth:token-type:jwt",
        other => {
            return Err(format!(
                "subjectTokenType {other:?} is not one of access_token, id_token, jwt (or their URNs)"
            ));
        }
    }
    .to_string())
}

type Key = [u8; 32];

/// One exchange, awaited by every request that needs it: all take its outcome. Should the request
/// running it go away, the next waiter runs it instead (OnceCell's initialisation is cancel-safe).
type InFlight = tokio::sync::OnceCell<Result<Secret, AuthError>>;

/// RFC 8693 token exchange for one backend, with its cache.
pub struct TokenExchange {
    settings: ExchangeSettings,
    fetcher: Fetcher,
    cache: Mutex<HashMap<Key, (Secret, Instant)>>,
    in_flight: Mutex<HashMap<Key, Arc<InFlight>>>,
    exchanges: AtomicU64,
    hits: AtomicU64,
}

impl std::fmt::Debug for TokenExchange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenExchange")
            .field("token_url", &self.settings.token_url)
            .field("audience", &self.settings.audience)
            .finish_non_exhaustive()
    }
}

fn key_of(token: &Secret) -> Key {
    ring::digest::digest(&ring::digest::SHA256, token.expose().as_bytes())
        .as_ref()
        .try_into()
        .unwrap_or([0; 32])
}

impl TokenExchange {
    /// An exchanger.
    ///
    /// # Errors
    /// When the token URL is refused by the fetch policy, or the policy cannot be honoured.
    pub fn new(settings: ExchangeSettings) -> Result<Self, AuthError> {
        let fetcher =
            Fetcher::new(settings.fetch.clone()).map_err(|e| AuthError::Config(e.to_string()))?;
        fetcher
            .check(&settings.token_url)
            .map_err(|e| AuthError::Config(format!("tokenUrl: {e}")))?;
        Ok(Self {
            settings,
            fetcher,
            cache: Mutex::new(HashMap::new()),
            in_flight: Mutex::new(HashMap::new()),
            exchanges: AtomicU64::new(0),
            hits: AtomicU64::new(0),
        })
    }

    /// (exchanges performed, cache hits) so far.
    pub fn counts(&self) -> (u64, u64) {
        (
            self.exchanges.load(Ordering::Relaxed),
            self.hits.load(Ordering::Relaxed),
        )
    }

    fn cached(&self, key: &Key) -> Option<Secret> {
        let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        let (token, until) = cache.get(key)?;
        (Instant::now() < *until).then(|| token.clone())
    }

    /// The backend token for `subject` (the caller's token): cached, or exchanged once however
    /// many callers ask at the same time.
    ///
    /// # Errors
    /// The token endpoint refused (the caller's token is not acceptable: 401 to the client is not
    /// right either, so the error names the exchange) or could not be reached.
    pub async fn exchange(&self, subject: &Secret) -> Result<Secret, AuthError> {
        let key = key_of(subject);
        if let Some(t) = self.cached(&key) {
            self.hits.fetch_add(1, Ordering::Relaxed);
            vmcp_telemetry::cache_lookup("token_exchange", true);
            return Ok(t);
        }
        let flight = self
            .in_flight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(key)
            .or_default()
            .clone();
        let mut ran = false;
        let outcome = flight
            .get_or_init(|| {
                ran = true;
                self.exchange_now(&key, subject)
            })
            .await
            .clone();
        if ran {
            vmcp_telemetry::cache_lookup("token_exchange", false);
        } else if outcome.is_ok() {
            self.hits.fetch_add(1, Ordering::Relaxed);
            vmcp_telemetry::cache_lookup("token_exchange", true);
        }
        // Done: the next miss starts afresh (after a failure, or once the token is due).
        let mut in_flight = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
        if in_flight.get(&key).is_some_and(|f| Arc::ptr_eq(f, &flight)) {
            in_flight.remove(&key);
        }
        outcome
    }

    /// Asks the token endpoint (unless a request that went before just did) and caches the answer.
    async fn exchange_now(&self, key: &Key, subject: &Secret) -> Result<Secret, AuthError> {
        if let Some(t) = self.cached(key) {
            return Ok(t);
        }
        let (token, lifetime) = self.request(subject).await?;
        let reuse = lifetime.saturating_sub(EXPIRY_SKEW.min(lifetime / 2));
        // Not cached rather than a panic, should a lifetime ever escape the clamp.
        let Some(until) = Instant::now().checked_add(reuse) else {
            return Ok(token);
        };
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() >= CACHE_CAP {
            let now = Instant::now();
            cache.retain(|_, (_, until)| *until > now);
            if cache.len() >= CACHE_CAP {
                cache.clear();
            }
        }
        cache.insert(*key, (token.clone(), until));
        Ok(token)
    }

    async fn request(&self, subject: &Secret) -> Result<(Secret, Duration), AuthError> {
        self.exchanges.fetch_add(1, Ordering::Relaxed);
        let s = &self.settings;
        let scope = s.scopes.join(" ");
        let mut form: Vec<(&str, &str)> = vec![
            ("grant_type", GRANT_TOKEN_EXCHANGE),
            ("subject_token", subject.expose()),
            ("subject_token_type", &s.subject_token_type),
            ("requested_token_type", ACCESS_TOKEN_TYPE),
        ];
        if let Some(aud) = &s.audience {
            form.push(("audience", aud));
        }
        if !scope.is_empty() {
            form.push(("scope", &scope));
        }
        let basic = match (&s.client_id, &s.client_secret) {
            (Some(id), Some(secret)) => Some((id.as_str(), secret.expose())),
            _ => None,
        };
        let (status, body) = self
            .fetcher
            .post_form(&s.token_url, &form, basic)
            .await
            .map_err(|e| AuthError::Unavailable(format!("token exchange failed: {e}")))?;
        let answer: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        if status != 200 {
            // RFC 6749 errors: `error` and perhaps `error_description` (never the tokens).
            let code = answer
                .get("error")
                .and_then(Value::as_str)
                .unwrap_or("unknown");
            let why = answer
                .get("error_description")
                .and_then(Value::as_str)
                .unwrap_or("");
            let e = format!("token exchange refused (HTTP {status}, {code}) {why}");
            return Err(if status >= 500 {
                AuthError::Unavailable(e)
            } else {
                AuthError::InvalidToken(e.trim_end().to_string())
            });
        }
        let token = answer
            .get("access_token")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| {
                AuthError::Unavailable("token exchange answered without an access_token".into())
            })?;
        Ok((Secret::new(token), lifetime(answer.get("expires_in"))))
    }
}

/// How long a token endpoint says its token lives, at most [`MAX_LIFETIME`]: RFC 6749 says a
/// number of seconds, some endpoints send it as a string or a fraction; a negative value means
/// already expired, and anything else unreadable gets [`DEFAULT_LIFETIME`].
fn lifetime(expires_in: Option<&Value>) -> Duration {
    let secs = match expires_in {
        Some(Value::Number(n)) => n.as_f64(),
        Some(Value::String(s)) => s.trim().parse::<f64>().ok(),
        _ => None,
    };
    match secs {
        // Clamped before converting: from_secs_f64 panics past u64::MAX seconds.
        Some(s) if s.is_finite() => {
            Duration::from_secs_f64(s.clamp(0.0, MAX_LIFETIME.as_secs_f64()))
        }
        _ => DEFAULT_LIFETIME,
    }
}

#[cfg(test)]
mod tests;
