//! The validator against a scripted key and introspection server on loopback: claims checks, key
//! rotation, the refresh rate limit under a stream of unknown key ids, a provider that is down or
//! slow, and introspection answers (active, inactive, garbage). The end-to-end tests use a real
//! OpenID provider; these pin the mechanics that provider cannot be made to misbehave for.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use serde_json::{Value, json};

use super::keys::MIN_REFRESH;
use super::*;
use crate::test_keys::{Keys, keys};

pub(super) const ISS: &str = "https://idp.test";
pub(super) const AUD: &str = "vmcp";

/// What the scripted provider answers; tests change it as they go.
#[derive(Clone)]
pub(super) struct Script {
    pub(super) jwks: Arc<Mutex<Value>>,
    pub(super) jwks_hits: Arc<AtomicUsize>,
    introspection: Arc<Mutex<Value>>,
    introspection_hits: Arc<AtomicUsize>,
    pub(super) delay: Arc<Mutex<Duration>>,
    /// The key set answers 503 while set.
    pub(super) down: Arc<AtomicBool>,
}

async fn jwks(State(s): State<Script>) -> (StatusCode, axum::Json<Value>) {
    s.jwks_hits.fetch_add(1, Ordering::SeqCst);
    let delay = *s.delay.lock().unwrap();
    tokio::time::sleep(delay).await;
    if s.down.load(Ordering::SeqCst) {
        return (StatusCode::SERVICE_UNAVAILABLE, axum::Json(json!({})));
    }
    (StatusCode::OK, axum::Json(s.jwks.lock().unwrap().clone()))
}

async fn introspect(State(s): State<Script>, body: String) -> String {
    s.introspection_hits.fetch_add(1, Ordering::SeqCst);
    assert!(body.contains("token_type_hint=access_token"), "{body}");
    let v = s.introspection.lock().unwrap().clone();
    match v {
        Value::String(raw) => raw,
        other => other.to_string(),
    }
}

/// A server with the given key set; returns its base URL and the script to change it.
pub(super) async fn server(set: Value) -> (String, Script) {
    let script = Script {
        jwks: Arc::new(Mutex::new(set)),
        jwks_hits: Arc::default(),
        introspection: Arc::new(Mutex::new(json!({"active": false}))),
        introspection_hits: Arc::default(),
        delay: Arc::default(),
        down: Arc::default(),
    };
    let app = Router::new()
        .route("/jwks", get(jwks))
        .route("/introspect", post(introspect))
        .with_state(script.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}"), script)
}

pub(super) fn settings(base: &str) -> OidcSettings {
    OidcSettings {
        issuer: ISS.into(),
        audience: AUD.into(),
        jwks_url: Some(format!("{base}/jwks")),
        introspection_url: Some(format!("{base}/introspect")),
        client_id: Some("gw".into()),
        client_secret: Some(Secret::new("s3cret")),
        fetch: FetchPolicy {
            allow_http: true,
            allow_private: true,
            timeout: Some(Duration::from_millis(500)),
            ..FetchPolicy::default()
        },
        ..OidcSettings::default()
    }
}

pub(super) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

pub(super) fn claims() -> Value {
    json!({"iss": ISS, "aud": [AUD, "other"], "sub": "alice", "exp": now() + 300,
        "groups": ["eng"], "scope": "mcp:read"})
}

pub(super) fn with(mut v: Value, key: &str, value: Value) -> Value {
    if value.is_null() {
        v.as_object_mut().unwrap().remove(key);
    } else {
        v[key] = value;
    }
    v
}

pub(super) async fn setup() -> (Keys, OidcValidator, Script) {
    let k = keys();
    let (base, script) = server(k.jwks.clone()).await;
    (k, OidcValidator::new(settings(&base)).unwrap(), script)
}

#[tokio::test]
async fn valid_tokens_of_each_key_type_give_the_identity() {
    let (k, v, _) = setup().await;
    for (alg, kid) in [("RS256", "rsa"), ("ES256", "p256"), ("EdDSA", "ed")] {
        let token = k.sign(alg, Some(kid), &claims());
        let who = v.validate(&token).await.unwrap();
        assert_eq!(who.subject.as_deref(), Some("alice"), "{alg}");
        assert_eq!(who.issuer.as_deref(), Some(ISS));
        assert_eq!(who.claims["groups"], json!(["eng"]));
        assert_eq!(who.token.as_ref().map(Secret::expose), Some(token.as_str()));
    }
}

