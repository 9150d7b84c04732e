//! A small Redis client for the state vmcp replicas share (sessions, the message bus between
//! replicas, rate-limit buckets): RESP2 over pooled connections used inline by the caller's task,
//! every call bounded ([`Client`]), and a reconnecting pub/sub subscriber ([`Subscription`]).
//!
//! Why not the `redis` crate: vmcp needs six commands, one script and one subscription, with
//! precise failure behaviour (every call bounded, fail fast while Redis is down, reconnect
//! without a restart). This is a few hundred lines with no new dependencies, tested against a
//! real `redis-server`.

mod client;
mod pubsub;
pub mod resp;

pub use client::{Client, Config, RETRY_AFTER, RedisError};
pub use pubsub::{Message, Subscription};
pub use resp::Value;
