//! vmcp's access to the Redis that replicas share (sessions, the message bus between replicas,
//! rate-limit buckets), on the `redis` crate: connections used inline by the caller's task and
//! kept per serving thread, every call bounded ([`Client`]), a reconnecting pub/sub subscriber
//! that notices a silent connection ([`Subscription`]), TLS with a private CA and client
//! certificates ([`Tls`]), ACL usernames, and a bound on what one reply may make a replica
//! buffer ([`MAX_REPLY`]).
//!
//! The crate speaks RESP, runs the handshake (AUTH, SELECT) and pipelines; this one decides
//! when to connect, how long to wait, what to do while Redis is down, and keeps callers on a
//! five-shape [`Value`]. Module map: `config` (settings, errors), `tls`, `connect` (stream,
//! TLS, handshake), `bounded` (the reply bound), `client`, `pubsub`, `value`.

mod bounded;
mod client;
mod config;
mod connect;
mod pubsub;
mod tls;
mod value;

pub use bounded::MAX_REPLY;
pub use client::{Client, RETRY_AFTER};
pub use config::{Config, RedisError};
pub use pubsub::{HEALTH_EVERY, Message, Subscription};
pub use tls::{Tls, TlsError, TlsFiles};
pub use value::Value;
