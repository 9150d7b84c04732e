//! Several replicas behind a load balancer, sharing sessions and rate limits through Redis:
//! a real `redis-server` and a round-robin HAProxy (Debian's packages) in front of three `vmcp`
//! processes, so consecutive requests of one session land on different replicas.
//!
//! Skipped with a note when redis-server or haproxy is missing, except under `CI=true`.

#![allow(clippy::unwrap_used)] // Test code: a panic is the failure report.

mod common;

use std::collections::BTreeMap;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::eras::{ModernClient, SseReader, legacy_stream};
use common::{Client, Gateway, JSON_AND_SSE, eventually, http, http_backend, text_of};
use serde_json::{Value, json};
use vmcp_testkit::{
    FixtureOptions, RedisServer, serve_conformance_in_process, serve_http_in_process,
};

/// HAProxy balancing every request round-robin over the replicas; killed on drop.
struct Balancer {
    child: Child,
    url: String,
    stats: String,
    config: std::path::PathBuf,
}

/// Debian installs haproxy in /usr/sbin, which a non-root PATH may not have.
fn haproxy() -> &'static str {
    let on_path = Command::new("haproxy")
        .arg("-v")
        .stdout(Stdio::null())
        .status()
        .is_ok();
    if on_path {
        "haproxy"
    } else {
        "/usr/sbin/haproxy"
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Balancer {
    /// None (with a note) when haproxy is not installed outside CI.
    fn start(replicas: &[&Gateway]) -> Option<Balancer> {
        let installed = Command::new(haproxy())
            .arg("-v")
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !installed {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "CI must have haproxy (apt-get install haproxy; .ci/run does)"
            );
            eprintln!("note: haproxy is not installed; skipping the multi-replica test");
            return None;
        }
        let (port, stats) = (free_port(), free_port());
        let mut servers = String::new();
        for (i, r) in replicas.iter().enumerate() {
            let addr = r.base.trim_start_matches("http://");
            servers.push_str(&format!("  server r{} {addr} check\n", i + 1));
        }
        // Round robin per request; a dead replica is found by the check within ~300 ms (a refused
        // connection fails it at once, while a slow /health under load gets 2 s, not the 200 ms
        // check interval), and a refused connection is retried on another replica (redispatch).
        let config = format!(
            "global\n  maxconn 4096\ndefaults\n  mode http\n  timeout connect 1s\n  timeout client 60s\n  timeout server 60s\n  timeout check 2s\n  retries 2\n  option redispatch\nlisten mcp\n  bind 127.0.0.1:{port}\n  balance roundrobin\n  option httpchk GET /health\n  default-server inter 200ms fall 1 rise 2\n{servers}listen stats\n  bind 127.0.0.1:{stats}\n  stats enable\n  stats uri /stats\n"
        );
        let path = common::temp_path("haproxy.cfg");
        std::fs::write(&path, config).unwrap();
        let child = Command::new(haproxy())
            .args(["-db", "-f"])
            .arg(&path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start haproxy");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "haproxy did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(Balancer {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
            stats: format!("http://127.0.0.1:{stats}/stats;csv"),
            config: path,
        })
    }

    /// HAProxy's statistics page, as CSV.
    async fn stats_csv(&self) -> String {
        http()
            .get(&self.stats)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    }

    /// Requests each replica has served so far (`stot` of HAProxy's statistics), by name r1..rN.
    async fn served(&self) -> BTreeMap<String, u64> {
        let csv = self.stats_csv().await;
        let mut lines = csv.lines();
        let header: Vec<&str> = lines
            .next()
            .unwrap()
            .trim_start_matches("# ")
            .split(',')
            .collect();
        let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
        let (px, sv, stot) = (col("pxname"), col("svname"), col("stot"));
        lines
            .map(|l| l.split(',').collect::<Vec<_>>())
            .filter(|f| f.len() > stot && f[px] == "mcp" && f[sv].starts_with('r'))
            .map(|f| (f[sv].to_owned(), f[stot].parse().unwrap()))
            .collect()
    }

    /// Waits until HAProxy's checks see `n` replicas up.
    async fn wait_up(&self, n: usize) {
        let ok = eventually(Duration::from_secs(10), || async {
            let csv = self.stats_csv().await;
            csv.lines()
                .filter(|l| l.starts_with("mcp,r") && l.contains(",UP,"))
                .count()
                == n
        })
        .await;
        assert!(ok, "haproxy does not see {n} replicas up");
    }
}

impl Drop for Balancer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.config);
    }
}

