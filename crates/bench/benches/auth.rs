//! What authentication costs per request: validating a bearer token with the issuer's keys
//! already cached (RS256, ES256, EdDSA; first sight, and remembered on the next request), and
//! getting a backend credential by token exchange from
//! the cache (the common case) versus from the token endpoint (what ToolHive does on every
//! backend request). The key and token endpoints are served on loopback by this benchmark.
//!
//! Run with `cargo bench -p vmcp-bench --bench auth`.

// criterion_group! generates an undocumented public function.
#![allow(missing_docs, clippy::unwrap_used)]

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use criterion::{Criterion, criterion_group, criterion_main};
use ring::rand::SystemRandom;
use ring::signature::{self as sig, EcdsaKeyPair, Ed25519KeyPair, KeyPair, RsaKeyPair};
use serde_json::{Value, json};
use vmcp_auth::{
    ExchangeSettings, FetchPolicy, OidcSettings, OidcValidator, Secret, TokenExchange,
    subject_token_type,
};

const ISS: &str = "https://idp.bench";
const AUD: &str = "vmcp";
const RSA_DER: &[u8] = include_bytes!("../../auth/src/jose/test_rsa_key.der");
const RSA_JWK: &str = include_str!("../../auth/src/jose/test_rsa_public.jwk.json");

fn b64(b: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(b)
}

struct Keys {
    rsa: RsaKeyPair,
    p256: EcdsaKeyPair,
    ed: Ed25519KeyPair,
}

impl Keys {
    fn new() -> Self {
        let rng = SystemRandom::new();
        let alg = &sig::ECDSA_P256_SHA256_FIXED_SIGNING;
        let p256 = EcdsaKeyPair::from_pkcs8(
            alg,
            EcdsaKeyPair::generate_pkcs8(alg, &rng).unwrap().as_ref(),
            &rng,
        )
        .unwrap();
        let ed = Ed25519KeyPair::from_pkcs8(Ed25519KeyPair::generate_pkcs8(&rng).unwrap().as_ref())
            .unwrap();
        Keys {
            rsa: RsaKeyPair::from_der(RSA_DER).unwrap(),
            p256,
            ed,
        }
    }

    fn jwks(&self) -> Value {
        let mut rsa: Value = serde_json::from_str(RSA_JWK).unwrap();
        rsa["kid"] = json!("rsa");
        let point = self.p256.public_key().as_ref();
        json!({"keys": [rsa,
            {"kty": "EC", "crv": "P-256", "kid": "p256", "x": b64(&point[1..33]), "y": b64(&point[33..])},
            {"kty": "OKP", "crv": "Ed25519", "kid": "ed", "x": b64(self.ed.public_key().as_ref())}]})
    }

    fn token(&self, alg: &str, kid: &str) -> String {
        static JTI: AtomicU64 = AtomicU64::new(0);
        let exp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs()
            + 3600;
        let jti = JTI.fetch_add(1, Ordering::Relaxed);
        let claims =
            json!({"iss": ISS, "aud": AUD, "sub": "alice", "exp": exp, "scope": "mcp", "jti": jti});
        let signed = format!(
            "{}.{}",
            b64(json!({"alg": alg, "kid": kid}).to_string().as_bytes()),
            b64(claims.to_string().as_bytes())
        );
        let rng = SystemRandom::new();
        let signature = match alg {
            "RS256" => {
                let mut out = vec![0; self.rsa.public().modulus_len()];
                self.rsa
                    .sign(&sig::RSA_PKCS1_SHA256, &rng, signed.as_bytes(), &mut out)
                    .unwrap();
                out
            }
            "ES256" => self
                .p256
                .sign(&rng, signed.as_bytes())
                .unwrap()
                .as_ref()
                .to_vec(),
            _ => self.ed.sign(signed.as_bytes()).as_ref().to_vec(),
        };
        format!("{signed}.{}", b64(&signature))
    }
}

/// Serves the key set at /jwks and a token endpoint at /token on loopback.
async fn idp(jwks: Value) -> String {
    let issued = Arc::new(AtomicU64::new(0));
    let app = axum::Router::new()
        .route(
            "/jwks",
            axum::routing::get(move || async move { axum::Json(jwks) }),
        )
        .route(
            "/token",
            axum::routing::post(move || {
                let n = issued.fetch_add(1, Ordering::Relaxed);
                async move {
                    axum::Json(json!({"access_token": format!("backend-{n}"),
                        "issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
                        "token_type": "Bearer", "expires_in": 3600}))
                }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

fn lax() -> FetchPolicy {
    FetchPolicy {
        allow_http: true,
        allow_private: true,
        ..FetchPolicy::default()
    }
}

fn auth(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let keys = Keys::new();
    let base = rt.block_on(idp(keys.jwks()));
    let validator = OidcValidator::new(OidcSettings {
        issuer: ISS.into(),
        audience: AUD.into(),
        jwks_url: Some(format!("{base}/jwks")),
        fetch: lax(),
        ..OidcSettings::default()
    })
    .unwrap();
    for (alg, kid) in [("RS256", "rsa"), ("ES256", "p256"), ("EdDSA", "ed")] {
        // The first validation fetches the keys; the measured ones find them cached.
        rt.block_on(validator.validate(&keys.token(alg, kid)))
            .unwrap();
        // A token seen for the first time: parse, signature, claims (signing is not timed).
        c.bench_function(&format!("auth/validate_jwt_{alg}_first_sight"), |b| {
            b.iter_batched(
                || keys.token(alg, kid),
                |token| rt.block_on(validator.validate(black_box(&token))).unwrap(),
                criterion::BatchSize::SmallInput,
            );
        });
    }
    // The same token again (a client's next request): remembered by its hash.
    let token = keys.token("RS256", "rsa");
    rt.block_on(validator.validate(&token)).unwrap();
    c.bench_function("auth/validate_jwt_remembered", |b| {
        b.iter(|| rt.block_on(validator.validate(black_box(&token))).unwrap());
    });

    let exchange = TokenExchange::new(ExchangeSettings {
        token_url: format!("{base}/token"),
        subject_token_type: subject_token_type(None).unwrap(),
        fetch: lax(),
        ..ExchangeSettings::default()
    })
    .unwrap();
    let subject = Secret::new("alice-token");
    rt.block_on(exchange.exchange(&subject)).unwrap();
    c.bench_function("auth/token_exchange_cache_hit", |b| {
        b.iter(|| rt.block_on(exchange.exchange(black_box(&subject))).unwrap());
    });
    // Every call a new subject token: every call goes to the token endpoint, as ToolHive does.
    let n = AtomicU64::new(0);
    c.bench_function("auth/token_exchange_uncached_http_round_trip", |b| {
        b.iter(|| {
            let s = Secret::new(format!("subject-{}", n.fetch_add(1, Ordering::Relaxed)));
            rt.block_on(exchange.exchange(&s)).unwrap()
        });
    });
}

criterion_group!(benches, auth);
criterion_main!(benches);
