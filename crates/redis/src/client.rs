//! [`Client`]: one connection per serving thread, shared by every call on that thread. The
//! `redis` crate's multiplexed connection hands its socket to a driver future; it runs as a task
//! on the thread's runtime, and the calls of the thread queue their commands to it, so the
//! commands of calls that are in flight together leave in one write and their replies come back
//! in one read. Measured against connections used inline by each call (the previous design,
//! `tools/fred-compare`, 32 concurrent callers on one thread, release): 2.1 µs of CPU per call
//! against 8.5 µs, with 0.03 writes per call against 1.0; sequential calls cost the same within
//! noise (31-34 µs, whole process). vmcp serves from one single-threaded runtime per core, so a
//! thread's connection is driven where its calls run.
//!
//! Every call is bounded by the configured timeout. A call that times out or fails drops its
//! thread's connection (stopping its driver, so the calls still waiting on it fail at once and
//! the next one reconnects), and while Redis is unreachable calls fail at once (a reconnect is
//! tried at most every [`RETRY_AFTER`]), so an outage never stacks waits.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use redis::aio::MultiplexedConnection;

use crate::bounded::{Budget, MAX_REPLY};
use crate::config::{Config, RedisError};
use crate::connect::{self, Failure};
use crate::value::Value;

/// How long calls fail fast after a failed connect before the next attempt.
pub const RETRY_AFTER: Duration = Duration::from_millis(500);

/// A thread's connection: the crate's handle (cloned by each call), its driver task, and its
/// reply bound.
struct Shared {
    connection: MultiplexedConnection,
    driver: tokio::task::JoinHandle<()>,
    budget: Budget,
    /// Tells it from its replacement, so a failed call drops only the one it used.
    id: u64,
}

/// A Redis client over one connection per thread, opened on demand.
pub struct Client {
    config: Config,
    shared: Mutex<HashMap<ThreadId, Shared>>,
    /// The last failed connect, while calls fail fast.
    down: Mutex<Option<(Instant, Failure)>>,
    /// Whether the last call reached Redis.
    up: AtomicBool,
    next_id: AtomicU64,
}

