//! The load: 16 clients, each with its own keep-alive connection and Legacy session, calling
//! echo tools in a loop with a token no other request carries, so an answer that reaches the
//! wrong request shows. Every request has a hard client-side deadline; the scenario marks the
//! fault's start and end, and the first good answer from the faulted part after the end is the
//! recovery time.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use super::outcome::{self, Outcome};
use super::report::{Counts, Phase, Report};
use super::{RECOVERY_BOUND, Timeline};
use crate::common::{self, Answer, JSON_AND_SSE};

/// Clients per scenario.
pub(crate) const WORKERS: usize = 16;
/// A bound in count on each client's loop (time bounds it first).
const MAX_REQUESTS: u64 = 1_000_000;
/// Pause between one client's requests, so 16 clients leave the 2-core machine's health checks
/// room to run on time.
const THINK: Duration = Duration::from_millis(10);
const PROTOCOL: &str = "2025-11-25";

/// The bearer token a client sends with its next request.
pub(crate) type Bearer = Arc<dyn Fn() -> Option<String> + Send + Sync>;

/// What one request calls.
#[derive(Clone, Debug)]
pub(crate) struct Target {
    /// An echo tool.
    pub(crate) tool: String,
    /// Whether it goes through the faulted part (its errors must name the part; its first good
    /// answer after the fault is the recovery).
    pub(crate) faulted: bool,
    /// Open a new session for the call (on one replica, calling on the next) and end it after.
    pub(crate) fresh_session: bool,
}

impl Target {
    /// `tool` in the client's own session.
    pub(crate) fn echo(tool: &str, faulted: bool) -> Target {
        Target {
            tool: tool.to_owned(),
            faulted,
            fresh_session: false,
        }
    }

    /// `tool` in a session opened for it on one replica and called on the next.
    pub(crate) fn fresh_session(tool: &str) -> Target {
        Target {
            tool: tool.to_owned(),
            faulted: true,
            fresh_session: true,
        }
    }
}

/// Where a client's requests go.
#[derive(Clone, Debug)]
pub(crate) enum Route {
    /// One gateway.
    One(String),
    /// Replicas in turn, request by request (a round-robin balancer).
    Alternate(Vec<String>),
    /// The first replica until a request cannot reach it, then the next (a failing-over
    /// balancer).
    Failover(Vec<String>),
}

impl Route {
    fn urls(&self) -> &[String] {
        match self {
            Route::One(u) => std::slice::from_ref(u),
            Route::Alternate(us) | Route::Failover(us) => us,
        }
    }
}

/// One client.
pub(crate) struct Worker {
    pub(crate) route: Route,
    /// Called in turn.
    pub(crate) targets: Vec<Target>,
    pub(crate) bearer: Option<Bearer>,
    /// Every request of this client goes through the faulted part.
    pub(crate) faulted: bool,
}

/// A scenario's load.
pub(crate) struct Plan {
    /// The fault's name in the table.
    pub(crate) fault: String,
    /// What an error must name (any of them, case-insensitive).
    pub(crate) parts: Vec<String>,
    /// The gateway's bound on one request (its timeouts); plus the margin, a client's deadline.
    pub(crate) bound: Duration,
    pub(crate) workers: Vec<Worker>,
}

struct Shared {
    fault: String,
    parts: Vec<String>,
    deadline: Duration,
    stop: AtomicBool,
    phase: AtomicU8,
    fault_end: Mutex<Option<Instant>>,
    recovery: Mutex<Option<Duration>>,
    recovered: Notify,
    counts: Mutex<Counts>,
}

impl Shared {
    fn phase(&self) -> Phase {
        match self.phase.load(Ordering::Relaxed) {
            0 => Phase::Before,
            1 => Phase::During,
            _ => Phase::After,
        }
    }

    fn record(&self, phase: Phase, faulted: bool, started: Instant, outcome: &Outcome) {
        let took = started.elapsed();
        self.counts
            .lock()
            .unwrap()
            .add(phase, outcome, &self.parts, took);
        if !faulted || *outcome != Outcome::Ok {
            return;
        }
        let Some(end) = *self.fault_end.lock().unwrap() else {
            return;
        };
        if started < end {
            return;
        }
        let after = (started + took).duration_since(end);
        let mut recovery = self.recovery.lock().unwrap();
        if recovery.is_none_or(|r| after < r) {
            *recovery = Some(after);
        }
        drop(recovery);
        self.recovered.notify_waiters();
    }
}

/// Running clients.
pub(crate) struct Load {
    shared: Arc<Shared>,
    tasks: Vec<JoinHandle<()>>,
    timeline: Timeline,
    started: Instant,
}

