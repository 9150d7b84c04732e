//! The direct path to a stdio backend: one `vmcp-fixture --transport stdio` child shared by
//! every worker (as the gateway shares one), requests written as lines and answers matched back
//! by id.

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::Context;
use bytes::Bytes;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::oneshot;

type Pending = Mutex<HashMap<u64, oneshot::Sender<Bytes>>>;

/// A stdio fixture process and the table of requests waiting for an answer.
pub(crate) struct StdioBackend {
    child: Child,
    stdin: tokio::sync::Mutex<ChildStdin>,
    pending: Arc<Pending>,
}

impl StdioBackend {
    /// Starts `fixture --transport stdio --name NAME` (stderr to `log`) and initializes it.
    ///
    /// # Errors
    /// When it cannot be started or does not answer `initialize`.
    pub(crate) async fn start(fixture: &Path, name: &str, log: &Path) -> anyhow::Result<Arc<Self>> {
        let mut child = Command::new(fixture)
            .args(["--transport", "stdio", "--name", name])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(log)?)
            .kill_on_drop(true)
            .spawn()
            .context("starting the stdio fixture")?;
        let stdin = child.stdin.take().context("no stdin pipe")?;
        let stdout = child.stdout.take().context("no stdout pipe")?;
        let pending: Arc<Pending> = Arc::default();
        let table = pending.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let id = serde_json::from_str::<Value>(&line)
                    .ok()
                    .and_then(|v| v.get("id").and_then(Value::as_u64));
                let waiter = id.and_then(|id| {
                    table
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .remove(&id)
                });
                if let Some(waiter) = waiter {
                    let _ = waiter.send(Bytes::from(line));
                }
            }
        });
        let backend = Arc::new(StdioBackend {
            child,
            stdin: tokio::sync::Mutex::new(stdin),
            pending,
        });
        let init = format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{}","capabilities":{{}},"clientInfo":{{"name":"vmcp-bench","version":"1"}}}}}}"#,
            crate::http::LEGACY_VERSION
        );
        backend.call(0, Bytes::from(init)).await?;
        backend
            .send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await?;
        Ok(backend)
    }

    /// Sends request `id` (its serialised `body`) and waits for the answer line.
    ///
    /// # Errors
    /// When the process is gone.
    pub(crate) async fn call(&self, id: u64, body: Bytes) -> anyhow::Result<Bytes> {
        let (tx, rx) = oneshot::channel();
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, tx);
        self.send(&body).await?;
        rx.await.context("stdio fixture closed without answering")
    }

    async fn send(&self, line: &[u8]) -> anyhow::Result<()> {
        let mut stdin = self.stdin.lock().await;
        stdin.write_all(line).await?;
        stdin.write_all(b"\n").await?;
        stdin.flush().await?;
        Ok(())
    }

    /// Its process id, for CPU accounting.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.child.id()
    }
}
