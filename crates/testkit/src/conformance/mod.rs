//! The conformance fixture: exactly what the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`, server mode) checks a server for — its tools,
//! resources, prompts and completions, logging, progress, and sampling, elicitation and roots
//! questions to the client mid-call — in both eras of MCP on one `/mcp` endpoint:
//! 2025-11-25 (sessions; every request answered on its own SSE stream, server-to-client
//! requests on it, a stream closed mid-call and resumed, SEP-1699) and 2026-07-28 (stateless;
//! `server/discover`, per-request `_meta`, Multi Round-Trip Requests, `subscriptions/listen`).
//!
//! Request order: `guard` (Host/Origin) → `era::route` (classify once) → the 2025-11-25 edge
//! (this module's [`Conformance`] behind the session-based `crate::http` transport, which owns
//! the per-session state: client capabilities, log level) or the 2026-07-28 edge (`modern`).
//! Both edges answer through one `catalogue`; each capability's catalogue lives in its own
//! module, the Modern-only tools in `diagnostics`, talking back to the client in `exchange`
//! (and `mrtr`); the command line is `cli`.

mod catalogue;
mod cli;
mod completion;
mod content;
mod diagnostics;
mod elicitation;
mod era;
mod exchange;
mod guard;
mod modern;
mod mrtr;
mod prompts;
mod resources;
mod sentinel;
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
use modern::Modern;
use mrtr::Interrupt;

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
    serve_in_process(router(AllowedHosts::local_and([]), true), "/mcp").await
}

/// Like [`serve_conformance_in_process`], serving MCP 2025-11-25 only (`--legacy-only`): every
/// request session-based, and `test_reconnection` listed (2026-07-28 drops it).
///
/// # Panics
///
/// If no local port can be bound.
pub async fn serve_legacy_conformance_in_process() -> (String, JoinHandle<()>) {
    serve_in_process(router(AllowedHosts::local_and([]), false), "/mcp").await
}

/// The `/mcp` router of the conformance fixture, refusing hosts outside `allowed`; without
/// `modern`, every request is served as 2025-11-25. Layers run bottom-up: the Host/Origin
/// guard first (both eras), then the era router, which serves 2026-07-28 requests itself and
/// lets 2025-11-25 ones through to the session transport.
fn router(allowed: AllowedHosts, modern: bool) -> Router {
    let legacy = handler_router(Conformance::default(), Replies::SseStream, false);
    let fronted = if modern {
        legacy.layer(axum::middleware::from_fn_with_state(
            Arc::new(Modern::default()),
            era::route,
        ))
    } else {
        legacy.layer(axum::middleware::from_fn(era::legacy))
    };
    fronted.layer(axum::middleware::from_fn_with_state(
        Arc::new(allowed),
        guard::check,
    ))
}

/// What the fixture remembers about one session.
struct Session {
    /// `capabilities` the client declared at `initialize`.
    client_capabilities: Value,
    /// Index into [`LOG_LEVELS`] of the least severe level to send (all, until set).
    min_log_level: usize,
}

/// The conformance fixture's 2025-11-25 edge, shared by all its sessions.
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
            // The resources never change, so there is nothing to notify subscribers of.
            "resources/subscribe" | "resources/unsubscribe" => {
                resources::check_exists(str_param(params, "uri")?).map(|()| json!({}))
            }
            _ => {
                let exchange = self.exchange(params, call);
                catalogue::call(method, params, &exchange).await.map_err(
                    |interrupt| match interrupt {
                        Interrupt::Rpc(error) => error,
                        // Tools report unanswered questions themselves; 2025-11-25 questions
                        // never come back as `input_required`.
                        Interrupt::Unanswered(why) => RpcError::internal(why),
                        Interrupt::InputRequired { .. } => {
                            RpcError::internal("a 2025-11-25 request cannot ask by retry")
                        }
                    },
                )
            }
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
        Exchange::legacy(call, &self.peer, params, capabilities, min_log_level)
    }
}
