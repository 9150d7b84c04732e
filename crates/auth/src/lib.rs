//! Authentication for vmcp, at both boundaries: who is calling (anonymous, the local user, or an
//! OpenID Connect bearer token, validated against the issuer's keys or by introspection), and which
//! credential each backend gets (a static header, or a token exchanged for the caller's).
//!
//! A leaf crate: the server asks it for an [`Identity`] per request; the backend asks it for a
//! credential per backend request. Secrets are [`Secret`]s, which never print themselves.

mod error;
mod fetch;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod identity;
mod incoming;
pub mod jose;
mod oidc;
mod outgoing;
mod secret;
mod strategy;
#[cfg(test)]
mod test_keys;
mod url_redact;

pub use error::{AuthError, ChallengeInfo, metadata_url};
pub use fetch::{FetchError, FetchPolicy, Fetcher};
pub use identity::Identity;
pub use incoming::{Authenticator, OidcAuth};
pub use oidc::{OidcSettings, OidcValidator};
pub use outgoing::{ExchangeSettings, OutgoingAuth, TokenExchange, subject_token_type};
pub use secret::Secret;
pub use strategy::outgoing_auth;
pub use url_redact::{UrlSecrets, redact_url};
