//! The load generator: N workers, each with its own connection and session, sending one request
//! at a time (closed loop) with a fresh JSON-RPC id, for a warm-up and then a fixed duration.
//! Latency is every measured request's own round trip; CPU is read from `/proc` at the edges of
//! the measured window. A [`Template`] may ask for several requests per iteration (sent one
//! after the other); then latency, throughput and CPU are per iteration.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::HeaderValue;
use serde_json::{Value, json};

use crate::http::{Edge, McpSession};
use crate::procfs;
use crate::stats::{self, Latency};
use crate::stdio::StdioBackend;

/// Every request of the run gets its own id (0 is left to `initialize`).
static NEXT_ID: AtomicU64 = AtomicU64::new(1);
/// Failed requests over all load runs.
static ERRORS: AtomicU64 = AtomicU64::new(0);

/// Requests that failed in any load run so far.
pub(crate) fn total_errors() -> u64 {
    ERRORS.load(Ordering::Relaxed)
}

/// A request with its id left out (`head` + id + `tail`), its per-request headers, and how many
/// times one iteration sends it.
pub(crate) struct Template {
    head: Vec<u8>,
    tail: Vec<u8>,
    headers: Vec<(&'static str, HeaderValue)>,
    calls: usize,
}

impl Template {
    /// `tools/call` of `tool` with `{"text": "hello"}` (the fixture's `echo`) as `edge` wants it.
    ///
    /// # Errors
    /// When `tool` cannot go in a header.
    pub(crate) fn tools_call(tool: &str, edge: Edge) -> anyhow::Result<Template> {
        Template::tools_call_with(tool, json!({"text": "hello"}), edge)
    }

    /// `tools/call` of `tool` with `arguments` as `edge` wants it.
    ///
    /// # Errors
    /// When `tool` cannot go in a header.
    pub(crate) fn tools_call_with(
        tool: &str,
        arguments: Value,
        edge: Edge,
    ) -> anyhow::Result<Template> {
        let mut params = json!({"name": tool, "arguments": arguments});
        if let Some(meta) = edge.request_meta() {
            params["_meta"] = meta;
        }
        Ok(Template {
            head: br#"{"jsonrpc":"2.0","id":"#.to_vec(),
            tail: format!(r#","method":"tools/call","params":{params}}}"#).into_bytes(),
            headers: edge.request_headers("tools/call", Some(tool))?,
            calls: 1,
        })
    }

    /// The same request sent `calls` times in a row (each with its own id) per iteration; an
    /// iteration's latency is from its first request sent to its last answer read.
    pub(crate) fn times(mut self, calls: usize) -> Template {
        self.calls = calls.max(1);
        self
    }

    /// The request with `id`.
    fn body(&self, id: u64) -> Bytes {
        let id = id.to_string();
        let mut out = Vec::with_capacity(self.head.len() + id.len() + self.tail.len());
        out.extend_from_slice(&self.head);
        out.extend_from_slice(id.as_bytes());
        out.extend_from_slice(&self.tail);
        Bytes::from(out)
    }
}

/// Where one worker sends its requests.
pub(crate) enum Conn {
    /// An MCP session over its own HTTP connection.
    Http(McpSession),
    /// A stdio backend shared with the other workers.
    Stdio(Arc<StdioBackend>),
}

impl Conn {
    /// One request; fails unless the answer is a result for `id`.
    async fn call(&mut self, template: &Template, id: u64) -> anyhow::Result<()> {
        let body = template.body(id);
        let answer = match self {
            Conn::Http(session) => session.request_with(body, &template.headers).await?,
            Conn::Stdio(backend) => backend.call(id, body).await?,
        };
        if !is_result_for(&answer, id) {
            anyhow::bail!("not a result for id {id}: {}", crate::http::text(&answer));
        }
        if is_tool_error(&answer) {
            anyhow::bail!("tool error for id {id}: {}", crate::http::text(&answer));
        }
        Ok(())
    }

    /// One iteration: `template`'s request `calls` times in a row, each with a fresh id.
    async fn iteration(&mut self, template: &Template) -> anyhow::Result<()> {
        for _ in 0..template.calls {
            let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
            self.call(template, id).await?;
        }
        Ok(())
    }

