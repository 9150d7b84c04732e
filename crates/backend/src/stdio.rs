//! A backend that is a child process speaking newline-delimited JSON-RPC on stdin/stdout,
//! supervised: restarted with backoff when it dies, killed and reaped on shutdown.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::{mpsc, watch};
use vmcp_proto::{Message, jsonrpc, revision};

use crate::{
    backend::StdioSpec,
    connection::Connection,
    error::BackendError,
    handshake::{self, ServerInfo},
    inbound::{Channel, Inbound, Notice},
    pending::Pending,
    sink::CallSink,
};

/// First restart delay after a crash; doubles per consecutive crash up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// A process that lived this long resets the backoff.
const STABLE_AFTER: Duration = Duration::from_secs(60);
/// Longest line we accept from a child before treating its output as garbage.
const MAX_LINE: usize = 16 * 1024 * 1024;

/// The live half of a running child.
struct Proc {
    stdin: Stdin,
    pending: Pending,
    info: Arc<ServerInfo>,
    pid: Option<u32>,
}

#[derive(Clone)]
enum State {
    Starting,
    Ready(Arc<Proc>),
    Down(String),
    Stopped,
}

/// A supervised stdio backend process.
pub(crate) struct StdioConnection {
    backend: String,
    inbound: Arc<Inbound>,
    state: watch::Receiver<State>,
    stop: watch::Sender<bool>,
    supervisor: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl StdioConnection {
    /// Starts the supervisor, which spawns the process and keeps it running.
    pub(crate) fn start(
        backend: &str,
        spec: StdioSpec,
        init_timeout: Duration,
        inbound: Arc<Inbound>,
    ) -> Self {
        let (state_tx, state_rx) = watch::channel(State::Starting);
        let (stop_tx, stop_rx) = watch::channel(false);
        let sup = Supervisor {
            backend: backend.to_string(),
            spec,
            state: state_tx,
            stop: stop_rx,
            init_timeout,
            inbound: inbound.clone(),
        };
        let handle = tokio::spawn(sup.run());
        Self {
            backend: backend.to_string(),
            inbound,
            state: state_rx,
            stop: stop_tx,
            supervisor: Mutex::new(Some(handle)),
        }
    }

    async fn ready(&self) -> Result<Arc<Proc>, BackendError> {
        let mut rx = self.state.clone();
        loop {
            let state = rx.borrow_and_update().clone();
            match state {
                State::Ready(p) => return Ok(p),
                State::Down(reason) => return Err(BackendError::Unavailable(reason)),
                State::Stopped => return Err(BackendError::Unavailable("backend stopped".into())),
                State::Starting => {
                    if rx.changed().await.is_err() {
                        return Err(BackendError::Unavailable("backend supervisor ended".into()));
                    }
                }
            }
        }
    }
}

impl Connection for StdioConnection {
    fn request<'a>(
        &'a self,
        id: i64,
        method: &'a str,
        params: Option<&'a Value>,
        sink: Option<&'a CallSink>,
    ) -> BoxFuture<'a, Result<Value, BackendError>> {
        Box::pin(async move {
            let proc = self.ready().await?;
            let _in_flight = self.inbound.track(id, sink);
            let slot = proc.pending.register(id)?;
            proc.stdin
                .write(jsonrpc::request_bytes(&Value::from(id), method, params))
                .await?;
            slot.wait().await
        })
    }

    fn notify<'a>(
        &'a self,
        method: &'a str,
        params: Option<&'a Value>,
    ) -> BoxFuture<'a, Result<(), BackendError>> {
        Box::pin(async move {
            let proc = self.ready().await?;
            proc.stdin
                .write(jsonrpc::notification_bytes(method, params))
                .await
        })
    }

    fn ready(&self) -> BoxFuture<'_, Result<Arc<ServerInfo>, BackendError>> {
        Box::pin(async move { Ok(StdioConnection::ready(self).await?.info.clone()) })
    }

    fn server_info(&self) -> Option<Arc<ServerInfo>> {
        match &*self.state.borrow() {
            State::Ready(p) => Some(p.info.clone()),
            _ => None,
        }
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let _ = self.stop.send(true);
            let handle = self.supervisor.lock().ok().and_then(|mut h| h.take());
            if let Some(handle) = handle {
                let _ = handle.await;
            }
            tracing::debug!(backend = %self.backend, "stdio backend stopped");
        })
    }
}

impl Drop for StdioConnection {
    fn drop(&mut self) {
        // The supervisor kills the child when it sees the stop signal; the child is also
        // kill_on_drop, so nothing outlives this connection.
        let _ = self.stop.send(true);
    }
}

/// The child's stdin, written by one task so that concurrent callers neither queue on a lock nor
/// pay a syscall each: whatever lines are waiting go out in one write.
struct Stdin {
    lines: mpsc::Sender<StdinCommand>,
}

enum StdinCommand {
    Line(Vec<u8>),
    /// Close stdin (the stdio transport's shutdown signal), after the lines queued before.
    Close(tokio::sync::oneshot::Sender<()>),
}

