//! Scenario 8: several replicas. The HTTP fixture's `echo` behind HAProxy (round robin, request
//! by request) in front of one or three gateways sharing sessions in Redis, against the backend
//! and the gateway reached directly: session
//! creation, `tools/call` under load, Redis round trips per request, and each replica's file
//! descriptors with 1,000 sessions over 10 backends. Redis and HAProxy are Debian's packages; the
//! scenario is skipped, with a note, when either is missing.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use bytes::Bytes;
use serde_json::{Value, json};
use tokio::process::Command;

use crate::bearer;
use crate::cli::Settings;
use crate::http::{Edge, HttpConn, McpSession};
use crate::load::{self, Conn, Outcome, Plan, Template, Watched};
use crate::procs::{Env, Proc};
use crate::report::{Section, ratio};
use crate::services::{Aux, free_port, installed, redis, wait_port};
use crate::setup::{Backend, gateway_config, redis_session_storage, wait_ready};
use crate::stats::{Latency, fmt};

const HEADER: &[&str] = &[
    "path",
    "session create p50",
    "session create p99",
    "c",
    "call p50",
    "call p99",
    "req/s",
    "CPU/req gateways",
    "p50 ratio to backend",
    "errors",
];

/// Labels of the watched gateways (the load runner wants static labels).
const GATEWAYS: [&str; 3] = ["gateway 1", "gateway 2", "gateway 3"];

/// HAProxy balancing every request round robin over `servers` (`host:port`).
async fn haproxy(scratch: &Path, label: &str, servers: &[&str]) -> anyhow::Result<Aux> {
    let port = free_port()?;
    let mut config = format!(
        "global\n  maxconn 4096\ndefaults\n  mode http\n  timeout connect 2s\n  timeout client 60s\n  timeout server 60s\nlisten mcp\n  bind 127.0.0.1:{port}\n  balance roundrobin\n"
    );
    for (i, s) in servers.iter().enumerate() {
        config.push_str(&format!("  server r{i} {s}\n"));
    }
    let path = scratch.join(format!("haproxy-{label}.cfg"));
    std::fs::write(&path, config)?;
    let child = Command::new("haproxy")
        .arg("-db")
        .arg("-f")
        .arg(&path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .context("starting haproxy")?;
    wait_port(port, "haproxy").await?;
    // What goes through it goes to gateways: it carries their bearer token too (under --oidc).
    bearer::grant(&format!("127.0.0.1:{port}"));
    Ok(Aux::new(child, port))
}

/// Calls of each command Redis has run so far (`INFO commandstats`), without INFO itself.
fn redis_commands(port: u16) -> anyhow::Result<BTreeMap<String, u64>> {
    let out = std::process::Command::new("redis-cli")
        .args(["-p", &port.to_string(), "INFO", "commandstats"])
        .output()
        .context("running redis-cli")?;
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text
        .lines()
        .filter_map(|l| l.strip_prefix("cmdstat_"))
        .filter_map(|l| {
            let (name, rest) = l.split_once(':')?;
            let calls = rest
                .strip_prefix("calls=")?
                .split(',')
                .next()?
                .parse()
                .ok()?;
            (name != "info").then(|| (name.to_owned(), calls))
        })
        .collect())
}

fn delta(before: &BTreeMap<String, u64>, after: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    after
        .iter()
        .map(|(k, v)| (k.clone(), v - before.get(k).copied().unwrap_or(0)))
        .filter(|(_, v)| *v > 0)
        .collect()
}

/// Open file descriptors of `pid`.
fn fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, Iterator::count)
}

/// One way of reaching the gateways: directly, or through HAProxy.
struct Topology {
    label: &'static str,
    url: String,
    /// The echo tool's name on this path.
    tool: &'static str,
    gateways: Vec<Proc>,
    balancer: Option<Aux>,
}

