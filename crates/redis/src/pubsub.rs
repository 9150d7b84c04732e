//! A subscriber that stays subscribed: it reconnects with backoff whenever the connection drops
//! and subscribes again, handing each message to a channel. Messages published while it was
//! disconnected are lost (Redis pub/sub keeps nothing), which is what its users plan for.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;

use crate::client::{Config, connect, read_value};
use crate::resp::{self, Value};

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
}

impl Subscription {
    /// Subscribes to `channels`, delivering messages to `out` until dropped or `out` closes.
    pub fn start(config: Config, channels: Vec<String>, out: mpsc::Sender<Message>) -> Self {
        let up = Arc::new(AtomicBool::new(false));
        let task = tokio::spawn(keep_subscribed(config, channels, out, up.clone()));
        Self { task, up }
    }

    /// Whether the subscription is live right now.
    pub fn is_up(&self) -> bool {
        self.up.load(Ordering::Relaxed)
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.task.abort();
    }
}

const MAX_BACKOFF: Duration = Duration::from_secs(2);

async fn keep_subscribed(
    config: Config,
    channels: Vec<String>,
    out: mpsc::Sender<Message>,
    up: Arc<AtomicBool>,
) {
    let mut backoff = Duration::from_millis(100);
    let mut warned = false;
    loop {
        let reason = match subscribe_once(&config, &channels, &out, &up).await {
            Ok(()) => return, // the receiver is gone
            Err(reason) => reason,
        };
        if up.swap(false, Ordering::Relaxed) {
            backoff = Duration::from_millis(100);
            warned = false;
        }
        if !warned {
            tracing::warn!(address = %config.address, %reason, "Redis subscription down; resubscribing");
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
    up: &AtomicBool,
) -> Result<(), String> {
    let mut stream = connect(config).await?;
    let mut args: Vec<&[u8]> = vec![b"SUBSCRIBE"];
    args.extend(channels.iter().map(|c| c.as_bytes()));
    let mut frame = Vec::new();
    resp::encode(&mut frame, &args);
    stream
        .write_all(&frame)
        .await
        .map_err(|e| format!("write: {e}"))?;
    let mut buf = BytesMut::with_capacity(16 * 1024);
    let mut confirmed = 0;
    loop {
        let value = read_value(&mut stream, &mut buf).await?;
        let Value::Array(items) = value else {
            return Err(format!("unexpected reply on a subscription: {value:?}"));
        };
        let kind = items.first().and_then(Value::as_bytes).unwrap_or_default();
        match kind {
            b"subscribe" => {
                confirmed += 1;
                if confirmed == channels.len() {
                    up.store(true, Ordering::Relaxed);
                    tracing::info!(address = %config.address, "subscribed to Redis channels");
                }
            }
            b"message" => {
                let (Some(Value::Data(channel)), Some(Value::Data(payload))) =
                    (items.get(1), items.get(2))
                else {
                    continue;
                };
                let message = Message {
                    channel: String::from_utf8_lossy(channel).into_owned(),
                    payload: payload.clone(),
                };
                if out.send(message).await.is_err() {
                    return Ok(());
                }
            }
            _ => {}
        }
    }
}