/// An HTTP fixture named `name`, served in this process.
async fn fixture(name: &str) -> (String, tokio::task::JoinHandle<()>) {
    serve_http_in_process(FixtureOptions {
        name: name.into(),
        ..FixtureOptions::default()
    })
    .await
}

/// Redis, the conformance fixture and `notes`, three replicas on [`config`], and HAProxy in front
/// of them with every replica up; None (after a note) without redis-server or haproxy.
struct Cluster {
    redis: RedisServer,
    conformance: String,
    notes: String,
    replicas: Vec<Gateway>,
    lb: Balancer,
    _backends: [tokio::task::JoinHandle<()>; 2],
}

async fn cluster() -> Option<Cluster> {
    let redis = RedisServer::start()?;
    let (conformance, c) = serve_conformance_in_process().await;
    let (notes, n) = fixture("notes").await;
    let yaml = config(&redis.address(), &conformance, &notes, None);
    let replicas = start_replicas(&yaml, 3);
    let lb = Balancer::start(&replicas.iter().collect::<Vec<_>>())?;
    lb.wait_up(3).await;
    Some(Cluster {
        redis,
        conformance,
        notes,
        replicas,
        lb,
        _backends: [c, n],
    })
}

/// A config of the `notes` backend with sessions in `redis`, plus `extra` YAML.
fn shared_config(name: &str, redis: &RedisServer, notes: &str, extra: &str) -> String {
    format!(
        "name: {name}\nbackends:\n{}sessionStorage:\n  provider: redis\n  address: {}\n{extra}",
        http_backend("notes", notes),
        redis.address()
    )
}

/// The replicas' shared config: two backends, Redis sessions, a rate-limited tool.
fn config(redis: &str, conformance: &str, notes: &str, extra_backend: Option<&str>) -> String {
    let mut backends = http_backend("conf", conformance) + &http_backend("notes", notes);
    if let Some(url) = extra_backend {
        backends += &http_backend("extra", url);
    }
    format!(
        "name: scaled\nbackends:\n{backends}sessionStorage:\n  provider: redis\n  address: {redis}\nrateLimiting:\n  tools:\n    - name: notes_add\n      shared: {{maxTokens: 5, refillPeriod: 1h}}\n"
    )
}

/// The requestState keys every replica holds (what an operator's Secret would give them): the
/// first seals, both open.
const STATE_KEYS: &str =
    "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=,AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI=";

fn start_replicas(yaml: &str, n: usize) -> Vec<Gateway> {
    (0..n)
        .map(|_| Gateway::start_env(yaml, &["--watch"], &[("VMCP_STATE_KEY", STATE_KEYS)]))
        .collect()
}