/// Scenario 8.
pub(crate) async fn run(env: &Env, s: &Settings) -> anyhow::Result<Section> {
    let mut section = Section::new(
        "scale",
        "8. Several replicas: HAProxy round robin, sessions in Redis",
        HEADER,
    );
    if !(installed("redis-server") && installed("haproxy") && installed("redis-cli")) {
        section.notes.push(
            "Skipped: needs redis-server, redis-cli and haproxy (Debian: apt-get install \
             redis-server haproxy)."
                .to_owned(),
        );
        return Ok(section);
    }
    let store = redis().await?;
    let fixture = env.fixture_http("fx", 0, &[]).await?;
    let fx = [Backend::Http {
        name: "fx",
        url: &fixture.url,
    }];
    let memory = gateway_config(&fx);
    let shared = format!("{memory}{}", redis_session_storage(store.port));
    let mut paths = vec![Topology {
        label: "backend directly (no gateway)",
        url: fixture.url.clone(),
        tool: "echo",
        gateways: Vec::new(),
        balancer: None,
    }];
    for (label, config, replicas, balanced) in [
        ("gateway directly, memory sessions", &memory, 1, false),
        ("HAProxy + 1 replica, memory sessions", &memory, 1, true),
        ("HAProxy + 1 replica, Redis sessions", &shared, 1, true),
        ("HAProxy + 3 replicas, Redis sessions", &shared, 3, true),
    ] {
        let mut gateways = Vec::new();
        for i in 0..replicas {
            let tag = format!("scale-{}-{i}", paths.len());
            let gw = env.gateway(&tag, config).await?;
            wait_ready(&gw).await?;
            gateways.push(gw);
        }
        let (url, balancer) = if balanced {
            let servers: Vec<&str> = gateways.iter().map(Proc::authority).collect();
            let lb = haproxy(&env.scratch, &paths.len().to_string(), &servers).await?;
            (format!("http://127.0.0.1:{}/mcp", lb.port), Some(lb))
        } else {
            (gateways[0].url.clone(), None)
        };
        paths.push(Topology {
            label,
            url,
            tool: "fx_echo",
            gateways,
            balancer,
        });
    }

    let plan = Plan {
        warmup: s.warmup,
        duration: s.duration,
    };
    let mut json_paths = Vec::new();
    let mut direct_p50: BTreeMap<usize, Duration> = BTreeMap::new();
    for path in &paths {
        let creation = create_sessions(&path.url, s.iterations).await?;
        let mut runs = Vec::new();
        for &c in &s.concurrency {
            let mut repeats = Vec::new();
            for _ in 0..s.repeat {
                repeats.push(call_run(path, c, plan).await?);
            }
            let o = Outcome::median(&repeats);
            let cpu: Option<Duration> = if path.gateways.is_empty() {
                None
            } else {
                GATEWAYS[..path.gateways.len()]
                    .iter()
                    .map(|g| o.cpu(g))
                    .sum()
            };
            if path.gateways.is_empty() {
                direct_p50.insert(c, o.latency.p50);
            }
            let p50_ratio = direct_p50
                .get(&c)
                .and_then(|d| ratio(o.latency.p50.as_secs_f64(), d.as_secs_f64()));
            section.rows.push(vec![
                path.label.to_owned(),
                fmt(creation.p50),
                fmt(creation.p99),
                c.to_string(),
                fmt(o.latency.p50),
                fmt(o.latency.p99),
                format!("{:.0}", o.rps),
                cpu.map_or("-".to_owned(), fmt),
                p50_ratio.map_or("-".to_owned(), |r| format!("{r:.2}x")),
                o.errors.to_string(),
            ]);
            runs.push(
                json!({"concurrency": c, "run": o.to_json(), "p50_ratio_to_direct": p50_ratio}),
            );
        }
        json_paths
            .push(json!({"path": path.label, "session_create": creation.to_json(), "calls": runs}));
    }

    // Redis round trips per request, through three replicas.
    let three = &paths[4];
    let n = if s.quick { 100 } else { 1000 };
    let legacy = round_trips(&three.url, store.port, Edge::Legacy, n).await?;
    let modern = round_trips(&three.url, store.port, Edge::Modern, n).await?;
    let per = |d: &BTreeMap<String, u64>| d.values().sum::<u64>() as f64 / n as f64;
    section.notes.push(format!(
        "Redis commands per request over {n} sequential tools/call through HAProxy + 3 replicas: \
         2025-11-25 {:.2} ({}), 2026-07-28 {:.2} ({}). Each command is one round trip.",
        per(&legacy),
        show(&legacy),
        per(&modern),
        show(&modern),
    ));

    for path in paths {
        for gw in path.gateways {
            gw.stop().await;
        }
        drop(path.balancer);
    }
    fixture.stop().await;

    let descriptors = descriptors(env, s, &store).await?;
    section.notes.push(descriptors.0);
    if !env.session_storage.is_empty() {
        section.notes.push(
            "--redis: the gateways of the rows labelled memory sessions keep their sessions in \
             the harness's Redis too (only the direct backend row is unchanged)."
                .to_owned(),
        );
    }
    section.notes.push(
        "Round robin is per request: consecutive requests of one session land on different \
         replicas. CPU/req sums every gateway's CPU (not HAProxy's or Redis's). p50 ratio is \
         against the backend reached directly at the same concurrency (medians of --repeat runs)."
            .to_owned(),
    );
    section.json = json!({
        "paths": json_paths,
        "redis_commands_per_request": {
            "requests": n,
            "legacy": {"per_request": per(&legacy), "commands": legacy},
            "modern": {"per_request": per(&modern), "commands": modern},
        },
        "file_descriptors": descriptors.1,
    });
    drop(store);
    Ok(section)
}

