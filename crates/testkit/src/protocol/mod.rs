//! Transport-free MCP method handling: one JSON-RPC message in, one [`Outcome`] out.
//!
//! Owns what the fixture answers; not how the answer travels (see `stdio`, `http`, `sse`),
//! nor sessions (an http concern). The catalogue of each capability lives in its own module.

mod completion;
mod page;
mod prompts;
mod resources;
pub(crate) mod rpc;
mod tools;

use serde_json::{Value, json};

use crate::FixtureOptions;
use completion::{Reference, Target};
use prompts::Prompts;
use resources::Resources;
use rpc::{Incoming, RpcError, failure, success};
use tools::Tools;

/// Protocol versions the fixture speaks, newest first; the first one is the fallback.
pub(crate) const PROTOCOL_VERSIONS: [&str; 4] =
    ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// Log levels accepted by `logging/setLevel`, least severe first.
pub(crate) const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// What a transport must do with one incoming message.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Outcome {
    /// Nothing to send: the message was a notification or a response (HTTP 202).
    Accepted,
    /// Send this JSON-RPC response.
    Reply(Value),
    /// Send this response, then forget every session (`forget_session`).
    ReplyThenForgetSessions(Value),
    /// Send bytes that are not JSON and never answer the request (`garbage`).
    Garbage,
    /// Exit the process with status 3 without answering (`crash`); see [`crash`].
    Crash,
    /// Send this response, then this notification after the delay (`talk_later`, stdio).
    ReplyThenLater(Value, std::time::Duration, Value),
}

/// What a method produced, before it is wrapped in a response envelope.
pub(crate) enum Effect {
    Result(Value),
    ForgetSessions(Value),
    Garbage,
    Crash,
    Later(Value, std::time::Duration, Value),
}

/// Exits the process the way the `crash` tool promises.
pub(crate) fn crash() -> ! {
    std::process::exit(3)
}

/// One fixture MCP server's behaviour, shared by all its connections.
pub(crate) struct Fixture {
    name: String,
    tools: Tools,
    resources: Option<Resources>,
    prompts: Option<Prompts>,
    /// Where to append the method of every request received (env [`METHOD_LOG_ENV`]), so tests
    /// can count what a gateway sent without changing the catalogue.
    method_log: Option<std::path::PathBuf>,
}

/// The environment variable naming the file each received request's method is appended to.
pub const METHOD_LOG_ENV: &str = "VMCP_FIXTURE_METHOD_LOG";

impl Fixture {
    /// A fixture as `opts` describes; `sessions` says whether the transport has sessions
    /// that `forget_session` could forget.
    pub(crate) fn new(opts: &FixtureOptions, sessions: bool) -> Self {
        let name = opts.name.as_str();
        Self {
            name: name.to_owned(),
            tools: Tools::new(name, sessions, opts.tools, opts.late_talk),
            resources: opts.resources.then(|| Resources::new(name)),
            prompts: opts.prompts.then(|| Prompts::new(name)),
            method_log: std::env::var_os(METHOD_LOG_ENV).map(Into::into),
        }
    }

    /// Parses `bytes` as one JSON-RPC message; on failure, the -32700 response to send.
    pub(crate) fn parse(bytes: &[u8]) -> Result<Value, Value> {
        serde_json::from_slice(bytes).map_err(|e| failure(Value::Null, RpcError::parse(e)))
    }

    /// Handles one raw message (parse errors answered with -32700).
    pub(crate) async fn handle_bytes(&self, bytes: &[u8]) -> Outcome {
        match Self::parse(bytes) {
            Ok(message) => self.handle(&message).await,
            Err(response) => Outcome::Reply(response),
        }
    }

