//! Why a request was not authenticated, and how that is told to the client: RFC 6750
//! `WWW-Authenticate: Bearer ...` with the RFC 9728 `resource_metadata` pointer, in ToolHive's
//! exact order (realm, resource_metadata, scope, error, error_description), so MCP clients start
//! their OAuth flow against the right authorization server.

/// An authentication failure. Messages never contain the token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// No `Authorization` header.
    #[error("authorization header required")]
    MissingToken,
    /// An `Authorization` header that is not `Bearer <token>`.
    #[error("{0}")]
    MalformedHeader(&'static str),
    /// The token is not valid (expired, wrong audience, bad signature, ...).
    #[error("Invalid token: {0}")]
    InvalidToken(String),
    /// The token lacks required scopes (only with `requireScopes`).
    #[error("token lacks the required scopes: {}", .0.join(" "))]
    InsufficientScope(Vec<String>),
    /// The identity provider could not be reached to decide (keys, introspection).
    #[error("cannot validate the token now: {0}")]
    Unavailable(String),
    /// The configuration cannot work (found at startup).
    #[error("{0}")]
    Config(String),
}

impl AuthError {
    /// The HTTP status: 401, 403 for missing scopes, 503 when the provider is unreachable.
    pub fn status(&self) -> u16 {
        match self {
            AuthError::InsufficientScope(_) => 403,
            AuthError::Unavailable(_) | AuthError::Config(_) => 503,
            _ => 401,
        }
    }

    /// The RFC 6750 error code.
    pub fn code(&self) -> &'static str {
        match self {
            AuthError::MissingToken | AuthError::MalformedHeader(_) => "invalid_request",
            AuthError::InsufficientScope(_) => "insufficient_scope",
            AuthError::Unavailable(_) | AuthError::Config(_) => "temporarily_unavailable",
            AuthError::InvalidToken(_) => "invalid_token",
        }
    }
}

/// What a challenge advertises.
#[derive(Debug, Clone, Default)]
pub struct ChallengeInfo {
    /// `realm`: the issuer.
    pub realm: Option<String>,
    /// `resource_metadata`: where the RFC 9728 document is.
    pub resource_metadata: Option<String>,
    /// `scope`: the configured scopes.
    pub scopes: Vec<String>,
}

fn quote(v: &str) -> String {
    let mut out = String::with_capacity(v.len() + 2);
    out.push('"');
    for c in v.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            // Header values cannot carry control characters.
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

impl ChallengeInfo {
    /// The `WWW-Authenticate` value for `error`.
    pub fn header(&self, error: &AuthError) -> String {
        let mut parts = Vec::new();
        if let Some(realm) = self.realm.as_deref().filter(|r| !r.is_empty()) {
            parts.push(format!("realm={}", quote(realm)));
        }
        if let Some(url) = &self.resource_metadata {
            parts.push(format!("resource_metadata={}", quote(url)));
        }
        let scopes = match error {
            AuthError::InsufficientScope(missing) => missing.clone(),
            _ => self.scopes.clone(),
        };
        if !scopes.is_empty() {
            parts.push(format!("scope={}", quote(&scopes.join(" "))));
        }
        parts.push(format!("error={}", quote(error.code())));
        parts.push(format!("error_description={}", quote(&error.to_string())));
        format!("Bearer {}", parts.join(", "))
    }
}

/// The RFC 9728 metadata URL for a protected resource URL: the well-known path inserted between
/// host and path (`https://h/mcp` -> `https://h/.well-known/oauth-protected-resource/mcp`).
pub fn metadata_url(resource: &str) -> Option<String> {
    let url = url::Url::parse(resource).ok()?;
    let mut origin = format!("{}://{}", url.scheme(), url.host_str()?);
    if let Some(port) = url.port() {
        origin.push_str(&format!(":{port}"));
    }
    let path = match url.path() {
        "/" => "",
        p => p.trim_end_matches('/'),
    };
    Some(format!(
        "{origin}/.well-known/oauth-protected-resource{path}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenge_has_toolhive_order_and_escapes_values() {
        let info = ChallengeInfo {
            realm: Some("https://idp.example.com".into()),
            resource_metadata: metadata_url("https://vmcp.example.com/mcp"),
            scopes: vec!["openid".into(), "mcp:tools".into()],
        };
        assert_eq!(
            info.header(&AuthError::InvalidToken("issuer \"x\" is not \"y\"".into())),
            "Bearer realm=\"https://idp.example.com\", resource_metadata=\"https://vmcp.example.com/.well-known/oauth-protected-resource/mcp\", scope=\"openid mcp:tools\", error=\"invalid_token\", error_description=\"Invalid token: issuer \\\"x\\\" is not \\\"y\\\"\""
        );
        let bare = ChallengeInfo::default();
        assert_eq!(
            bare.header(&AuthError::MissingToken),
            "Bearer error=\"invalid_request\", error_description=\"authorization header required\""
        );
        // Insufficient scope names the missing ones.
        assert!(
            info.header(&AuthError::InsufficientScope(vec!["mcp:admin".into()]))
                .contains("scope=\"mcp:admin\", error=\"insufficient_scope\"")
        );
    }

    #[test]
    fn metadata_urls_insert_the_well_known_path() {
        assert_eq!(
            metadata_url("https://h.example/").as_deref(),
            Some("https://h.example/.well-known/oauth-protected-resource")
        );
        assert_eq!(
            metadata_url("http://127.0.0.1:4483/mcp").as_deref(),
            Some("http://127.0.0.1:4483/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(metadata_url("not a url"), None);
    }

    #[test]
    fn statuses_and_codes() {
        assert_eq!(AuthError::MissingToken.status(), 401);
        assert_eq!(AuthError::InsufficientScope(vec![]).status(), 403);
        assert_eq!(AuthError::Unavailable("x".into()).status(), 503);
        assert_eq!(AuthError::MalformedHeader("m").code(), "invalid_request");
    }
}
