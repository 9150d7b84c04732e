//! [`Client`]: connections used inline, kept per serving thread. A call takes an idle
//! connection of its thread (or opens one), and its own task both waits for the reply and drives
//! the connection: the `redis` crate's multiplexed connection hands its socket to a driver
//! future, and instead of spawning that as a task, the call polls it next to its request. No
//! task sits between the caller and the socket. Measured against the crate's usual spawned
//! connection task (20,000 sequential GETEX, release build, 2 cores): on a multi-threaded
//! runtime the task costs about twice the CPU per call (30-31.5 µs against 16.5-17.5 µs) and a
//! third more latency; on a single-threaded runtime, as vmcp's serving threads are, the two are
//! even (11-13 µs). Inline is never worse, and a connection a call gave up on is simply dropped
//! with it. Idle connections are kept per thread: a socket is driven by the runtime that opened
//! it, and vmcp serves from one single-threaded runtime per core.
//!
//! Every call is bounded by the configured timeout (a connection a call gave up on is closed,
//! never reused), and while Redis is unreachable calls fail at once (a reconnect is tried at
//! most every [`RETRY_AFTER`]), so an outage never stacks waits.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use redis::aio::MultiplexedConnection;

use crate::bounded::{Budget, MAX_REPLY};
use crate::config::{Config, RedisError};
use crate::connect::{self, Driver, Failure};
use crate::value::Value;

/// How long calls fail fast after a failed connect before the next attempt.
pub const RETRY_AFTER: Duration = Duration::from_millis(500);

/// Idle connections kept for reuse per thread; a burst beyond this opens connections it then
/// closes.
const MAX_IDLE: usize = 64;

/// One open connection: the crate's handle, its driver, and its reply bound.
struct Conn {
    connection: MultiplexedConnection,
    driver: Driver,
    budget: Budget,
}

/// A Redis client over a small pool of connections, opened on demand.
pub struct Client {
    config: Config,
    idle: Mutex<HashMap<ThreadId, Vec<Conn>>>,
    /// The last failed connect, while calls fail fast.
    down: Mutex<Option<(Instant, Failure)>>,
    /// Whether the last call reached Redis.
    up: AtomicBool,
}

impl Client {
    /// A client; nothing is connected until the first call.
    pub fn new(config: Config) -> Self {
        Self {
            config,
            idle: Mutex::new(HashMap::new()),
            down: Mutex::new(None),
            up: AtomicBool::new(false),
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
        let mut conn = match self.take().await {
            Ok(conn) => conn,
            Err(e) => {
                self.up.store(false, Ordering::Relaxed);
                return Err(e);
            }
        };
        let timeout = self.config.timeout;
        // On a timeout the connection is dropped, not given back: it is half-read.
        let attempt = async {
            let (replies, alive) = exchange(&mut conn, &pipe, commands.len()).await;
            let replies = replies.map_err(|reason| {
                // The idle ones most likely died with it (a Redis restart): drop them all
                // rather than fail one call per dead connection.
                unpoisoned(&self.idle).clear();
                tracing::warn!(address = %self.config.display_address(), %reason, "Redis connection lost; the next call reconnects");
                self.unavailable(&reason)
            })?;
            Ok((replies, alive))
        };
        let outcome = match tokio::time::timeout(timeout, attempt).await {
            Ok(Ok((replies, alive))) => {
                if alive {
                    self.give_back(conn);
                }
                Ok(replies.into_iter().map(Value::from).collect())
            }
            Ok(Err(e)) => Err(e),
            Err(_) => Err(self.unavailable(&format!("no answer within {timeout:?}"))),
        };
        self.up.store(outcome.is_ok(), Ordering::Relaxed);
        outcome
    }

    fn unavailable(&self, reason: &str) -> RedisError {
        Failure::Unreachable(reason.to_owned()).into_error(&self.config)
    }

    /// An idle connection, or a new one (unless a connect failed moments ago).
    async fn take(&self) -> Result<Conn, RedisError> {
        let thread = std::thread::current().id();
        let reused = unpoisoned(&self.idle).get_mut(&thread).and_then(Vec::pop);
        if let Some(conn) = reused {
            return Ok(conn);
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
                Ok(Conn {
                    connection,
                    driver,
                    budget,
                })
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

    fn give_back(&self, conn: Conn) {
        let thread = std::thread::current().id();
        let mut idle = unpoisoned(&self.idle);
        let mine = idle.entry(thread).or_default();
        if mine.len() < MAX_IDLE {
            mine.push(conn);
        }
    }
}

/// A lock that a panicked holder left poisoned still guards valid state here (a map of idle
/// connections, the last connect failure).
fn unpoisoned<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Sends `pipe` and waits for its `n` replies, polling the connection's driver meanwhile; also
/// says whether the connection can be used again.
async fn exchange(
    conn: &mut Conn,
    pipe: &redis::Pipeline,
    n: usize,
) -> (Result<Vec<redis::Value>, String>, bool) {
    let Conn {
        connection,
        driver,
        budget,
    } = conn;
    budget.reset();
    let mut request = std::pin::pin!(connection.send_packed_commands(pipe, 0, n));
    let outcome = tokio::select! {
        biased;
        replies = &mut request => (replies.map_err(|e| e.to_string()), true),
        // The socket failed or closed: the replies may still have arrived just before.
        () = driver.as_mut() => {
            let last = std::future::poll_fn(|cx| std::task::Poll::Ready(request.as_mut().poll(cx))).await;
            match last {
                std::task::Poll::Ready(Ok(replies)) => (Ok(replies), false),
                _ => (Err("connection closed by Redis".to_owned()), false),
            }
        }
    };
    match outcome {
        (Err(_), alive) if budget.exceeded() => (
            Err(format!(
                "a reply larger than {} MiB",
                MAX_REPLY / (1024 * 1024)
            )),
            alive,
        ),
        (Err(reason), alive) => match budget.tls_failure() {
            Some(tls) => (Err(format!("TLS: {tls}")), alive),
            None => (Err(reason), alive),
        },
        ok => ok,
    }
}
