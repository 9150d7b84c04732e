//! `--oidc`: a tiny OpenID provider the harness serves itself on loopback (discovery and a JWKS
//! with one ES256 key), the one long-lived token it mints for every client, and the
//! `incomingAuth` block that makes a gateway trust it. One token for the whole run is the point:
//! the gateway verifies it once and serves it from its validated-token cache afterwards (again
//! each time the 60 s entry lapses), which is what a production client reusing its access token
//! costs.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use http::{Response, StatusCode, header};
use http_body_util::Full;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// The audience the gateway requires and the token names.
pub(crate) const AUDIENCE: &str = "vmcp-bench";
/// Who the token says the client is.
pub(crate) const SUBJECT: &str = "bench-user";
/// The signing key's id.
const KID: &str = "vmcp-bench-es256";
/// The token outlives any run by far.
const LIFETIME: Duration = Duration::from_secs(7 * 24 * 3600);
const DISCOVERY_PATH: &str = "/.well-known/openid-configuration";
const JWKS_PATH: &str = "/jwks";

/// Requests the provider has answered (how often the gateways looked its keys up).
#[derive(Debug, Default)]
struct Served {
    discovery: AtomicU64,
    jwks: AtomicU64,
}

/// The running provider; stops serving on drop.
pub(crate) struct OidcProvider {
    /// `http://127.0.0.1:PORT`: where it serves and what its token names as `iss`.
    pub(crate) issuer: String,
    /// The one signed access token (a JWT).
    pub(crate) token: String,
    served: Arc<Served>,
    task: JoinHandle<()>,
}

impl OidcProvider {
    /// Generates a P-256 key, serves discovery and the JWKS on a free loopback port, and signs
    /// the token.
    ///
    /// # Errors
    /// When no port can be bound or the key cannot be made.
    pub(crate) async fn start() -> anyhow::Result<OidcProvider> {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(|_| anyhow::anyhow!("cannot generate a P-256 key"))?;
        let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .map_err(|_| anyhow::anyhow!("cannot load the P-256 key"))?;
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let issuer = format!("http://{}", listener.local_addr()?);
        let discovery = json!({
            "issuer": issuer,
            "jwks_uri": format!("{issuer}{JWKS_PATH}"),
            "id_token_signing_alg_values_supported": ["ES256"],
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
        });
        let jwks = json!({"keys": [public_jwk(&key)]});
        let token = sign(&key, &rng, &claims(&issuer, SystemTime::now())?)?;
        let served = Arc::new(Served::default());
        let task = tokio::spawn(serve(
            listener,
            Bytes::from(discovery.to_string()),
            Bytes::from(jwks.to_string()),
            served.clone(),
        ));
        Ok(OidcProvider {
            issuer,
            token,
            served,
            task,
        })
    }

    /// The gateway's `incomingAuth` trusting this provider: keys found by discovery from the
    /// issuer (as a production config naming only its issuer does), plain HTTP and a loopback
    /// address allowed since that is where the harness serves it.
    pub(crate) fn incoming_auth(&self) -> Value {
        json!({
            "type": "oidc",
            "oidc": {
                "issuer": self.issuer,
                "audience": AUDIENCE,
                "insecureAllowHttp": true,
                "jwksAllowPrivateIp": true,
            },
        })
    }

    /// Discovery documents and key sets served so far.
    pub(crate) fn served(&self) -> (u64, u64) {
        (
            self.served.discovery.load(Ordering::Relaxed),
            self.served.jwks.load(Ordering::Relaxed),
        )
    }
}

