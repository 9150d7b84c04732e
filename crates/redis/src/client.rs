//! Pooled connections used inline: a call takes an idle connection (or opens one), writes its
//! commands and reads the replies in the caller's own task, and puts the connection back. No
//! task sits between the caller and the socket, so a call costs one write, one read and no
//! cross-thread wake-ups. Idle connections are kept per thread: a socket is driven by the
//! runtime that opened it, and vmcp serves from one single-threaded runtime per core, so a
//! connection used from another thread's runtime would pay a wake-up across threads. Every call
//! is bounded by the configured timeout (a connection a call gave up on is closed, never
//! reused), and while Redis is unreachable calls fail at once (a reconnect is tried at most
//! every [`RETRY_AFTER`]), so an outage never stacks waits.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::resp::{self, Value};

/// How long calls fail fast after a failed connect before the next attempt.
pub const RETRY_AFTER: Duration = Duration::from_millis(500);

/// Idle connections kept for reuse per thread; a burst beyond this opens connections it then
/// closes.
const MAX_IDLE: usize = 64;

/// Where Redis is and how to talk to it.
#[derive(Debug, Clone)]
pub struct Config {
    /// `host:port`.
    pub address: String,
    /// The database `SELECT`ed on connect.
    pub db: u32,
    /// `AUTH` username (Redis 6 ACLs), if any.
    pub username: Option<String>,
    /// `AUTH` password, if any.
    pub password: Option<String>,
    /// Upper bound on a connect and on each call.
    pub timeout: Duration,
}

/// Why a call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RedisError {
    /// Redis could not be reached or did not answer in time; the caller may retry later.
    #[error("Redis at {address} is unavailable: {reason}")]
    Unavailable {
        /// `host:port`.
        address: String,
        /// What went wrong.
        reason: String,
    },
    /// Redis answered with an error (a script error, a wrong type, NOAUTH...).
    #[error("Redis refused the command: {0}")]
    Refused(String),
}

/// One open connection and what it has read past the last reply.
struct Conn {
    stream: TcpStream,
    buf: BytesMut,
}

/// A Redis client over a small pool of connections, opened on demand.
pub struct Client {
    config: Config,
    idle: Mutex<HashMap<ThreadId, Vec<Conn>>>,
    /// The last failed connect, while calls fail fast.
    down: Mutex<Option<(Instant, String)>>,
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
    /// [`RedisError::Unavailable`] when Redis cannot be reached in time, [`RedisError::Refused`]
    /// when it answers with an error.
    pub async fn call(&self, args: &[&[u8]]) -> Result<Value, RedisError> {
        let mut replies = self.pipeline(&[args]).await?;
        match replies.pop() {
            Some(Value::Error(e)) => Err(RedisError::Refused(e)),
            Some(v) => Ok(v),
            None => Err(self.unavailable("no reply")),
        }
    }

    /// Runs several commands in one write, returning their replies in order (error replies are
    /// [`Value::Error`] items, not a failure of the whole pipeline).
    ///
    /// # Errors
    /// [`RedisError::Unavailable`] when Redis cannot be reached or answer in time.
    pub async fn pipeline(&self, commands: &[&[&[u8]]]) -> Result<Vec<Value>, RedisError> {
        let mut frame = Vec::with_capacity(64);
        for args in commands {
            resp::encode(&mut frame, args);
        }
        let timeout = self.config.timeout;
        // Dropped on a timeout with the connection it holds: a half-read connection is closed.
        let attempt = async {
            let mut conn = self.take().await?;
            let replies = exchange(&mut conn, &frame, commands.len())
                .await
                .map_err(|reason| {
                    // The idle ones most likely died with it (a Redis restart): drop them all
                    // rather than fail one call per dead connection.
                    unpoisoned(&self.idle).clear();
                    tracing::warn!(address = %self.config.address, %reason, "Redis connection lost; the next call reconnects");
                    self.unavailable(&reason)
                })?;
            self.give_back(conn);
            Ok(replies)
        };
        let outcome = match tokio::time::timeout(timeout, attempt).await {
            Ok(r) => r,
            Err(_) => Err(self.unavailable(&format!("no answer within {timeout:?}"))),
        };
        self.up.store(outcome.is_ok(), Ordering::Relaxed);
        outcome
    }

