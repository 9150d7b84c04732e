//! The issuer's signing keys as the validator sees them: found by discovery (or `jwksUrl`),
//! fetched, and kept current. Only this module fetches the key set; the validator asks it for
//! the keys to verify one token with.
//!
//! - A token whose `kid` is not in the set (or any token while the set is empty) makes the
//!   request wait for one refresh, at most once per [`MIN_REFRESH`]: a stream of made-up `kid`s
//!   cannot make the gateway hammer the identity provider. One refresh runs at a time; requests
//!   arriving meanwhile wait for it and use what it got. A `kid` still unknown is 503 (retry), not
//!   401 (drop the token), while the provider may have rotated to it: the last fetch failed, or
//!   the token's `iat` is not before the last successful fetch. Otherwise the key would be in
//!   the set, and the token is refused 401.
//! - The set is also refreshed when older than [`MAX_KEY_AGE`] (5 min, Envoy's default), by the
//!   request that notices; others use the keys they have meanwhile.
//! - A fetched set replaces the cached one, never merges with it: a key the provider removed
//!   stops verifying at the next successful fetch. A fetch that brings a different document
//!   starts a new generation, which also retires the validator's remembered tokens.
//! - A failed fetch keeps the cached set, but only for `max_stale` (`jwksMaxStale`, default
//!   [`DEFAULT_MAX_STALE`]) after the last success. Past that every token is refused (401) until a
//!   fetch succeeds: a provider that cannot be reached must not keep a removed (perhaps
//!   compromised) key valid forever. That is logged once per [`STALE_LOG_EVERY`], not per request.

use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::error::AuthError;
use crate::fetch::Fetcher;
use crate::jose::KeySet;
use crate::url_redact::redact_url;

/// Least time between two key-set fetches (after a failure, or caused by unknown key ids).
pub(crate) const MIN_REFRESH: Duration = Duration::from_secs(10);
/// Key sets older than this are fetched again.
pub(crate) const MAX_KEY_AGE: Duration = Duration::from_secs(5 * 60);
/// How far in the future a token's `iat` may be and still count as issued after the key set was
/// fetched (clock skew); a later `iat` is not believed.
const CLOCK_SKEW_SECS: u64 = 60;

/// Whether a token issued at `iat` (unverified) may be signed with a key newer than the set
/// fetched at `fetched_at`: issued at or after that fetch, and not implausibly in the future (a
/// forged `iat` must not buy a "retry" answer forever).
fn newer_than_set(iat: u64, fetched_at: Option<u64>) -> bool {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    fetched_at.is_some_and(|f| iat >= f) && iat <= now + CLOCK_SKEW_SECS
}

/// How long keys stay usable without a successful fetch, unless `jwksMaxStale` says otherwise.
pub(crate) const DEFAULT_MAX_STALE: Duration = Duration::from_secs(60 * 60);
/// Least time between two "refusing every token" log lines.
const STALE_LOG_EVERY: Duration = Duration::from_secs(60);

struct State {
    set: Arc<KeySet>,
    /// The last successful fetch.
    fetched: Option<Instant>,
    /// The same, in seconds since the epoch (to compare with a token's `iat`).
    fetched_at: Option<u64>,
    jwks_url: Option<String>,
    last_attempt: Option<Instant>,
    last_error: Option<String>,
    /// Of the last fetched document: an identical one keeps the generation.
    digest: Option<[u8; 32]>,
    generation: u64,
}

/// Keys to verify with, and the generation they belong to.
pub(super) struct Current {
    pub(super) set: Arc<KeySet>,
    pub(super) generation: u64,
}

/// One issuer's key set.
pub(super) struct KeyCache {
    issuer: String,
    max_stale: Duration,
    fetcher: Fetcher,
    state: RwLock<State>,
    refreshing: tokio::sync::Mutex<()>,
    /// When "refusing every token" was last logged; None while the keys are fresh enough.
    stale_logged: Mutex<Option<Instant>>,
}

impl KeyCache {
    /// A cache that fetches nothing until first asked.
    pub(super) fn new(
        issuer: String,
        jwks_url: Option<String>,
        max_stale: Duration,
        fetcher: Fetcher,
    ) -> Self {
        Self {
            issuer,
            max_stale,
            fetcher,
            state: RwLock::new(State {
                set: Arc::new(KeySet::default()),
                fetched: None,
                fetched_at: None,
                jwks_url,
                last_attempt: None,
                last_error: None,
                digest: None,
                generation: 0,
            }),
            refreshing: tokio::sync::Mutex::new(()),
            stale_logged: Mutex::new(None),
        }
    }

