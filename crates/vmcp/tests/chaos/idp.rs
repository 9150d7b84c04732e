//! An OpenID provider the auth scenarios control, in this process: discovery, a JWKS whose keys
//! the test publishes, an RFC 8693 token endpoint whose answers can be slowed, ES256 access
//! tokens signed here, and a [`FaultProxy`] in front that makes all of it unreachable on demand.
//! (The Node provider the other auth tests use can be neither slowed nor rotated mid-run.)

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::extract::State;
use axum::response::Json;
use axum::routing::{get, post};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use serde_json::{Value, json};
use tokio::task::JoinHandle;
use vmcp_testkit::{FaultMode, FaultProxy};

/// The audience the gateway accepts.
pub(crate) const AUDIENCE: &str = "https://vmcp.chaos/mcp";
/// How long an exchanged token lives: short, so exchanges keep happening under load.
const EXCHANGED_LIFETIME_SECS: u64 = 2;

/// A P-256 signing key and its public JWK.
pub(crate) struct Signer {
    key: EcdsaKeyPair,
    kid: String,
    rng: SystemRandom,
}

impl Signer {
    /// A fresh key named `kid`.
    pub(crate) fn new(kid: &str) -> Signer {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .unwrap();
        Signer {
            key,
            kid: kid.to_owned(),
            rng,
        }
    }

    /// The public key as a JWK.
    pub(crate) fn jwk(&self) -> Value {
        let point = self.key.public_key().as_ref();
        json!({"kty": "EC", "crv": "P-256", "kid": self.kid, "use": "sig", "alg": "ES256",
            "x": b64u(&point[1..33]), "y": b64u(&point[33..65])})
    }

    /// An hour-long access token of `sub` from `issuer`, for [`AUDIENCE`].
    pub(crate) fn token(&self, issuer: &str, sub: &str) -> String {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let header = json!({"alg": "ES256", "typ": "JWT", "kid": self.kid});
        let claims = json!({"iss": issuer, "aud": AUDIENCE, "sub": sub, "iat": now,
            "exp": now + 3600, "scope": "mcp:read"});
        let signing_input = format!(
            "{}.{}",
            b64u(header.to_string().as_bytes()),
            b64u(claims.to_string().as_bytes())
        );
        let signature = self.key.sign(&self.rng, signing_input.as_bytes()).unwrap();
        format!("{signing_input}.{}", b64u(signature.as_ref()))
    }
}

fn b64u(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

#[derive(Default)]
struct Published {
    /// The issuer as clients see it (the proxy's address).
    issuer: OnceLock<String>,
    keys: Mutex<Vec<Value>>,
    token_delay_ms: AtomicU64,
    exchanges: AtomicU64,
}

/// The running provider; stops on drop.
pub(crate) struct Idp {
    /// `http://127.0.0.1:PORT` of the proxy: what tokens name as `iss`.
    pub(crate) issuer: String,
    proxy: FaultProxy,
    published: Arc<Published>,
    task: JoinHandle<()>,
}

impl Idp {
    /// Serves discovery, the JWKS (with `keys`) and the token endpoint behind a proxy.
    pub(crate) async fn start(keys: &[&Signer]) -> Idp {
        let published = Arc::new(Published::default());
        *published.keys.lock().unwrap() = keys.iter().map(|k| k.jwk()).collect();
        let app = Router::new()
            .route("/.well-known/openid-configuration", get(discovery))
            .route("/jwks", get(jwks))
            .route("/token", post(token))
            .with_state(published.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        let proxy = FaultProxy::start(&format!("http://{addr}")).await;
        let issuer = proxy.url.clone();
        let _ = published.issuer.set(issuer.clone());
        Idp {
            issuer,
            proxy,
            published,
            task,
        }
    }

    /// Adds a key to the JWKS.
    pub(crate) fn publish(&self, signer: &Signer) {
        self.published.keys.lock().unwrap().push(signer.jwk());
    }

    /// Every connection to the provider is refused from now on (or, with false, served again).
    pub(crate) fn unreachable(&self, down: bool) {
        self.proxy.set(if down {
            FaultMode::Refuse
        } else {
            FaultMode::Pass
        });
    }

    /// The token endpoint answers after `delay` from now on.
    pub(crate) fn slow_tokens(&self, delay: Duration) {
        self.published
            .token_delay_ms
            .store(delay.as_millis() as u64, Ordering::Relaxed);
    }

    /// Token exchanges answered so far.
    pub(crate) fn exchanges(&self) -> u64 {
        self.published.exchanges.load(Ordering::Relaxed)
    }

    /// The token endpoint's URL.
    pub(crate) fn token_url(&self) -> String {
        format!("{}/token", self.issuer)
    }
}

impl Drop for Idp {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn discovery(State(p): State<Arc<Published>>) -> Json<Value> {
    let issuer = p.issuer.get().cloned().unwrap_or_default();
    Json(
        json!({"issuer": issuer, "jwks_uri": format!("{issuer}/jwks"),
        "token_endpoint": format!("{issuer}/token")}),
    )
}

async fn jwks(State(p): State<Arc<Published>>) -> Json<Value> {
    Json(json!({"keys": *p.keys.lock().unwrap()}))
}

/// Any token exchange succeeds, after the configured delay.
async fn token(State(p): State<Arc<Published>>) -> Json<Value> {
    let delay = p.token_delay_ms.load(Ordering::Relaxed);
    if delay > 0 {
        tokio::time::sleep(Duration::from_millis(delay)).await;
    }
    let n = p.exchanges.fetch_add(1, Ordering::Relaxed);
    Json(json!({"access_token": format!("exchanged-{n}"),
        "issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
        "token_type": "Bearer", "expires_in": EXCHANGED_LIFETIME_SECS}))
}
