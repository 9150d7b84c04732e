//! The client against a real `redis-server` that speaks only TLS, with certificates made for the
//! test and an ACL user: commands and pub/sub over `rediss://`, a client certificate when Redis
//! requires one, the server name, and each refusal (wrong password, untrusted server, missing
//! client certificate, TLS against a plain port) reported as `Rejected`, naming what to fix.

#![allow(clippy::unwrap_used)] // Test code: a panic is the failure report.

use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use vmcp_redis::{Client, Config, RedisError, Subscription, Tls, TlsFiles, Value};
use vmcp_testkit::{ClientCerts, RedisServer, RedisTlsServer};

fn files(server: &RedisTlsServer) -> TlsFiles {
    TlsFiles {
        ca_file: Some(server.ca_file()),
        ..TlsFiles::default()
    }
}

fn config(server: &RedisTlsServer, files: &TlsFiles, password: &str) -> Config {
    Config {
        address: server.address(),
        db: 0,
        username: Some(RedisTlsServer::USER.into()),
        password: Some(password.into()),
        tls: Some(Tls::new(files).unwrap()),
        timeout: Duration::from_secs(2),
    }
}

fn rejected(err: &RedisError) -> &str {
    match err {
        RedisError::Rejected { reason, .. } => reason,
        other => panic!("expected Rejected, got {other}"),
    }
}

#[tokio::test]
async fn commands_and_subscriptions_over_tls_as_an_acl_user() {
    let Some(server) = RedisTlsServer::start(ClientCerts::Optional) else {
        return;
    };
    let config = config(&server, &files(&server), RedisTlsServer::PASSWORD);
    let client = Client::new(config.clone());
    assert_eq!(
        client.call(&[b"SET", b"k", b"v", b"EX", b"60"]).await,
        Ok(Value::Status("OK".into()))
    );
    assert_eq!(server.cli(&["GET", "k"]).trim(), "v", "stored over TLS");
    assert_eq!(
        server.cli(&["ACL", "WHOAMI"]).trim(),
        RedisTlsServer::USER,
        "redis-cli is alice too"
    );
    let who = client.call(&[b"ACL", b"WHOAMI"]).await.unwrap();
    assert_eq!(who, Value::Data(RedisTlsServer::USER.into()));

    let (tx, mut rx) = mpsc::channel(4);
    let _sub = Subscription::start(config, vec!["bus".into()], tx);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let n = client.call(&[b"PUBLISH", b"bus", b"hello"]).await.unwrap();
        if n == Value::Int(1) {
            break;
        }
        assert!(Instant::now() < deadline, "never subscribed over TLS");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(&rx.recv().await.unwrap().payload[..], b"hello");
}

#[tokio::test]
async fn a_wrong_password_is_rejected_without_echoing_it() {
    let Some(server) = RedisTlsServer::start(ClientCerts::Optional) else {
        return;
    };
    let client = Client::new(config(&server, &files(&server), "not-the-password"));
    let err = client.call(&[b"PING"]).await.unwrap_err();
    let reason = rejected(&err);
    assert!(reason.contains("authentication failed"), "{err}");
    assert!(reason.contains("THV_SESSION_REDIS_PASSWORD"), "{err}");
    assert!(!err.to_string().contains("not-the-password"), "{err}");
    // While it stays wrong, calls fail at once with the same verdict.
    let again = client.call(&[b"PING"]).await.unwrap_err();
    assert!(matches!(again, RedisError::Rejected { .. }), "{again}");
}

#[tokio::test]
async fn a_server_certificate_from_another_ca_or_for_another_name_is_rejected() {
    let Some(server) = RedisTlsServer::start(ClientCerts::Optional) else {
        return;
    };
    let other = TlsFiles {
        ca_file: Some(server.other_ca_file()),
        ..TlsFiles::default()
    };
    let err = Client::new(config(&server, &other, RedisTlsServer::PASSWORD))
        .call(&[b"PING"])
        .await
        .unwrap_err();
    let reason = rejected(&err);
    assert!(reason.contains("UnknownIssuer"), "{err}");
    assert!(reason.contains("caFile"), "says what to check: {err}");

    // The certificate names 127.0.0.1, localhost and redis.test: serverName picks one of them
    // while the address stays an IP, and a name it does not carry is refused.
    let named = |name: &str| TlsFiles {
        server_name: Some(name.into()),
        ..files(&server)
    };
    let ok = Client::new(config(
        &server,
        &named("redis.test"),
        RedisTlsServer::PASSWORD,
    ));
    assert_eq!(ok.call(&[b"PING"]).await, Ok(Value::Status("PONG".into())));
    let wrong = Client::new(config(
        &server,
        &named("elsewhere.test"),
        RedisTlsServer::PASSWORD,
    ));
    let err = wrong.call(&[b"PING"]).await.unwrap_err();
    assert!(rejected(&err).contains("not valid for name"), "{err}");
}

#[tokio::test]
async fn a_required_client_certificate() {
    let Some(server) = RedisTlsServer::start(ClientCerts::Required) else {
        return;
    };
    let without = Client::new(config(&server, &files(&server), RedisTlsServer::PASSWORD));
    let err = without.call(&[b"PING"]).await.unwrap_err();
    assert!(rejected(&err).starts_with("TLS: "), "{err}");

    let with = TlsFiles {
        cert_file: Some(server.client_cert_file()),
        key_file: Some(server.client_key_file()),
        ..files(&server)
    };
    let client = Client::new(config(&server, &with, RedisTlsServer::PASSWORD));
    assert_eq!(
        client.call(&[b"PING"]).await,
        Ok(Value::Status("PONG".into()))
    );
}

/// TLS against a plain port, and plain TCP against a TLS port: each error says which to check.
#[tokio::test]
async fn the_wrong_side_of_tls_is_named() {
    let (Some(plain), Some(tls)) = (
        RedisServer::start(),
        RedisTlsServer::start(ClientCerts::Optional),
    ) else {
        return;
    };
    let client = Client::new(Config {
        address: plain.address(),
        timeout: Duration::from_millis(500),
        ..config(&tls, &files(&tls), RedisTlsServer::PASSWORD)
    });
    let err = client.call(&[b"PING"]).await.unwrap_err();
    assert!(err.to_string().contains("is this a TLS port?"), "{err}");

    let client = Client::new(Config {
        tls: None,
        ..config(&tls, &files(&tls), RedisTlsServer::PASSWORD)
    });
    let err = client.call(&[b"PING"]).await.unwrap_err();
    assert!(err.to_string().contains("use rediss://"), "{err}");
}

#[test]
fn unusable_files_name_the_setting() {
    let missing = TlsFiles {
        ca_file: Some("/nonexistent/ca.pem".into()),
        ..TlsFiles::default()
    };
    let err = Tls::new(&missing).unwrap_err().to_string();
    assert!(err.starts_with("caFile /nonexistent/ca.pem: "), "{err}");
    let half = TlsFiles {
        cert_file: Some("/tmp/c.pem".into()),
        ..TlsFiles::default()
    };
    assert_eq!(
        Tls::new(&half).unwrap_err().to_string(),
        "certFile and keyFile go together: set both or neither"
    );
}
