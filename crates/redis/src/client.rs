//! One multiplexed connection shared by every caller: commands are written as they come and
//! replies matched to them in order, so a request never waits for a connection of its own.
//! Every call is bounded by the configured timeout, and while Redis is unreachable calls fail at
//! once (a reconnect is tried at most every [`RETRY_AFTER`]), so an outage never stacks waits.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::BytesMut;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};

use crate::resp::{self, Value};

/// How long calls fail fast after a failed connect before the next attempt.
pub const RETRY_AFTER: Duration = Duration::from_millis(500);

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

struct Job {
    frame: Vec<u8>,
    replies: usize,
    done: oneshot::Sender<Vec<Value>>,
}

struct Live {
    jobs: mpsc::Sender<Job>,
    alive: Arc<AtomicBool>,
}

enum Link {
    Up(Live),
    Down { since: Instant, reason: String },
    Never,
}

/// A Redis client over one connection, reconnected on demand.
pub struct Client {
    config: Config,
    link: Mutex<Link>,
    connecting: tokio::sync::Mutex<()>,
}

impl Client {
    /// A client; nothing is connected until the first call.
    pub fn new(config: Config) -> Self {
        Self {
            config,
            link: Mutex::new(Link::Never),
            connecting: tokio::sync::Mutex::new(()),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Whether the connection is up (as far as the last call knows).
    pub fn is_up(&self) -> bool {
        matches!(&*self.lock(), Link::Up(l) if l.alive.load(Ordering::Relaxed))
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
        let (done, rx) = oneshot::channel();
        let job = Job {
            frame,
            replies: commands.len(),
            done,
        };
        let timeout = self.config.timeout;
        let attempt = async {
            let jobs = self.sender().await?;
            jobs.send(job)
                .await
                .map_err(|_| self.unavailable("connection closed"))?;
            rx.await.map_err(|_| self.unavailable("connection lost"))
        };
        match tokio::time::timeout(timeout, attempt).await {
            Ok(r) => r,
            Err(_) => Err(self.unavailable(&format!("no answer within {timeout:?}"))),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Link> {
        self.link.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn unavailable(&self, reason: &str) -> RedisError {
        RedisError::Unavailable {
            address: self.config.address.clone(),
            reason: reason.to_owned(),
        }
    }

    /// The live connection's queue, connecting when there is none (one connect at a time).
    async fn sender(&self) -> Result<mpsc::Sender<Job>, RedisError> {
        if let Some(jobs) = self.fast_path()? {
            return Ok(jobs);
        }
        let _one = self.connecting.lock().await;
        if let Some(jobs) = self.fast_path()? {
            return Ok(jobs);
        }
        match connect(&self.config).await {
            Ok(stream) => {
                let (jobs, rx) = mpsc::channel(1024);
                let alive = Arc::new(AtomicBool::new(true));
                tokio::spawn(run(stream, rx, alive.clone()));
                *self.lock() = Link::Up(Live {
                    jobs: jobs.clone(),
                    alive,
                });
                tracing::info!(address = %self.config.address, "connected to Redis");
                Ok(jobs)
            }
            Err(reason) => {
                let first = !matches!(&*self.lock(), Link::Down { .. });
                if first {
                    tracing::warn!(address = %self.config.address, %reason, "Redis unavailable; retrying on demand");
                }
                *self.lock() = Link::Down {
                    since: Instant::now(),
                    reason: reason.clone(),
                };
                Err(self.unavailable(&reason))
            }
        }
    }

    /// The live queue; an error while a recent connect failure stands; None: connect now.
    fn fast_path(&self) -> Result<Option<mpsc::Sender<Job>>, RedisError> {
        match &*self.lock() {
            Link::Up(l) if l.alive.load(Ordering::Relaxed) => Ok(Some(l.jobs.clone())),
            Link::Down { since, reason } if since.elapsed() < RETRY_AFTER => {
                Err(self.unavailable(reason))
            }
            _ => Ok(None),
        }
    }
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

struct Waiting {
    replies: usize,
    got: Vec<Value>,
    done: oneshot::Sender<Vec<Value>>,
}

/// Owns the connection: writes jobs in arrival order and hands replies back in the same order.
/// When the connection fails, every waiting caller's channel is dropped ("connection lost").
async fn run(mut stream: TcpStream, mut jobs: mpsc::Receiver<Job>, alive: Arc<AtomicBool>) {
    let mut waiting: VecDeque<Waiting> = VecDeque::new();
    let mut buf = BytesMut::with_capacity(16 * 1024);
    let mut out = Vec::with_capacity(16 * 1024);
    let reason = 'conn: loop {
        tokio::select! {
            job = jobs.recv() => {
                let Some(job) = job else { break 'conn "client dropped".to_owned() };
                // Coalesce what is already queued into one write.
                out.clear();
                let mut next = Some(job);
                while let Some(job) = next {
                    out.extend_from_slice(&job.frame);
                    waiting.push_back(Waiting { replies: job.replies, got: Vec::with_capacity(job.replies), done: job.done });
                    next = if out.len() < 64 * 1024 { jobs.try_recv().ok() } else { None };
                }
                if let Err(e) = stream.write_all(&out).await {
                    break 'conn format!("write: {e}");
                }
            }
            read = stream.read_buf(&mut buf) => {
                match read {
                    Ok(0) => break 'conn "connection closed by Redis".to_owned(),
                    Err(e) => break 'conn format!("read: {e}"),
                    Ok(_) => {}
                }
                loop {
                    match resp::parse(&mut buf) {
                        Ok(Some(v)) => {
                            let Some(front) = waiting.front_mut() else {
                                break 'conn "a reply nobody asked for".to_owned();
                            };
                            front.got.push(v);
                            if front.got.len() == front.replies
                                && let Some(w) = waiting.pop_front()
                            {
                                let _ = w.done.send(w.got);
                            }
                        }
                        Ok(None) => break,
                        Err(e) => break 'conn e.to_string(),
                    }
                }
            }
        }
    };
    alive.store(false, Ordering::Relaxed);
    if reason != "client dropped" {
        tracing::warn!(%reason, "Redis connection lost; the next call reconnects");
    }
}
