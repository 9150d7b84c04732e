//! The pin book in Redis, for replicas that share `sessionStorage: redis`: the book as one JSON
//! value at `<prefix>pins`, a revision counter at `<prefix>pins:rev` that every write bumps
//! (replicas poll it, not the book), and a lock at `<prefix>pins:lock` (SET NX with an expiry,
//! released only by its holder) around each read-modify-write.

use std::sync::Arc;
use std::time::Duration;

use vmcp_redis::{Client, Value};

use crate::pins::book::PinBook;

/// How long a writer may hold the lock before Redis drops it (a writer that died).
const LOCK_TTL_MS: &str = "10000";
/// How long a writer waits for the lock.
const LOCK_WAIT: Duration = Duration::from_secs(10);

/// Deletes the lock only if it is still ours.
const RELEASE: &str =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

/// The pin book at `<prefix>pins`.
#[derive(Clone)]
pub struct RedisPins {
    client: Arc<Client>,
    key: String,
}

impl RedisPins {
    /// The book under `prefix` (sessionStorage's `keyPrefix`).
    pub fn new(client: Arc<Client>, prefix: &str) -> Self {
        Self {
            client,
            key: format!("{prefix}pins"),
        }
    }

    /// The book's key.
    pub fn key(&self) -> &str {
        &self.key
    }

    fn rev_key(&self) -> String {
        format!("{}:rev", self.key)
    }

    pub(super) async fn version(&self) -> Result<Option<String>, String> {
        match self.call(&[b"GET", self.rev_key().as_bytes()]).await? {
            Value::Nil => Ok(None),
            v => Ok(v
                .as_bytes()
                .map(|b| String::from_utf8_lossy(b).into_owned())),
        }
    }

    pub(super) async fn read(&self) -> Result<PinBook, String> {
        match self.call(&[b"GET", self.key.as_bytes()]).await? {
            Value::Nil => Ok(PinBook::default()),
            Value::Data(bytes) => super::parse(&bytes, &format!("redis key {}", self.key)),
            other => Err(format!("redis key {}: unexpected {other:?}", self.key)),
        }
    }

    pub(super) async fn update<R>(
        &self,
        change: impl FnOnce(&mut PinBook) -> R,
    ) -> Result<(PinBook, R, Option<String>), String> {
        let lock_key = format!("{}:lock", self.key);
        let token = token();
        let deadline = tokio::time::Instant::now() + LOCK_WAIT;
        loop {
            let got = self
                .call(&[
                    b"SET",
                    lock_key.as_bytes(),
                    token.as_bytes(),
                    b"NX",
                    b"PX",
                    LOCK_TTL_MS.as_bytes(),
                ])
                .await?;
            if matches!(got, Value::Status(_)) {
                break;
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(format!(
                    "redis key {lock_key}: another writer held the pin book's lock for {LOCK_WAIT:?}"
                ));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let outcome = self.locked_update(change).await;
        let released = self
            .call(&[
                b"EVAL",
                RELEASE.as_bytes(),
                b"1",
                lock_key.as_bytes(),
                token.as_bytes(),
            ])
            .await;
        if let Err(e) = released {
            tracing::warn!(error = %e, "could not release the pin book's lock; it expires by itself");
        }
        outcome
    }

    async fn locked_update<R>(
        &self,
        change: impl FnOnce(&mut PinBook) -> R,
    ) -> Result<(PinBook, R, Option<String>), String> {
        let mut book = self.read().await?;
        let answer = change(&mut book);
        let text = serde_json::to_vec(&book).map_err(|e| e.to_string())?;
        let rev_key = self.rev_key();
        let replies = self
            .client
            .pipeline(&[
                &[b"SET", self.key.as_bytes(), &text],
                &[b"INCR", rev_key.as_bytes()],
            ])
            .await
            .map_err(|e| format!("redis: cannot write the pin book: {e}"))?;
        let rev = match replies.get(1) {
            Some(Value::Int(n)) => Some(n.to_string()),
            other => return Err(format!("redis: unexpected answer to INCR: {other:?}")),
        };
        Ok((book, answer, rev))
    }

    async fn call(&self, args: &[&[u8]]) -> Result<Value, String> {
        match self.client.call(args).await {
            Ok(Value::Error(e)) => Err(format!("redis: {e}")),
            Ok(v) => Ok(v),
            Err(e) => Err(format!("redis: {e}")),
        }
    }
}

/// A random lock token, so only its holder releases the lock.
fn token() -> String {
    let mut bytes = [0u8; 16];
    let _ = getrandom::fill(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
