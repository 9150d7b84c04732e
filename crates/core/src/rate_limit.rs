//! Rate limiting: which token buckets a request draws from, and the [`BucketStore`] seam that
//! holds them (in memory now, [`MemoryStore`]; a shared store for several replicas later).
//!
//! ToolHive's semantics (docs/rate-limiting.md): a `tools/call` draws one token from the shared
//! bucket, the tool's shared bucket (when the tool is listed), the caller's bucket and the
//! caller's bucket for the tool; all of them or none. Unlike ToolHive, lists and
//! `server/discover` draw from the shared and the caller's bucket too ([`RateLimiter::request`]).
//! This module does not know where requests come from: the gateway and the edges call it.

mod lease;
mod memory;
mod redis;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;

pub use memory::{MAX_BUCKETS, MemoryStore};
pub use redis::RedisStore;

use crate::admission::Identity;
use crate::error::CoreError;
use crate::gateway::Gateway;

/// The subject every caller without one shares (ToolHive's anonymous identity is `anonymous`).
pub const ANONYMOUS: &str = "anonymous";

/// One bucket's size and refill speed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    /// The bucket size: how many requests may burst.
    pub max_tokens: u32,
    /// The time to refill from empty to `max_tokens` (at least 1 ns).
    pub refill_period: Duration,
}

impl Limit {
    /// How long a rejected caller should wait, as ToolHive computes it: the time one token takes
    /// to refill, rounded up to whole seconds, at least 1 s.
    pub fn retry_after(&self) -> Duration {
        let period = self.refill_period.as_nanos();
        let per_token = period.div_ceil(u128::from(self.max_tokens.max(1)));
        let secs = per_token.div_ceil(1_000_000_000).max(1);
        Duration::from_secs(u64::try_from(secs).unwrap_or(u64::MAX))
    }
}

/// The buckets of one listed tool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ToolLimits {
    /// One bucket for every caller of the tool.
    pub shared: Option<Limit>,
    /// One bucket per caller of the tool.
    pub per_user: Option<Limit>,
}

/// Every configured bucket (the `rateLimiting` section).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RateLimits {
    /// One bucket for the whole gateway.
    pub shared: Option<Limit>,
    /// One bucket per caller.
    pub per_user: Option<Limit>,
    /// Buckets per advertised tool name (a composite's name for a composite).
    pub tools: HashMap<String, ToolLimits>,
}

/// Which bucket: the store's key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum BucketKey {
    /// The gateway's shared bucket.
    Shared,
    /// A tool's shared bucket.
    Tool(String),
    /// A caller's bucket.
    User(String),
    /// A caller's bucket for one tool.
    UserTool {
        /// The advertised tool name.
        tool: String,
        /// The caller's subject.
        user: String,
    },
}

impl BucketKey {
    /// The bucket's kind for metrics, and how narrow it is (higher: narrower).
    fn kind(&self) -> (&'static str, u8) {
        match self {
            BucketKey::Shared => ("shared", 0),
            BucketKey::User(_) => ("per_user", 1),
            BucketKey::Tool(_) => ("tool_shared", 2),
            BucketKey::UserTool { .. } => ("tool_per_user", 3),
        }
    }
}

impl BucketKey {
    /// Whether the bucket belongs to one caller (there can be as many as there are callers).
    pub fn is_per_user(&self) -> bool {
        matches!(self, BucketKey::User(_) | BucketKey::UserTool { .. })
    }
}

/// One bucket a request must take a token from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Draw {
    /// The bucket.
    pub key: BucketKey,
    /// Its size and refill.
    pub limit: Limit,
}

/// A store's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// One token was taken from every bucket.
    Allowed,
    /// Some bucket had less than one token; nothing was taken.
    Rejected {
        /// The longest [`Limit::retry_after`] of the buckets that were empty.
        retry_after: Duration,
    },
}

/// A store that could not answer (a shared store's connection, say).
#[derive(Debug, Clone, thiserror::Error)]
#[error("rate-limit store: {0}")]
pub struct StoreError(pub String);

/// Where buckets live. A bucket never seen is full; a store may forget full buckets.
pub trait BucketStore: Send + Sync {
    /// Refills every bucket in `draws` to now, then takes one token from each if every one has
    /// a token, and none otherwise: atomically, so concurrent requests never overdraw.
    ///
    /// # Errors
    /// The store could not decide; the limiter then lets the request through (fail open, as
    /// ToolHive does when Redis is down).
    fn take<'a>(&'a self, draws: &'a [Draw]) -> BoxFuture<'a, Result<Verdict, StoreError>>;
}

/// The configured buckets over a store.
pub struct RateLimiter {
    limits: RateLimits,
    store: Arc<dyn BucketStore>,
    fail_closed: bool,
    /// When the last store failure was logged (one line per [`STORE_ERROR_LOG_EVERY`]).
    last_logged: std::sync::Mutex<Option<std::time::Instant>>,
}

/// A store outage is logged once per this interval, not once per request.
const STORE_ERROR_LOG_EVERY: Duration = Duration::from_secs(10);

impl RateLimiter {
    /// A limiter keeping its buckets in `store`.
    pub fn new(limits: RateLimits, store: Arc<dyn BucketStore>) -> Self {
        Self {
            limits,
            store,
            fail_closed: false,
            last_logged: std::sync::Mutex::new(None),
        }
    }