impl Drop for OidcProvider {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The token's claims: the standard ones plus what a real provider adds (scope, email, groups),
/// so a gateway's principal carries claims as it would in production.
fn claims(issuer: &str, now: SystemTime) -> anyhow::Result<Value> {
    let iat = now.duration_since(UNIX_EPOCH)?.as_secs();
    Ok(json!({
        "iss": issuer,
        "aud": AUDIENCE,
        "sub": SUBJECT,
        "iat": iat,
        "exp": iat + LIFETIME.as_secs(),
        "scope": "openid mcp:tools",
        "email": "bench-user@vmcp-bench.invalid",
        "groups": ["vmcp-bench"],
    }))
}

/// A compact JWS (ES256) of `claims`.
fn sign(key: &EcdsaKeyPair, rng: &SystemRandom, claims: &Value) -> anyhow::Result<String> {
    let header = json!({"alg": "ES256", "typ": "JWT", "kid": KID});
    let signing_input = format!(
        "{}.{}",
        b64u(header.to_string().as_bytes()),
        b64u(claims.to_string().as_bytes())
    );
    let signature = key
        .sign(rng, signing_input.as_bytes())
        .map_err(|_| anyhow::anyhow!("cannot sign the token"))?;
    Ok(format!("{signing_input}.{}", b64u(signature.as_ref())))
}

/// The public half of `key` as a JWK (the uncompressed point is 0x04 || x || y).
fn public_jwk(key: &EcdsaKeyPair) -> Value {
    let point = key.public_key().as_ref();
    json!({"kty": "EC", "crv": "P-256", "kid": KID, "use": "sig", "alg": "ES256",
        "x": b64u(&point[1..33]), "y": b64u(&point[33..65])})
}

fn b64u(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// Answers discovery and the JWKS on every connection `listener` accepts; 404 otherwise.
async fn serve(listener: TcpListener, discovery: Bytes, jwks: Bytes, served: Arc<Served>) {
    while let Ok((stream, _)) = listener.accept().await {
        let (discovery, jwks, served) = (discovery.clone(), jwks.clone(), served.clone());
        tokio::spawn(async move {
            let service = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                let body = match req.uri().path() {
                    DISCOVERY_PATH => {
                        served.discovery.fetch_add(1, Ordering::Relaxed);
                        Some(discovery.clone())
                    }
                    JWKS_PATH => {
                        served.jwks.fetch_add(1, Ordering::Relaxed);
                        Some(jwks.clone())
                    }
                    _ => None,
                };
                async move { Ok::<_, Infallible>(answer(body)) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// A JSON 200 with `body`, or an empty 404.
fn answer(body: Option<Bytes>) -> Response<Full<Bytes>> {
    let mut resp = Response::new(Full::new(body.clone().unwrap_or_default()));
    if body.is_some() {
        resp.headers_mut().insert(
            header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/json"),
        );
    } else {
        *resp.status_mut() = StatusCode::NOT_FOUND;
    }
    resp
}

/// A signed token's claims, decoded without verification (for tests and messages).
#[cfg(test)]
fn decode_claims(token: &str) -> anyhow::Result<Value> {
    let payload = token
        .split('.')
        .nth(1)
        .ok_or_else(|| anyhow::anyhow!("not a JWT"))?;
    Ok(serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload)?)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_token_verifies_against_the_served_keys_by_discovery() {
        let provider = OidcProvider::start().await.expect("provider");
        let claims = decode_claims(&provider.token).expect("claims");
        assert_eq!(claims["iss"], provider.issuer);
        assert_eq!(claims["aud"], AUDIENCE);
        assert_eq!(claims["sub"], SUBJECT);
        // The settings vmcp derives from the generated block (vmcp/src/assemble.rs).
        let oidc = &provider.incoming_auth()["oidc"];
        let validator = vmcp_auth::OidcValidator::new(vmcp_auth::OidcSettings {
            issuer: oidc["issuer"].as_str().expect("issuer").to_owned(),
            audience: oidc["audience"].as_str().expect("audience").to_owned(),
            fetch: vmcp_auth::FetchPolicy {
                allow_http: oidc["insecureAllowHttp"] == true,
                allow_private: oidc["jwksAllowPrivateIp"] == true,
                ..vmcp_auth::FetchPolicy::default()
            },
            ..vmcp_auth::OidcSettings::default()
        })
        .expect("validator");
        let identity = validator
            .validate(&provider.token)
            .await
            .expect("the token verifies");
        assert_eq!(identity.subject.as_deref(), Some(SUBJECT));
        // Validated once; the second time it is remembered, and nothing is fetched again.
        validator.validate(&provider.token).await.expect("again");
        assert_eq!(provider.served(), (1, 1));
    }
}