#[tokio::test]
async fn every_claim_rule_refuses_with_its_reason() {
    let (k, v, _) = setup().await;
    let cases = [
        (with(claims(), "exp", json!(now() - 1)), "expired"),
        (with(claims(), "exp", Value::Null), "no expiry"),
        (with(claims(), "exp", json!("tomorrow")), "no expiry"),
        (with(claims(), "nbf", json!(now() + 600)), "not valid yet"),
        (with(claims(), "aud", json!("someone-else")), "audience"),
        (with(claims(), "aud", Value::Null), "audience"),
        (with(claims(), "iss", json!("https://evil.test")), "issuer"),
        (with(claims(), "iss", Value::Null), "no issuer"),
        (with(claims(), "sub", Value::Null), "no subject"),
        (with(claims(), "sub", json!("")), "no subject"),
    ];
    for (c, why) in cases {
        let token = k.sign("ES256", Some("p256"), &c);
        match v.validate(&token).await {
            Err(AuthError::InvalidToken(m)) => assert!(m.contains(why), "{why}: {m}"),
            other => panic!("{why}: {other:?}"),
        }
    }
    // Trailing whitespace in iss is tolerated (as ToolHive trims); a nbf in the past is fine.
    let ok = with(
        with(claims(), "iss", json!(" https://idp.test ")),
        "nbf",
        json!(now() - 5),
    );
    assert!(v.validate(&k.sign("EdDSA", Some("ed"), &ok)).await.is_ok());
}

