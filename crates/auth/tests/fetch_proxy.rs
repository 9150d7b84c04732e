//! The identity-provider fetcher ignores `HTTP_PROXY`, `HTTPS_PROXY` and `ALL_PROXY`: a proxy
//! resolves and connects on the gateway's behalf, past its address check. The environment is set
//! on a child process (this test binary run again), since setting it in a threaded test process is
//! unsound; the parent holds a recording proxy and asserts it saw no connection.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

use vmcp_auth::{FetchPolicy, Fetcher};

const CHILD: &str = "VMCP_FETCH_PROXY_CHILD";
const TARGET: &str = "VMCP_FETCH_PROXY_TARGET";

/// A loopback listener that answers every request with `answer` and counts connections.
fn listener(answer: &'static [u8]) -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let port = listener.local_addr().expect("a bound address").port();
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            // Counted before answering, so a client that got an answer has been counted.
            seen.fetch_add(1, Ordering::SeqCst);
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf);
            let _ = conn.write_all(answer);
        }
    });
    (port, count)
}

#[test]
fn proxy_environment_is_not_used() {
    let (proxy_port, proxied) =
        listener(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
    let (target_port, direct) =
        listener(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}");
    let proxy = format!("http://127.0.0.1:{proxy_port}");
    let mut child = Command::new(std::env::current_exe().unwrap());
    child
        .args([
            "child_fetches_under_proxy_environment",
            "--exact",
            "--nocapture",
        ])
        .env(CHILD, "1")
        .env(TARGET, format!("http://127.0.0.1:{target_port}/jwks"))
        .env_remove("NO_PROXY")
        .env_remove("no_proxy")
        // Under CGI, HTTP_PROXY is ignored (it could come from a request header).
        .env_remove("REQUEST_METHOD");
    for var in [
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
    ] {
        child.env(var, &proxy);
    }
    let out = child.output().unwrap();
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "child failed:\n{log}");
    assert!(
        log.contains("1 passed"),
        "the child test did not run:\n{log}"
    );
    assert_eq!(
        proxied.load(Ordering::SeqCst),
        0,
        "the proxy was used:\n{log}"
    );
    assert_eq!(direct.load(Ordering::SeqCst), 1, "{log}");
}

/// Runs only as the child of `proxy_environment_is_not_used`.
#[tokio::test]
async fn child_fetches_under_proxy_environment() {
    let Ok(target) = std::env::var(TARGET) else {
        return;
    };
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let strict = Fetcher::new(FetchPolicy {
        allow_http: true,
        ..FetchPolicy::default()
    })
    .unwrap();
    // Names the gateway cannot resolve: through a proxy they would be fetched anyway (the proxy
    // resolves them), plain HTTP as a forwarded request and HTTPS as a CONNECT tunnel.
    for url in [
        "http://idp.vmcp-proxy-test.invalid/jwks",
        "https://idp.vmcp-proxy-test.invalid/jwks",
    ] {
        assert!(strict.get(url).await.is_err(), "{url}");
    }
    // An allowed address is reached directly.
    let lax = Fetcher::new(FetchPolicy {
        allow_http: true,
        allow_private: true,
        ..FetchPolicy::default()
    })
    .unwrap();
    // Reported, not asserted: the parent's counts say where the request went.
    println!("direct fetch: {:?}", lax.get(&target).await);
}