/// Echo through the balancer `n` times, each answer checked against its own request.
async fn echo_many(c: &Client, tag: &str, n: usize) {
    for i in 0..n {
        let text = format!("{tag}-{i}");
        let r = c.call("notes_echo", json!({"text": text})).await;
        assert_eq!(text_of(&r), text, "{r}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sessions_calls_changes_and_elicitation_across_three_replicas() {
    let Some(Cluster {
        redis,
        conformance,
        notes,
        replicas,
        lb,
        _backends,
    }) = cluster().await
    else {
        return;
    };

    // A Legacy session through the balancer: every request lands on the next replica.
    let before = lb.served().await;
    let c = Client::connect_with(&lb.url, "2025-11-25", json!({"elicitation": {}})).await;
    let names = c.tool_names().await;
    for want in ["conf_test_elicitation", "notes_echo", "notes_add"] {
        assert!(names.iter().any(|n| n == want), "{want} missing: {names:?}");
    }
    echo_many(&c, "legacy", 9).await;
    let resources = c.ok("resources/list", json!({})).await;
    assert!(!resources["resources"].as_array().unwrap().is_empty());
    let after = lb.served().await;
    for (replica, n) in &after {
        let served = n - before.get(replica).copied().unwrap_or(0);
        assert!(
            served >= 3,
            "{replica} served only {served} of the session's requests: {after:?}"
        );
    }
    // Redis holds the session under ToolHive's prefix, with its TTL.
    let session = c.session.clone().unwrap();
    let key = format!("thv:vmcp:session:{session}");
    let ttl: i64 = redis.cli(&["TTL", &key]).trim().parse().unwrap();
    assert!(ttl > 0, "the session record has no TTL: {ttl}");
    let record: Value = serde_json::from_str(redis.cli(&["GET", &key]).trim()).unwrap();
    assert_eq!(
        record["vmcp.identity.binding"], "unauthenticated",
        "{record}"
    );
    assert_eq!(record["vmcp.protocol.version"], "2025-11-25", "{record}");

    // setLevel on one replica is seen by the others (the record carries it).
    c.ok("logging/setLevel", json!({"level": "error"})).await;
    let record: Value = serde_json::from_str(redis.cli(&["GET", &key]).trim()).unwrap();
    assert_eq!(record["vmcp.log.level"], "error", "{record}");

    // Mid-call elicitation: the call on replica 1, the client's answer posted to replica 2.
    let direct = |r: &Gateway| c.at(&r.url);
    let on_1 = direct(&replicas[0]);
    let on_2 = direct(&replicas[1]);
    let call = on_1
        .http
        .post(&on_1.url)
        .header("content-type", "application/json")
        .header("accept", JSON_AND_SSE)
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .json(&json!({"jsonrpc": "2.0", "id": 77, "method": "tools/call",
            "params": {"name": "conf_test_elicitation", "arguments": {"message": "Who are you?"}}}))
        .send()
        .await
        .unwrap();
    assert_eq!(call.status(), 200);
    let mut events = SseReader::new(call);
    let ask = events.next(Duration::from_secs(10)).await.unwrap();
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    let answer = on_2
        .post_raw(
            Some(session.clone()),
            json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept",
                "content": {"username": "ada-on-replica-2", "email": "ada@example.org"}}}),
        )
        .await;
    assert_eq!(answer.status, 202, "{}", answer.text);
    let done = events.next(Duration::from_secs(10)).await.unwrap();
    assert_eq!(done["id"], 77, "{done}");
    let text = text_of(&done);
    assert!(
        text.contains("ada-on-replica-2"),
        "the answer did not reach replica 1: {done}"
    );

    // A GET stream through the balancer, then a backend added to the config: whichever replica
    // holds the stream tells the client.
    let mut stream = legacy_stream(&c).await;
    let (extra, _e) = fixture("extra").await;
    let changed = config(&redis.address(), &conformance, &notes, Some(&extra));
    for r in &replicas {
        std::fs::write(&r.config_path, &changed).unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let event = stream.next(left).await.expect("stream ended");
        if event["method"] == "notifications/tools/list_changed" {
            break;
        }
    }
    let ok = eventually(Duration::from_secs(10), || async {
        c.tool_names()
            .await
            .iter()
            .filter(|n| n.starts_with("extra_"))
            .count()
            > 0
    })
    .await;
    assert!(ok, "the added backend's tools never appeared");

    // A rate limit of 5 on notes_add, counted across replicas and sessions.
    let others = [
        Client::connect(&lb.url).await,
        Client::connect(&lb.url).await,
    ];
    let mut allowed = 0;
    for i in 0..9 {
        let client = if i % 3 == 0 { &c } else { &others[i % 3 - 1] };
        let r = client.call("notes_add", json!({"a": i, "b": 1})).await;
        if r["result"]["isError"] != json!(true) {
            allowed += 1;
        } else {
            assert_eq!(r["result"]["structuredContent"]["code"], 429, "{r}");
        }
    }
    assert_eq!(allowed, 5, "the shared bucket of 5 let {allowed} through");
    let bucket = redis.cli(&[
        "HGET",
        "thv:rl:{local:scaled}:shared:tool:notes_add",
        "tokens",
    ]);
    assert!(!bucket.trim().is_empty(), "no bucket under ToolHive's key");

    // 2026-07-28 requests through the balancer: stateless, any replica.
    let modern = ModernClient::new(&lb.url);
    for i in 0..6 {
        let r = modern
            .ok(
                "tools/call",
                json!({"name": "notes_echo", "arguments": {"text": format!("m{i}")}}),
            )
            .await;
        assert_eq!(r["content"][0]["text"], format!("m{i}"), "{r}");
    }

    // DELETE on one replica ends the session on all of them: the others hear it on the bus
    // (they no longer ask Redis on every request), within moments.
    assert_eq!(c.delete().await, 200);
    for r in &replicas {
        wait_until_ended(&direct(r), &session).await;
    }
    assert_eq!(redis.cli(&["EXISTS", &key]).trim(), "0");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_killed_replica_loses_only_its_in_flight_requests() {
    let Some(mut cluster) = cluster().await else {
        return;
    };
    let lb = &cluster.lb;

    let mut sessions = Vec::new();
    for _ in 0..4 {
        sessions.push(Client::connect(&lb.url).await);
    }
    let url = lb.url.clone();
    let mut runs = Vec::new();
    for (s, c) in sessions.into_iter().enumerate() {
        let url = url.clone();
        runs.push(tokio::spawn(async move {
            let (mut ok, mut lost, mut not_found) = (0, 0, 0);
            for i in 0..60 {
                let text = format!("s{s}-{i}");
                let body = json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                    "params": {"name": "notes_echo", "arguments": {"text": text}}});
                let sent = c
                    .http
                    .post(&url)
                    .header("content-type", "application/json")
                    .header("accept", JSON_AND_SSE)
                    .header("mcp-session-id", c.session.clone().unwrap())
                    .header("mcp-protocol-version", "2025-11-25")
                    .json(&body)
                    .send()
                    .await;
                match sent {
                    Ok(resp) => {
                        let a = common::decode(resp).await;
                        match a.status {
                            200 => {
                                assert_eq!(a.body["id"], i, "a mixed answer: {}", a.text);
                                assert_eq!(text_of(&a.body), text, "{}", a.text);
                                ok += 1;
                            }
                            404 => not_found += 1,
                            // The balancer's answer for a request in flight on the killed replica.
                            502..=504 => lost += 1,
                            other => panic!("unexpected {other}: {}", a.text),
                        }
                    }
                    Err(_) => lost += 1,
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            (ok, lost, not_found)
        }));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    cluster.replicas[1].kill();
    let (mut ok, mut lost, mut not_found) = (0, 0, 0);
    for r in runs {
        let (o, l, n) = r.await.unwrap();
        ok += o;
        lost += l;
        not_found += n;
    }
    eprintln!(
        "after killing one of three replicas: {ok} answered, {lost} lost in flight, {not_found} session not found"
    );
    assert_eq!(not_found, 0, "sessions were lost with the replica");
    assert!(
        lost <= 4,
        "{lost} requests lost; only those in flight on the killed replica may be"
    );
    assert_eq!(ok + lost, 240);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_outage_degrades_legacy_keeps_modern_and_recovers() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    let (notes, _n) = fixture("notes").await;
    let yaml = shared_config("outage", &redis, &notes, "");
    let a = Gateway::start(&yaml);
    let b = Gateway::start(&yaml);
    let held = Client::connect(&a.url).await;
    echo_many(&held, "before", 2).await;

    let before = a.status().await;
    assert_eq!(before["sessionStorage"]["connected"], true, "{before}");
    assert_ne!(
        before["sessionStorage"]["replica"],
        b.status().await["sessionStorage"]["replica"]
    );

    redis.kill();
    let t = Instant::now();
    // The replica holding the session serves it from its own copy.
    echo_many(&held, "during", 3).await;
    // Another replica cannot vouch for it: 503 with the reason, promptly.
    let elsewhere = held.at(&b.url);
    let r = elsewhere
        .post_raw(
            held.session.clone(),
            json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}),
        )
        .await;
    assert_eq!(r.status, 503, "{}", r.text);
    assert!(r.text.contains("session storage unavailable"), "{}", r.text);
    assert_eq!(r.headers.get("retry-after").unwrap(), "1");
    // A new session cannot be stored: 503 too.
    let init = Client::new(&b.url)
        .post_raw(None, json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}))
        .await;
    assert_eq!(init.status, 503, "{}", init.text);
    // 2026-07-28 needs no Redis.
    let modern = ModernClient::new(&b.url);
    let r = modern
        .ok(
            "tools/call",
            json!({"name": "notes_echo", "arguments": {"text": "stateless"}}),
        )
        .await;
    assert_eq!(r["content"][0]["text"], "stateless", "{r}");
    assert!(
        t.elapsed() < Duration::from_secs(8),
        "the outage made requests wait: {:?}",
        t.elapsed()
    );
    let during = a.status().await;
    assert_eq!(during["sessionStorage"]["connected"], false, "{during}");

    // Redis comes back (empty): new sessions work without restarting anything.
    redis.restart();
    let ok = eventually(Duration::from_secs(10), || async {
        Client::new(&b.url)
            .post_raw(None, json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}))
            .await
            .status
            == 200
    })
    .await;
    assert!(ok, "sessions did not recover with Redis");
    let fresh = Client::connect(&b.url).await;
    let on_a = fresh.at(&a.url);
    // Replica a tried Redis moments ago and failed: it fails fast for up to 0.5 s more.
    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"});
    let recovered = eventually(Duration::from_secs(5), || async {
        on_a.post_raw(on_a.session.clone(), list.clone())
            .await
            .status
            == 200
    })
    .await;
    assert!(recovered, "replica a never reached Redis again");
    echo_many(&on_a, "after", 2).await;
}

