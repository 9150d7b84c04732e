//! Who is calling: the result of authenticating a request, carried with every call so admission
//! and outgoing credentials can use it.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::secret::Secret;

/// The caller. Anonymous callers have no subject.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Identity {
    /// The authenticated subject (`sub`), or None for anonymous callers.
    pub subject: Option<String>,
    /// The issuer that vouched for the subject (`iss`), when a token did.
    pub issuer: Option<String>,
    /// Every claim of the caller's token (or of the synthetic local identity).
    pub claims: Arc<Map<String, Value>>,
    /// The caller's own bearer token, kept only for token exchange; never forwarded as is.
    pub token: Option<Secret>,
}

impl Identity {
    /// The anonymous identity.
    pub fn anonymous() -> Self {
        Self::default()
    }

    /// The identity a session is bound to: requests on a session must come from the same
    /// (issuer, subject); None for anonymous callers.
    pub fn binding(&self) -> Option<(&str, &str)> {
        Some((
            self.issuer.as_deref().unwrap_or(""),
            self.subject.as_deref()?,
        ))
    }

    /// Whether `other` is the same caller as far as a session is concerned (a refreshed token for
    /// the same subject is).
    pub fn same_caller(&self, other: &Identity) -> bool {
        self.binding() == other.binding()
    }

    /// A claim as a string, when it is one.
    pub fn claim_str(&self, name: &str) -> Option<&str> {
        self.claims.get(name).and_then(Value::as_str)
    }

    /// The scopes the token grants (`scope`, space separated, or `scp` as a list).
    pub fn scopes(&self) -> Vec<&str> {
        match (self.claims.get("scope"), self.claims.get("scp")) {
            (Some(Value::String(s)), _) => s.split_ascii_whitespace().collect(),
            (_, Some(Value::Array(a))) => a.iter().filter_map(Value::as_str).collect(),
            (_, Some(Value::String(s))) => s.split_ascii_whitespace().collect(),
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn who(iss: &str, sub: &str, token: &str) -> Identity {
        Identity {
            subject: Some(sub.into()),
            issuer: Some(iss.into()),
            claims: Arc::new(
                json!({"scope": "mcp:read mcp:write"})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
            token: Some(Secret::new(token)),
        }
    }

    #[test]
    fn a_refreshed_token_is_the_same_caller_another_subject_or_issuer_is_not() {
        let a = who("https://idp", "alice", "t1");
        assert!(a.same_caller(&who("https://idp", "alice", "t2")));
        assert!(!a.same_caller(&who("https://idp", "bob", "t1")));
        assert!(!a.same_caller(&who("https://other", "alice", "t1")));
        assert!(!a.same_caller(&Identity::anonymous()));
        assert!(Identity::anonymous().same_caller(&Identity::anonymous()));
    }

    #[test]
    fn scopes_come_from_scope_or_scp() {
        assert_eq!(who("i", "s", "t").scopes(), ["mcp:read", "mcp:write"]);
        let scp = Identity {
            claims: Arc::new(json!({"scp": ["a", "b"]}).as_object().unwrap().clone()),
            ..Identity::default()
        };
        assert_eq!(scp.scopes(), ["a", "b"]);
    }

    #[test]
    fn debug_never_shows_the_token() {
        let a = who("https://idp", "alice", "eyJ.secret.sig");
        assert!(!format!("{a:?}").contains("eyJ.secret.sig"));
    }
}
