//! The gateway's requests to token endpoints and identity providers never follow a redirect: one
//! could carry the client secret (HTTP Basic) or the caller's token to another host. A redirect
//! is an error naming where it pointed, with the Location's secrets redacted.

#![allow(clippy::unwrap_used)] // Test code: a panic is the failure report.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use vmcp_auth::{FetchPolicy, Fetcher};

/// A listener that counts the connections it gets and answers none of them.
async fn target() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let seen = hits.clone();
    tokio::spawn(async move {
        while let Ok((_tcp, _)) = listener.accept().await {
            seen.fetch_add(1, Ordering::SeqCst);
        }
    });
    (port, hits)
}

/// A server answering every request with a 307 to `location`.
async fn redirector(location: String) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            let location = location.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 8192];
                let _ = tcp.read(&mut buf).await;
                let answer = format!(
                    "HTTP/1.1 307 Temporary Redirect\r\nlocation: {location}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                );
                let _ = tcp.write_all(answer.as_bytes()).await;
                let _ = tcp.shutdown().await;
            });
        }
    });
    format!("http://{addr}/token")
}

#[tokio::test]
async fn a_redirect_is_an_error_naming_the_redacted_location_and_is_not_followed() {
    let (port, hits) = target().await;
    let url = redirector(format!(
        "http://127.0.0.1:{port}/steal/LOCATIONSECRET1234567890?code=LOCQUERYSECRET"
    ))
    .await;
    let fetcher = Fetcher::new(FetchPolicy {
        allow_http: true,
        allow_private: true,
        ..FetchPolicy::default()
    })
    .unwrap();

    let posted = fetcher
        .post_form(
            &url,
            &[("subject_token", "SUBJECTTOKEN")],
            Some(("vmcp", "CLIENTSECRET")),
        )
        .await;
    let got = fetcher.get(&url).await;
    for outcome in [posted.map(|_| ()), got.map(|_| ())] {
        let e = outcome.unwrap_err().to_string();
        assert!(e.contains("307"), "{e}");
        assert!(
            e.contains(&format!("http://127.0.0.1:{port}/steal/REDACTED")),
            "names where it pointed: {e}"
        );
        for secret in [
            "LOCATIONSECRET",
            "LOCQUERYSECRET",
            "CLIENTSECRET",
            "SUBJECTTOKEN",
        ] {
            assert!(!e.contains(secret), "{secret} in {e}");
        }
    }
    assert_eq!(hits.load(Ordering::SeqCst), 0, "the redirect was followed");
}
