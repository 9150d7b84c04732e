//! vmcp-redis (ours: `crates/redis` as it is built; at the measured commit, the `redis` crate's
//! multiplexed connection driven inline by the calling task, pooled per thread; since, one
//! connection per thread with a spawned driver) against redis-rs as usually used (the same connection, driven by a
//! task the crate spawns) and against fred 10 (a router task it spawns drives the socket), on a
//! local `redis-server` this program starts on a free port.
//!
//! Workloads, each on a tokio current-thread runtime (as vmcp's serving threads run) and on a
//! multi-thread one (one worker per core), every workload run inside a spawned task:
//!
//! - `seq`: sequential `GETEX <key> EX 3600` of a 300-byte value, vmcp's per-request session
//!   read (crates/server/src/shared.rs, `SharedSessions::load`);
//! - `conc`: the same from 32 concurrent tasks (throughput, CPU per call);
//! - `pubsub`: a subscriber on one connection, and 10,000 `PUBLISH`es, one round trip each, from
//!   a child process (this program, `publish` mode, plain std sockets), so that only the
//!   subscriber's CPU is counted (RUSAGE_SELF does not include children).
//!
//! CPU is the process's `getrusage(RUSAGE_SELF)` user + sys, so it includes every thread: a
//! runtime's workers and whatever a client spawns. Variants are interleaved, their order rotated
//! every sample; 5 samples each, medians reported. README.md has the results.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fred::interfaces::{ClientLike, EventInterface, PubsubInterface};
use fred::types::config::{Config as FredConfig, ServerConfig, TcpConfig};
use fred::types::{Builder, ClusterHash, CustomCommand};
use futures_util::StreamExt;
use redis::IntoConnectionInfo;

/// The bound on a connect and on each call, given to all three clients so that each call arms
/// a timer in all of them, as vmcp's do. vmcp's is 1 s (crates/vmcp/src/assemble.rs,
/// REDIS_TIMEOUT); this one is long because on a shared machine this process, at nice 19, can
/// be starved or stopped for longer than that. A timer costs the same whatever its length.
const TIMEOUT: Duration = Duration::from_secs(600);
const KEY: &str = "thv:vmcp:session:0b7e2f4c-5d1a-4c3e-9f60-2a8d9b1c7e43";
const VALUE_LEN: usize = 300;
/// About the size of a bus message (`{"replica":…,"kind":"changed","session":…}`).
const PAYLOAD_LEN: usize = 120;
/// Each subscriber's queue: vmcp's (crates/server/src/shared.rs, `mpsc::channel(1024)`).
const QUEUE: usize = 1024;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Variant {
    Ours,
    RedisRs,
    Fred,
}

const VARIANTS: [Variant; 3] = [Variant::Ours, Variant::RedisRs, Variant::Fred];

