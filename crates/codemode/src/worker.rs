//! The worker process and its host: one JSON object per line.
//!
//! Host to worker: first the job (`{"script", "data", "tools", "step_limit",
//! "parallel_max_concurrency"}`), then one `{"result":{"id", "ok": <CallToolResult>}}` or
//! `{"result":{"id", "error": "<message>"}}` per call.
//!
//! Worker to host: `{"call":{"id","name","arguments"}}` for one call, `{"calls":[...]}` for a
//! `parallel` round (answered in any order), and finally `{"done":{"ok":{"value","logs"}}}` or
//! `{"done":{"error":"<message>"}}`.
//!
//! Payloads (`data`, `arguments`, `ok`, `value`) are read as raw JSON and parsed on their own, so
//! the envelope does not eat into serde_json's nesting limit.

mod host;
mod protocol;

use std::io::{self, BufRead, BufReader, Read, Write};

use serde_json::{Map, Value};

pub use host::run_in_worker;
use protocol::{
    CallOut, DoneOut, JobIn, MAX_JOB_BYTES, MAX_LINE_BYTES, ResultIn, ToHost, invalid,
    read_line_capped,
};

use crate::{Job, Outcome, ToolHost};

/// Address space of a worker (`RLIMIT_AS`).
pub const WORKER_ADDRESS_SPACE_BYTES: u64 = 512 * 1024 * 1024;
/// CPU seconds of a worker (`RLIMIT_CPU`, soft); the wall clock (60 s) normally ends it first.
pub const WORKER_CPU_SECONDS: u64 = 70;
/// Open files of a worker (`RLIMIT_NOFILE`).
pub const WORKER_OPEN_FILES: u64 = 16;

/// Sets the worker's own limits: 512 MiB of address space, 70 s of CPU, no file writes and 16
/// open files. Call it first thing in the worker process (the safe `setrlimit`: the workspace
/// forbids the `unsafe` of `Command::pre_exec`).
pub fn limit_worker_resources() -> io::Result<()> {
    use nix::sys::resource::{Resource, setrlimit};
    let set = |resource, soft: u64, hard: u64| {
        setrlimit(resource, soft, hard)
            .map_err(|e| io::Error::other(format!("setrlimit {resource:?}: {e}")))
    };
    set(
        Resource::RLIMIT_AS,
        WORKER_ADDRESS_SPACE_BYTES,
        WORKER_ADDRESS_SPACE_BYTES,
    )?;
    set(
        Resource::RLIMIT_CPU,
        WORKER_CPU_SECONDS,
        WORKER_CPU_SECONDS + 5,
    )?;
    set(Resource::RLIMIT_FSIZE, 0, 0)?;
    set(
        Resource::RLIMIT_NOFILE,
        WORKER_OPEN_FILES,
        WORKER_OPEN_FILES,
    )?;
    Ok(())
}

/// The worker's [`ToolHost`]: calls go out on `output`, results come back on `input`.
struct PipeHost<R, W> {
    input: R,
    output: W,
    next_id: u64,
}

impl<R: BufRead, W: Write> PipeHost<R, W> {
    fn send(&mut self, message: &ToHost) -> io::Result<()> {
        let mut line = serde_json::to_vec(message).map_err(|e| invalid(e.to_string()))?;
        line.push(b'\n');
        self.output.write_all(&line)?;
        self.output.flush()
    }

    fn receive(&mut self) -> io::Result<(u64, Result<Value, String>)> {
        let line = read_line_capped(&mut self.input, MAX_LINE_BYTES)?
            .ok_or_else(|| invalid("the host closed the pipe"))?;
        let message: ResultIn =
            serde_json::from_str(&line).map_err(|e| invalid(format!("bad result line: {e}")))?;
        let body = message.result;
        let result = match (body.ok, body.error) {
            (_, Some(error)) => Err(error),
            (Some(raw), None) => {
                serde_json::from_str(raw.get()).map_err(|e| format!("unreadable tool result: {e}"))
            }
            (None, None) => Err("the host sent a result with neither ok nor error".to_owned()),
        };
        Ok((body.id, result))
    }

    fn exchange(&mut self, calls: Vec<(String, Value)>) -> io::Result<Vec<Result<Value, String>>> {
        let first = self.next_id;
        self.next_id += calls.len() as u64;
        let out: Vec<CallOut> = calls
            .iter()
            .enumerate()
            .map(|(i, (name, arguments))| CallOut {
                id: first + i as u64,
                name,
                arguments,
            })
            .collect();
        let single = out.len() == 1;
        let message = if single {
            out.into_iter().next().map(ToHost::Call)
        } else {
            Some(ToHost::Calls(out))
        };
        if let Some(message) = message {
            self.send(&message)?;
        }
        let mut results: Vec<Option<Result<Value, String>>> =
            (0..calls.len()).map(|_| None).collect();
        let mut missing = calls.len();
        while missing > 0 {
            let (id, result) = self.receive()?;
            let slot = id
                .checked_sub(first)
                .and_then(|i| usize::try_from(i).ok())
                .and_then(|i| results.get_mut(i))
                .ok_or_else(|| invalid(format!("result for unknown call {id}")))?;
            if slot.replace(result).is_none() {
                missing -= 1;
            }
        }
        Ok(results
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err("no result".to_owned())))
            .collect())
    }
}

impl<R: BufRead, W: Write> ToolHost for PipeHost<R, W> {
    fn call(&mut self, name: &str, arguments: Value) -> Result<Value, String> {
        self.call_batch(vec![(name.to_owned(), arguments)])
            .pop()
            .unwrap_or_else(|| Err("no result".to_owned()))
    }

    fn call_batch(&mut self, calls: Vec<(String, Value)>) -> Vec<Result<Value, String>> {
        let n = calls.len();
        self.exchange(calls)
            .unwrap_or_else(|e| vec![Err(format!("script worker lost its host: {e}")); n])
    }
}

/// The worker's main loop: reads one job line from `input`, runs it (tool calls go out on
/// `output` and their results come back on `input`), and writes the `done` line.
pub fn serve_worker(input: impl Read, mut output: impl Write) -> io::Result<()> {
    let mut input = BufReader::new(input);
    let line = read_line_capped(&mut input, MAX_JOB_BYTES)?.ok_or_else(|| invalid("no job"))?;
    let outcome = match parse_job(&line) {
        Ok(job) => {
            let mut host = PipeHost {
                input,
                output: &mut output,
                next_id: 1,
            };
            crate::run(&job, &mut host)
        }
        Err(message) => Outcome::failed(format!("internal error: bad job: {message}")),
    };
    let done = match &outcome {
        Outcome::Ok { value, logs } => DoneOut::Ok { value, logs },
        Outcome::Err(message) => DoneOut::Error(message),
    };
    let mut line = serde_json::to_vec(&ToHost::Done(done)).map_err(|e| invalid(e.to_string()))?;
    line.push(b'\n');
    output.write_all(&line)?;
    output.flush()
}

fn parse_job(line: &str) -> Result<Job, String> {
    let job: JobIn = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let data = match job.data {
        None => Map::new(),
        Some(raw) => serde_json::from_str(raw.get()).map_err(|e| format!("data: {e}"))?,
    };
    Ok(Job {
        script: job.script,
        data,
        tools: job.tools,
        step_limit: job.step_limit,
        parallel_max_concurrency: job.parallel_max_concurrency,
    })
}
