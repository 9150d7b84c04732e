//! Shared helpers for the black-box tests: start the real `vmcp` binary on port 0 in front of
//! fixture backends, and talk to it over raw HTTP.

#![allow(dead_code, unreachable_pub, missing_docs, clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

pub mod eras;
pub mod oidc;

pub const JSON_AND_SSE: &str = "application/json, text/event-stream";

/// The Python interpreter of `.ci/.venv`, where `.ci/venv.sh` installs the Python MCP SDK.
pub const PYTHON: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../.ci/.venv/bin/python");

/// Whether the Python SDK is installed; outside CI a test without it is skipped with a note,
/// under CI its absence fails the test.
pub fn python_sdk_available() -> bool {
    if Path::new(PYTHON).exists() {
        return true;
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "the Python SDK is not installed: run .ci/venv.sh"
    );
    eprintln!("note: skipping: the Python SDK is not installed (run .ci/venv.sh)");
    false
}

/// A running gateway process; killed (and reaped) on drop.
pub struct Gateway {
    pub url: String,
    pub base: String,
    child: Child,
    pub config_path: PathBuf,
    stderr: Arc<Mutex<String>>,
    /// The thread copying stderr into `stderr`; finished once the pipe closes.
    stderr_reader: std::thread::JoinHandle<()>,
}

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A fresh temporary file path.
pub fn temp_path(ext: &str) -> PathBuf {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("vmcp-test-{}-{n}.{ext}", std::process::id()))
}