/// The official Rust SDK's client through the balancer: its session works whichever replica
/// each of its requests (and its GET stream) lands on.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_rmcp_client_through_the_balancer() {
    use rmcp::ServiceExt;
    use rmcp::model::{CallToolRequestParams, ClientConfig, Implementation};
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

    // The cluster is kept whole: its replicas and Redis stop when it is dropped.
    let Some(cluster) = cluster().await else {
        return;
    };
    let lb = &cluster.lb;
    let before = lb.served().await;

    let transport = StreamableHttpClientTransport::with_client(
        http(),
        StreamableHttpClientTransportConfig::with_uri(lb.url.clone()),
    );
    let mut info = ClientConfig::default();
    info.client_info = Implementation::new("rmcp-through-haproxy", "1.0.0");
    let step = Duration::from_secs(20);
    let client = tokio::time::timeout(step, info.serve(transport))
        .await
        .unwrap()
        .expect("rmcp initialize through the balancer");
    let tools = tokio::time::timeout(step, client.list_all_tools())
        .await
        .unwrap()
        .unwrap();
    assert!(tools.iter().any(|t| t.name == "notes_echo"));
    for i in 0..9 {
        let text = format!("rmcp-{i}");
        let mut args = serde_json::Map::new();
        args.insert("text".into(), json!(text));
        let r = tokio::time::timeout(
            step,
            client.call_tool(CallToolRequestParams::new("notes_echo").with_arguments(args)),
        )
        .await
        .unwrap()
        .unwrap();
        let r = serde_json::to_value(&r).unwrap();
        assert_eq!(r["content"][0]["text"], json!(text), "{r}");
    }
    let after = lb.served().await;
    let spread = after
        .iter()
        .filter(|(replica, n)| **n > before.get(*replica).copied().unwrap_or(0))
        .count();
    assert_eq!(
        spread, 3,
        "the session's requests did not reach every replica: {after:?}"
    );
    let _ = client.cancel().await;
}