    /// The keys to verify a token naming `kid` with, refreshed first when the token needs it or
    /// the set is due.
    ///
    /// # Errors
    /// [`AuthError::Unavailable`] when no key set was ever fetched and none can be now, or the
    /// token's `kid` is unknown while the last fetch failed or `issued_at` (the token's
    /// unverified `iat`) is not before the last successful fetch;
    /// [`AuthError::InvalidToken`] when the last successful fetch is older than `max_stale`.
    pub(super) async fn for_kid(
        &self,
        kid: Option<&str>,
        issued_at: impl FnOnce() -> Option<u64>,
    ) -> Result<Current, AuthError> {
        let (unknown, old, expired) = {
            let s = self.read();
            let age = s.fetched.map(|t| t.elapsed());
            (
                s.set.is_empty() || kid.is_some_and(|kid| !s.set.has(kid)),
                age.is_none_or(|a| a > MAX_KEY_AGE),
                age.is_some_and(|a| a > self.max_stale),
            )
        };
        if unknown || old || expired {
            // Past max-stale the request waits for an attempt: it may bring the keys back.
            self.refresh(unknown || expired).await?;
        }
        let (current, age, last_error, missing, fetched_at) = {
            let s = self.read();
            let current = Current {
                set: s.set.clone(),
                generation: s.generation,
            };
            (
                current,
                s.fetched.map(|t| t.elapsed()),
                s.last_error.clone(),
                kid.filter(|kid| !s.set.has(kid)),
                s.fetched_at,
            )
        };
        if let Some(age) = age
            && age > self.max_stale
        {
            self.log_stale(age, last_error.as_deref());
            return Err(AuthError::InvalidToken(format!(
                "the issuer's signing keys could not be fetched for {}s, longer than jwksMaxStale ({}s) allows; no token is accepted until they are",
                age.as_secs(),
                self.max_stale.as_secs()
            )));
        }
        let Some(kid) = missing else {
            return Ok(current);
        };
        // The provider may have rotated to this key: the token is not known to be bad, so the
        // client must not be told to drop it (401) but to retry (503), when the keys cannot be
        // fetched, or when the token was issued after the set was (the key may be newer than the
        // set, and fetches are rate-limited). Issued before the set was fetched, the key would be
        // in it: 401, from the verification.
        let issuer = redact_url(&self.issuer);
        if let Some(why) = last_error {
            return Err(AuthError::Unavailable(format!(
                "the signing keys of {issuer} cannot be fetched now, and the token's key {kid:?} is not among those cached ({why}); retry shortly"
            )));
        }
        if issued_at().is_some_and(|iat| newer_than_set(iat, fetched_at)) {
            return Err(AuthError::Unavailable(format!(
                "the token's key {kid:?} is newer than the signing keys of {issuer} fetched {}s ago; they are fetched again within {}s; retry shortly",
                age.unwrap_or_default().as_secs(),
                MIN_REFRESH.as_secs()
            )));
        }
        Ok(current)
    }

    /// After a signature failed with a cached key: the provider may have replaced the key under
    /// the same `kid` (some regenerate keys on restart), which only matters for a token issued
    /// after the set was fetched. Then the set is fetched again (rate-limited as for an unknown
    /// `kid`): new keys to verify with once more, or 503 while the fetch is not allowed yet.
    /// None: the token is simply bad (401).
    ///
    /// # Errors
    /// [`AuthError::Unavailable`] while the keys cannot be refetched.
    pub(super) async fn after_bad_signature(
        &self,
        generation: u64,
        issued_at: Option<u64>,
    ) -> Result<Option<Current>, AuthError> {
        let Some(iat) = issued_at else {
            return Ok(None);
        };
        if !newer_than_set(iat, self.read().fetched_at) {
            return Ok(None);
        }
        self.refresh(true).await?;
        let s = self.read();
        if s.generation != generation {
            return Ok(Some(Current {
                set: s.set.clone(),
                generation: s.generation,
            }));
        }
        if newer_than_set(iat, s.fetched_at) {
            return Err(AuthError::Unavailable(format!(
                "the token's signature does not verify with the cached key of {}, and the token is newer than those keys; they are fetched again within {}s; retry shortly",
                redact_url(&self.issuer),
                MIN_REFRESH.as_secs()
            )));
        }
        Ok(None)
    }

    /// Whether something verified with keys of `generation` may still be trusted without
    /// verifying again: the set has not changed since and is not due for a fetch (so a
    /// remembered token cannot postpone the fetch that would retire its key).
    pub(super) fn still_current(&self, generation: u64) -> bool {
        let s = self.read();
        let due = MAX_KEY_AGE.min(self.max_stale);
        s.generation == generation && s.fetched.is_some_and(|t| t.elapsed() <= due)
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(|p| p.into_inner())
    }

