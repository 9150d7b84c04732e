//! Wire-level building blocks shared by every vmcp crate: JSON-RPC 2.0 envelopes, MCP revisions,
//! error codes, reserved `_meta` handling and Server-Sent Events framing.
//!
//! This crate does no I/O. Payloads stay `serde_json::Value` so fields we do not know pass through
//! untouched; only what routing needs (method, id, `params.name`/`uri`, `_meta`) is looked at.

pub mod codes;
pub mod cursor;
pub mod era;
pub mod jsonrpc;
pub mod mcp_name;
pub mod meta;
pub mod param_headers;
pub mod revision;
pub mod sse;
pub mod time;
pub mod unique;

pub use jsonrpc::{ErrorObject, Message, ParseError};