impl Variant {
    fn name(self) -> &'static str {
        match self {
            Variant::Ours => "vmcp-redis (ours, as crates/redis builds it)",
            Variant::RedisRs => "redis-rs 1.8.2 (spawned connection task)",
            Variant::Fred => "fred 10 (spawned router task)",
        }
    }

    fn tag(self) -> &'static str {
        match self {
            Variant::Ours => "ours",
            Variant::RedisRs => "redis-rs",
            Variant::Fred => "fred",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Flavor {
    Current,
    Multi,
}

impl Flavor {
    fn name(self) -> &'static str {
        match self {
            Flavor::Current => "current-thread",
            Flavor::Multi => "multi-thread",
        }
    }

    fn runtime(self) -> tokio::runtime::Runtime {
        let mut b = match self {
            Flavor::Current => tokio::runtime::Builder::new_current_thread(),
            Flavor::Multi => tokio::runtime::Builder::new_multi_thread(),
        };
        b.enable_all().build().expect("tokio runtime")
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Workload {
    Seq,
    Conc,
    PubSub,
}

impl Workload {
    fn parse(s: &str) -> Workload {
        match s {
            "seq" => Workload::Seq,
            "conc" => Workload::Conc,
            "pubsub" => Workload::PubSub,
            other => panic!("unknown workload {other} (seq, conc, pubsub)"),
        }
    }
}

#[derive(Clone)]
struct Opts {
    calls: usize,
    tasks: usize,
    per_task: usize,
    messages: usize,
    reps: usize,
    port: Option<u16>,
    workloads: Vec<Workload>,
    flavors: Vec<Flavor>,
    raw: bool,
    block_on: bool,
}

fn usage() -> ! {
    eprintln!(
        "usage: fred-compare [--calls N (20000)] [--tasks T (32)] [--per-task M (1000)] \
         [--messages N (10000)] [--reps R (5)] [--workloads seq,conc,pubsub] \
         [--flavors current,multi] [--port P (use a running redis-server)] [--raw] \
         [--block-on (measure from block_on's thread, not from a spawned task)]"
    );
    std::process::exit(2)
}

fn parse_opts(args: &[String]) -> Opts {
    let mut o = Opts {
        calls: 20_000,
        tasks: 32,
        per_task: 1_000,
        messages: 10_000,
        reps: 5,
        port: None,
        workloads: vec![Workload::Seq, Workload::Conc, Workload::PubSub],
        flavors: vec![Flavor::Current, Flavor::Multi],
        raw: false,
        block_on: false,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = || it.next().cloned().unwrap_or_else(|| usage());
        match a.as_str() {
            "--calls" => o.calls = val().parse().unwrap_or_else(|_| usage()),
            "--tasks" => o.tasks = val().parse().unwrap_or_else(|_| usage()),
            "--per-task" => o.per_task = val().parse().unwrap_or_else(|_| usage()),
            "--messages" => o.messages = val().parse().unwrap_or_else(|_| usage()),
            "--reps" => o.reps = val().parse().unwrap_or_else(|_| usage()),
            "--port" => o.port = Some(val().parse().unwrap_or_else(|_| usage())),
            "--workloads" => o.workloads = val().split(',').map(Workload::parse).collect(),
            "--flavors" => {
                o.flavors = val()
                    .split(',')
                    .map(|f| match f {
                        "current" => Flavor::Current,
                        "multi" => Flavor::Multi,
                        _ => usage(),
                    })
                    .collect()
            }
            "--raw" => o.raw = true,
            "--block-on" => o.block_on = true,
            _ => usage(),
        }
    }
    o
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("publish") {
        return publisher(&args[1..]);
    }
    let opts = parse_opts(&args);
    let _server;
    let port = match opts.port {
        Some(p) => p,
        None => {
            let s = RedisServer::start();
            let p = s.port;
            _server = s;
            p
        }
    };
    let value = session_record();
    assert_eq!(
        simple(port, &[b"SET", KEY.as_bytes(), value.as_bytes()]),
        "+OK"
    );
    println!(
        "redis-server on 127.0.0.1:{port} ({}); {} cores; load average {}",
        simple(port, &[b"INFO", b"server"])
            .lines()
            .find(|l| l.starts_with("redis_version"))
            .unwrap_or("?"),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        loadavg()
    );
    for &workload in &opts.workloads {
        for &flavor in &opts.flavors {
            run(workload, flavor, port, &opts);
        }
    }
    println!("load average {}", loadavg());
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// A ToolHive-shaped session record of exactly VALUE_LEN bytes.
fn session_record() -> String {
    let mut s = String::from(
        r#"{"vmcp.backend.ids":"github,jira","vmcp.client.capabilities":"{\"roots\":{}}","vmcp.identity.binding":"sha256:9f2c","vmcp.log.level":"info","vmcp.protocol.version":"2025-11-25","vmcp.resource.subscriptions":""#,
    );
    while s.len() < VALUE_LEN - 2 {
        s.push('x');
    }
    s.push_str("\"}");
    assert_eq!(s.len(), VALUE_LEN);
    s
}

// ---------------------------------------------------------------------------------------------
// Measurement

#[derive(Clone, Copy)]
struct Sample {
    wall: Duration,
    cpu: Duration,
    /// `write`-family system calls (/proc/self/io syscw): a request written, or one worker
    /// waking another through the runtime's eventfd. Socket reads go through recv(2), which
    /// /proc/self/io does not count. Context switches: getrusage nvcsw + nivcsw, each time a
    /// thread parked or was preempted.
    writes: u64,
    switches: u64,
    n: usize,
}

impl Sample {
    /// Mean latency: wall time per call of one caller (`callers` running at once).
    fn latency_us(&self, callers: usize) -> f64 {
        self.wall.as_secs_f64() * 1e6 * callers as f64 / self.n as f64
    }
    fn cpu_us(&self) -> f64 {
        self.cpu.as_secs_f64() * 1e6 / self.n as f64
    }
    fn per_sec(&self) -> f64 {
        self.n as f64 / self.wall.as_secs_f64()
    }
    fn per_unit(&self, count: u64) -> f64 {
        count as f64 / self.n as f64
    }
}

/// The process's counters so far, every thread: CPU (user + sys), context switches, write
/// system calls.
#[derive(Clone, Copy)]
struct Counters {
    cpu: Duration,
    switches: u64,
    writes: u64,
}

fn counters() -> Counters {
    // SAFETY: getrusage fills the struct it is given.
    let u = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        assert_eq!(libc::getrusage(libc::RUSAGE_SELF, &mut u), 0);
        u
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    let io = std::fs::read_to_string("/proc/self/io").unwrap_or_default();
    let field = |name: &str| {
        io.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    };
    Counters {
        cpu: tv(u.ru_utime) + tv(u.ru_stime),
        switches: (u.ru_nvcsw + u.ru_nivcsw) as u64,
        writes: field("syscw:"),
    }
}

struct Meter(Instant, Counters);

impl Meter {
    fn start() -> Meter {
        let c = counters();
        Meter(Instant::now(), c)
    }
    fn stop(self, n: usize) -> Sample {
        let wall = self.0.elapsed();
        let (a, b) = (self.1, counters());
        Sample {
            wall,
            cpu: b.cpu - a.cpu,
            writes: b.writes - a.writes,
            switches: b.switches - a.switches,
            n,
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn run(workload: Workload, flavor: Flavor, port: u16, opts: &Opts) {
    let rt = flavor.runtime();
    let o = opts.clone();
    // Everything inside a spawned task: on the multi-thread runtime it then runs on a worker,
    // as a request handler would, not on the thread that called block_on.
    let samples: Vec<Vec<Sample>> = if opts.block_on {
        rt.block_on(async move { measure(workload, port, &o).await })
    } else {
        rt.block_on(async move {
            tokio::spawn(async move { measure(workload, port, &o).await })
                .await
                .expect("measurement task")
        })
    };
    drop(rt);
    let (title, unit, callers) = match workload {
        Workload::Seq => (format!("{} sequential GETEX", opts.calls), "call", 1),
        Workload::Conc => (
            format!(
                "{} tasks x {} GETEX ({} calls)",
                opts.tasks,
                opts.per_task,
                opts.tasks * opts.per_task
            ),
            "call",
            opts.tasks,
        ),
        Workload::PubSub => (
            format!("{} messages received", opts.messages),
            "message",
            1,
        ),
    };
    println!();
    println!(
        "### {title}, {} runtime{} ({} samples each, medians; writes and switches per {unit})",
        flavor.name(),
        if opts.block_on { ", from block_on's thread" } else { "" },
        opts.reps
    );
    println!();
    println!(
        "| client | CPU µs/{unit} | CPU range | latency µs | {unit}s/s | writes | switches |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for v in VARIANTS {
        let s = &samples[v.index()];
        let cpu: Vec<f64> = s.iter().map(Sample::cpu_us).collect();
        let lo = cpu.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = cpu.iter().copied().fold(0.0, f64::max);
        println!(
            "| {} | {:.1} | {:.1}-{:.1} | {:.1} | {:.0} | {:.2} | {:.2} |",
            v.name(),
            median(cpu.clone()),
            lo,
            hi,
            median(s.iter().map(|x| x.latency_us(callers)).collect()),
            median(s.iter().map(Sample::per_sec).collect()),
            median(s.iter().map(|x| x.per_unit(x.writes)).collect()),
            median(s.iter().map(|x| x.per_unit(x.switches)).collect()),
        );
        if opts.raw {
            let raw: Vec<String> = s
                .iter()
                .map(|x| format!("{:.1}/{:.1}", x.cpu_us(), x.latency_us(callers)))
                .collect();
            println!("|   raw cpu/latency | {} | | | | | |", raw.join(" "));
        }
    }
}

async fn measure(workload: Workload, port: u16, o: &Opts) -> Vec<Vec<Sample>> {
    let mut out = vec![Vec::new(), Vec::new(), Vec::new()];
    match workload {
        Workload::Seq | Workload::Conc => {
            let clients = Clients::connect(port).await;
            // Warm up: every connection a variant will use is open before the first sample.
            for v in VARIANTS {
                sequential(&clients, v, 1_000).await;
                concurrent(&clients, v, o.tasks, 50).await;
            }
            for rep in 0..o.reps {
                for i in 0..VARIANTS.len() {
                    let v = VARIANTS[(rep + i) % VARIANTS.len()];
                    let s = match workload {
                        Workload::Seq => sequential(&clients, v, o.calls).await,
                        _ => concurrent(&clients, v, o.tasks, o.per_task).await,
                    };
                    out[v.index()].push(s);
                }
            }
            clients.close().await;
        }
        Workload::PubSub => {
            // One unmeasured round per variant first.
            for v in VARIANTS {
                pubsub(v, port, 500).await;
            }
            for rep in 0..o.reps {
                for i in 0..VARIANTS.len() {
                    let v = VARIANTS[(rep + i) % VARIANTS.len()];
                    out[v.index()].push(pubsub(v, port, o.messages).await);
                }
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// The three clients

#[derive(Clone)]
struct Clients {
    ours: Arc<vmcp_redis::Client>,
    redis: redis::aio::MultiplexedConnection,
    fred: fred::clients::Client,
    key: bytes::Bytes,
}

fn ours_config(port: u16) -> vmcp_redis::Config {
    vmcp_redis::Config {
        address: format!("127.0.0.1:{port}"),
        db: 0,
        username: None,
        password: None,
        tls: None,
        timeout: TIMEOUT,
    }
}

fn redis_client(port: u16) -> redis::Client {
    let info = format!("redis://127.0.0.1:{port}/")
        .into_connection_info()
        .expect("redis URL")
        .set_tcp_settings(redis::io::tcp::TcpSettings::default().set_nodelay(true));
    redis::Client::open(info).expect("redis client")
}

fn fred_builder(port: u16) -> Builder {
    let mut b = Builder::from_config(FredConfig {
        server: ServerConfig::new_centralized("127.0.0.1", port),
        ..FredConfig::default()
    });
    b.with_connection_config(|c| {
        c.connection_timeout = TIMEOUT;
        c.internal_command_timeout = TIMEOUT;
        c.tcp = TcpConfig {
            nodelay: Some(true),
            ..TcpConfig::default()
        };
    })
    .with_performance_config(|p| {
        p.default_command_timeout = TIMEOUT;
        p.broadcast_channel_capacity = QUEUE;
    });
    b
}

impl Clients {
    async fn connect(port: u16) -> Clients {
        let ours = Arc::new(vmcp_redis::Client::new(ours_config(port)));
        let redis = redis_client(port)
            .get_multiplexed_async_connection_with_config(
                &redis::AsyncConnectionConfig::new()
                    .set_connection_timeout(Some(TIMEOUT))
                    .set_response_timeout(Some(TIMEOUT)),
            )
            .await
            .expect("redis-rs connect");
        let fred = fred_builder(port).build().expect("fred client");
        // The returned handle is the router task's; the client runs until quit.
        let _task = fred.init().await.expect("fred connect");
        Clients {
            ours,
            redis,
            fred,
            key: bytes::Bytes::from_static(KEY.as_bytes()),
        }
    }

    async fn close(self) {
        let _ = self.fred.quit().await;
    }

    async fn getex(&mut self, v: Variant) -> usize {
        match v {
            Variant::Ours => {
                let args: [&[u8]; 4] = [b"GETEX", &self.key, b"EX", b"3600"];
                match self.ours.call(&args).await.expect("ours: GETEX") {
                    vmcp_redis::Value::Data(d) => d.len(),
                    other => panic!("ours: GETEX answered {other:?}"),
                }
            }
            Variant::RedisRs => {
                let v: Option<Vec<u8>> = redis::cmd("GETEX")
                    .arg(&self.key[..])
                    .arg("EX")
                    .arg("3600")
                    .query_async(&mut self.redis)
                    .await
                    .expect("redis-rs: GETEX");
                v.expect("redis-rs: the key exists").len()
            }
            Variant::Fred => {
                // fred 10.1 has no typed GETEX: `custom`, as its docs say for such commands.
                let v: fred::types::Value = self
                    .fred
                    .custom(
                        CustomCommand::new_static("GETEX", ClusterHash::FirstKey, false),
                        vec![
                            fred::types::Value::Bytes(self.key.clone()),
                            fred::types::Value::from_static_str("EX"),
                            fred::types::Value::from_static_str("3600"),
                        ],
                    )
                    .await
                    .expect("fred: GETEX");
                v.as_bytes().expect("fred: a bulk string").len()
            }
        }
    }
}

async fn sequential(c: &Clients, v: Variant, n: usize) -> Sample {
    let mut c = c.clone();
    let m = Meter::start();
    for _ in 0..n {
        assert_eq!(c.getex(v).await, VALUE_LEN);
    }
    m.stop(n)
}

async fn concurrent(c: &Clients, v: Variant, tasks: usize, per_task: usize) -> Sample {
    let m = Meter::start();
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..tasks {
        let mut c = c.clone();
        set.spawn(async move {
            for _ in 0..per_task {
                assert_eq!(c.getex(v).await, VALUE_LEN);
            }
        });
    }
    while let Some(r) = set.join_next().await {
        r.expect("a GETEX task");
    }
    m.stop(tasks * per_task)
}

// ---------------------------------------------------------------------------------------------
// Pub/sub

/// Subscribes with `v`, has a child process publish `n` messages one round trip at a time, and
/// measures from the go signal to the n-th message received.
async fn pubsub(v: Variant, port: u16, n: usize) -> Sample {
    let channel = format!("fred-compare:bus:{}", v.tag());
    let mut publisher = Publisher::spawn(port, &channel, n);
    let wait = TIMEOUT;
    let sample = match v {
        Variant::Ours => {
            let (tx, mut rx) = tokio::sync::mpsc::channel(QUEUE);
            let sub = vmcp_redis::Subscription::start(ours_config(port), vec![channel], tx);
            while !sub.is_up() {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            let m = Meter::start();
            publisher.go();
            for i in 0..n {
                let msg = tokio::time::timeout(wait, rx.recv())
                    .await
                    .unwrap_or_else(|_| panic!("ours: message {i} of {n} never came"))
                    .expect("ours: subscription open");
                assert_eq!(msg.payload.len(), PAYLOAD_LEN);
            }
            let s = m.stop(n);
            drop(sub);
            s
        }
        Variant::RedisRs => {
            let mut ps = redis_client(port)
                .get_async_pubsub()
                .await
                .expect("redis-rs: pubsub connect");
            ps.subscribe(&channel).await.expect("redis-rs: SUBSCRIBE");
            let mut stream = ps.on_message();
            let m = Meter::start();
            publisher.go();
            for i in 0..n {
                let msg = tokio::time::timeout(wait, stream.next())
                    .await
                    .unwrap_or_else(|_| panic!("redis-rs: message {i} of {n} never came"))
                    .expect("redis-rs: subscription open");
                assert_eq!(msg.get_payload_bytes().len(), PAYLOAD_LEN);
            }
            m.stop(n)
        }
        Variant::Fred => {
            let sub = fred_builder(port)
                .build_subscriber_client()
                .expect("fred subscriber");
            let task = sub.init().await.expect("fred: subscriber connect");
            // Resubscribes after a reconnect, as vmcp's subscriber does.
            let resubscribe = sub.manage_subscriptions();
            let mut rx = sub.message_rx();
            sub.subscribe(channel.as_str())
                .await
                .expect("fred: SUBSCRIBE");
            let m = Meter::start();
            publisher.go();
            for i in 0..n {
                let msg = tokio::time::timeout(wait, rx.recv())
                    .await
                    .unwrap_or_else(|_| panic!("fred: message {i} of {n} never came"))
                    .expect("fred: subscription open, no message lost");
                assert_eq!(msg.value.as_bytes().map(<[u8]>::len), Some(PAYLOAD_LEN));
            }
            let s = m.stop(n);
            let _ = sub.quit().await;
            resubscribe.abort();
            let _ = task.await;
            s
        }
    };
    publisher.wait();
    sample
}

/// This program in `publish` mode, waiting for a line on stdin before it starts.
struct Publisher {
    child: Child,
    stdin: Option<ChildStdin>,
}

impl Publisher {
    fn spawn(port: u16, channel: &str, n: usize) -> Publisher {
        let mut child = Command::new(std::env::current_exe().expect("own path"))
            .args([
                "publish",
                &port.to_string(),
                channel,
                &n.to_string(),
                &PAYLOAD_LEN.to_string(),
            ])
            .stdin(Stdio::piped())
            .spawn()
            .expect("publisher process");
        let stdin = child.stdin.take();
        Publisher { child, stdin }
    }

    fn go(&mut self) {
        let mut stdin = self.stdin.take().expect("go once");
        stdin.write_all(b"go\n").expect("publisher stdin");
    }

    fn wait(mut self) {
        let status = self.child.wait().expect("publisher exit");
        assert!(status.success(), "publisher failed: {status}");
    }
}

/// `publish <port> <channel> <n> <len>`: connects, waits for a line on stdin, then publishes n
/// messages of len bytes, each after the previous one's reply (as replicas publish: one event,
/// one PUBLISH). Plain std sockets, so no client library's cost is in either process.
fn publisher(args: &[String]) {
    let [port, channel, n, len] = args else {
        usage()
    };
    let (port, n, len): (u16, usize, usize) = (
        port.parse().unwrap_or_else(|_| usage()),
        n.parse().unwrap_or_else(|_| usage()),
        len.parse().unwrap_or_else(|_| usage()),
    );
    let stream = TcpStream::connect(("127.0.0.1", port)).expect("publisher: connect");
    stream.set_nodelay(true).expect("nodelay");
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut writer = stream;
    let mut payload = String::from(r#"{"replica":"3f9a0c1e","kind":"changed","session":""#);
    while payload.len() < len - 2 {
        payload.push('0');
    }
    payload.push_str("\"}");
    let cmd = resp(&[b"PUBLISH", channel.as_bytes(), payload.as_bytes()]);
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).expect("go line");
    for _ in 0..n {
        writer.write_all(&cmd).expect("publisher: write");
        line.clear();
        reader.read_line(&mut line).expect("publisher: read");
        let receivers: i64 = line
            .trim_end()
            .strip_prefix(':')
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("publisher: PUBLISH answered {line:?}"));
        assert!(receivers >= 1, "publisher: nobody subscribed to {channel}");
    }
}

// ---------------------------------------------------------------------------------------------
// The server, and plain RESP for set-up

fn resp(args: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// One command over a fresh connection: a simple reply's line, or a bulk reply's text.
fn simple(port: u16, args: &[&[u8]]) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream.write_all(&resp(args)).expect("write");
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).expect("read");
    let line = line.trim_end().to_owned();
    match line.strip_prefix('$').and_then(|n| n.parse::<usize>().ok()) {
        Some(len) => {
            let mut body = vec![0; len + 2];
            std::io::Read::read_exact(&mut reader, &mut body).expect("bulk");
            String::from_utf8_lossy(&body[..len]).into_owned()
        }
        None => line,
    }
}

/// A `redis-server` on a free port, no persistence, stopped on drop.
struct RedisServer {
    child: Child,
    port: u16,
}

impl RedisServer {
    fn start() -> RedisServer {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let bin = std::env::var("REDIS_SERVER").unwrap_or_else(|_| "redis-server".to_owned());
        let child = Command::new(&bin)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--loglevel", "warning"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{bin}: {e} (apt-get install -y redis-server)"));
        let server = RedisServer { child, port };
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() && simple(port, &[b"PING"]) == "+PONG"
            {
                return server;
            }
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