fn show(commands: &BTreeMap<String, u64>) -> String {
    if commands.is_empty() {
        return "none".to_owned();
    }
    commands
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `initialize` + `notifications/initialized` `n` times in a row on one connection, each session
/// then deleted.
async fn create_sessions(url: &str, n: usize) -> anyhow::Result<Latency> {
    let mut conn = HttpConn::connect(url).await?;
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n.max(1) {
        let start = Instant::now();
        let session = McpSession::legacy_on(conn).await?;
        samples.push(u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX));
        conn = session.close().await;
    }
    Ok(Latency::of(&mut samples))
}

async fn call_run(path: &Topology, c: usize, plan: Plan) -> anyhow::Result<Outcome> {
    let mut conns = Vec::with_capacity(c);
    for _ in 0..c {
        conns.push(Conn::Http(Edge::Legacy.open(&path.url).await?));
    }
    let watch: Vec<Watched> = path
        .gateways
        .iter()
        .zip(GATEWAYS)
        .map(|(g, label)| Watched::new(label, g.pid))
        .collect();
    let template = Template::tools_call(path.tool, Edge::Legacy)?;
    let (out, conns) = load::run(conns, Arc::new(template), plan, &watch).await;
    for conn in conns {
        conn.close().await;
    }
    Ok(out)
}

/// The Redis commands `n` sequential calls on `edge` cost.
async fn round_trips(
    url: &str,
    redis_port: u16,
    edge: Edge,
    n: usize,
) -> anyhow::Result<BTreeMap<String, u64>> {
    let mut session = edge.open(url).await?;
    let headers = edge.request_headers("tools/call", Some("fx_echo"))?;
    let mut params = json!({"name": "fx_echo", "arguments": {"text": "hello"}});
    if let Some(meta) = edge.request_meta() {
        params["_meta"] = meta;
    }
    let before = redis_commands(redis_port)?;
    for id in 0..n {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
        session
            .request_with(Bytes::from(body.to_string()), &headers)
            .await?;
    }
    let after = redis_commands(redis_port)?;
    session.close().await;
    Ok(delta(&before, &after))
}