impl Load {
    /// Opens every client's session (a failure here is a broken setup: it panics) and starts
    /// the clients.
    pub(crate) async fn start(plan: Plan, timeline: Timeline) -> Load {
        let started = Instant::now();
        let shared = Arc::new(Shared {
            fault: plan.fault,
            parts: plan.parts,
            deadline: plan.bound + super::MARGIN,
            stop: AtomicBool::new(false),
            phase: AtomicU8::new(Phase::Before as u8),
            fault_end: Mutex::new(None),
            recovery: Mutex::new(None),
            recovered: Notify::new(),
            counts: Mutex::new(Counts::default()),
        });
        let mut tasks = Vec::new();
        for (n, worker) in plan.workers.into_iter().enumerate() {
            let client = Client::open(n, worker, shared.deadline).await;
            tasks.push(tokio::spawn(client.run(shared.clone())));
        }
        Load {
            shared,
            tasks,
            timeline,
            started,
        }
    }

    /// Lets the load run before the fault.
    pub(crate) async fn before(&self) {
        tokio::time::sleep(self.timeline.before).await;
    }

    /// Marks the fault's start.
    pub(crate) fn fault_begins(&self) {
        self.shared
            .phase
            .store(Phase::During as u8, Ordering::Relaxed);
    }

    /// Marks the fault's end: recovery is timed from now.
    pub(crate) fn fault_ends(&self) {
        *self.shared.fault_end.lock().unwrap() = Some(Instant::now());
        self.shared
            .phase
            .store(Phase::After as u8, Ordering::Relaxed);
    }

    /// Runs at least the timeline's after-phase, and on until the first good answer from the
    /// faulted part (at most [`RECOVERY_BOUND`] after the fault's end).
    pub(crate) async fn after(&self) {
        let end = self
            .shared
            .fault_end
            .lock()
            .unwrap()
            .unwrap_or_else(Instant::now);
        tokio::time::sleep(self.timeline.after).await;
        let give_up = end + RECOVERY_BOUND;
        while self.shared.recovery.lock().unwrap().is_none() && Instant::now() < give_up {
            let wait = give_up.saturating_duration_since(Instant::now());
            let _ = tokio::time::timeout(
                wait.min(Duration::from_millis(200)),
                self.shared.recovered.notified(),
            )
            .await;
        }
    }

    /// Stops the clients (each finishes its request in flight, bounded by its deadline) and
    /// returns what they saw.
    pub(crate) async fn finish(self) -> Report {
        self.shared.stop.store(true, Ordering::Relaxed);
        let bound = self.shared.deadline * 4 + Duration::from_secs(5);
        for task in self.tasks {
            match tokio::time::timeout(bound, task).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => panic!("a client failed: {e}"),
                Err(_) => panic!("a client did not stop within {bound:?}"),
            }
        }
        Report {
            fault: self.shared.fault.clone(),
            secs: self.timeline.secs,
            deadline: self.shared.deadline,
            counts: self.shared.counts.lock().unwrap().clone(),
            recovery: *self.shared.recovery.lock().unwrap(),
            took: self.started.elapsed(),
        }
    }
}

/// How a POST ended.
enum Sent {
    Answer(Answer),
    /// No HTTP answer: the transport error as a client reads it (it names the URL).
    Failed(String),
    Hung,
}

/// One client: its connection pool (one keep-alive connection, requests being sequential), its
/// session and where it sends.
struct Client {
    n: usize,
    http: reqwest::Client,
    worker: Worker,
    session: String,
    /// Index into the route's URLs (moves on when failing over).
    at: usize,
    deadline: Duration,
}

impl Client {
    async fn open(n: usize, worker: Worker, deadline: Duration) -> Client {
        let http = common::http();
        let url = worker.route.urls()[0].clone();
        let bearer = worker.bearer.as_ref().and_then(|b| b());
        let session = match open_session(&http, &url, bearer.as_deref(), deadline).await {
            Ok(s) => s,
            Err(e) => panic!("client {n} could not open its session on {url}: {e:?}"),
        };
        Client {
            n,
            http,
            worker,
            session,
            at: 0,
            deadline,
        }
    }

    async fn run(mut self, shared: Arc<Shared>) {
        let nonce = std::process::id();
        let family = format!("{}-c", slug(&shared.fault));
        let mut i: u64 = 0;
        while !shared.stop.load(Ordering::Relaxed) && i < MAX_REQUESTS {
            let target = self.worker.targets[i as usize % self.worker.targets.len()].clone();
            let id = (self.n as u64) * 10_000_000 + i + 1;
            let token = format!("{family}{}-r{i}-{nonce}", self.n);
            let phase = shared.phase();
            let started = Instant::now();
            let outcome = if target.fresh_session {
                self.in_fresh_session(i, id, &token, &family, &target.tool)
                    .await
            } else {
                let url = self.url(i);
                let session = self.session.clone();
                self.call(&url, &session, (id, &token, &family), &target.tool)
                    .await
            };
            shared.record(
                phase,
                target.faulted || self.worker.faulted,
                started,
                &outcome,
            );
            i += 1;
            tokio::time::sleep(THINK).await;
        }
    }

