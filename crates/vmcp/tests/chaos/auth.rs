//! Identity provider faults: the IdP (discovery and JWKS) unreachable while tokens are in use,
//! and the token endpoint of a backend's token exchange slow for 10 s. Every client has its own
//! user and token.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use vmcp_testkit::FixtureProcess;

use super::idp::{AUDIENCE, Idp, Signer};
use super::load::{Bearer, Load, Plan, Route, Target, WORKERS, Worker};
use super::{BACKEND_TIMEOUT, SERIAL, Timeline, operational};
use crate::common::{Gateway, http_backend};

/// The bound the gateway puts on one token exchange (vmcp-auth's fetch timeout, which no
/// setting changes).
const TOKEN_FETCH_BOUND: Duration = Duration::from_secs(5);
/// How long the slow token endpoint takes to answer: longer than the gateway waits.
const SLOW_TOKENS: Duration = Duration::from_secs(10);

/// `incomingAuth` for tokens of `idp`, plus `outgoing` (an `outgoingAuth` section or "").
fn gateway(idp: &Idp, backends: &[String], outgoing: &str) -> Gateway {
    Gateway::start(&format!(
        "name: chaos\nbackends:\n{}incomingAuth:\n  type: oidc\n  oidc:\n    issuer: {}\n    audience: {AUDIENCE}\n    insecureAllowHttp: true\n    jwksAllowPrivateIp: true\n{outgoing}{}",
        backends.concat(),
        idp.issuer,
        operational()
    ))
}

fn bearer(token: String) -> Option<Bearer> {
    Some(Arc::new(move || Some(token.clone())))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn idp_unreachable() {
    let _one_at_a_time = SERIAL.lock().await;
    let t = Timeline::from_env();
    let key = Signer::new("k1");
    let idp = Idp::start(&[&key]).await;
    let svc1 = FixtureProcess::spawn_http(&["--name", "svc1"]).await;
    let svc2 = FixtureProcess::spawn_http(&["--name", "svc2"]).await;
    let gw = gateway(
        &idp,
        &[
            http_backend("svc1", &svc1.url),
            http_backend("svc2", &svc2.url),
        ],
        "",
    );
    // Every request needs its token validated; the keys come from the cache while the IdP is
    // away (within jwksMaxStale, 1 h by default).
    let plan = Plan {
        fault: "IdP (discovery, JWKS) unreachable".into(),
        parts: vec![idp.issuer.clone(), "signing keys".into()],
        bound: BACKEND_TIMEOUT,
        workers: (0..WORKERS)
            .map(|n| Worker {
                route: Route::One(gw.url.clone()),
                targets: vec![
                    Target::echo("svc1_echo", true),
                    Target::echo("svc2_echo", true),
                ],
                bearer: bearer(key.token(&idp.issuer, &format!("user-{n}"))),
                faulted: true,
            })
            .collect(),
    };
    let load = Load::start(plan, t).await;
    load.before().await;
    load.fault_begins();
    idp.unreachable(true);
    tokio::time::sleep(t.during).await;
    idp.unreachable(false);
    load.fault_ends();
    load.after().await;
    let report = load.finish().await;
    report.publish();
    report.assert_clean();
}

/// Clients of [`idp_unreachable_while_it_rotates_its_key`] that switch to the new key.
const ROTATING: usize = 4;

// A token whose key the gateway cannot fetch while the IdP is unreachable was refused as 401
// invalid_token "no signing key k2 in the issuer's key set", naming no failing part and telling an
// OAuth client to drop a good token; it is 503 saying the signing keys cannot be fetched.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn idp_unreachable_while_it_rotates_its_key() {
    let _one_at_a_time = SERIAL.lock().await;
    let t = Timeline::from_env();
    let (old, new) = (Arc::new(Signer::new("k1")), Arc::new(Signer::new("k2")));
    let idp = Idp::start(&[&old]).await;
    let svc1 = FixtureProcess::spawn_http(&["--name", "svc1"]).await;
    let gw = gateway(&idp, &[http_backend("svc1", &svc1.url)], "");
    // While the IdP is away it starts signing with a key the gateway has not fetched; a few
    // clients get tokens signed with it (same users). Until the gateway can fetch the new key
    // set (at most once per 10 s), those tokens cannot be checked: the error must say the keys
    // could not be fetched, not that the token is invalid.
    let rotated = Arc::new(AtomicBool::new(false));
    let plan = Plan {
        fault: "IdP unreachable while it rotates its signing key".into(),
        parts: vec![idp.issuer.clone(), "signing keys".into()],
        bound: BACKEND_TIMEOUT,
        workers: (0..WORKERS)
            .map(|n| {
                let sub = format!("user-{n}");
                let before = old.token(&idp.issuer, &sub);
                // Issued once the IdP has rotated, as a real one would.
                let after = std::sync::OnceLock::new();
                let (new, issuer) = (new.clone(), idp.issuer.clone());
                let rotates = n < ROTATING;
                let switched = rotated.clone();
                let bearer: Bearer = Arc::new(move || {
                    Some(if rotates && switched.load(Ordering::Relaxed) {
                        after.get_or_init(|| new.token(&issuer, &sub)).clone()
                    } else {
                        before.clone()
                    })
                });
                Worker {
                    route: Route::One(gw.url.clone()),
                    targets: vec![Target::echo("svc1_echo", rotates)],
                    bearer: Some(bearer),
                    faulted: false,
                }
            })
            .collect(),
    };
    let load = Load::start(plan, t).await;
    load.before().await;
    load.fault_begins();
    idp.unreachable(true);
    idp.publish(&new);
    rotated.store(true, Ordering::Relaxed);
    tokio::time::sleep(t.during).await;
    idp.unreachable(false);
    load.fault_ends();
    load.after().await;
    let report = load.finish().await;
    report.publish();
    report.assert_clean();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn token_endpoint_slow() {
    token_endpoint_slow_for(WORKERS).await;
}

// Calls that share a token used to wait in turn behind the one exchange in flight, and each,
// finding nothing cached when its turn came, tried again for up to 5 s: 14 of 16 such calls were
// unanswered at the 10 s deadline. They now all take the one exchange's outcome.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn token_endpoint_slow_for_clients_sharing_a_token() {
    token_endpoint_slow_for(2).await;
}

