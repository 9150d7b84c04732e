//! Fixture MCP servers for vmcp's integration tests, quickstart example and benchmarks.
//!
//! The `vmcp-fixture` binary serves a small, fixed MCP catalogue (tools, resources, a prompt,
//! completions) over stdio, Streamable HTTP or the legacy HTTP+SSE transport, and can
//! misbehave on purpose (`crash`, `garbage`, `rpc_error`, `forget_session`, `sleep`). It is
//! hand-rolled on tokio + axum + serde_json, not an MCP SDK, so that it stays small, fast and
//! free to break the protocol.
//!
//! This crate owns the fixture and the helpers to start it ([`fixture_bin`],
//! [`FixtureProcess`], [`serve_http_in_process`]). Its one vmcp dependency is `vmcp-embed`, for
//! the TEI-compatible embedding server ([`serve_embeddings_in_process`]) that serves a real
//! model to the optimizer's tests.
//!
//! The `vmcp-conformance-fixture` binary serves what the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`, run by `.ci/conformance.sh`) checks a server for,
//! over Streamable HTTP, including sampling and elicitation requests sent to the client
//! mid-call, to 2025-11-25 and 2026-07-28 clients alike ([`ConformanceCli`],
//! [`serve_conformance_in_process`]).
//!
//! Module map: `protocol` answers methods without knowing the transport; `stdio`, `http` and
//! `sse` are the three transports; `spawn` finds and starts the binary; `cli` is its command line;
//! `conformance` is the conformance fixture, served by the `http` transport.

mod cli;
mod conformance;
mod embedding;
mod events;
mod fault_proxy;
mod http;
mod otlp;
mod protocol;
mod redis_server;
mod redis_tls;
mod spawn;
mod sse;
mod stdio;

pub use cli::{Cli, Transport, run};
pub use conformance::{
    ConformanceCli, run_conformance, serve_conformance_in_process,
    serve_legacy_conformance_in_process,
};
pub use embedding::{EmbeddingFaults, EmbeddingServer, serve_embeddings_in_process};
pub use fault_proxy::{FaultMode, FaultProxy};
pub use http::serve_http_in_process;
pub use otlp::{OtlpReceiver, ReceivedSpan};
pub use protocol::METHOD_LOG_ENV;
pub use redis_server::RedisServer;
pub use redis_tls::{ClientCerts, RedisTlsServer};
pub use spawn::{FixtureProcess, fixture_bin, workspace_bin};
pub use sse::serve_sse_in_process;

/// What one fixture server offers and how its http transport behaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixtureOptions {
    /// `serverInfo.name`, `whoami`'s answer and part of resource URIs (default `fixture`).
    pub name: String,
    /// How many extra trivial tools `tool_0 .. tool_{N-1}` to offer (default 0).
    pub tools: usize,
    /// Offer resources (default true).
    pub resources: bool,
    /// Offer prompts (default true).
    pub prompts: bool,
    /// http: answer POSTs as one-event `text/event-stream` instead of JSON (default false).
    pub sse_responses: bool,
    /// http: no sessions at all (default false).
    pub stateless: bool,
    /// stdio: offer `talk_later`, which answers at once and sends a log message carrying its
    /// `tag` `ms` milliseconds later, outside any request (default false).
    pub late_talk: bool,
}

impl Default for FixtureOptions {
    fn default() -> Self {
        Self {
            name: "fixture".to_owned(),
            tools: 0,
            resources: true,
            prompts: true,
            sse_responses: false,
            stateless: false,
            late_talk: false,
        }
    }
}
