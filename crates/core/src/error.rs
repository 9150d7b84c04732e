//! Errors of the core, each knowing whether the client or a backend caused it.

use std::time::Duration;

use vmcp_backend::BackendError;

/// A failed core operation.
#[derive(Debug, Clone, thiserror::Error)]
pub enum CoreError {
    /// No advertised or routable tool has this name.
    #[error("unknown tool: {0}")]
    UnknownTool(String),
    /// No prompt has this name.
    #[error("unknown prompt: {0}")]
    UnknownPrompt(String),
    /// No backend serves this resource URI.
    #[error("resource not found: {0}")]
    UnknownResource(String),
    /// The request's params are malformed.
    #[error("invalid params: {0}")]
    InvalidParams(String),
    /// The admission seam refused.
    #[error("{0} denied by authorization policy")]
    Denied(&'static str),
    /// A backend failed or answered with an error.
    #[error("backend {backend}: {error}")]
    Backend {
        /// The backend's name.
        backend: String,
        /// What went wrong.
        error: BackendError,
    },
    /// Discovery did not finish within its budget.
    #[error("capability discovery timed out after {0:?}")]
    DiscoveryTimeout(Duration),
    /// Discovery failed (per partialFailureMode, or manual conflicts left unresolved).
    #[error("capability discovery failed: {0}")]
    DiscoveryFailed(String),
    /// The tool exists, but its backend is withdrawn (unhealthy, unauthenticated or behind an
    /// open circuit): told to callers who may see the tool, so an agent retries rather than
    /// concluding the tool is gone.
    #[error("tool {tool} is unavailable: its backend {backend} is {health}{}; retry in {}s", since.as_ref().map(|s| format!(" since {s}")).unwrap_or_default(), retry_after.as_secs())]
    ToolUnavailable {
        /// The tool's advertised name.
        tool: String,
        /// The backend's name.
        backend: String,
        /// The backend's health state (`unhealthy`, `unauthenticated`, or `circuit-open`).
        health: &'static str,
        /// When it was withdrawn (RFC 3339), if known.
        since: Option<String>,
        /// When to try again (the next health check), at least 1 s.
        retry_after: Duration,
    },
    /// A rate-limit bucket the request draws from is empty (ToolHive's message).
    #[error("Rate limit exceeded")]
    RateLimited {
        /// How long to wait before trying again (whole seconds, at least 1).
        retry_after: Duration,
    },
}
