//! MCP traffic never follows a redirect: a backend answering 3xx would otherwise hand the request,
//! its injected credential (`X-Api-Key`) and the caller's arguments to whatever host its
//! `Location` names. Here backends of every HTTP flavour (Streamable HTTP on the lean pool, the
//! same with credentials in the URL on reqwest, HTTP+SSE) answer 307 to a second server that
//! records what reaches it: nothing does, and the errors name the Location, redacted.

#![allow(clippy::unwrap_used)] // Test code: a panic is the failure report.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::IntoResponse;
use common::{Client, Gateway, eventually};
use serde_json::json;

const API_KEY: &str = "INJECTEDAPIKEY123";

/// A server recording every request it gets (method, URI, headers).
async fn recorder() -> (std::net::SocketAddr, Arc<Mutex<Vec<String>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let app = axum::Router::new().fallback(move |method: Method, uri: Uri, headers: HeaderMap| {
        let log = log.clone();
        async move {
            log.lock()
                .unwrap()
                .push(format!("{method} {uri} {headers:?}"));
            StatusCode::NOT_FOUND
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (addr, seen)
}

/// A server answering every request with a 307 to `location`.
async fn redirector(location: String) -> std::net::SocketAddr {
    let app = axum::Router::new().fallback(move || {
        let location = location.clone();
        async move { (StatusCode::TEMPORARY_REDIRECT, [("location", location)]).into_response() }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

#[tokio::test(flavor = "multi_thread")]
async fn a_redirecting_backend_is_an_error_naming_the_location_and_nothing_follows_it() {
    let (target, seen) = recorder().await;
    let location = format!("http://{target}/mcp/LOCATIONSECRET1234567890?token=LOCQUERYSECRET");
    let from = redirector(location).await;
    let yaml = format!(
        r#"name: redirects
backends:
  - name: pooled
    transport: streamable-http
    url: http://{from}/mcp
  - name: credentialed
    transport: streamable-http
    url: http://user:PASSWORDSECRET42@{from}/mcp
  - name: legacysse
    transport: sse
    url: http://{from}/sse
outgoingAuth:
  default:
    type: header_injection
    headerInjection:
      headerName: X-Api-Key
      headerValue: {API_KEY}
"#
    );
    let gw = Gateway::start_with(&yaml, &["--debug"]);

    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}});
    let answer = Client::new(&gw.url).post_raw(None, init).await;
    // The gateway's requests were all answered by now: a redirect followed would show here.
    assert_eq!(
        *seen.lock().unwrap(),
        Vec::<String>::new(),
        "the redirect target was reached"
    );
    let expected = format!("redirecting to http://{target}/mcp/REDACTED?token=REDACTED");
    for name in ["pooled", "credentialed", "legacysse"] {
        assert!(
            answer.text.contains(&format!(
                "backend {name}: unavailable: the backend answered HTTP 307"
            )),
            "{name}: {}",
            answer.text
        );
    }
    assert_eq!(
        answer.text.matches(&expected).count(),
        3,
        "each error names the Location: {}",
        answer.text
    );
    let recorded = eventually(Duration::from_secs(15), || async {
        let status = gw.status().await;
        status["backends"]
            .as_array()
            .into_iter()
            .flatten()
            .all(|b| {
                b["lastError"]
                    .as_str()
                    .is_some_and(|e| e.contains(&expected))
            })
    })
    .await;
    assert!(recorded, "{}", gw.status().await);

    let logs = gw.logs();
    for secret in [
        "LOCATIONSECRET",
        "LOCQUERYSECRET",
        "PASSWORDSECRET42",
        API_KEY,
    ] {
        assert!(!answer.text.contains(secret), "{secret}: {}", answer.text);
        assert!(!logs.contains(secret), "{secret} logged:\n{logs}");
    }
}