/// Lines queued for the writer at most; callers past that wait (backpressure from a child that
/// stops reading).
const STDIN_QUEUE: usize = 1024;

/// Largest write buffer kept between bursts.
const MAX_KEPT_BATCH: usize = 1 << 20;

/// How long closing stdin may wait for queued lines to be written.
const CLOSE_WAIT: Duration = Duration::from_secs(1);

impl Stdin {
    fn start(backend: String, stdin: ChildStdin) -> Self {
        let (lines, queue) = mpsc::channel(STDIN_QUEUE);
        tokio::spawn(write_stdin(backend, stdin, queue));
        Self { lines }
    }

    /// Queues one message (without its newline) for the child.
    async fn write(&self, mut message: Vec<u8>) -> Result<(), BackendError> {
        message.push(b'\n');
        self.lines
            .send(StdinCommand::Line(message))
            .await
            .map_err(|_| {
                BackendError::Exited("cannot write to the process: stdin is closed".into())
            })
    }

    /// Closes stdin once the lines queued so far are written. A child that stopped reading
    /// cannot hold this up for long: the caller goes on to terminate it.
    async fn close(&self) {
        let (done, closed) = tokio::sync::oneshot::channel();
        let _ = tokio::time::timeout(CLOSE_WAIT, async {
            if self.lines.send(StdinCommand::Close(done)).await.is_ok() {
                let _ = closed.await;
            }
        })
        .await;
    }
}

async fn write_stdin(
    backend: String,
    mut stdin: ChildStdin,
    mut queue: mpsc::Receiver<StdinCommand>,
) {
    let mut batch = Vec::new();
    while let Some(first) = queue.recv().await {
        let mut close = None;
        let mut next = Some(first);
        while let Some(command) = next.take() {
            match command {
                StdinCommand::Line(line) => batch.extend_from_slice(&line),
                StdinCommand::Close(done) => {
                    close = Some(done);
                    break;
                }
            }
            next = queue.try_recv().ok();
        }
        if !batch.is_empty() {
            if let Err(e) = stdin.write_all(&batch).await {
                // The process is going away; the supervisor fails the calls waiting on it.
                tracing::debug!(%backend, error = %e, "cannot write to the process");
                return;
            }
            batch.clear();
            // Keep a normal buffer around, not the one a rare huge message grew.
            if batch.capacity() > MAX_KEPT_BATCH {
                batch = Vec::new();
            }
        }
        if let Some(done) = close {
            let _ = stdin.shutdown().await;
            let _ = done.send(());
            return;
        }
    }
}

struct Supervisor {
    backend: String,
    spec: StdioSpec,
    state: watch::Sender<State>,
    stop: watch::Receiver<bool>,
    init_timeout: Duration,
    inbound: Arc<Inbound>,
}

impl Supervisor {
    async fn run(mut self) {
        let mut backoff = FIRST_BACKOFF;
        let mut crashes: u32 = 0;
        // Whether a process ran before this one (its successor may serve other definitions).
        let mut restarted = false;
        loop {
            if *self.stop.borrow() {
                break;
            }
            let _ = self.state.send(State::Starting);
            let started = Instant::now();
            match self.spawn().await {
                Ok((proc, mut child)) => {
                    tracing::info!(backend = %self.backend, pid = ?proc.pid, "stdio backend started");
                    let pending = proc.pending.clone();
                    let _ = self.state.send(State::Ready(proc.clone()));
                    if restarted {
                        self.inbound.routes.announce(Notice::Restarted);
                    }
                    restarted = true;
                    let stopped = tokio::select! {
                        status = child.wait() => {
                            let why = match status {
                                Ok(s) => format!("backend process exited ({s})"),
                                Err(e) => format!("backend process lost: {e}"),
                            };
                            tracing::warn!(backend = %self.backend, "{why}");
                            pending.close(BackendError::Exited(why.clone()));
                            let _ = self.state.send(State::Down(format!("{why}; restarting")));
                            false
                        }
                        _ = self.stop.changed() => {
                            pending.close(BackendError::Unavailable("backend stopped".into()));
                            proc.stdin.close().await;
                            terminate(&mut child).await;
                            true
                        }
                    };
                    if stopped {
                        break;
                    }
                }
                Err(err) => {
                    tracing::warn!(backend = %self.backend, error = %err, "stdio backend failed to start");
                    let _ = self
                        .state
                        .send(State::Down(format!("backend failed to start: {err}")));
                }
            }
            if started.elapsed() > STABLE_AFTER {
                backoff = FIRST_BACKOFF;
                crashes = 0;
            }
            crashes += 1;
            tracing::info!(backend = %self.backend, crashes, delay = ?backoff, "restarting stdio backend");
            tokio::select! {
                _ = tokio::time::sleep(backoff) => {}
                _ = self.stop.changed() => break,
            }
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
        let _ = self.state.send(State::Stopped);
    }

    async fn spawn(&self) -> Result<(Arc<Proc>, Child), BackendError> {
        let mut cmd = Command::new(&self.spec.command);
        cmd.args(&self.spec.args)
            .envs(self.spec.env.iter().map(|(k, v)| (k, v)))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        if let Some(cwd) = &self.spec.cwd {
            cmd.current_dir(cwd);
        }
        let mut child = cmd.spawn().map_err(|e| {
            BackendError::Unavailable(format!("cannot run {:?}: {e}", self.spec.command))
        })?;
        let pid = child.id();
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| BackendError::Unavailable("no stdin".into()))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| BackendError::Unavailable("no stdout".into()))?;
        if let Some(stderr) = child.stderr.take() {
            tokio::spawn(log_stderr(self.backend.clone(), stderr));
        }
        let pending = Pending::default();
        let stdin = Stdin::start(self.backend.clone(), stdin);
        // The reader answers the child's own requests (rare: ping, or relayed elicitation) through
        // a channel, as it does not hold stdin.
        let (reply_tx, mut reply_rx) = tokio::sync::mpsc::channel::<Message>(16);
        tokio::spawn(read_stdout(
            self.backend.clone(),
            stdout,
            pending.clone(),
            self.inbound.clone(),
            reply_tx,
        ));

