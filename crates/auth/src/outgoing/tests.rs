//! Token exchange against a scripted token endpoint on loopback: what is sent, the cache, one
//! exchange in flight per subject under concurrency, expiry, and each refusal. The end-to-end
//! tests exchange with a real OpenID provider.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use serde_json::{Value, json};

use super::*;

#[derive(Clone, Default)]
struct Endpoint {
    hits: Arc<AtomicUsize>,
    seen: Arc<Mutex<Vec<(String, String)>>>,
    answer: Arc<Mutex<(u16, Value)>>,
}

async fn token(
    State(e): State<Endpoint>,
    headers: HeaderMap,
    body: String,
) -> (StatusCode, String) {
    let n = e.hits.fetch_add(1, Ordering::SeqCst);
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    e.seen.lock().unwrap().push((body, auth));
    // Slow enough that concurrent callers overlap.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let (status, mut answer) = e.answer.lock().unwrap().clone();
    if answer.get("access_token").is_some() {
        answer["access_token"] = json!(format!("backend-token-{n}"));
    }
    (StatusCode::from_u16(status).unwrap(), answer.to_string())
}

async fn exchanger(expires_in: u64) -> (Arc<TokenExchange>, Endpoint) {
    let e = Endpoint::default();
    *e.answer.lock().unwrap() = (
        200,
        json!({"access_token": "x", "issued_token_type": ACCESS_TOKEN_TYPE,
            "token_type": "Bearer", "expires_in": expires_in}),
    );
    let app = Router::new()
        .route("/token", post(token))
        .with_state(e.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let x = TokenExchange::new(ExchangeSettings {
        token_url: format!("http://{addr}/token"),
        client_id: Some("gateway".into()),
        client_secret: Some(Secret::new("gw s3cret")),
        audience: Some("https://backend".into()),
        scopes: vec!["read".into(), "write".into()],
        subject_token_type: subject_token_type(None).unwrap(),
        fetch: FetchPolicy {
            allow_http: true,
            allow_private: true,
            timeout: Some(Duration::from_millis(500)),
            ..FetchPolicy::default()
        },
    })
    .unwrap();
    (Arc::new(x), e)
}

#[tokio::test]
async fn sends_an_rfc_8693_request_and_caches_the_answer() {
    let (x, e) = exchanger(300).await;
    let alice = Secret::new("alice-token");
    let t1 = x.exchange(&alice).await.unwrap();
    let t2 = x.exchange(&alice).await.unwrap();
    assert_eq!(t1.expose(), "backend-token-0");
    assert_eq!(t1, t2, "the second call is served from the cache");
    assert_eq!(x.counts(), (1, 1));
    let (body, auth) = e.seen.lock().unwrap()[0].clone();
    for part in [
        "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange",
        "subject_token=alice-token",
        "subject_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aaccess_token",
        "requested_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aaccess_token",
        "audience=https%3A%2F%2Fbackend",
        "scope=read+write",
    ] {
        assert!(body.contains(part), "{part} in {body}");
    }
    // HTTP Basic with the form-encoded id and secret (the space becomes +).
    use base64::Engine;
    let expected = base64::engine::general_purpose::STANDARD.encode("gateway:gw+s3cret");
    assert_eq!(auth, format!("Basic {expected}"));
    // Another subject gets its own exchange.
    let bob = x.exchange(&Secret::new("bob-token")).await.unwrap();
    assert_eq!(bob.expose(), "backend-token-1");
}

#[tokio::test]
async fn concurrent_misses_wait_for_one_exchange() {
    let (x, e) = exchanger(300).await;
    let subject = Secret::new("alice-token");
    let calls = (0..20).map(|_| {
        let (x, s) = (x.clone(), subject.clone());
        tokio::spawn(async move { x.exchange(&s).await })
    });
    let tokens: Vec<Secret> = futures_join(calls).await;
    assert_eq!(
        e.hits.load(Ordering::SeqCst),
        1,
        "one exchange for 20 concurrent callers"
    );
    assert!(tokens.iter().all(|t| t.expose() == "backend-token-0"));
    assert_eq!(x.counts(), (1, 19));
}

#[tokio::test]
async fn concurrent_misses_share_a_failed_exchange_instead_of_retrying_in_turn() {
    // Regression (chaos suite): each waiter used to try again after the one before it failed, so
    // the n-th caller sharing a token waited n times the endpoint's delay.
    let (x, e) = exchanger(300).await;
    *e.answer.lock().unwrap() = (503, json!({"error": "temporarily_unavailable"}));
    let subject = Secret::new("alice-token");
    let calls: Vec<_> = (0..20)
        .map(|_| {
            let (x, s) = (x.clone(), subject.clone());
            tokio::spawn(async move { x.exchange(&s).await })
        })
        .collect();
    for c in calls {
        match c.await.unwrap() {
            Err(AuthError::Unavailable(m)) => assert!(m.contains("HTTP 503"), "{m}"),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(
        e.hits.load(Ordering::SeqCst),
        1,
        "one attempt for 20 callers"
    );
    // A failure is not remembered: the next call tries again, and succeeds once the endpoint does.
    *e.answer.lock().unwrap() = (200, json!({"access_token": "x", "expires_in": 300}));
    assert_eq!(
        x.exchange(&subject).await.unwrap().expose(),
        "backend-token-1"
    );
}

async fn futures_join(
    calls: impl Iterator<Item = tokio::task::JoinHandle<Result<Secret, AuthError>>>,
) -> Vec<Secret> {
    let mut out = Vec::new();
    for c in calls {
        out.push(c.await.unwrap().unwrap());
    }
    out
}

#[tokio::test]
async fn a_token_about_to_expire_is_exchanged_again() {
    // expires_in 1 s: reused for at most half of it, so a call 0.6 s later exchanges again.
    let (x, e) = exchanger(1).await;
    let s = Secret::new("alice-token");
    x.exchange(&s).await.unwrap();
    tokio::time::sleep(Duration::from_millis(600)).await;
    let t = x.exchange(&s).await.unwrap();
    assert_eq!(t.expose(), "backend-token-1");
    assert_eq!(e.hits.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn refusals_name_the_exchange_and_never_the_tokens() {
    let (x, e) = exchanger(300).await;
    let s = Secret::new("alice-secret-token");
    *e.answer.lock().unwrap() = (
        400,
        json!({"error": "invalid_grant", "error_description": "subject token expired"}),
    );
    match x.exchange(&s).await {
        Err(AuthError::InvalidToken(m)) => {
            assert!(
                m.contains("invalid_grant") && m.contains("subject token expired"),
                "{m}"
            );
            assert!(!m.contains("alice-secret-token"), "{m}");
        }
        other => panic!("{other:?}"),
    }
    *e.answer.lock().unwrap() = (503, json!({"error": "temporarily_unavailable"}));
    assert!(matches!(
        x.exchange(&s).await,
        Err(AuthError::Unavailable(_))
    ));
    *e.answer.lock().unwrap() = (200, json!({"token_type": "Bearer"}));
    assert!(matches!(
        x.exchange(&s).await,
        Err(AuthError::Unavailable(_))
    ));
    // Failures are not cached.
    assert_eq!(e.hits.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn header_for_needs_a_caller_token_for_exchange_only() {
    let (x, _) = exchanger(300).await;
    let auth = OutgoingAuth::TokenExchange(x);
    assert!(auth.per_caller());
    assert!(matches!(
        auth.header_for(None).await,
        Err(AuthError::InvalidToken(_))
    ));
    let caller = Identity {
        subject: Some("alice".into()),
        token: Some(Secret::new("t")),
        ..Identity::default()
    };
    let (name, value) = auth.header_for(Some(&caller)).await.unwrap().unwrap();
    assert_eq!(name, "authorization");
    assert!(value.expose().starts_with("Bearer backend-token-"));
    let fixed = OutgoingAuth::Header {
        name: "X-Api-Key".into(),
        value: Secret::new("k"),
    };
    assert!(!fixed.per_caller());
    assert_eq!(
        fixed
            .header_for(None)
            .await
            .unwrap()
            .map(|(n, v)| (n, v.expose().to_string())),
        Some(("X-Api-Key".to_string(), "k".to_string()))
    );
    assert_eq!(OutgoingAuth::None.header_for(None).await.unwrap(), None);
}

#[test]
fn subject_token_types_accept_short_names_and_urns() {
    assert_eq!(
        subject_token_type(Some("jwt")).unwrap(),
        "urn:ietf:params:oauth:token-type:jwt"
    );
    assert_eq!(
        subject_token_type(Some("urn:ietf:params:oauth:token-type:id_token")).unwrap(),
        "urn:ietf:params:oauth:token-type:id_token"
    );
    assert!(subject_token_type(Some("saml")).is_err());
}

#[tokio::test]
async fn regression_huge_expires_in_neither_panics_nor_caches_past_a_day() {
    for expires_in in [
        json!(u64::MAX),
        json!(1e30),
        json!(f64::MAX),
        json!("18446744073709551615"),
        json!(-5),
    ] {
        let (x, e) = exchanger(300).await;
        e.answer.lock().unwrap().1["expires_in"] = expires_in.clone();
        let s = Secret::new("alice-token");
        let t = x.exchange(&s).await.unwrap();
        assert_eq!(t.expose(), "backend-token-0", "{expires_in}");
        let latest = Instant::now() + MAX_LIFETIME;
        let cache = x.cache.lock().unwrap();
        assert!(
            cache.values().all(|(_, until)| *until <= latest),
            "{expires_in}: cached past a day"
        );
    }
}

#[test]
fn lifetimes_are_read_leniently_and_clamped() {
    let at = |v: Value| lifetime(Some(&v));
    assert_eq!(at(json!(3600)), Duration::from_secs(3600));
    assert_eq!(at(json!("3599")), Duration::from_secs(3599));
    assert_eq!(at(json!(1.5)), Duration::from_millis(1500));
    assert_eq!(at(json!(u64::MAX)), MAX_LIFETIME);
    assert_eq!(at(json!(1e30)), MAX_LIFETIME);
    assert_eq!(at(json!(-5)), Duration::ZERO);
    assert_eq!(at(json!("soon")), DEFAULT_LIFETIME);
    assert_eq!(at(json!(null)), DEFAULT_LIFETIME);
    assert_eq!(lifetime(None), DEFAULT_LIFETIME);
}