    /// Ends its session, if it has one.
    pub(crate) async fn close(self) {
        if let Conn::Http(session) = self {
            session.close().await;
        }
    }
}

/// Whether `answer` is a JSON-RPC result whose id is `id` (serialised compactly, as both the
/// gateway and the fixture do).
fn is_result_for(answer: &[u8], id: u64) -> bool {
    let needle = format!(r#""id":{id}"#);
    let n = needle.as_bytes();
    let id_ok = answer
        .windows(n.len())
        .enumerate()
        .any(|(at, w)| w == n && !answer.get(at + n.len()).is_some_and(u8::is_ascii_digit));
    id_ok && answer.windows(8).any(|w| w == br#""result""#)
}

/// Whether `answer` is a tool result flagged `isError` (a composite whose step failed answers
/// so, with HTTP 200 and a `result`).
fn is_tool_error(answer: &[u8]) -> bool {
    let needle = br#""isError":true"#;
    answer.windows(needle.len()).any(|w| w == needle)
}

/// How long to load.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Plan {
    pub(crate) warmup: Duration,
    pub(crate) duration: Duration,
}

/// A process whose CPU time is charged per request (`pid` 0: the load generator itself).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Watched {
    pub(crate) label: &'static str,
    pub(crate) pid: u32,
}

impl Watched {
    /// Process `pid`, shown as `label`.
    pub(crate) fn new(label: &'static str, pid: u32) -> Watched {
        Watched { label, pid }
    }
}

/// What one load run measured (per request; per iteration when an iteration sends several).
#[derive(Debug, Clone)]
pub(crate) struct Outcome {
    pub(crate) concurrency: usize,
    pub(crate) latency: Latency,
    pub(crate) rps: f64,
    pub(crate) errors: usize,
    pub(crate) first_error: Option<String>,
    /// CPU time per measured request (iteration) of each watched process.
    pub(crate) cpu_per_request: Vec<(&'static str, Duration)>,
}

impl Outcome {
    /// CPU per request of the process labelled `label`.
    pub(crate) fn cpu(&self, label: &str) -> Option<Duration> {
        self.cpu_per_request
            .iter()
            .find(|(l, _)| *l == label)
            .map(|(_, d)| *d)
    }

    /// Figure by figure, the median of several runs of the same load (errors are summed).
    pub(crate) fn median(runs: &[Outcome]) -> Outcome {
        let Some(first) = runs.first() else {
            return Outcome {
                concurrency: 0,
                latency: Latency::default(),
                rps: 0.0,
                errors: 0,
                first_error: None,
                cpu_per_request: Vec::new(),
            };
        };
        let mid = |mut v: Vec<Duration>| {
            v.sort();
            v[v.len() / 2]
        };
        let pick = |f: fn(&Latency) -> Duration| mid(runs.iter().map(|r| f(&r.latency)).collect());
        let mut rps: Vec<f64> = runs.iter().map(|r| r.rps).collect();
        rps.sort_by(f64::total_cmp);
        Outcome {
            concurrency: first.concurrency,
            latency: Latency {
                count: runs.iter().map(|r| r.latency.count).sum(),
                p50: pick(|l| l.p50),
                p90: pick(|l| l.p90),
                p99: pick(|l| l.p99),
                max: pick(|l| l.max),
                mean: pick(|l| l.mean),
            },
            rps: rps[rps.len() / 2],
            errors: runs.iter().map(|r| r.errors).sum(),
            first_error: runs.iter().find_map(|r| r.first_error.clone()),
            cpu_per_request: first
                .cpu_per_request
                .iter()
                .map(|(label, _)| {
                    let all = runs.iter().filter_map(|r| r.cpu(label)).collect::<Vec<_>>();
                    (
                        *label,
                        if all.is_empty() {
                            Duration::ZERO
                        } else {
                            mid(all)
                        },
                    )
                })
                .collect(),
        }
    }

