//! The bearer token of `--oidc`, and which addresses get it: every gateway the harness starts
//! (and HAProxy in front of gateways), never a backend. Kept by address, as a netrc keeps
//! passwords by host, so every connection the scenarios open to a gateway carries the token
//! without each scenario passing it along, and the direct-to-backend path stays unchanged.

use std::collections::BTreeSet;
use std::sync::{Mutex, OnceLock};

use anyhow::{Context, bail};
use bytes::Bytes;
use http::{HeaderValue, Method, StatusCode, header};

use crate::http::HttpConn;

/// `Bearer <token>`, set once when `--oidc` mints it.
static AUTHORIZATION: OnceLock<HeaderValue> = OnceLock::new();
/// `host:port` of every gateway (or balancer of gateways) now running.
static GATEWAYS: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

/// From now on, connections to gateways present `token`.
///
/// # Errors
/// When the token cannot go in a header, or another token was set before.
pub(crate) fn use_token(token: &str) -> anyhow::Result<()> {
    let value = HeaderValue::from_str(&format!("Bearer {token}"))
        .context("the token cannot go in a header")?;
    AUTHORIZATION
        .set(value)
        .map_err(|_| anyhow::anyhow!("a bearer token was already set"))
}

/// `authority` is a gateway's (or fronts gateways): connections to it carry the token, if any.
pub(crate) fn grant(authority: &str) {
    if AUTHORIZATION.get().is_some() {
        gateways().insert(authority.to_owned());
    }
}

/// `authority` is no longer a gateway's (stopped, or its port now serves a backend).
pub(crate) fn revoke(authority: &str) {
    gateways().remove(authority);
}

/// The `Authorization` value for a connection to `authority`: the token for a gateway, else none.
pub(crate) fn for_authority(authority: &str) -> Option<HeaderValue> {
    let value = AUTHORIZATION.get()?;
    gateways().contains(authority).then(|| value.clone())
}

fn gateways() -> std::sync::MutexGuard<'static, BTreeSet<String>> {
    GATEWAYS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Fails loudly unless the gateway at `url` refuses an `initialize` without a token (HTTP 401):
/// a gateway that lets it through is not running the authenticated config the run claims to
/// measure.
///
/// # Errors
/// When the request cannot be sent or is not refused with 401.
pub(crate) async fn check_refuses_tokenless(url: &str) -> anyhow::Result<()> {
    let mut conn = HttpConn::connect_with(url, None).await?;
    let json = HeaderValue::from_static("application/json");
    let accept = HeaderValue::from_static("application/json, text/event-stream");
    let headers = [
        (header::CONTENT_TYPE.as_str(), &json),
        (header::ACCEPT.as_str(), &accept),
    ];
    let init = format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{}","capabilities":{{}},"clientInfo":{{"name":"vmcp-bench-tokenless","version":"1"}}}}}}"#,
        crate::http::LEGACY_VERSION
    );
    let reply = conn
        .send(Method::POST, None, &headers, Bytes::from(init))
        .await
        .with_context(|| format!("tokenless initialize to {url}"))?;
    if reply.status != StatusCode::UNAUTHORIZED {
        bail!(
            "--oidc: the gateway at {url} answered a request WITHOUT a bearer token with HTTP {} \
             (expected 401): it is not enforcing incomingAuth, so this run would not measure \
             authenticated requests. Body: {}",
            reply.status,
            crate::http::text(&reply.body)
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_granted_addresses_get_the_token() {
        // The one test that sets the process-wide token.
        use_token("t0ken").expect("first token");
        grant("127.0.0.1:1");
        assert_eq!(
            for_authority("127.0.0.1:1").expect("a gateway"),
            "Bearer t0ken"
        );
        assert!(for_authority("127.0.0.1:2").is_none(), "a backend");
        revoke("127.0.0.1:1");
        assert!(for_authority("127.0.0.1:1").is_none(), "stopped");
        assert!(use_token("other").is_err(), "one token per run");
    }

    /// A server answering every request with `status`, on loopback; its `/mcp` URL.
    async fn answering(status: StatusCode) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let url = format!("http://{}/mcp", listener.local_addr().expect("address"));
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let service = hyper::service::service_fn(move |_req| async move {
                    let mut resp = hyper::Response::new(http_body_util::Full::new(Bytes::new()));
                    *resp.status_mut() = status;
                    Ok::<_, std::convert::Infallible>(resp)
                });
                tokio::spawn(
                    hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service),
                );
            }
        });
        url
    }

    #[tokio::test]
    async fn the_self_check_fails_loudly_when_a_tokenless_request_gets_in() {
        let refusing = answering(StatusCode::UNAUTHORIZED).await;
        check_refuses_tokenless(&refusing)
            .await
            .expect("401 passes");
        let open = answering(StatusCode::OK).await;
        let err = check_refuses_tokenless(&open).await.expect_err("200 fails");
        assert!(err.to_string().contains("WITHOUT a bearer token"), "{err}");
    }
}