    /// One line per [`STALE_LOG_EVERY`] while tokens are refused for stale keys.
    fn log_stale(&self, age: Duration, last_error: Option<&str>) {
        let mut logged = self.stale_logged.lock().unwrap_or_else(|p| p.into_inner());
        if logged.is_some_and(|t| t.elapsed() < STALE_LOG_EVERY) {
            return;
        }
        *logged = Some(Instant::now());
        tracing::error!(
            issuer = %self.issuer,
            stale_secs = age.as_secs(),
            max_stale_secs = self.max_stale.as_secs(),
            last_error = last_error.unwrap_or("none"),
            "refusing every token: the issuer's signing keys have not been fetched for longer than jwksMaxStale",
        );
    }

    /// Fetches the key set again if allowed now (`wait`: behind a refresh already running;
    /// otherwise skip it). Leaves the cached set as it was when the fetch fails.
    ///
    /// # Errors
    /// [`AuthError::Unavailable`] when the set is empty and could not be fetched.
    async fn refresh(&self, wait: bool) -> Result<(), AuthError> {
        let _guard = if wait {
            self.refreshing.lock().await
        } else {
            match self.refreshing.try_lock() {
                Ok(g) => g,
                Err(_) => return Ok(()),
            }
        };
        let (jwks_url, recent, empty) = {
            let s = self.read();
            (
                s.jwks_url.clone(),
                s.last_attempt.is_some_and(|t| t.elapsed() < MIN_REFRESH),
                s.set.is_empty(),
            )
        };
        if recent {
            // Someone tried a moment ago (perhaps while we waited): use what they got.
            if empty {
                return Err(AuthError::Unavailable(
                    "the issuer's signing keys could not be fetched; retrying shortly".into(),
                ));
            }
            return Ok(());
        }
        self.write().last_attempt = Some(Instant::now());
        let fetched = async {
            let url = match jwks_url {
                Some(u) => u,
                None => self.discover().await?,
            };
            let doc = self.fetcher.get(&url).await.map_err(|e| e.to_string())?;
            let set = KeySet::parse(&doc).map_err(|e| format!("{}: {e}", redact_url(&url)))?;
            Ok::<_, String>((url, set, digest(&doc)))
        }
        .await;
        // Stored while holding the guard, so the next waiter sees the outcome.
        match fetched {
            Ok((url, set, digest)) => {
                tracing::debug!(issuer = %self.issuer, keys = set.len(), skipped = set.skipped, "fetched the issuer's signing keys");
                let mut s = self.write();
                if s.digest != Some(digest) {
                    s.generation += 1;
                    s.digest = Some(digest);
                }
                s.set = Arc::new(set);
                s.fetched = Some(Instant::now());
                s.fetched_at = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .ok()
                    .map(|d| d.as_secs());
                s.jwks_url = Some(url);
                s.last_error = None;
                drop(s);
                if self
                    .stale_logged
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .take()
                    .is_some()
                {
                    tracing::warn!(issuer = %self.issuer, "fetched the issuer's signing keys again: tokens are accepted again");
                }
                Ok(())
            }
            Err(why) => {
                tracing::warn!(issuer = %self.issuer, error = %why, "cannot fetch the issuer's signing keys");
                self.write().last_error = Some(why.clone());
                if empty {
                    Err(AuthError::Unavailable(format!(
                        "cannot fetch the issuer's signing keys: {why}"
                    )))
                } else {
                    Ok(())
                }
            }
        }
    }

    /// OIDC discovery: the `jwks_uri` of the issuer's configuration.
    async fn discover(&self) -> Result<String, String> {
        let url = format!(
            "{}/.well-known/openid-configuration",
            self.issuer.trim_end_matches('/')
        );
        let doc = self.fetcher.get(&url).await.map_err(|e| e.to_string())?;
        let shown = redact_url(&url);
        let v: Value =
            serde_json::from_slice(&doc).map_err(|_| format!("{shown}: not a JSON document"))?;
        if v.get("issuer").and_then(Value::as_str).map(str::trim) != Some(self.issuer.trim()) {
            return Err(format!("{shown}: its issuer is not {}", self.issuer));
        }
        v.get("jwks_uri")
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| format!("{shown}: no jwks_uri"))
    }

    /// Moves every recorded instant `by` into the past, as if that much time had gone by.
    #[cfg(test)]
    pub(super) fn age_by(&self, by: Duration) {
        let back = |t: &mut Option<Instant>| {
            *t = t.map(|t| t.checked_sub(by).expect("the clock reaches back that far"));
        };
        let mut s = self.write();
        back(&mut s.fetched);
        back(&mut s.last_attempt);
    }
}

fn digest(doc: &[u8]) -> [u8; 32] {
    ring::digest::digest(&ring::digest::SHA256, doc)
        .as_ref()
        .try_into()
        .unwrap_or([0; 32])
}

#[cfg(test)]
mod tests;