/// A composite tool asking a 2026-07-28 client: the question comes from one replica, the retry
/// with the answer is served by another (replicas hold the same keys from `VMCP_STATE_KEY`), and a
/// replay on a third is refused (its use is recorded in Redis). No key is ever kept in Redis, and a
/// replica without a key refuses to start rather than seal states other replicas cannot open.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_modern_clients_input_required_retry_works_on_any_replica_once() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (notes, _n) = fixture("notes").await;
    let yaml = shared_config(
        "asking",
        &redis,
        &notes,
        "compositeTools:\n  - name: greet_after_asking\n    description: Asks a name, then echoes a greeting\n    steps:\n      - id: ask\n        type: elicitation\n        message: \"Who is there?\"\n        schema: {type: object, properties: {name: {type: string}}, required: [name]}\n      - {id: greet, tool: notes.echo, dependsOn: [ask], arguments: {text: \"hello {{.steps.ask.output.content.name}}\"}}\n",
    );
    let (status, stderr) = run_serve_briefly(&yaml);
    assert!(
        !status.success(),
        "a replica without a key served: {stderr}"
    );
    assert!(
        stderr.contains("VMCP_STATE_KEY") && stderr.contains("greet_after_asking"),
        "{stderr}"
    );
    let replicas = start_replicas(&yaml, 3);
    let on = |i: usize| ModernClient::with_caps(&replicas[i].url, json!({"elicitation": {}}));
    let call = json!({"name": "greet_after_asking", "arguments": {}});
    let first = on(0).ok("tools/call", call.clone()).await;
    assert_eq!(first["resultType"], "input_required", "{first}");
    let mut retry = call.clone();
    retry["inputResponses"] = json!({"ask": {"action": "accept", "content": {"name": "Ada"}}});
    retry["requestState"] = first["requestState"].clone();
    let done = on(1).ok("tools/call", retry.clone()).await;
    assert_eq!(done["structuredContent"]["text"], "hello Ada", "{done}");
    let replay = on(2).request("tools/call", retry.clone()).await;
    assert!(replay.text.contains("already used"), "{}", replay.text);
    // Redis holds the used state's record and nothing that could seal one.
    let keys = redis.cli(&["--scan"]);
    assert!(keys.contains("used-state:"), "{keys}");
    assert!(!keys.contains("request-state-key"), "{keys}");
    for key in keys.lines().filter(|k| !k.is_empty()) {
        let value = redis.cli(&["GET", key]);
        for secret in STATE_KEYS.split(',') {
            assert!(
                !value.contains(secret.trim_end_matches('=')),
                "{key}: {value}"
            );
        }
    }
}

