//! Two replicas sharing sessions through a Redis that speaks only TLS (`rediss://`, certificates
//! made for the test, a private CA in `sessionStorage.tls.caFile`) as an ACL user
//! (`sessionStorage.username`, the password in `THV_SESSION_REDIS_PASSWORD`): a 2025-11-25
//! session created on one replica is served by the other, and both are on the bus. Credentials
//! or a CA that Redis refuses stop `vmcp serve` with an error naming what to fix.
//!
//! Skipped with a note when redis-server is missing, except under `CI=true`.

#![allow(clippy::unwrap_used)] // Test code: a panic is the failure report.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Client, Gateway, eventually, http_backend, text_of};
use serde_json::json;
use vmcp_testkit::{ClientCerts, FixtureOptions, RedisTlsServer, serve_http_in_process};

/// The `notes` fixture behind Redis at `address` over TLS, trusting `ca`.
fn config(notes: &str, address: &str, ca: &std::path::Path) -> String {
    format!(
        "name: tls-redis\nbackends:\n{}sessionStorage:\n  provider: redis\n  address: {address}\n  username: {}\n  tls:\n    caFile: {}\n",
        http_backend("notes", notes),
        RedisTlsServer::USER,
        ca.display()
    )
}

fn password(p: &str) -> [(&'static str, &str); 1] {
    [("THV_SESSION_REDIS_PASSWORD", p)]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_replicas_share_a_session_over_rediss_as_an_acl_user() {
    let Some(redis) = RedisTlsServer::start(ClientCerts::Optional) else {
        return;
    };
    let (notes, _n) = serve_http_in_process(FixtureOptions {
        name: "notes".into(),
        ..FixtureOptions::default()
    })
    .await;
    let yaml = config(&notes, &redis.url(), &redis.ca_file());
    let env = password(RedisTlsServer::PASSWORD);
    let a = Gateway::start_env(&yaml, &[], &env);
    let b = Gateway::start_env(&yaml, &[], &env);
    assert!(a.logs().contains("Redis answers"), "{}", a.logs());

    // Created on a, served by b: b finds the session only through Redis.
    let c = Client::connect(&a.url).await;
    let session = c.session.clone().unwrap();
    for (replica, text) in [(&b, "on-b"), (&a, "on-a"), (&b, "on-b-again")] {
        let r = c
            .at(&replica.url)
            .call("notes_echo", json!({"text": text}))
            .await;
        assert_eq!(text_of(&r), text, "{r}");
    }
    let key = format!("thv:vmcp:session:{session}");
    assert!(
        redis.cli(&["GET", &key]).contains("vmcp.protocol.version"),
        "the record is in the TLS Redis"
    );

    // Both replicas are on the bus, over TLS, as alice.
    let subscribed = eventually(Duration::from_secs(10), || async {
        redis
            .cli(&["PUBSUB", "NUMSUB", "thv:vmcp:session:bus"])
            .lines()
            .nth(1)
            .is_some_and(|n| n.trim() == "2")
    })
    .await;
    assert!(
        subscribed,
        "{}",
        redis.cli(&["PUBSUB", "NUMSUB", "thv:vmcp:session:bus"])
    );
    let clients = redis.cli(&["CLIENT", "LIST"]);
    assert!(
        clients.lines().filter(|l| l.contains("user=alice")).count() >= 4,
        "{clients}"
    );
    for replica in [&a, &b] {
        let up = eventually(Duration::from_secs(10), || async {
            replica.status().await["sessionStorage"]["connected"] == json!(true)
        })
        .await;
        assert!(up, "{}", replica.status().await);
    }

    // Ended on b, gone on a.
    assert_eq!(c.at(&b.url).delete().await, 200);
    let gone = c
        .at(&a.url)
        .post_raw(
            Some(session),
            json!({"jsonrpc": "2.0", "id": 9, "method": "ping"}),
        )
        .await;
    assert_eq!(gone.status, 404, "{}", gone.text);
}

/// A password, CA or file that cannot work stops the start, saying which setting to fix and
/// never echoing the password.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_credentials_or_certificates_are_a_startup_error() {
    let Some(redis) = RedisTlsServer::start(ClientCerts::Optional) else {
        return;
    };
    let (notes, _n) = serve_http_in_process(FixtureOptions {
        name: "notes".into(),
        ..FixtureOptions::default()
    })
    .await;
    let good = config(&notes, &redis.url(), &redis.ca_file());

    let (ok, stderr) = serve_until_exit(&good, "wrong-password-123");
    assert!(!ok, "a wrong password must stop the start");
    assert!(
        stderr.contains("session storage: Redis at rediss://127.0.0.1:")
            && stderr.contains("authentication failed")
            && stderr.contains("THV_SESSION_REDIS_PASSWORD"),
        "{stderr}"
    );
    assert!(!stderr.contains("wrong-password-123"), "{stderr}");

    let other_ca = config(&notes, &redis.url(), &redis.other_ca_file());
    let (ok, stderr) = serve_until_exit(&other_ca, RedisTlsServer::PASSWORD);
    assert!(!ok, "an untrusted server certificate must stop the start");
    assert!(
        stderr.contains("UnknownIssuer") && stderr.contains("caFile"),
        "{stderr}"
    );

    let missing = config(
        &notes,
        &redis.url(),
        std::path::Path::new("/nonexistent/redis-ca.pem"),
    );
    let (ok, stderr) = serve_until_exit(&missing, RedisTlsServer::PASSWORD);
    assert!(!ok);
    assert!(
        stderr.contains("sessionStorage.tls: caFile /nonexistent/redis-ca.pem"),
        "{stderr}"
    );
}

/// Runs `vmcp serve` on `yaml` with `password` until it exits (a start that does not fail
/// within 30 s is killed and counts as started); returns whether it ran and its stderr.
fn serve_until_exit(yaml: &str, password: &str) -> (bool, String) {
    use std::io::Read;
    let config = common::temp_path("yaml");
    std::fs::write(&config, yaml).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_vmcp"))
        .args(["serve", "--port", "0", "--config"])
        .arg(&config)
        .env("THV_SESSION_REDIS_PASSWORD", password)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    let _ = child.stderr.take().unwrap().read_to_string(&mut stderr);
    let _ = std::fs::remove_file(&config);
    (status.is_none_or(|s| s.success()), stderr)
}
