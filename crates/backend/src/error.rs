//! What can go wrong talking to a backend, split into the backend's own answers (domain errors,
//! passed to the client as they are) and failures to get an answer (operational errors).

use std::time::Duration;

use vmcp_auth::{UrlSecrets, redact_url};
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
    /// The backend's credential could not be obtained now (the token endpoint is unreachable,
    /// slow or failing): nothing is wrong with the caller's token or with the backend.
    #[error("its credential cannot be obtained now: {0}")]
    Credential(String),
}

impl BackendError {
    /// Whether this is a failure to get an answer (counts against health) rather than an answer.
    /// A refused credential is the caller's problem, and one that cannot be obtained the token
    /// endpoint's: neither is the backend's.
    pub fn is_operational(&self) -> bool {
        !matches!(
            self,
            BackendError::Rpc(_) | BackendError::Auth(_) | BackendError::Credential(_)
        )
    }

    /// The error with the hidden parts of a backend's URL replaced in its text (the backend's
    /// own message included): a backend's error page may echo the request path and query.
    pub(crate) fn scrubbed(self, secrets: &UrlSecrets) -> Self {
        if secrets.is_empty() {
            return self;
        }
        let scrub = |s: String| match secrets.scrub(&s) {
            std::borrow::Cow::Borrowed(_) => s,
            std::borrow::Cow::Owned(clean) => clean,
        };
        match self {
            BackendError::Rpc(mut e) => {
                e.message = scrub(e.message);
                BackendError::Rpc(e)
            }
            BackendError::Unavailable(s) => BackendError::Unavailable(scrub(s)),
            BackendError::Protocol(s) => BackendError::Protocol(scrub(s)),
            BackendError::Exited(s) => BackendError::Exited(scrub(s)),
            BackendError::Auth(s) => BackendError::Auth(scrub(s)),
            BackendError::Credential(s) => BackendError::Credential(scrub(s)),
            other @ (BackendError::Timeout(_) | BackendError::Cancelled) => other,
        }
    }
}

/// A transport error with its causes, for messages and logs. reqwest's text names the request's
/// URL, which can hold a credential (userinfo, a token in the path or query): it is shown
/// redacted. (reqwest and hyper never print header values.)
pub(crate) fn describe(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = String::new();
    let mut urls = Vec::new();
    let mut next = Some(e);
    while let Some(cause) = next {
        if !s.is_empty() {
            s.push_str(": ");
        }
        s.push_str(&cause.to_string());
        if let Some(url) = cause
            .downcast_ref::<reqwest::Error>()
            .and_then(reqwest::Error::url)
        {
            urls.push(url.as_str().to_owned());
        }
        next = cause.source();
    }
    for url in urls {
        s = s.replace(&url, &redact_url(&url));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_transport_error_shows_the_url_redacted() {
        // Nothing listens on port 1 of loopback: the connection is refused at once.
        let url = "http://user:PASSWORD42@127.0.0.1:1/mcp/PATHSECRET1234567890?api_key=QUERYSECRET";
        let Err(e) = crate::http_client().unwrap().get(url).send().await else {
            panic!("port 1 answered");
        };
        assert!(
            e.to_string().contains("PATHSECRET"),
            "reqwest names the URL"
        );
        let text = describe(&e);
        for secret in ["PASSWORD42", "PATHSECRET", "QUERYSECRET"] {
            assert!(!text.contains(secret), "{text}");
        }
        assert!(
            text.contains("http://127.0.0.1:1/mcp/REDACTED?api_key=REDACTED"),
            "{text}"
        );
    }

    #[test]
    fn scrubbing_reaches_every_message() {
        let secrets = UrlSecrets::new("http://h/mcp/PATHSECRET1234567890");
        let echo = "Cannot POST /mcp/PATHSECRET1234567890";
        let rpc = BackendError::Rpc(ErrorObject::new(-32601, echo));
        for e in [
            rpc,
            BackendError::Unavailable(echo.into()),
            BackendError::Protocol(echo.into()),
            BackendError::Exited(echo.into()),
            BackendError::Auth(echo.into()),
        ] {
            let text = e.scrubbed(&secrets).to_string();
            assert!(text.contains("/mcp/REDACTED"), "{text}");
        }
    }
}