/// `vmcp serve` on `yaml` without `VMCP_STATE_KEY`, for a config it should refuse before it
/// listens; one still running after 30 s is killed (and counts as served).
fn run_serve_briefly(yaml: &str) -> (std::process::ExitStatus, String) {
    use std::io::Read;
    let config = common::temp_path("yaml");
    std::fs::write(&config, yaml).expect("write config");
    let mut child = Command::new(env!("CARGO_BIN_EXE_vmcp"))
        .args(["serve", "--port", "0", "--config"])
        .arg(&config)
        .env_remove("VMCP_STATE_KEY")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn vmcp");
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            break child.wait().expect("wait");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    let _ = child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr);
    let _ = std::fs::remove_file(&config);
    (status, stderr)
}

/// Rate limits in Redis when Redis is down: let through and counted (ToolHive's fail open), or
/// with `failClosed: true` rejected with the rate-limit shape; never a hang.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn shared_rate_limits_fail_open_or_closed_without_redis() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    let (notes, _n) = fixture("notes").await;
    let yaml = |closed: bool| {
        shared_config(
            "limits",
            &redis,
            &notes,
            &format!(
                "rateLimiting:\n  failClosed: {closed}\n  tools:\n    - name: notes_echo\n      shared: {{maxTokens: 100, refillPeriod: 1m}}\ntelemetry:\n  enablePrometheusMetricsPath: true\n"
            ),
        )
    };
    let open = Gateway::start(&yaml(false));
    let closed = Gateway::start(&yaml(true));
    let modern = |g: &Gateway| ModernClient::new(&g.url);
    let echo = json!({"name": "notes_echo", "arguments": {"text": "x"}});
    // Redis up: both draw from the bucket.
    modern(&open).ok("tools/call", echo.clone()).await;
    modern(&closed).ok("tools/call", echo.clone()).await;
    let tokens: f64 = redis
        .cli(&[
            "HGET",
            "thv:rl:{local:limits}:shared:tool:notes_echo",
            "tokens",
        ])
        .trim()
        .parse()
        .unwrap();
    assert!(
        (97.0..=99.0).contains(&tokens),
        "two draws from 100: {tokens}"
    );

    redis.kill();
    let t = Instant::now();
    for _ in 0..3 {
        let r = modern(&open).ok("tools/call", echo.clone()).await;
        assert_eq!(r["content"][0]["text"], "x", "{r}");
        let a = modern(&closed).request("tools/call", echo.clone()).await;
        assert_eq!(a.body["error"]["code"], 429, "{}", a.text);
    }
    assert!(t.elapsed() < Duration::from_secs(8), "{:?}", t.elapsed());
    let metrics = http()
        .get(format!("{}/metrics", open.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let count = |name: &str| -> f64 {
        metrics
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0)
    };
    assert!(
        count("toolhive_rate_limit_redis_errors_total") >= 3.0,
        "{metrics}"
    );
    assert!(
        count("toolhive_rate_limit_fail_open_total") >= 3.0,
        "{metrics}"
    );
    assert!(open.logs().contains("fail open"), "{}", open.logs());
}