#[tokio::test]
async fn unknown_kids_refresh_once_per_interval_and_rotation_is_picked_up() {
    let (k, v, script) = setup().await;
    assert!(
        v.validate(&k.sign("RS256", Some("rsa"), &claims()))
            .await
            .is_ok()
    );
    assert_eq!(script.jwks_hits.load(Ordering::SeqCst), 1);
    // A stream of made-up kids right after a fetch: no fetch at all within the interval.
    let bogus = |i: usize| k.sign("RS256", Some(&format!("bogus-{i}")), &claims());
    for i in 0..50 {
        assert!(matches!(
            v.validate(&bogus(i)).await,
            Err(AuthError::InvalidToken(_))
        ));
    }
    assert_eq!(
        script.jwks_hits.load(Ordering::SeqCst),
        1,
        "refreshes must be rate-limited"
    );
    // Once the interval has passed, one unknown kid may refresh; the ones after it may not.
    v.keys.age_by(MIN_REFRESH);
    for i in 50..100 {
        assert!(matches!(
            v.validate(&bogus(i)).await,
            Err(AuthError::InvalidToken(_))
        ));
    }
    assert_eq!(script.jwks_hits.load(Ordering::SeqCst), 2);
    // A rotated-in key is found once the interval has passed.
    let mut set = k.jwks.clone();
    set["keys"][0]["kid"] = json!("rsa-2026");
    *script.jwks.lock().unwrap() = set;
    v.keys.age_by(MIN_REFRESH);
    let t = k.sign("RS256", Some("rsa-2026"), &claims());
    assert!(v.validate(&t).await.is_ok());
    assert_eq!(script.jwks_hits.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_provider_that_is_down_or_slow_is_unavailable_not_unauthorized() {
    let k = keys();
    // Nothing listens on this port.
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let v = OidcValidator::new(settings(&format!("http://{dead}"))).unwrap();
    let t = k.sign("RS256", Some("rsa"), &claims());
    let started = Instant::now();
    assert!(matches!(
        v.validate(&t).await,
        Err(AuthError::Unavailable(_))
    ));
    // Right after a failure the next request does not pile onto the provider.
    assert!(matches!(
        v.validate(&t).await,
        Err(AuthError::Unavailable(_))
    ));
    assert!(started.elapsed() < Duration::from_secs(3));

    let (base, script) = server(k.jwks.clone()).await;
    *script.delay.lock().unwrap() = Duration::from_secs(3);
    let v = OidcValidator::new(settings(&base)).unwrap();
    let started = Instant::now();
    match v.validate(&t).await {
        Err(AuthError::Unavailable(m)) => assert!(m.contains("timed out"), "{m}"),
        other => panic!("{other:?}"),
    }
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "bounded by the fetch timeout"
    );
}

#[tokio::test]
async fn opaque_tokens_are_introspected_and_the_answer_cached() {
    let (_, v, script) = setup().await;
    *script.introspection.lock().unwrap() =
        json!({"active": true, "sub": "bob", "aud": AUD, "exp": now() + 300, "groups": ["sales"]});
    let who = v.validate("opaque-token-1").await.unwrap();
    assert_eq!(who.subject.as_deref(), Some("bob"));
    assert_eq!(
        who.issuer.as_deref(),
        Some(ISS),
        "vouched for by the configured issuer"
    );
    assert_eq!(who.claims["groups"], json!(["sales"]));
    assert!(who.claims.get("active").is_none());
    assert!(v.validate("opaque-token-1").await.is_ok());
    assert_eq!(
        script.introspection_hits.load(Ordering::SeqCst),
        1,
        "cached"
    );

    *script.introspection.lock().unwrap() = json!({"active": false});
    assert_eq!(
        v.validate("opaque-token-2").await,
        Err(AuthError::InvalidToken("token is not active".into()))
    );
    *script.introspection.lock().unwrap() =
        json!({"active": true, "sub": "bob", "aud": "other", "exp": now() + 300});
    assert!(matches!(
        v.validate("opaque-token-3").await,
        Err(AuthError::InvalidToken(_))
    ));
    *script.introspection.lock().unwrap() = json!("<html>oops</html>");
    assert!(matches!(
        v.validate("opaque-token-4").await,
        Err(AuthError::Unavailable(_))
    ));
}

#[tokio::test]
async fn without_introspection_an_opaque_token_is_invalid() {
    let (base, _) = server(keys().jwks.clone()).await;
    let mut s = settings(&base);
    s.introspection_url = None;
    let v = OidcValidator::new(s).unwrap();
    assert!(matches!(
        v.validate("opaque").await,
        Err(AuthError::InvalidToken(_))
    ));
}

#[tokio::test]
async fn required_scopes_are_enforced_only_when_switched_on() {
    let (k, v, _) = setup().await;
    let t = k.sign("ES256", Some("p256"), &claims());
    let (base, _) = server(k.jwks.clone()).await;
    let mut s = settings(&base);
    s.scopes = vec!["mcp:read".into(), "mcp:write".into()];
    let advertised = OidcValidator::new(s.clone()).unwrap();
    assert!(advertised.validate(&t).await.is_ok(), "advertised only");
    s.require_scopes = true;
    let enforced = OidcValidator::new(s).unwrap();
    assert_eq!(
        enforced.validate(&t).await,
        Err(AuthError::InsufficientScope(vec!["mcp:write".into()]))
    );
    drop(v);
}

#[test]
fn urls_the_policy_refuses_are_startup_errors() {
    let mut s = settings("http://127.0.0.1:1");
    s.fetch.allow_http = false;
    assert!(matches!(OidcValidator::new(s), Err(AuthError::Config(_))));
}

#[tokio::test]
async fn a_validated_token_is_remembered_until_its_expiry() {
    let (k, v, script) = setup().await;
    let token = k.sign("ES256", Some("p256"), &claims());
    assert!(v.validate(&token).await.is_ok());
    // The issuer drops the key: the remembered token still passes without a new signature check
    // (no fetch either), for at most the validated-token TTL.
    *script.jwks.lock().unwrap() = json!({"keys": []});
    let fetches = script.jwks_hits.load(Ordering::SeqCst);
    for _ in 0..10 {
        assert!(v.validate(&token).await.is_ok());
    }
    assert_eq!(script.jwks_hits.load(Ordering::SeqCst), fetches);
    // A token that expired is not served from memory.
    let short = with(claims(), "exp", json!(now() + 1));
    let t = k.sign("ES256", Some("p256"), &short);
    *script.jwks.lock().unwrap() = k.jwks.clone();
    assert!(v.validate(&t).await.is_ok());
    tokio::time::sleep(Duration::from_millis(2100)).await;
    assert!(matches!(
        v.validate(&t).await,
        Err(AuthError::InvalidToken(_))
    ));
}