impl Client {
    /// A client; nothing is connected until the first call.
    pub fn new(config: Config) -> Self {
        Self {
            config,
            shared: Mutex::new(HashMap::new()),
            down: Mutex::new(None),
            up: AtomicBool::new(false),
            next_id: AtomicU64::new(0),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Whether the last call reached Redis.
    pub fn is_up(&self) -> bool {
        self.up.load(Ordering::Relaxed)
    }

    /// Runs one command.
    ///
    /// # Errors
    /// [`RedisError::Unavailable`] when Redis cannot be reached in time,
    /// [`RedisError::Rejected`] when it refuses this client's credentials or certificate,
    /// [`RedisError::Refused`] when it answers with an error.
    pub async fn call(&self, args: &[&[u8]]) -> Result<Value, RedisError> {
        let mut replies = self.pipeline(&[args]).await?;
        match replies.pop() {
            // Redis asks for credentials the configuration does not give (or ACLs changed).
            Some(Value::Error(e)) if e.starts_with("NOAUTH") || e.starts_with("WRONGPASS") => {
                Err(Failure::Rejected(connect::auth_failed(&self.config)).into_error(&self.config))
            }
            Some(Value::Error(e)) => Err(RedisError::Refused(e)),
            Some(v) => Ok(v),
            None => Err(self.unavailable("no reply")),
        }
    }

    /// Runs several commands in one write, returning their replies in order (error replies are
    /// [`Value::Error`] items, not a failure of the whole pipeline).
    ///
    /// # Errors
    /// [`RedisError::Unavailable`] when Redis cannot be reached or answer in time,
    /// [`RedisError::Rejected`] when it refuses this client's credentials or certificate.
    pub async fn pipeline(&self, commands: &[&[&[u8]]]) -> Result<Vec<Value>, RedisError> {
        if commands.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = redis::pipe();
        for args in commands {
            let mut cmd = redis::Cmd::new();
            for arg in *args {
                cmd.arg(*arg);
            }
            pipe.add_command(cmd);
        }
        // A connect is bounded by its own timeout, whose message names the stage it stalled in
        // (TCP, TLS, the Redis handshake); one outer bound racing it would hide that.
        let (mut connection, budget, id) = match self.connection().await {
            Ok(conn) => conn,
            Err(e) => {
                self.up.store(false, Ordering::Relaxed);
                return Err(e);
            }
        };
        // Counts what is read from now on: at most MAX_REPLY between two calls' starts.
        budget.reset();
        let timeout = self.config.timeout;
        let request = connection.send_packed_commands(&pipe, 0, commands.len());
        let outcome = match tokio::time::timeout(timeout, request).await {
            Ok(Ok(replies)) => Ok(replies.into_iter().map(Value::from).collect()),
            Ok(Err(e)) => {
                self.drop_connection(id);
                let reason = if budget.exceeded() {
                    format!("a reply larger than {} MiB", MAX_REPLY / (1024 * 1024))
                } else if let Some(tls) = budget.tls_failure() {
                    format!("TLS: {tls}")
                } else {
                    e.to_string()
                };
                tracing::warn!(address = %self.config.display_address(), %reason, "Redis connection lost; the next call reconnects");
                Err(self.unavailable(&reason))
            }
            Err(_) => {
                self.drop_connection(id);
                Err(self.unavailable(&format!("no answer within {timeout:?}")))
            }
        };
        self.up.store(outcome.is_ok(), Ordering::Relaxed);
        outcome
    }

    fn unavailable(&self, reason: &str) -> RedisError {
        Failure::Unreachable(reason.to_owned()).into_error(&self.config)
    }

    /// This thread's connection, or a new one (unless a connect failed moments ago).
    async fn connection(&self) -> Result<(MultiplexedConnection, Budget, u64), RedisError> {
        let thread = std::thread::current().id();
        if let Some(s) = unpoisoned(&self.shared).get(&thread)
            && !s.driver.is_finished()
        {
            return Ok((s.connection.clone(), s.budget.clone(), s.id));
        }
        if let Some((since, failure)) = &*unpoisoned(&self.down)
            && since.elapsed() < RETRY_AFTER
        {
            return Err(failure.clone().into_error(&self.config));
        }
        match connect::commands(&self.config).await {
            Ok((connection, driver, budget)) => {
                let was_down = unpoisoned(&self.down).take().is_some();
                if was_down || !self.is_up() {
                    tracing::info!(address = %self.config.display_address(), "connected to Redis");
                }
                let id = self.next_id.fetch_add(1, Ordering::Relaxed);
                let shared = Shared {
                    connection: connection.clone(),
                    driver: tokio::spawn(driver),
                    budget: budget.clone(),
                    id,
                };
                // Two calls that connected at once: the later one's connection is kept; the
                // other's driver ends when its last call is done with it.
                unpoisoned(&self.shared).insert(thread, shared);
                Ok((connection, budget, id))
            }
            Err(failure) => {
                let mut down = unpoisoned(&self.down);
                if down.is_none() {
                    tracing::warn!(address = %self.config.display_address(), reason = %failure.reason(), "Redis unavailable; retrying on demand");
                }
                *down = Some((Instant::now(), failure.clone()));
                Err(failure.into_error(&self.config))
            }
        }
    }

    /// Closes connection `id` if it is still its thread's (a broken or stalled connection).
    fn drop_connection(&self, id: u64) {
        let thread = std::thread::current().id();
        let mut shared = unpoisoned(&self.shared);
        if shared.get(&thread).is_some_and(|s| s.id == id)
            && let Some(gone) = shared.remove(&thread)
        {
            gone.driver.abort();
        }
    }
}

/// A lock that a panicked holder left poisoned still guards valid state here (a map of idle
/// connections, the last connect failure).
fn unpoisoned<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