/// Resource subscriptions across replicas, with an rmcp server as the backend: the client
/// subscribes on one replica while its GET stream is held by another, which takes the
/// subscription over (the bus's "changed") and delivers the backend's update; an unsubscribe on
/// a third replica releases it everywhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_subscription_made_on_one_replica_notifies_the_stream_on_another() {
    use common::eras::{BackendEra, spawn_sdk};

    let Some(redis) = RedisServer::start() else {
        return;
    };
    let docs = spawn_sdk("docs", BackendEra::Both, 0).await;
    let yaml = format!(
        "name: subs\nbackends:\n{}sessionStorage:\n  provider: redis\n  address: {}\n",
        http_backend("docs", &docs.url),
        redis.address()
    );
    let replicas = start_replicas(&yaml, 3);
    let c = Client::connect(&replicas[0].url).await;
    let mut stream = legacy_stream(&c.at(&replicas[2].url)).await;
    let uri = docs.server.resource_uri();
    c.at(&replicas[0].url)
        .ok("resources/subscribe", json!({"uri": uri}))
        .await;
    // Replica 1 subscribed on its backend connection; replica 3, holding the stream, follows.
    let both = eventually(Duration::from_secs(10), || async {
        let subs = docs.seen().subscriptions.lock().unwrap().clone();
        subs.iter()
            .filter(|(kind, u, _)| kind == "subscribe" && *u == uri)
            .count()
            == 2
    })
    .await;
    assert!(
        both,
        "the stream's replica never took the subscription over"
    );
    assert_eq!(docs.touch(&uri).await, 2);
    let update = stream.next(Duration::from_secs(10)).await.unwrap();
    assert_eq!(
        update["method"], "notifications/resources/updated",
        "{update}"
    );
    assert_eq!(update["params"]["uri"], json!(uri));
    assert!(
        stream.try_next(Duration::from_millis(500)).await.is_none(),
        "the update arrived twice"
    );

    c.at(&replicas[1].url)
        .ok("resources/unsubscribe", json!({"uri": uri}))
        .await;
    let released = eventually(Duration::from_secs(10), || async {
        docs.touch(&uri).await == 0
    })
    .await;
    assert!(released, "the replicas kept their backend subscriptions");
}

/// Redis down when the gateway starts: it starts anyway, serves 2026-07-28, answers 2025-11-25
/// `initialize` with 503, and serves sessions as soon as Redis is up. A Redis that stalls
/// (`CLIENT PAUSE`) costs a request at most the 1 s bound, never a hang.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_down_at_startup_then_slow() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    redis.kill();
    let (notes, _n) = fixture("notes").await;
    let yaml = shared_config("late", &redis, &notes, "");
    let a = Gateway::start(&yaml);
    let b = Gateway::start(&yaml);
    assert!(
        a.logs().contains("Redis does not answer yet"),
        "{}",
        a.logs()
    );
    let r = ModernClient::new(&a.url)
        .ok(
            "tools/call",
            json!({"name": "notes_echo", "arguments": {"text": "early"}}),
        )
        .await;
    assert_eq!(r["content"][0]["text"], "early", "{r}");
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let refused = Client::new(&a.url).post_raw(None, init.clone()).await;
    assert_eq!(refused.status, 503, "{}", refused.text);

    redis.restart();
    // Each replica finds Redis again on its own: one that failed to connect moments ago answers
    // 503 with Retry-After for up to RETRY_AFTER (0.5 s) before it tries again.
    for replica in [&a, &b] {
        let up = eventually(Duration::from_secs(10), || async {
            Client::new(&replica.url)
                .post_raw(None, init.clone())
                .await
                .status
                == 200
        })
        .await;
        assert!(up, "sessions never started working once Redis was up");
    }
    let c = Client::connect(&a.url).await;
    echo_many(&c.at(&b.url), "moved", 2).await;

    // Redis stalls for 5 s: a request that needs it gives up after about 1 s. CLIENT PAUSE
    // answers once the pause is in force, so no guess at when a stall has begun.
    assert_eq!(redis.cli(&["CLIENT", "PAUSE", "5000", "ALL"]).trim(), "OK");
    let fresh = Client::new(&b.url);
    let t = Instant::now();
    let r = fresh.post_raw(None, init.clone()).await;
    let waited = t.elapsed();
    assert_eq!(r.status, 503, "{}", r.text);
    // Either the call or the connect (a paused Redis answers no PING) ran out of its 1 s.
    assert!(r.text.contains("within 1s"), "{}", r.text);
    assert!(waited < Duration::from_secs(3), "waited {waited:?}");
    // A PING of our own is answered when the pause ends.
    tokio::task::block_in_place(|| redis.cli(&["PING"]));
    echo_many(&c.at(&b.url), "after-stall", 2).await;
}