    /// As JSON.
    pub(crate) fn to_json(&self) -> Value {
        let cpu: serde_json::Map<String, Value> = self
            .cpu_per_request
            .iter()
            .map(|(l, d)| ((*l).to_owned(), json!(stats::us(*d))))
            .collect();
        json!({
            "concurrency": self.concurrency,
            "latency": self.latency.to_json(),
            "rps": self.rps.round(),
            "errors": self.errors,
            "first_error": self.first_error,
            "cpu_us_per_request": cpu,
        })
    }
}

/// Runs `conns.len()` workers sending `template` for `plan`; gives the connections back.
/// Latency, rate and CPU are per iteration of `template` (one request unless it says more).
pub(crate) async fn run(
    conns: Vec<Conn>,
    template: Arc<Template>,
    plan: Plan,
    watched: &[Watched],
) -> (Outcome, Vec<Conn>) {
    let concurrency = conns.len();
    let start = Instant::now();
    let measure_from = start + plan.warmup;
    let end = measure_from + plan.duration;
    let workers: Vec<_> = conns
        .into_iter()
        .map(|conn| tokio::spawn(worker(conn, template.clone(), measure_from, end)))
        .collect();
    tokio::time::sleep_until(measure_from.into()).await;
    let before: Vec<_> = watched.iter().map(|w| procfs::cpu_time(w.pid)).collect();
    tokio::time::sleep_until(end.into()).await;
    let after: Vec<_> = watched.iter().map(|w| procfs::cpu_time(w.pid)).collect();

    let mut samples = Vec::new();
    let (mut errors, mut first_error, mut conns) = (0, None, Vec::new());
    for w in workers {
        let Ok(done) = w.await else {
            errors += 1;
            continue;
        };
        samples.extend(done.samples);
        errors += done.errors;
        first_error = first_error.or(done.first_error);
        conns.push(done.conn);
    }
    ERRORS.fetch_add(errors as u64, Ordering::Relaxed);
    let latency = Latency::of(&mut samples);
    let served = latency.count.max(1) as u32;
    let cpu_per_request = watched
        .iter()
        .zip(before.iter().zip(&after))
        .filter_map(|(w, (b, a))| Some((w.label, a.as_ref()?.saturating_sub((*b)?) / served)))
        .collect();
    let outcome = Outcome {
        concurrency,
        latency,
        rps: latency.count as f64 / plan.duration.as_secs_f64(),
        errors,
        first_error,
        cpu_per_request,
    };
    (outcome, conns)
}

struct WorkerDone {
    conn: Conn,
    samples: Vec<u64>,
    errors: usize,
    first_error: Option<String>,
}

async fn worker(
    mut conn: Conn,
    template: Arc<Template>,
    measure_from: Instant,
    end: Instant,
) -> WorkerDone {
    let mut samples = Vec::with_capacity(1 << 16);
    let (mut errors, mut first_error) = (0, None);
    loop {
        let sent = Instant::now();
        if sent >= end {
            break;
        }
        match conn.iteration(&template).await {
            Ok(()) if sent >= measure_from => {
                let nanos = sent.elapsed().as_nanos();
                samples.push(u64::try_from(nanos).unwrap_or(u64::MAX));
            }
            Ok(()) => {}
            Err(e) => {
                errors += 1;
                first_error.get_or_insert_with(|| format!("{e:#}"));
                // A broken connection fails at once: do not spin.
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
    WorkerDone {
        conn,
        samples,
        errors,
        first_error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_ids_and_result_check() {
        let t = Template::tools_call("fx_echo", Edge::Legacy).expect("template");
        let body = t.body(42);
        let v: Value = serde_json::from_slice(&body).expect("valid JSON");
        assert_eq!(v["id"], 42);
        assert_eq!(v["params"]["name"], "fx_echo");
        assert!(t.headers.is_empty());
        let t = Template::tools_call("fx_echo", Edge::Modern).expect("template");
        let v: Value = serde_json::from_slice(&t.body(1)).expect("valid JSON");
        assert!(v["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"].is_object());
        assert_eq!(t.headers.len(), 2);
        assert!(is_result_for(
            br#"{"jsonrpc":"2.0","id":42,"result":{}}"#,
            42
        ));
        assert!(!is_result_for(
            br#"{"jsonrpc":"2.0","id":421,"result":{}}"#,
            42
        ));
        assert!(!is_result_for(
            br#"{"jsonrpc":"2.0","id":42,"error":{}}"#,
            42
        ));
        assert!(is_tool_error(
            br#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}"#
        ));
        assert!(!is_tool_error(
            br#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":false}}"#
        ));
        let t = Template::tools_call_with("five", json!({}), Edge::Legacy)
            .expect("template")
            .times(5);
        let v: Value = serde_json::from_slice(&t.body(7)).expect("valid JSON");
        assert_eq!(v["params"]["arguments"], json!({}));
        assert_eq!(t.calls, 5);
    }

    #[test]
    fn median_of_runs_is_per_figure() {
        let run = |p50: u64, rps: f64, cpu: u64| Outcome {
            concurrency: 8,
            latency: Latency {
                count: 10,
                p50: Duration::from_micros(p50),
                ..Latency::default()
            },
            rps,
            errors: 1,
            first_error: None,
            cpu_per_request: vec![("gateway", Duration::from_micros(cpu))],
        };
        let m = Outcome::median(&[run(300, 10.0, 9), run(100, 30.0, 7), run(200, 20.0, 8)]);
        assert_eq!(m.latency.p50, Duration::from_micros(200));
        assert_eq!(m.rps, 20.0);
        assert_eq!(m.cpu("gateway"), Some(Duration::from_micros(8)));
        assert_eq!((m.errors, m.latency.count), (3, 30));
    }
}