    fn unavailable(&self, reason: &str) -> RedisError {
        RedisError::Unavailable {
            address: self.config.address.clone(),
            reason: reason.to_owned(),
        }
    }

    /// An idle connection, or a new one (unless a connect failed moments ago).
    async fn take(&self) -> Result<Conn, RedisError> {
        let thread = std::thread::current().id();
        let reused = unpoisoned(&self.idle).get_mut(&thread).and_then(Vec::pop);
        if let Some(conn) = reused {
            return Ok(conn);
        }
        if let Some((since, reason)) = &*unpoisoned(&self.down)
            && since.elapsed() < RETRY_AFTER
        {
            return Err(self.unavailable(reason));
        }
        match connect(&self.config).await {
            Ok(stream) => {
                let was_down = unpoisoned(&self.down).take().is_some();
                if was_down || !self.is_up() {
                    tracing::info!(address = %self.config.address, "connected to Redis");
                }
                Ok(Conn {
                    stream,
                    buf: BytesMut::with_capacity(4096),
                })
            }
            Err(reason) => {
                let mut down = unpoisoned(&self.down);
                if down.is_none() {
                    tracing::warn!(address = %self.config.address, %reason, "Redis unavailable; retrying on demand");
                }
                *down = Some((Instant::now(), reason.clone()));
                Err(self.unavailable(&reason))
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

/// Writes `frame` and reads `replies` replies on `conn`.
async fn exchange(conn: &mut Conn, frame: &[u8], replies: usize) -> Result<Vec<Value>, String> {
    conn.stream
        .write_all(frame)
        .await
        .map_err(|e| format!("write: {e}"))?;
    let mut out = Vec::with_capacity(replies);
    for _ in 0..replies {
        out.push(read_value(&mut conn.stream, &mut conn.buf).await?);
    }
    Ok(out)
}

/// Opens a connection and authenticates and selects the database on it.
pub(crate) async fn connect(config: &Config) -> Result<TcpStream, String> {
    let open = async {
        let mut stream = TcpStream::connect(&config.address)
            .await
            .map_err(|e| format!("connect: {e}"))?;
        let _ = stream.set_nodelay(true);
        let mut hello = Vec::new();
        let mut expected = 0;
        if let Some(password) = &config.password {
            match &config.username {
                Some(user) => {
                    resp::encode(&mut hello, &[b"AUTH", user.as_bytes(), password.as_bytes()])
                }
                None => resp::encode(&mut hello, &[b"AUTH", password.as_bytes()]),
            }
            expected += 1;
        }
        if config.db != 0 {
            resp::encode(&mut hello, &[b"SELECT", config.db.to_string().as_bytes()]);
            expected += 1;
        }
        resp::encode(&mut hello, &[b"PING"]);
        expected += 1;
        stream
            .write_all(&hello)
            .await
            .map_err(|e| format!("write: {e}"))?;
        let mut buf = BytesMut::with_capacity(256);
        for _ in 0..expected {
            match read_value(&mut stream, &mut buf).await? {
                // Never echo the server's words about AUTH: they can quote what was sent.
                Value::Error(e) if e.contains("AUTH") || e.contains("WRONGPASS") => {
                    return Err("authentication failed (check THV_SESSION_REDIS_PASSWORD)".into());
                }
                Value::Error(e) => return Err(e),
                _ => {}
            }
        }
        Ok(stream)
    };
    match tokio::time::timeout(config.timeout, open).await {
        Ok(r) => r,
        Err(_) => Err(format!("no connection within {:?}", config.timeout)),
    }
}

/// Reads one whole reply.
pub(crate) async fn read_value(
    stream: &mut TcpStream,
    buf: &mut BytesMut,
) -> Result<Value, String> {
    loop {
        if let Some(v) = resp::parse(buf).map_err(|e| e.to_string())? {
            return Ok(v);
        }
        if stream
            .read_buf(buf)
            .await
            .map_err(|e| format!("read: {e}"))?
            == 0
        {
            return Err("connection closed by Redis".into());
        }
    }
}