/// The tool names a `find_tool` result lists (empty when `tools` is null).
pub fn found(result: &Value) -> Vec<String> {
    result["structuredContent"]["tools"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|t| t["name"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The YAML of a stdio backend running the fixture.
pub fn stdio_backend(name: &str, extra: &str) -> String {
    let bin = vmcp_testkit::fixture_bin();
    format!(
        "  - name: {name}\n    transport: stdio\n    command: {bin:?}\n    args: [\"--transport\", \"stdio\", \"--name\", \"{name}\"]\n{extra}",
        bin = bin.display().to_string()
    )
}

/// The YAML of an HTTP backend at `url`.
pub fn http_backend(name: &str, url: &str) -> String {
    format!("  - name: {name}\n    transport: streamable-http\n    url: {url}\n")
}

impl Gateway {
    /// Starts `vmcp serve` on `yaml` (with `--port 0`), waiting until it listens.
    pub fn start(yaml: &str) -> Gateway {
        Self::start_with(yaml, &[])
    }

    pub fn start_with(yaml: &str, extra: &[&str]) -> Gateway {
        Self::start_env(yaml, extra, &[])
    }

    /// Like [`Gateway::start_with`], with extra environment variables for the process.
    pub fn start_env(yaml: &str, extra: &[&str], env: &[(&str, &str)]) -> Gateway {
        let config_path = temp_path("yaml");
        std::fs::write(&config_path, yaml).expect("write config");
        let mut child = Command::new(env!("CARGO_BIN_EXE_vmcp"))
            .envs(env.iter().copied())
            .arg("serve")
            .arg("--config")
            .arg(&config_path)
            .args(["--port", "0"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn vmcp");
        let stdout = child.stdout.take().expect("stdout");
        let stderr_pipe = child.stderr.take().expect("stderr");
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        let stderr_reader = std::thread::spawn(move || {
            let mut r = BufReader::new(stderr_pipe);
            let mut buf = String::new();
            while r.read_line(&mut buf).unwrap_or(0) > 0 {
                sink.lock().unwrap().push_str(&buf);
                buf.clear();
            }
        });
        let line = match first_line(stdout, Duration::from_secs(30)) {
            Ok(l) => l,
            Err(why) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("vmcp did not start ({why}):\n{}", stderr.lock().unwrap());
            }
        };
        let url = line.rsplit(' ').next().expect("url").to_string();
        let base = url.trim_end_matches("/mcp").to_string();
        Gateway {
            url,
            base,
            child,
            config_path,
            stderr,
            stderr_reader,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What the gateway logged so far.
    pub fn logs(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Sends SIGTERM and waits (bounded) for the process to exit.
    pub fn terminate(&mut self) -> ExitStatus {
        self.signal_terminate();
        self.wait_exit()
    }

    /// Sends SIGTERM (a rolling restart's first step) and returns at once.
    pub fn signal_terminate(&self) {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
    }

    /// Whether the process has exited.
    pub fn exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// Waits (bounded) for the process to exit after a signal.
    pub fn wait_exit(&mut self) -> ExitStatus {
        for _ in 0..300 {
            if let Ok(Some(status)) = self.child.try_wait() {
                self.wait_for_last_logs();
                return status;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        panic!("vmcp did not exit within 15s of SIGTERM");
    }

    pub fn client(&self) -> Client {
        Client::new(&self.url)
    }

    /// `GET /status` (unauthenticated) as JSON.
    pub async fn status(&self) -> Value {
        http()
            .get(format!("{}/status", self.base))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// Waits until `n` sessions have their GET stream open (`/status` `streams`): a client
    /// that returned from connecting may not have opened it yet, and a notification sent to a
    /// session without one is dropped, as the spec allows.
    pub async fn wait_streams(&self, n: u64) {
        let open = eventually(Duration::from_secs(10), || async {
            self.status().await["streams"].as_u64() >= Some(n)
        })
        .await;
        assert!(
            open,
            "{n} GET streams never opened: {}",
            self.status().await
        );
    }

    /// Kills the process at once (SIGKILL), as a crash or an evicted pod would end.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.wait_for_last_logs();
    }

    /// After the process exited, gives the stderr reader (bounded) time to copy what was
    /// written last, so `logs()` holds it. A backend that outlived the gateway may hold the
    /// pipe open; then this returns after 2 s.
    fn wait_for_last_logs(&self) {
        for _ in 0..100 {
            if self.stderr_reader.is_finished() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.config_path);
    }
}

/// The first line a child prints on `stdout`, waiting at most `wait`; the rest is read and
/// dropped so the child never blocks on a full pipe.
pub fn first_line(stdout: std::process::ChildStdout, wait: Duration) -> Result<String, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        let _ = tx.send(lines.next());
        for _ in lines {}
    });
    match rx.recv_timeout(wait) {
        Ok(Some(Ok(line))) => Ok(line),
        Ok(Some(Err(e))) => Err(format!("reading stdout: {e}")),
        Ok(None) => Err("stdout closed before a line".into()),
        Err(_) => Err(format!("no line within {wait:?}")),
    }
}

/// Runs the vmcp binary to completion with `args`: (exit status, stdout, stderr).
pub fn run_cli(args: &[&str]) -> (ExitStatus, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_vmcp"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn vmcp");
    let mut out = String::new();
    let mut err = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (child.wait().unwrap(), out, err)
}

/// A raw-HTTP MCP client (Legacy).
#[derive(Clone)]
pub struct Client {
    pub http: reqwest::Client,
    pub url: String,
    pub session: Option<String>,
    pub version: String,
    /// A bearer token sent with every request.
    pub bearer: Option<String>,
    next: Arc<AtomicUsize>,
}

/// A decoded HTTP answer.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
    pub text: String,
}

pub fn http() -> reqwest::Client {
    vmcp_backend::http_client().expect("http client")
}

impl Client {
    pub fn new(url: &str) -> Client {
        Client {
            http: http(),
            url: url.to_string(),
            session: None,
            version: "2025-11-25".into(),
            bearer: None,
            next: Arc::new(AtomicUsize::new(100)),
        }
    }

    /// initialize + notifications/initialized.
    pub async fn connect(url: &str) -> Client {
        Self::connect_version(url, "2025-11-25").await
    }

    pub async fn connect_version(url: &str, version: &str) -> Client {
        Self::connect_with(url, version, json!({})).await
    }

    /// initialize + notifications/initialized, authenticated with `token`.
    pub async fn connect_as(url: &str, token: &str) -> Client {
        let mut c = Client::new(url);
        c.bearer = Some(token.to_string());
        c.handshake("2025-11-25", json!({})).await;
        c
    }

    /// initialize (declaring `capabilities`) + notifications/initialized.
    pub async fn connect_with(url: &str, version: &str, capabilities: Value) -> Client {
        let mut c = Client::new(url);
        c.handshake(version, capabilities).await;
        c
    }

    async fn handshake(&mut self, version: &str, capabilities: Value) {
        let c = self;
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": capabilities,
            "clientInfo": {"name": "test", "version": "1"}}});
        let a = c.post_raw(None, init).await;
        assert_eq!(a.status, 200, "initialize failed: {}", a.text);
        let session = a
            .headers
            .get("mcp-session-id")
            .expect("session header")
            .to_str()
            .unwrap();
        c.session = Some(session.to_string());
        c.version = a.body["result"]["protocolVersion"]
            .as_str()
            .unwrap()
            .to_string();
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let n = c.post_raw(c.session.clone(), initialized).await;
        assert_eq!(n.status, 202);
    }

    pub async fn post_raw(&self, session: Option<String>, body: Value) -> Answer {
        self.post_bytes(session, serde_json::to_vec(&body).unwrap(), &[])
            .await
    }

    pub async fn post_bytes(
        &self,
        session: Option<String>,
        body: Vec<u8>,
        headers: &[(&str, &str)],
    ) -> Answer {
        let mut req = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", JSON_AND_SSE)
            .body(body);
        if let Some(s) = session {
            req = req
                .header("mcp-session-id", s)
                .header("mcp-protocol-version", self.version.clone());
        }
        if let Some(token) = &self.bearer {
            req = req.header("authorization", format!("Bearer {token}"));
        }
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let resp = req.send().await.expect("POST");
        decode(resp).await
    }

    /// The same session, its requests sent to `url` (another replica, say).
    pub fn at(&self, url: &str) -> Client {
        Client {
            url: url.to_string(),
            ..self.clone()
        }
    }

    /// A request in this session; returns the whole JSON-RPC answer.
    pub async fn request(&self, method: &str, params: Value) -> Value {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let a = self
            .post_raw(
                self.session.clone(),
                json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}),
            )
            .await;
        assert_eq!(a.body["id"], json!(id), "answer id mismatch: {}", a.text);
        a.body
    }

    /// A request whose result must be a success; returns the result.
    pub async fn ok(&self, method: &str, params: Value) -> Value {
        let v = self.request(method, params).await;
        assert!(v.get("error").is_none(), "{method} failed: {v}");
        v["result"].clone()
    }

    pub async fn call(&self, tool: &str, args: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": args}))
            .await
    }

    pub async fn tool_names(&self) -> Vec<String> {
        let r = self.ok("tools/list", json!({})).await;
        r["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    }

    pub async fn prompt_names(&self) -> Vec<String> {
        let r = self.ok("prompts/list", json!({})).await;
        r["prompts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    }

    pub async fn delete(&self) -> u16 {
        let mut req = self.http.delete(&self.url);
        if let Some(s) = &self.session {
            req = req.header("mcp-session-id", s);
        }
        if let Some(token) = &self.bearer {
            req = req.bearer_auth(token);
        }
        req.send().await.expect("DELETE").status().as_u16()
    }
}

pub async fn decode(resp: reqwest::Response) -> Answer {
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let text = resp.text().await.unwrap_or_default();
    let body = if headers
        .get("content-type")
        .is_some_and(|c| c.to_str().unwrap().starts_with("text/event-stream"))
    {
        text.lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter_map(|d| serde_json::from_str::<Value>(d).ok())
            .find(|v| v.get("id").is_some())
            .unwrap_or(Value::Null)
    } else {
        serde_json::from_str(&text).unwrap_or(Value::Null)
    };
    Answer {
        status,
        headers,
        body,
        text,
    }
}

/// The text of the first content item of a tool result.
pub fn text_of(answer: &Value) -> String {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Polls `f` until it returns true or `timeout` passes.
pub async fn eventually<F, Fut>(timeout: Duration, mut f: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    while tokio::time::Instant::now() < deadline {
        if f().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// Live child processes of `pid` whose command line contains `needle`.
pub fn children_matching(pid: u32, needle: &str) -> Vec<u32> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in entries.flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            continue;
        };
        // Fields after the ")" of the command name: state ppid ...
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        let state = fields.next().unwrap_or("");
        let ppid: u32 = fields.next().and_then(|f| f.parse().ok()).unwrap_or(0);
        if ppid != pid || state == "Z" {
            continue;
        }
        let cmd = std::fs::read_to_string(format!("/proc/{p}/cmdline"))
            .unwrap_or_default()
            .replace('\0', " ");
        if cmd.contains(needle) {
            out.push(p);
        }
    }
    out
}

/// Validates the log against the schema with Python's jsonschema; false when the venv is absent
/// (then the test says so, and fails under CI).
pub fn audit_matches_schema(log: &Path) -> bool {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let python = PathBuf::from(root).join(".ci/.venv/bin/python");
    if !python.exists() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI must have .ci/.venv (run .ci/venv.sh)"
        );
        eprintln!(
            "note: .ci/.venv missing, audit lines not checked against the schema (run .ci/venv.sh)"
        );
        return false;
    }
    let out = std::process::Command::new(python)
        .arg(PathBuf::from(root).join("tests/interop/validate_audit.py"))
        .arg(PathBuf::from(root).join("docs/audit-event.schema.json"))
        .arg(log)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "audit lines do not match the schema:\n{report}"
    );
    true
}