    /// Rejects requests (as rate-limited, retry after 1 s) when the store cannot answer, instead
    /// of letting them through.
    pub fn fail_closed(mut self, on: bool) -> Self {
        self.fail_closed = on;
        self
    }

    /// A limiter keeping its buckets in this process's memory (one instance).
    pub fn in_memory(limits: RateLimits) -> Self {
        Self::new(limits, Arc::new(MemoryStore::new()))
    }

    /// The configured buckets.
    pub fn limits(&self) -> &RateLimits {
        &self.limits
    }

    /// A `tools/call` of the advertised tool `tool` by `identity`.
    ///
    /// # Errors
    /// [`CoreError::RateLimited`] when some bucket is empty.
    pub async fn call(&self, identity: &Identity, tool: &str) -> Result<(), CoreError> {
        let user = subject(identity);
        let mut draws = self.global(user);
        if let Some(t) = self.limits.tools.get(tool) {
            if let Some(limit) = t.shared {
                draws.push(Draw {
                    key: BucketKey::Tool(tool.to_owned()),
                    limit,
                });
            }
            if let Some(limit) = t.per_user {
                draws.push(Draw {
                    key: BucketKey::UserTool {
                        tool: tool.to_owned(),
                        user: user.to_owned(),
                    },
                    limit,
                });
            }
        }
        self.take(&draws).await
    }

    /// A request that is not a tool call but fans out to backends or the catalog (a list,
    /// `server/discover`): the shared and the caller's bucket only.
    ///
    /// # Errors
    /// [`CoreError::RateLimited`] when either bucket is empty.
    pub async fn request(&self, identity: &Identity) -> Result<(), CoreError> {
        let draws = self.global(subject(identity));
        self.take(&draws).await
    }

    fn global(&self, user: &str) -> Vec<Draw> {
        let mut draws = Vec::with_capacity(4);
        if let Some(limit) = self.limits.shared {
            draws.push(Draw {
                key: BucketKey::Shared,
                limit,
            });
        }
        if let Some(limit) = self.limits.per_user {
            draws.push(Draw {
                key: BucketKey::User(user.to_owned()),
                limit,
            });
        }
        draws
    }

    async fn take(&self, draws: &[Draw]) -> Result<(), CoreError> {
        if draws.is_empty() {
            return Ok(());
        }
        // Labelled by the narrowest bucket the request drew from.
        let bucket = draws
            .iter()
            .map(|d| d.key.kind())
            .max_by_key(|k| k.1)
            .map_or("shared", |k| k.0);
        match self.store.take(draws).await {
            Ok(Verdict::Allowed) => {
                vmcp_telemetry::rate_limit_decision(true, bucket);
                Ok(())
            }
            Ok(Verdict::Rejected { retry_after }) => {
                vmcp_telemetry::rate_limit_decision(false, bucket);
                Err(CoreError::RateLimited { retry_after })
            }
            Err(e) => {
                vmcp_telemetry::rate_limit_store_error(!self.fail_closed);
                self.log_store_error(&e);
                if self.fail_closed {
                    Err(CoreError::RateLimited {
                        retry_after: Duration::from_secs(1),
                    })
                } else {
                    Ok(())
                }
            }
        }
    }
}

impl RateLimiter {
    fn log_store_error(&self, e: &StoreError) {
        let mut last = self.last_logged.lock().unwrap_or_else(|p| p.into_inner());
        if last.is_some_and(|t| t.elapsed() < STORE_ERROR_LOG_EVERY) {
            return;
        }
        *last = Some(std::time::Instant::now());
        if self.fail_closed {
            tracing::warn!(error = %e, "rate limits cannot be checked; rejecting requests (failClosed) until the store answers");
        } else {
            tracing::warn!(error = %e, "rate limits cannot be checked; letting requests through (fail open) until the store answers");
        }
    }
}

/// The caller's bucket name: its subject, or the one all anonymous callers share.
fn subject(identity: &Identity) -> &str {
    identity
        .subject
        .as_deref()
        .filter(|s| !s.is_empty())
        .unwrap_or(ANONYMOUS)
}

impl Gateway {
    /// Draws from the rate limits for a request that is not a tool call but fans out to the
    /// catalog or backends (a list, `server/discover`); the edges call it before doing any work.
    ///
    /// # Errors
    /// [`CoreError::RateLimited`] when the shared or the caller's bucket is empty.
    pub async fn rate_limit_request(&self, identity: &Identity) -> Result<(), CoreError> {
        // Cloned out so the options are not held across the store's await.
        let limiter = self.opts().rate_limiter.clone();
        match limiter {
            Some(l) => l.request(identity).await,
            None => Ok(()),
        }
    }

    /// Draws from the rate limits for a call of the advertised tool `tool`, once it is admitted
    /// (a denied or unknown call costs nothing, as in ToolHive, where authorization runs first).
    pub(crate) async fn rate_limit_call(
        &self,
        identity: &Identity,
        tool: &str,
    ) -> Result<(), CoreError> {
        let limiter = self.opts().rate_limiter.clone();
        match limiter {
            Some(l) => l.call(identity, tool).await,
            None => Ok(()),
        }
    }
}
