//! Who is calling: the authenticator configured by `incomingAuth.type` turns a request's
//! `Authorization` header into an [`Identity`], or refuses it.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::error::{AuthError, ChallengeInfo, metadata_url};
use crate::identity::Identity;
use crate::jose::MAX_TOKEN_BYTES;
use crate::oidc::{OidcSettings, OidcValidator};

/// `incomingAuth.type`, ready to authenticate.
#[derive(Debug, Clone)]
pub enum Authenticator {
    /// Every request is anonymous.
    Anonymous,
    /// Every request is the local OS user (ToolHive's `local`).
    Local(Identity),
    /// Bearer tokens from an OpenID Connect issuer.
    Oidc(Arc<OidcAuth>),
}

/// The OIDC authenticator: a validator and what its challenges and metadata advertise.
#[derive(Debug)]
pub struct OidcAuth {
    validator: OidcValidator,
    resource: Option<String>,
    challenge: ChallengeInfo,
}

impl Authenticator {
    /// ToolHive's `local`: the user running the gateway.
    pub fn local() -> Self {
        let user = std::env::var("USER")
            .or_else(|_| std::env::var("LOGNAME"))
            .ok()
            .filter(|u| !u.is_empty())
            .unwrap_or_else(|| "local".into());
        let claims = json!({
            "sub": user,
            "iss": "toolhive-local",
            "name": format!("Local User: {user}"),
            "email": format!("{user}@localhost"),
        });
        Authenticator::Local(Identity {
            subject: Some(user),
            issuer: Some("toolhive-local".into()),
            claims: Arc::new(claims.as_object().cloned().unwrap_or_default()),
            token: None,
        })
    }

    /// OIDC; `resource` is the protected resource's URL (`incomingAuth.oidc.resource`, which vmcp
    /// defaults to the audience when that is a URL).
    ///
    /// # Errors
    /// When the settings cannot work (see [`OidcValidator::new`]).
    pub fn oidc(settings: OidcSettings, resource: Option<String>) -> Result<Self, AuthError> {
        let challenge = ChallengeInfo {
            realm: Some(settings.issuer.clone()),
            resource_metadata: resource.as_deref().and_then(metadata_url),
            scopes: settings.scopes.clone(),
        };
        Ok(Authenticator::Oidc(Arc::new(OidcAuth {
            validator: OidcValidator::new(settings)?,
            resource,
            challenge,
        })))
    }

    /// Whether requests need a token.
    pub fn requires_token(&self) -> bool {
        matches!(self, Authenticator::Oidc(_))
    }

    /// Authenticates a request by its `Authorization` header value (raw bytes, if any).
    ///
    /// # Errors
    /// Why the request is refused.
    pub async fn authenticate(&self, authorization: Option<&[u8]>) -> Result<Identity, AuthError> {
        match self {
            Authenticator::Anonymous => Ok(Identity::anonymous()),
            Authenticator::Local(identity) => Ok(identity.clone()),
            Authenticator::Oidc(auth) => {
                let token = bearer(authorization)?;
                auth.validator.validate(token).await
            }
        }
    }

    /// The `WWW-Authenticate` header for a refusal (None when nothing is challenged).
    pub fn challenge(&self, error: &AuthError) -> Option<String> {
        match self {
            Authenticator::Oidc(auth) => Some(auth.challenge.header(error)),
            _ => None,
        }
    }

    /// The RFC 9728 protected resource metadata document, when a resource URL is known.
    pub fn protected_resource_metadata(&self) -> Option<Value> {
        let Authenticator::Oidc(auth) = self else {
            return None;
        };
        let resource = auth.resource.as_ref()?;
        let settings = auth.validator.settings();
        let scopes = if settings.scopes.is_empty() {
            vec!["openid".to_string()]
        } else {
            settings.scopes.clone()
        };
        Some(json!({
            "resource": resource,
            "authorization_servers": [settings.issuer],
            "bearer_methods_supported": ["header"],
            "scopes_supported": scopes,
        }))
    }
}

/// The token of an `Authorization: Bearer <token>` header (scheme case-insensitive, RFC 7235).
pub(crate) fn bearer(header: Option<&[u8]>) -> Result<&str, AuthError> {
    let header = header.ok_or(AuthError::MissingToken)?;
    if header.len() > MAX_TOKEN_BYTES + 7 {
        return Err(AuthError::InvalidToken(format!(
            "token larger than {MAX_TOKEN_BYTES} bytes"
        )));
    }
    let value = std::str::from_utf8(header).map_err(|_| {
        AuthError::MalformedHeader("invalid authorization header format, expected 'Bearer <token>'")
    })?;
    let (scheme, token) = value.split_once(' ').ok_or(AuthError::MalformedHeader(
        "invalid authorization header format, expected 'Bearer <token>'",
    ))?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(AuthError::MalformedHeader(
            "invalid authorization header format, expected 'Bearer <token>'",
        ));
    }
    let token = token.trim();
    if token.is_empty() {
        return Err(AuthError::MalformedHeader(
            "empty token in authorization header",
        ));
    }
    Ok(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_headers_are_parsed_strictly() {
        assert_eq!(bearer(Some(b"Bearer abc")), Ok("abc"));
        assert_eq!(bearer(Some(b"bearer  abc ")), Ok("abc"));
        assert_eq!(bearer(None), Err(AuthError::MissingToken));
        for bad in [
            &b"Basic abc"[..],
            b"Bearer",
            b"Bearer   ",
            b"abc",
            b"Bearer \xff",
        ] {
            assert!(
                matches!(bearer(Some(bad)), Err(AuthError::MalformedHeader(_))),
                "{bad:?}"
            );
        }
        let huge = format!("Bearer {}", "a".repeat(MAX_TOKEN_BYTES + 10));
        assert!(matches!(
            bearer(Some(huge.as_bytes())),
            Err(AuthError::InvalidToken(_))
        ));
    }

    #[tokio::test]
    async fn anonymous_and_local_need_no_token() {
        let a = Authenticator::Anonymous;
        assert_eq!(a.authenticate(None).await, Ok(Identity::anonymous()));
        assert!(!a.requires_token());
        let l = Authenticator::local();
        let who = l.authenticate(Some(b"Bearer ignored")).await.unwrap();
        assert!(who.subject.is_some());
        assert_eq!(who.issuer.as_deref(), Some("toolhive-local"));
        assert!(a.challenge(&AuthError::MissingToken).is_none());
        assert!(l.protected_resource_metadata().is_none());
    }
}
