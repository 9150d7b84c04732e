//! The host side: start a worker, feed it the job, answer its calls, enforce the wall clock.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader as AsyncBufReader};
use tokio::process::{ChildStdin, Command};

use super::protocol::{DoneIn, FromWorker, JobOut, MAX_LINE_BYTES, ResultBody, ResultOut, invalid};
use crate::{Job, Outcome};

/// Most stderr kept from a worker that died, for the error message.
const MAX_STDERR_BYTES: u64 = 16 * 1024;

fn describe(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}

/// Runs `job` in a fresh worker process (`program args...`, which must call [`serve_worker`]),
/// answering its tool calls with `on_call` (a `parallel` round runs at most
/// [`Job::parallel_max_concurrency`] calls at once) and ending it after `timeout`.
///
/// The child runs with an empty environment, in `/`, and is killed when this future is dropped.
/// A worker killed by `SIGABRT`/`SIGKILL` (an allocation refused under its `RLIMIT_AS`) is
/// reported as `script exceeded its memory limit`.
pub async fn run_in_worker<F, Fut>(
    program: &Path,
    args: &[&str],
    job: &Job,
    mut on_call: F,
    timeout: Duration,
) -> Outcome
where
    F: FnMut(String, Value) -> Fut,
    Fut: Future<Output = Result<Value, String>>,
{
    let mut child = match Command::new(program)
        .args(args)
        .env_clear()
        .current_dir("/")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
    {
        Ok(child) => child,
        Err(e) => return Outcome::failed(format!("cannot start the script worker: {e}")),
    };
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Outcome::failed("internal error: script worker pipes missing");
    };
    let exchange = converse(stdin, stdout, job, &mut on_call);
    let ended = tokio::time::timeout(timeout, exchange).await;
    let outcome = match ended {
        Err(_) => {
            let _ = child.kill().await;
            return Outcome::failed(format!(
                "script exceeded its {} time limit",
                describe(timeout)
            ));
        }
        Ok(Ok(Some(outcome))) => outcome,
        Ok(Ok(None)) => {
            // The worker closed its output without a result: it died.
            let mut text = Vec::new();
            let _ = stderr.take(MAX_STDERR_BYTES).read_to_end(&mut text).await;
            let status = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
            return match status {
                Ok(Ok(status)) => died(status, &String::from_utf8_lossy(&text)),
                _ => {
                    let _ = child.kill().await;
                    Outcome::failed("internal error: the script worker closed its output")
                }
            };
        }
        Ok(Err(e)) => {
            let _ = child.kill().await;
            return Outcome::failed(format!("internal error: script worker protocol: {e}"));
        }
    };
    // The worker exits by itself after `done`; do not wait for it longer than a moment.
    if tokio::time::timeout(Duration::from_secs(1), child.wait())
        .await
        .is_err()
    {
        let _ = child.kill().await;
    }
    outcome
}

/// How a worker that died without answering is reported.
fn died(status: ExitStatus, stderr: &str) -> Outcome {
    use std::os::unix::process::ExitStatusExt;
    const SIGABRT: i32 = 6;
    const SIGKILL: i32 = 9;
    const SIGXCPU: i32 = 24;
    if stderr.contains("has overflowed its stack") {
        return Outcome::failed("script exceeded the interpreter's stack");
    }
    match status.signal() {
        Some(SIGABRT | SIGKILL) => Outcome::failed("script exceeded its memory limit"),
        Some(SIGXCPU) => Outcome::failed("script exceeded its CPU time limit"),
        _ => {
            let detail = stderr
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("no message");
            Outcome::failed(format!("script worker crashed ({status}): {detail}"))
        }
    }
}

/// Writes the job, answers calls until `done`; `Ok(None)` when the worker's output ends first.
async fn converse<F, Fut>(
    mut stdin: ChildStdin,
    stdout: tokio::process::ChildStdout,
    job: &Job,
    on_call: &mut F,
) -> io::Result<Option<Outcome>>
where
    F: FnMut(String, Value) -> Fut,
    Fut: Future<Output = Result<Value, String>>,
{
    let job_line = JobOut {
        script: &job.script,
        data: &job.data,
        tools: &job.tools,
        step_limit: job.step_limit,
        parallel_max_concurrency: job.parallel_max_concurrency,
    };
    let mut line = serde_json::to_vec(&job_line).map_err(|e| invalid(e.to_string()))?;
    line.push(b'\n');
    if stdin.write_all(&line).await.is_err() {
        // The worker died before reading its job; its exit status says why.
        return Ok(None);
    }
    let mut stdout = AsyncBufReader::new(stdout);
    let concurrency = job.parallel_max_concurrency.max(1);
    loop {
        let mut text = String::new();
        let limit = u64::try_from(MAX_LINE_BYTES).unwrap_or(u64::MAX) + 1;
        let n = (&mut stdout).take(limit).read_line(&mut text).await?;
        if n == 0 {
            return Ok(None);
        }
        if !text.ends_with('\n') {
            if text.len() > MAX_LINE_BYTES {
                return Err(invalid(format!(
                    "worker line longer than {MAX_LINE_BYTES} bytes"
                )));
            }
            // A partial last line: the worker died while writing it.
            return Ok(None);
        }
        let message: FromWorker = serde_json::from_str(text.trim_end())
            .map_err(|e| invalid(format!("bad worker line: {e}")))?;
        let calls = match message {
            FromWorker::Done(DoneIn::Error(message)) => return Ok(Some(Outcome::Err(message))),
            FromWorker::Done(DoneIn::Ok { value, logs }) => {
                let value = serde_json::from_str(value.get())
                    .map_err(|e| invalid(format!("bad result: {e}")))?;
                return Ok(Some(Outcome::Ok { value, logs }));
            }
            FromWorker::Call(call) => vec![call],
            FromWorker::Calls(calls) => calls,
        };
        let mut parsed = Vec::with_capacity(calls.len());
        for call in calls {
            let arguments: Value = serde_json::from_str(call.arguments.get())
                .map_err(|e| invalid(format!("bad arguments: {e}")))?;
            parsed.push((call.id, call.name, arguments));
        }
        let futures: Vec<_> = parsed
            .into_iter()
            .map(|(id, name, arguments)| {
                let call = on_call(name, arguments);
                async move { (id, call.await) }
            })
            .collect();
        let mut answers = futures_util::stream::iter(futures).buffer_unordered(concurrency);
        let mut seen = HashMap::new();
        while let Some((id, result)) = answers.next().await {
            let body = match &result {
                Ok(value) => ResultBody {
                    id,
                    ok: Some(value),
                    error: None,
                },
                Err(message) => ResultBody {
                    id,
                    ok: None,
                    error: Some(message),
                },
            };
            let mut line = serde_json::to_vec(&ResultOut { result: body })
                .map_err(|e| invalid(e.to_string()))?;
            line.push(b'\n');
            if stdin.write_all(&line).await.is_err() {
                return Ok(None);
            }
            seen.insert(id, ());
        }
        if stdin.flush().await.is_err() {
            return Ok(None);
        }
    }
}