/// File descriptors of each of three replicas (behind HAProxy) before and after 1,000 sessions
/// each call a tool on each of 10 backends.
async fn descriptors(env: &Env, s: &Settings, store: &Aux) -> anyhow::Result<(String, Value)> {
    const BACKENDS: usize = 10;
    let sessions = if s.quick { 100 } else { 1000 };
    let mut fixtures = Vec::with_capacity(BACKENDS);
    for i in 0..BACKENDS {
        fixtures.push(env.fixture_http(&format!("b{i}"), 0, &[]).await?);
    }
    let backends: Vec<Backend<'_>> = fixtures
        .iter()
        .zip(["b0", "b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8", "b9"])
        .map(|(f, name)| Backend::Http { name, url: &f.url })
        .collect();
    let config = format!(
        "{}  maxSessions: 20000\n{}",
        gateway_config(&backends),
        redis_session_storage(store.port)
    );
    let mut gateways = Vec::new();
    for i in 0..3 {
        let gw = env.gateway(&format!("scale-fds-{i}"), &config).await?;
        wait_ready(&gw).await?;
        gateways.push(gw);
    }
    let servers: Vec<&str> = gateways.iter().map(Proc::authority).collect();
    let lb = haproxy(&env.scratch, "fds", &servers).await?;
    let url = format!("http://127.0.0.1:{}/mcp", lb.port);
    // One call per backend first, so every replica has its backend connections open.
    for _ in 0..3 {
        call_every_backend(&url, None, BACKENDS).await?;
    }
    let before: Vec<usize> = gateways.iter().map(|g| fds(g.pid)).collect();
    // 1,000 sessions over 10 client connections, each calling every backend.
    let workers: Vec<_> = (0..10)
        .map(|_| {
            let url = url.clone();
            tokio::spawn(async move {
                let mut ids = Vec::new();
                let mut conn = HttpConn::connect(&url).await?;
                for _ in 0..sessions / 10 {
                    let session = McpSession::legacy_on(conn).await?;
                    ids.push(session.session_id().context("no session id")?);
                    conn = session.detach();
                }
                for id in ids {
                    conn = call_every_backend(&url, Some((conn, id)), BACKENDS).await?;
                }
                anyhow::Ok(())
            })
        })
        .collect();
    for w in workers {
        w.await??;
    }
    let after: Vec<usize> = gateways.iter().map(|g| fds(g.pid)).collect();
    let note = format!(
        "File descriptors per replica (3 replicas behind HAProxy, 10 HTTP backends): {} before, \
         {} after {sessions} sessions each called a tool on every backend ({} calls). A model \
         opening backend connections per client session would need {} per replica.",
        join(&before),
        join(&after),
        sessions * BACKENDS,
        sessions * BACKENDS / 3
    );
    let value = json!({"sessions": sessions, "backends": BACKENDS, "replicas": 3,
        "before": before, "after": after});
    drop(lb);
    for g in gateways {
        g.stop().await;
    }
    for f in fixtures {
        f.stop().await;
    }
    Ok((note, value))
}

fn join(v: &[usize]) -> String {
    v.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(" / ")
}

/// `tools/call` of `echo` on every backend in `session` (a new one when None); gives the
/// connection back.
async fn call_every_backend(
    url: &str,
    session: Option<(HttpConn, http::HeaderValue)>,
    backends: usize,
) -> anyhow::Result<HttpConn> {
    let mut session = match session {
        Some((conn, id)) => McpSession::resume(conn, id),
        None => McpSession::legacy(url).await?,
    };
    for b in 0..backends {
        let body = json!({"jsonrpc": "2.0", "id": b, "method": "tools/call",
            "params": {"name": format!("b{b}_echo"), "arguments": {"text": "hi"}}});
        session
            .request_with(Bytes::from(body.to_string()), &[])
            .await?;
    }
    Ok(session.detach())
}