        let handshake = async {
            let params = handshake::initialize_params(revision::LATEST_LEGACY);
            let slot = pending.register(0)?;
            stdin
                .write(jsonrpc::request_bytes(
                    &Value::from(0),
                    "initialize",
                    Some(&params),
                ))
                .await?;
            let result = slot.wait().await?;
            let info = handshake::parse_initialize_result(result)?;
            stdin
                .write(jsonrpc::notification_bytes(
                    "notifications/initialized",
                    None,
                ))
                .await?;
            Ok::<_, BackendError>(info)
        };
        let info = tokio::select! {
            r = tokio::time::timeout(self.init_timeout, handshake) => match r {
                Ok(r) => r?,
                Err(_) => {
                    terminate(&mut child).await;
                    return Err(BackendError::Timeout(self.init_timeout));
                }
            },
            status = child.wait() => {
                let why = match status { Ok(s) => format!("exited during initialize ({s})"), Err(e) => e.to_string() };
                return Err(BackendError::Exited(why));
            }
        };
        let proc = Arc::new(Proc {
            stdin,
            pending,
            info: Arc::new(info),
            pid,
        });
        let writer = Arc::downgrade(&proc);
        tokio::spawn(async move {
            while let Some(msg) = reply_rx.recv().await {
                let Some(proc) = writer.upgrade() else { break };
                let _ = proc.stdin.write(msg.to_bytes()).await;
            }
        });
        Ok((proc, child))
    }
}

async fn read_stdout(
    backend: String,
    stdout: tokio::process::ChildStdout,
    pending: Pending,
    inbound: Arc<Inbound>,
    replies: tokio::sync::mpsc::Sender<Message>,
) {
    let mut reader = BufReader::new(stdout);
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut reader)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(0) => break,
            Ok(_) if line.len() > MAX_LINE => {
                tracing::warn!(%backend, "backend wrote an over-long line; dropping it");
                // Skip the rest of the line.
                let mut rest = Vec::new();
                let _ = reader.read_until(b'\n', &mut rest).await;
            }
            Ok(_) => {
                let text = line.trim_ascii();
                if text.is_empty() {
                    continue;
                }
                match Message::parse(text) {
                    Ok(msg) => deliver(msg, &pending, &inbound, &replies),
                    Err(e) => {
                        tracing::warn!(%backend, error = ?e, "backend wrote a line that is not JSON-RPC")
                    }
                }
            }
            Err(e) => {
                tracing::warn!(%backend, error = %e, "cannot read backend stdout");
                break;
            }
        }
    }
}

async fn log_stderr(backend: String, stderr: tokio::process::ChildStderr) {
    let mut lines = BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let line: String = line.chars().take(2000).collect();
        tracing::debug!(%backend, "stderr: {line}");
    }
}

/// Gives a child whose stdin was closed (the stdio transport's shutdown signal) a moment to exit,
/// then kills it, and reaps it either way.
async fn terminate(child: &mut Child) {
    if tokio::time::timeout(Duration::from_millis(500), child.wait())
        .await
        .is_err()
    {
        let _ = child.kill().await;
    }
}

/// Routes one message from the child: answers to their caller, the rest through attribution;
/// requests from the child are answered (asynchronously: the client may take a while).
fn deliver(
    msg: Message,
    pending: &Pending,
    inbound: &Inbound,
    replies: &tokio::sync::mpsc::Sender<Message>,
) {
    match msg {
        Message::Response { id, result } => resolve(pending, &id, Ok(result)),
        Message::Error { id, error } => resolve(pending, &id, Err(BackendError::Rpc(error))),
        other => {
            if let Some(request) = inbound.handle(other, Channel::Shared) {
                let replies = replies.clone();
                tokio::spawn(async move {
                    let _ = replies.send(request.answer().await).await;
                });
            }
        }
    }
}

fn resolve(pending: &Pending, id: &Value, reply: Result<Value, BackendError>) {
    if !id.as_i64().is_some_and(|id| pending.resolve(id, reply)) {
        tracing::debug!(%id, "answer for a request nobody waits for (late or unknown id)");
    }
}
