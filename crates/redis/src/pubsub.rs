//! A subscriber that stays subscribed: it reconnects with backoff whenever the connection drops
//! and subscribes again, handing each message to a channel. A connection that goes silent is
//! asked: after [`HEALTH_EVERY`] without a message it is PINGed, and one that does not answer
//! within the timeout is replaced (a network path that died without a reset would otherwise
//! leave the subscriber waiting forever). Messages published while it was disconnected are
//! lost (Redis pub/sub keeps nothing), which is what its users plan for.
//!
//! The `redis` crate's pub/sub connection queues what it reads without a bound, so this loop
//! takes each message as it comes; when the consumer is a whole channel behind, the message is
//! dropped with a warning rather than queued in memory without end.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use tokio::sync::mpsc::{self, error::TrySendError};

use crate::bounded::MAX_REPLY;
use crate::config::Config;
use crate::connect;

/// Silence after which the subscriber checks its connection with a PING.
pub const HEALTH_EVERY: Duration = Duration::from_secs(5);

/// One published message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// The channel it was published on.
    pub channel: String,
    /// Its payload.
    pub payload: Bytes,
}

/// A running subscription; dropping it stops it.
pub struct Subscription {
    task: tokio::task::JoinHandle<()>,
    up: Arc<AtomicBool>,
    generation: Arc<AtomicU64>,
}

impl Subscription {
    /// Subscribes to `channels`, delivering messages to `out` until dropped or `out` closes.
    pub fn start(config: Config, channels: Vec<String>, out: mpsc::Sender<Message>) -> Self {
        let up = Arc::new(AtomicBool::new(false));
        let generation = Arc::new(AtomicU64::new(0));
        let seen = Seen {
            up: up.clone(),
            generation: generation.clone(),
        };
        let task = tokio::spawn(keep_subscribed(config, channels, out, seen));
        Self {
            task,
            up,
            generation,
        }
    }

    /// Whether the subscription is live right now.
    pub fn is_up(&self) -> bool {
        self.up.load(Ordering::Relaxed)
    }

    /// While the subscription is live, a number that stays the same exactly as long as no
    /// message can have been missed: it changes when the subscriber resubscribes and when it
    /// drops a message. None while it is down. What a consumer learned from the channel at one
    /// generation is still complete while the generation is unchanged.
    pub fn generation(&self) -> Option<u64> {
        let generation = self.generation.load(Ordering::Acquire);
        self.is_up().then_some(generation)
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.task.abort();
    }
}

const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// What the subscriber tells its owner: whether it is live, and its generation.
struct Seen {
    up: Arc<AtomicBool>,
    generation: Arc<AtomicU64>,
}

impl Seen {
    /// Something may have been missed: a new generation starts.
    fn lost(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
    }
}

async fn keep_subscribed(
    config: Config,
    channels: Vec<String>,
    out: mpsc::Sender<Message>,
    seen: Seen,
) {
    let mut backoff = Duration::from_millis(100);
    let mut warned = false;
    loop {
        let reason = match subscribe_once(&config, &channels, &out, &seen).await {
            Ok(()) => return, // the receiver is gone
            Err(reason) => reason,
        };
        if seen.up.swap(false, Ordering::Relaxed) {
            backoff = Duration::from_millis(100);
            warned = false;
        }
        if !warned {
            tracing::warn!(address = %config.display_address(), %reason, "Redis subscription down; resubscribing");
            warned = true;
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// Subscribes and forwards until the connection fails (Err) or `out` closes (Ok).
async fn subscribe_once(
    config: &Config,
    channels: &[String],
    out: &mpsc::Sender<Message>,
    seen: &Seen,
) -> Result<(), String> {
    let (pubsub, budget) = connect::pubsub(config)
        .await
        .map_err(|f| f.reason().to_owned())?;
    let (mut sink, mut stream) = pubsub.split();
    match tokio::time::timeout(config.timeout, sink.subscribe(channels)).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(format!("SUBSCRIBE: {e}")),
        Err(_) => return Err(format!("no SUBSCRIBE answer within {:?}", config.timeout)),
    }
    // Whatever was published while this subscriber was away is lost.
    seen.lost();
    seen.up.store(true, Ordering::Relaxed);
    tracing::info!(address = %config.display_address(), "subscribed to Redis channels");
    let mut dropped = 0u64;
    loop {
        match tokio::time::timeout(HEALTH_EVERY, stream.next()).await {
            Ok(Some(msg)) => {
                budget.reset();
                let message = Message {
                    channel: msg.get_channel_name().to_owned(),
                    payload: Bytes::copy_from_slice(msg.get_payload_bytes()),
                };
                match out.try_send(message) {
                    Ok(()) => {}
                    Err(TrySendError::Closed(_)) => return Ok(()),
                    Err(TrySendError::Full(_)) => {
                        seen.lost();
                        dropped += 1;
                        if dropped.is_power_of_two() {
                            tracing::warn!(address = %config.display_address(), dropped, "Redis messages dropped: their consumer is a whole channel behind");
                        }
                    }
                }
            }
            Ok(None) if budget.exceeded() => {
                return Err(format!(
                    "a message larger than {} MiB",
                    MAX_REPLY / (1024 * 1024)
                ));
            }
            Ok(None) => {
                return Err(match budget.tls_failure() {
                    Some(tls) => format!("TLS: {tls}"),
                    None => "connection closed by Redis".to_owned(),
                });
            }
            // Silence: is anyone still there?
            Err(_) => match tokio::time::timeout(config.timeout, sink.ping::<redis::Value>()).await
            {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => return Err(format!("PING: {e}")),
                Err(_) => {
                    return Err(format!("no answer to PING within {:?}", config.timeout));
                }
            },
        }
        if out.is_closed() {
            return Ok(());
        }
    }
}
