//! The conformance fixture: exactly what the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`, server mode) checks a server for — its tools,
//! resources, prompts and completions, logging, progress, and sampling and elicitation
//! requests sent to the client mid-call, a stream closed mid-call and resumed (SEP-1699) — over
//! Streamable HTTP with every request answered on its own SSE stream.
//!
//! Owns dispatch and per-session state (client capabilities, log level); each
//! capability's catalogue lives in its own module, talking back to the client in `exchange`,
//! the Host/Origin/version checks in `guard`, the command line in `cli`; the transport is
//! `crate::http`.

mod cli;
mod completion;
mod content;
mod elicitation;
mod exchange;
mod guard;
mod prompts;
mod resources;
mod tools;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::Router;
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use crate::http::{Call, Handler, Replies, handler_router, serve_in_process};
use crate::protocol::rpc::{Incoming, RpcError, classify, failure, str_param, success};
use crate::protocol::{LOG_LEVELS, Outcome, PROTOCOL_VERSIONS};
pub use cli::{ConformanceCli, run_conformance};
use exchange::{Exchange, Peer};
use guard::AllowedHosts;

/// `serverInfo.name` of the conformance fixture.
const SERVER_NAME: &str = "vmcp-conformance-fixture";

/// Runs the conformance fixture inside this process on `127.0.0.1:0`.
///
/// Returns the endpoint URL (`http://127.0.0.1:PORT/mcp`) and the server task; abort the task
/// to stop the server. Needs a tokio runtime.
///
/// # Panics
///
/// If no local port can be bound.
pub async fn serve_conformance_in_process() -> (String, JoinHandle<()>) {
    serve_in_process(router(AllowedHosts::local_and([])), "/mcp").await
}

/// The `/mcp` router of the conformance fixture, refusing hosts outside `allowed`.
fn router(allowed: AllowedHosts) -> Router {
    handler_router(Conformance::default(), Replies::SseStream, false).layer(
        axum::middleware::from_fn_with_state(Arc::new(allowed), guard::check),
    )
}

/// What the fixture remembers about one session.
struct Session {
    /// `capabilities` the client declared at `initialize`.
    client_capabilities: Value,
    /// Index into [`LOG_LEVELS`] of the least severe level to send (all, until set).
    min_log_level: usize,
}

/// The conformance fixture's behaviour, shared by all its sessions.
#[derive(Default)]
struct Conformance {
    sessions: Mutex<HashMap<String, Session>>,
    peer: Peer,
}

impl Handler for Conformance {
    async fn respond(&self, message: Value, call: Call) -> Outcome {
        match classify(&message) {
            Incoming::Request { id, method, params } => {
                match self.call(method, params, &call).await {
                    Ok(result) => Outcome::Reply(success(id, result)),
                    Err(error) => Outcome::Reply(failure(id, error)),
                }
            }
            Incoming::Response => {
                self.peer.resolve(&message);
                Outcome::Accepted
            }
            Incoming::Notification => Outcome::Accepted,
            Incoming::Invalid(reply) => Outcome::Reply(reply),
        }
    }

    fn session_closed(&self, id: &str) {
        self.sessions().remove(id);
    }
}

impl Conformance {
    fn sessions(&self) -> MutexGuard<'_, HashMap<String, Session>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    async fn call(&self, method: &str, params: &Value, call: &Call) -> Result<Value, RpcError> {
        match method {
            "initialize" => Ok(self.initialize(params, call)),
            "ping" => Ok(json!({})),
            "logging/setLevel" => self.set_level(params, call),
            "tools/list" => Ok(tools::list()),
            "tools/call" => tools::call(params, &self.exchange(params, call)).await,
            "resources/list" => Ok(resources::list()),
            "resources/templates/list" => Ok(resources::templates()),
            "resources/read" => resources::read(params),
            // The resources never change, so there is nothing to notify subscribers of.
            "resources/subscribe" | "resources/unsubscribe" => {
                resources::check_exists(str_param(params, "uri")?).map(|()| json!({}))
            }
            "prompts/list" => Ok(prompts::list()),
            "prompts/get" => prompts::get(params),
            "completion/complete" => completion::complete(params),
            _ => Err(RpcError::method_not_found(method)),
        }
    }

    fn initialize(&self, params: &Value, call: &Call) -> Value {
        if let Some(id) = &call.session {
            let session = Session {
                client_capabilities: params.get("capabilities").cloned().unwrap_or(Value::Null),
                min_log_level: 0,
            };
            self.sessions().insert(id.clone(), session);
        }
        let requested = params.get("protocolVersion").and_then(Value::as_str);
        let version = requested
            .filter(|v| PROTOCOL_VERSIONS.contains(v))
            .unwrap_or(PROTOCOL_VERSIONS[0]);
        json!({
            "protocolVersion": version,
            "capabilities": {
                "tools": { "listChanged": false },
                "resources": { "subscribe": true, "listChanged": false },
                "prompts": { "listChanged": false },
                "logging": {},
                "completions": {}
            },
            "serverInfo": { "name": SERVER_NAME, "version": env!("CARGO_PKG_VERSION") },
            "instructions": "Fixture for the MCP conformance suite's server scenarios."
        })
    }

    fn set_level(&self, params: &Value, call: &Call) -> Result<Value, RpcError> {
        let level = str_param(params, "level")?;
        let index = LOG_LEVELS
            .iter()
            .position(|l| *l == level)
            .ok_or_else(|| RpcError::invalid_params(format!("unknown log level {level}")))?;
        self.update_session(call, |session| session.min_log_level = index);
        Ok(json!({}))
    }

    /// Runs `change` on the session `call` belongs to, if it has one.
    fn update_session(&self, call: &Call, change: impl FnOnce(&mut Session)) {
        let mut sessions = self.sessions();
        if let Some(session) = call.session.as_ref().and_then(|id| sessions.get_mut(id)) {
            change(session);
        }
    }

    fn exchange<'a>(&'a self, params: &Value, call: &'a Call) -> Exchange<'a> {
        let sessions = self.sessions();
        let session = call.session.as_ref().and_then(|id| sessions.get(id));
        let capabilities = session.map_or(Value::Null, |s| s.client_capabilities.clone());
        let min_log_level = session.map_or(0, |s| s.min_log_level);
        Exchange::new(call, &self.peer, params, capabilities, min_log_level)
    }
}