/// The token endpoint slow while 16 clients call through it, sharing `users` tokens in turn (one
/// token per user: a user's parallel calls carry the same token, and the gateway exchanges it
/// once for all of them).
async fn token_endpoint_slow_for(users: usize) {
    let _one_at_a_time = SERIAL.lock().await;
    let t = Timeline::from_env();
    let key = Signer::new("k1");
    let idp = Idp::start(&[&key]).await;
    let xchg = FixtureProcess::spawn_http(&["--name", "xchg"]).await;
    let svc2 = FixtureProcess::spawn_http(&["--name", "svc2"]).await;
    let outgoing = format!(
        "outgoingAuth:\n  source: inline\n  backends:\n    xchg:\n      type: token_exchange\n      tokenExchange:\n        tokenUrl: {}\n        audience: https://xchg.chaos\n",
        idp.token_url()
    );
    let gw = gateway(
        &idp,
        &[
            http_backend("xchg", &xchg.url),
            http_backend("svc2", &svc2.url),
        ],
        &outgoing,
    );
    let tokens: Vec<String> = (0..users)
        .map(|u| key.token(&idp.issuer, &format!("user-{u}")))
        .collect();
    let plan = Plan {
        fault: format!(
            "token endpoint slow ({} s per answer), {users} tokens",
            SLOW_TOKENS.as_secs()
        ),
        parts: vec![idp.token_url(), "token exchange".into()],
        bound: TOKEN_FETCH_BOUND + BACKEND_TIMEOUT,
        workers: (0..WORKERS)
            .map(|n| Worker {
                route: Route::One(gw.url.clone()),
                targets: vec![
                    Target::echo("xchg_echo", true),
                    Target::echo("svc2_echo", false),
                ],
                bearer: bearer(tokens[n % users].clone()),
                faulted: false,
            })
            .collect(),
    };
    let load = Load::start(plan, t).await;
    load.before().await;
    let before = idp.exchanges();
    load.fault_begins();
    idp.slow_tokens(SLOW_TOKENS);
    // Slow for 10 s even in a short run: longer than two of the gateway's 5 s attempts.
    tokio::time::sleep(t.during.max(SLOW_TOKENS)).await;
    idp.slow_tokens(Duration::ZERO);
    load.fault_ends();
    load.after().await;
    let report = load.finish().await;
    report.publish();
    assert!(before > 0, "no token was exchanged before the fault");
    report.assert_clean();
    report.assert_felt();
}
