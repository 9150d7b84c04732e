//! What can go wrong talking to a backend, split into the backend's own answers (domain errors,
//! passed to the client as they are) and failures to get an answer (operational errors).

use std::time::Duration;

use vmcp_proto::ErrorObject;

/// A failed backend request.
#[derive(Debug, Clone, thiserror::Error)]
pub enum BackendError {
    /// The backend answered with a JSON-RPC error: its own verdict, relayed unchanged.
    #[error("{}", .0.message)]
    Rpc(ErrorObject),
    /// No answer within the backend's request timeout.
    #[error("timed out after {0:?}")]
    Timeout(Duration),
    /// The backend could not be reached or refused the connection or session.
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// The backend answered with something that is not valid MCP.
    #[error("protocol violation: {0}")]
    Protocol(String),
    /// The client cancelled the request; the backend was told to stop.
    #[error("cancelled by the client")]
    Cancelled,
    /// The backend's process exited while the request was in flight.
    #[error("process exited: {0}")]
    Exited(String),
    /// No credential for the backend (the caller's token could not be exchanged), or the backend
    /// refused the one it got (HTTP 401/403).
    #[error("not authorized: {0}")]
    Auth(String),
}

impl BackendError {
    /// Whether this is a failure to get an answer (counts against health) rather than an answer.
    /// A refused credential is the caller's problem, not the backend's.
    pub fn is_operational(&self) -> bool {
        !matches!(self, BackendError::Rpc(_) | BackendError::Auth(_))
    }
}

/// A transport error with its causes, for messages and logs. (reqwest and hyper never print header
/// values, so no secret leaks.)
pub(crate) fn describe(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        s.push_str(": ");
        s.push_str(&cause.to_string());
        source = cause.source();
    }
    s
}
