//! `backends[].caBundlePath`: a backend whose certificate a private CA signed is reached when its
//! bundle is configured, and refused (certificate not trusted) when it is not. The backend is an
//! rmcp server behind TLS (tokio-rustls) with the test certificate of tests/tls.

#![allow(clippy::unwrap_used)] // Test code: a panic is the failure report.

mod common;

use std::sync::Arc;

use common::eras::{BackendEra, spawn_sdk};
use common::{Client, Gateway};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::json;

const TLS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/tls");

/// Terminates TLS on an ephemeral port and forwards each connection's bytes to `plain` (an
/// rmcp backend on plain HTTP); returns the HTTPS URL.
async fn tls_front(plain: &str) -> String {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let certs: Vec<CertificateDer> = CertificateDer::pem_file_iter(format!("{TLS}/server.pem"))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let key = PrivateKeyDer::from_pem_file(format!("{TLS}/server.key")).unwrap();
    let config = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let upstream = plain
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_string();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, upstream) = (acceptor.clone(), upstream.clone());
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let Ok(mut inner) = tokio::net::TcpStream::connect(&upstream).await else {
                    return;
                };
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut inner).await;
            });
        }
    });
    format!("https://127.0.0.1:{port}/mcp")
}

fn config(url: &str, ca: Option<&str>) -> String {
    let ca = ca
        .map(|p| format!("    type: entry\n    caBundlePath: {p}\n"))
        .unwrap_or_default();
    format!(
        "name: tls\nbackends:\n  - name: secure\n    transport: streamable-http\n    url: {url}\n{ca}operational:\n  failureHandling:\n    partialFailureMode: best_effort\n"
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_backend_signed_by_a_private_ca_is_trusted_only_with_its_bundle() {
    let backend = spawn_sdk("secure", BackendEra::Both, 0).await;
    let url = tls_front(&backend.url).await;

    let ca = std::fs::canonicalize(format!("{TLS}/ca.pem")).unwrap();
    let gw = Gateway::start(&config(&url, Some(ca.to_str().unwrap())));
    let c = Client::connect(&gw.url).await;
    let r = c.call("secure_whoami", json!({})).await;
    assert_eq!(r["result"]["content"][0]["text"], "secure", "{r}");

    // Without the bundle the certificate is not trusted: discovery fails, naming why.
    let gw = Gateway::start(&config(&url, None));
    let a = Client::new(&gw.url)
        .post_raw(
            None,
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"}}}),
        )
        .await;
    assert_eq!(a.status, 503, "{}", a.text);
    let message = a.body["error"]["message"].as_str().unwrap_or("");
    assert!(
        message.contains("backend secure") && message.contains("UnknownIssuer"),
        "{message}"
    );
}