    fn url(&self, i: u64) -> String {
        let urls = self.worker.route.urls();
        match self.worker.route {
            Route::Alternate(_) => urls[i as usize % urls.len()].clone(),
            Route::One(_) | Route::Failover(_) => urls[self.at % urls.len()].clone(),
        }
    }

    fn bearer(&self) -> Option<String> {
        self.worker.bearer.as_ref().and_then(|b| b())
    }

    /// `tools/call` of `tool` with `id` echoing `token` (of `family`).
    async fn call(
        &mut self,
        url: &str,
        session: &str,
        (id, token, family): (u64, &str, &str),
        tool: &str,
    ) -> Outcome {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": {"text": token}}});
        let bearer = self.bearer();
        match post(
            &self.http,
            url,
            Some(session),
            bearer.as_deref(),
            &body,
            self.deadline,
        )
        .await
        {
            Sent::Answer(a) => outcome::of_call(id, token, family, &a),
            Sent::Hung => Outcome::Hung,
            Sent::Failed(e) => {
                if matches!(self.worker.route, Route::Failover(_)) {
                    self.at += 1;
                }
                Outcome::Error(e)
            }
        }
    }

    /// A session opened on one replica, the call made on the next, then the session ended.
    async fn in_fresh_session(
        &mut self,
        i: u64,
        id: u64,
        token: &str,
        family: &str,
        tool: &str,
    ) -> Outcome {
        let (open_on, call_on) = (self.url(i), self.url(i + 1));
        let bearer = self.bearer();
        let session =
            match open_session(&self.http, &open_on, bearer.as_deref(), self.deadline).await {
                Ok(s) => s,
                Err(outcome) => return outcome,
            };
        let outcome = self
            .call(&call_on, &session, (id, token, family), tool)
            .await;
        let mut end = self
            .http
            .delete(&open_on)
            .header("mcp-session-id", &session);
        if let Some(b) = &bearer {
            end = end.bearer_auth(b);
        }
        let _ = tokio::time::timeout(self.deadline, end.send()).await;
        outcome
    }
}

/// `initialize` and `notifications/initialized`: the session id, or how it failed.
async fn open_session(
    http: &reqwest::Client,
    url: &str,
    bearer: Option<&str>,
    deadline: Duration,
) -> Result<String, Outcome> {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": PROTOCOL, "capabilities": {},
        "clientInfo": {"name": "chaos", "version": "1"}}});
    let a = match post(http, url, None, bearer, &init, deadline).await {
        Sent::Answer(a) => a,
        Sent::Failed(e) => return Err(Outcome::Error(e)),
        Sent::Hung => return Err(Outcome::Hung),
    };
    let session = a
        .headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let session = match (a.status, session) {
        (200, Some(s)) => s,
        (404, _) => return Err(Outcome::SessionLost(a.text)),
        _ => return Err(Outcome::Error(outcome::http_error(&a))),
    };
    let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    match post(http, url, Some(&session), bearer, &done, deadline).await {
        Sent::Answer(a) if a.status == 202 => Ok(session),
        Sent::Answer(a) if a.status == 404 => Err(Outcome::SessionLost(a.text)),
        Sent::Answer(a) => Err(Outcome::Error(outcome::http_error(&a))),
        Sent::Failed(e) => Err(Outcome::Error(e)),
        Sent::Hung => Err(Outcome::Hung),
    }
}

/// POSTs `body`, reading the whole answer before `deadline`.
async fn post(
    http: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    bearer: Option<&str>,
    body: &Value,
    deadline: Duration,
) -> Sent {
    let mut req = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", JSON_AND_SSE)
        .body(body.to_string());
    if let Some(s) = session {
        req = req
            .header("mcp-session-id", s)
            .header("mcp-protocol-version", PROTOCOL);
    }
    if let Some(b) = bearer {
        req = req.bearer_auth(b);
    }
    let exchange = async {
        match req.send().await {
            Ok(resp) => Sent::Answer(common::decode(resp).await),
            Err(e) => Sent::Failed(transport_error(&e)),
        }
    };
    tokio::time::timeout(deadline, exchange)
        .await
        .unwrap_or(Sent::Hung)
}

/// The fault's name as a token prefix: letters and digits, the rest `_`.
fn slug(fault: &str) -> String {
    fault
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// A transport error with its causes (reqwest's text names the URL).
fn transport_error(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut next = e.source();
    while let Some(cause) = next {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        next = cause.source();
    }
    text
}