/// A replica that holds a session and heard nothing on the bus about it serves it without
/// asking Redis: 30 calls cost no `GETEX` (the store vouched for the session when it was
/// created, or on its first call). Deleting it on the other replica still reaches this one.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_vouched_session_costs_no_round_trip_until_the_bus_says_otherwise() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (notes, _n) = fixture("notes").await;
    let yaml = shared_config("vouch", &redis, &notes, "");
    let a = Gateway::start(&yaml);
    let b = Gateway::start(&yaml);
    let c = Client::connect(&a.url).await;
    // One call first: it asks Redis only if the bus was not yet subscribed at initialize.
    echo_many(&c, "first", 1).await;
    let getex_before = command_calls(&redis, "getex");
    echo_many(&c, "vouched", 30).await;
    assert_eq!(
        command_calls(&redis, "getex"),
        getex_before,
        "calls on a vouched session asked Redis"
    );
    // The other replica has never seen it: it asks once, adopts it, then serves it alone too.
    echo_many(&c.at(&b.url), "adopted", 5).await;
    assert_eq!(command_calls(&redis, "getex"), getex_before + 1);
    assert_eq!(c.at(&b.url).delete().await, 200);
    wait_until_ended(&c, c.session.as_ref().unwrap()).await;
}

/// Waits (at most 3 s) until the replica `c` talks to answers 404 for `session`: a session
/// deleted on another replica ends here when the bus says so.
async fn wait_until_ended(c: &Client, session: &str) {
    let list = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"});
    let deadline = std::time::Instant::now() + Duration::from_secs(3);
    loop {
        let answer = c.post_raw(Some(session.to_owned()), list.clone()).await;
        if answer.status == 404 {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "a replica still serves a deleted session: {} {}",
            answer.status,
            answer.text
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// How many times Redis ran `command` (`INFO commandstats`).
fn command_calls(redis: &RedisServer, command: &str) -> u64 {
    let info = redis.cli(&["INFO", "commandstats"]);
    let prefix = format!("cmdstat_{command}:calls=");
    info.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .and_then(|rest| rest.split(',').next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

/// Expiry: an idle session's record expires in Redis after the session TTL, and every replica
/// then answers 404 for it; use slides the TTL.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_idle_session_expires_everywhere_and_use_slides_it() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (notes, _n) = fixture("notes").await;
    let yaml = shared_config("ttl", &redis, &notes, "");
    let a = Gateway::start_with(&yaml, &["--session-ttl", "2s"]);
    let b = Gateway::start_with(&yaml, &["--session-ttl", "2s"]);
    let kept = Client::connect(&a.url).await;
    let idle = Client::connect(&a.url).await;
    // `kept` is used every 0.5 s, alternating replicas; `idle` is not.
    for i in 0..8 {
        let on = if i % 2 == 0 { &b.url } else { &a.url };
        echo_many(&kept.at(on), "kept", 1).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let key = format!("thv:vmcp:session:{}", idle.session.clone().unwrap());
    assert_eq!(
        redis.cli(&["EXISTS", &key]).trim(),
        "0",
        "the idle record is still there"
    );
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    for r in [&a, &b] {
        let answer = idle
            .at(&r.url)
            .post_raw(idle.session.clone(), list.clone())
            .await;
        assert_eq!(answer.status, 404, "{}", answer.text);
    }
    echo_many(&kept.at(&a.url), "still", 1).await;
}