    /// Handles one parsed message.
    pub(crate) async fn handle(&self, message: &Value) -> Outcome {
        let (id, method, params) = match rpc::classify(message) {
            // A notification, or a response to a request we never sent: ignore.
            Incoming::Notification | Incoming::Response => return Outcome::Accepted,
            Incoming::Invalid(reply) => return Outcome::Reply(reply),
            Incoming::Request { id, method, params } => (id, method, params),
        };
        if let Some(path) = &self.method_log {
            use std::io::Write;
            let appended = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .and_then(|mut f| writeln!(f, "{method}"));
            if let Err(e) = appended {
                eprintln!("vmcp-fixture: cannot append to {}: {e}", path.display());
            }
        }
        match self.call(method, params).await {
            Ok(Effect::Result(result)) => Outcome::Reply(success(id, result)),
            Ok(Effect::ForgetSessions(result)) => {
                Outcome::ReplyThenForgetSessions(success(id, result))
            }
            Ok(Effect::Garbage) => Outcome::Garbage,
            Ok(Effect::Crash) => Outcome::Crash,
            Ok(Effect::Later(result, after, note)) => {
                Outcome::ReplyThenLater(success(id, result), after, note)
            }
            Err(error) => Outcome::Reply(failure(id, error)),
        }
    }

    async fn call(&self, method: &str, params: &Value) -> Result<Effect, RpcError> {
        let missing = || RpcError::method_not_found(method);
        let result = match method {
            "initialize" => self.initialize(params),
            "ping" => json!({}),
            "logging/setLevel" => set_level(params)?,
            "tools/list" => self.tools.list(params)?,
            "tools/call" => return self.tools.call(params).await,
            "resources/list" => self.resources.as_ref().ok_or_else(missing)?.list(params)?,
            "resources/templates/list" => self
                .resources
                .as_ref()
                .ok_or_else(missing)?
                .list_templates(params)?,
            "resources/read" => self.resources.as_ref().ok_or_else(missing)?.read(params)?,
            "prompts/list" => self.prompts.as_ref().ok_or_else(missing)?.list(params)?,
            "prompts/get" => self.prompts.as_ref().ok_or_else(missing)?.get(params)?,
            "completion/complete" => self.complete(params)?,
            _ => return Err(missing()),
        };
        Ok(Effect::Result(result))
    }

    fn initialize(&self, params: &Value) -> Value {
        let requested = params.get("protocolVersion").and_then(Value::as_str);
        let version = requested
            .filter(|v| PROTOCOL_VERSIONS.contains(v))
            .unwrap_or(PROTOCOL_VERSIONS[0]);
        let mut capabilities = json!({
            "tools": { "listChanged": true },
            "completions": {},
            "logging": {}
        });
        if self.resources.is_some() {
            capabilities["resources"] = json!({ "listChanged": true });
        }
        if self.prompts.is_some() {
            capabilities["prompts"] = json!({ "listChanged": true });
        }
        json!({
            "protocolVersion": version,
            "capabilities": capabilities,
            "serverInfo": { "name": self.name, "version": env!("CARGO_PKG_VERSION") },
            "instructions": format!("vmcp fixture server {}", self.name)
        })
    }

    fn complete(&self, params: &Value) -> Result<Value, RpcError> {
        let target = match completion::reference(params)? {
            Reference::Prompt("greet") if self.prompts.is_some() => Target::GreetPrompt,
            Reference::Resource(uri)
                if self
                    .resources
                    .as_ref()
                    .is_some_and(|r| r.is_item_template(uri)) =>
            {
                Target::ItemTemplate
            }
            Reference::Prompt(name) => {
                return Err(RpcError::invalid_params(format!("Unknown prompt: {name}")));
            }
            Reference::Resource(uri) => {
                return Err(RpcError::invalid_params(format!(
                    "Unknown resource template: {uri}"
                )));
            }
        };
        completion::complete(target, params)
    }
}

fn set_level(params: &Value) -> Result<Value, RpcError> {
    let level = rpc::str_param(params, "level")?;
    if !LOG_LEVELS.contains(&level) {
        return Err(RpcError::invalid_params(format!(
            "unknown log level {level}"
        )));
    }
    Ok(json!({}))
}

#[cfg(test)]
mod tests;
