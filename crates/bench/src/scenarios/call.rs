//! Scenarios 1 and 2: `tools/call` of the fixture's trivial `echo`, direct to the backend and
//! through the gateway (Legacy and Modern edges), over an HTTP backend and over a stdio one.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::cli::Settings;
use crate::http::{Edge, McpSession};
use crate::load::{self, Conn, Outcome, Plan, Template, Watched};
use crate::procfs;
use crate::procs::Env;
use crate::report::{Findings, Section, added, fmt_added, ratio};
use crate::setup::{Backend, Stack, gateway_config, wait_ready};
use crate::stats::fmt;
use crate::stdio::StdioBackend;

const HEADER: &[&str] = &[
    "backend",
    "edge",
    "c",
    "path",
    "p50",
    "p90",
    "p99",
    "req/s",
    "+p50",
    "+p99",
    "req/s ratio",
    "CPU/req client",
    "CPU/req gateway",
    "CPU/req backend",
    "errors",
];

/// Scenario 1: an HTTP backend.
pub(crate) async fn http_backend(
    env: &Env,
    s: &Settings,
    findings: &mut Findings,
) -> anyhow::Result<Section> {
    let stack = Stack::http(env, "call-http", "fx", 1, 0, &[]).await?;
    let subject = Subject {
        backend: "http",
        gateway_tool: "fx_echo",
        direct: Direct::Http(stack.fixtures[0].url.clone()),
        direct_pid: stack.fixtures[0].pid,
        gateway_url: stack.gateway.url.clone(),
        gateway_pid: stack.gateway.pid,
        gateway_backend_pid: stack.fixtures[0].pid,
    };
    let mut section = Section::new("call_http", "1. tools/call, HTTP backend", HEADER);
    let mut runs = Vec::new();
    for &c in &s.concurrency {
        let run = subject.compare(s, c, &mut section).await?;
        run.note_targets(findings);
        runs.push(run.to_json());
    }
    section.json = Value::Array(runs);
    stack.stop().await;
    Ok(section)
}

/// Scenario 2: a stdio backend (the direct path drives its own stdio fixture over pipes).
pub(crate) async fn stdio_backend(env: &Env, s: &Settings) -> anyhow::Result<Section> {
    let direct =
        StdioBackend::start(&env.fixture, "st", &env.scratch.join("fixture-st.log")).await?;
    let config = gateway_config(&[Backend::Stdio {
        name: "st",
        fixture: &env.fixture,
    }]);
    let gw = env.gateway("call-stdio", &config).await?;
    wait_ready(&gw).await?;
    let subject = Subject {
        backend: "stdio",
        gateway_tool: "st_echo",
        direct_pid: direct.pid().unwrap_or(0),
        direct: Direct::Stdio(direct),
        gateway_url: gw.url.clone(),
        gateway_pid: gw.pid,
        gateway_backend_pid: procfs::children(gw.pid).first().copied().unwrap_or(0),
    };
    let mut section = Section::new("call_stdio", "2. tools/call, stdio backend", HEADER);
    let mut runs = Vec::new();
    for &c in &s.concurrency {
        runs.push(subject.compare(s, c, &mut section).await?.to_json());
    }
    section.json = Value::Array(runs);
    section.notes.push(
        "CPU/req backend: on gateway rows the gateway's stdio child, on direct rows the \
         harness's own stdio child; each shared by all workers."
            .to_owned(),
    );
    gw.stop().await;
    Ok(section)
}

/// How workers reach the backend without the gateway.
enum Direct {
    /// A Legacy session each on the HTTP fixture at this URL.
    Http(String),
    /// The one stdio fixture, shared.
    Stdio(Arc<StdioBackend>),
}

/// A backend, reachable directly and through a gateway.
struct Subject {
    backend: &'static str,
    gateway_tool: &'static str,
    direct: Direct,
    direct_pid: u32,
    gateway_url: String,
    gateway_pid: u32,
    gateway_backend_pid: u32,
}

impl Subject {
    /// The direct run, then one gateway run per edge, at concurrency `c`; `--repeat` times,
    /// interleaved, keeping the median of each figure.
    async fn compare(
        &self,
        s: &Settings,
        c: usize,
        section: &mut Section,
    ) -> anyhow::Result<Compared> {
        let plan = Plan {
            warmup: s.warmup,
            duration: s.duration,
        };
        let edges = [Edge::Legacy, Edge::Modern];
        let mut direct = Vec::new();
        let mut gateway = vec![Vec::new(); edges.len()];
        for _ in 0..s.repeat {
            direct.push(self.direct_run(c, plan).await?);
            for (edge, runs) in edges.iter().zip(&mut gateway) {
                runs.push(self.gateway_run(*edge, c, plan).await?);
            }
        }
        let direct = Outcome::median(&direct);
        section
            .rows
            .push(row(self.backend, "-", "direct", &direct, None));
        let gateway: Vec<(Edge, Outcome)> = edges
            .into_iter()
            .zip(gateway.iter().map(|runs| Outcome::median(runs)))
            .collect();
        for (edge, out) in &gateway {
            let r = row(self.backend, edge.label(), "gateway", out, Some(&direct));
            section.rows.push(r);
        }
        Ok(Compared {
            concurrency: c,
            direct,
            gateway,
        })
    }

    async fn direct_run(&self, c: usize, plan: Plan) -> anyhow::Result<Outcome> {
        let mut conns = Vec::with_capacity(c);
        for _ in 0..c {
            conns.push(match &self.direct {
                Direct::Http(url) => Conn::Http(McpSession::legacy(url).await?),
                Direct::Stdio(backend) => Conn::Stdio(backend.clone()),
            });
        }
        let watch = [
            Watched::new("client", 0),
            Watched::new("backend", self.direct_pid),
        ];
        let template = Template::tools_call("echo", Edge::Legacy)?;
        Ok(measure(conns, template, plan, &watch).await)
    }

    async fn gateway_run(&self, edge: Edge, c: usize, plan: Plan) -> anyhow::Result<Outcome> {
        let mut conns = Vec::with_capacity(c);
        for _ in 0..c {
            conns.push(Conn::Http(edge.open(&self.gateway_url).await?));
        }
        let watch = [
            Watched::new("client", 0),
            Watched::new("gateway", self.gateway_pid),
            Watched::new("backend", self.gateway_backend_pid),
        ];
        let template = Template::tools_call(self.gateway_tool, edge)?;
        Ok(measure(conns, template, plan, &watch).await)
    }
}

/// The direct run and the gateway runs (one per edge) at one concurrency.
struct Compared {
    concurrency: usize,
    direct: Outcome,
    gateway: Vec<(Edge, Outcome)>,
}

impl Compared {
    fn to_json(&self) -> Value {
        let mut v = json!({
            "concurrency": self.concurrency,
            "direct": self.direct.to_json(),
        });
        for (edge, g) in &self.gateway {
            v[edge.label()] = json!({
                "gateway": g.to_json(),
                "added_p50_us": added(g.latency.p50, self.direct.latency.p50),
                "added_p99_us": added(g.latency.p99, self.direct.latency.p99),
                "rps_ratio": ratio(g.rps, self.direct.rps),
            });
        }
        v
    }

    /// The targets are stated for the Legacy edge.
    fn note_targets(&self, findings: &mut Findings) {
        let Some((_, legacy)) = self.gateway.iter().find(|(e, _)| *e == Edge::Legacy) else {
            return;
        };
        let direct = &self.direct;
        if self.concurrency == 1 {
            findings.added_p50_c1 = Some(added(legacy.latency.p50, direct.latency.p50));
            findings.added_p99_c1 = Some(added(legacy.latency.p99, direct.latency.p99));
        }
        if self.concurrency == 32 {
            findings.gateway_cpu_c32 = legacy.cpu("gateway");
            findings.rps_ratio_c32 = ratio(legacy.rps, direct.rps);
        }
    }
}

async fn measure(conns: Vec<Conn>, template: Template, plan: Plan, watched: &[Watched]) -> Outcome {
    let (out, conns) = load::run(conns, Arc::new(template), plan, watched).await;
    for conn in conns {
        conn.close().await;
    }
    out
}

fn row(
    backend: &str,
    edge: &str,
    path: &str,
    o: &Outcome,
    direct: Option<&Outcome>,
) -> Vec<String> {
    let l = o.latency;
    let cpu = |label| o.cpu(label).map_or("-".to_owned(), fmt);
    let (dp50, dp99, rr) = match direct {
        Some(d) => (
            fmt_added(added(l.p50, d.latency.p50)),
            fmt_added(added(l.p99, d.latency.p99)),
            ratio(o.rps, d.rps).map_or("-".into(), |r| format!("{:.0}%", r * 100.0)),
        ),
        None => ("-".into(), "-".into(), "-".into()),
    };
    vec![
        backend.to_owned(),
        edge.to_owned(),
        o.concurrency.to_string(),
        path.to_owned(),
        fmt(l.p50),
        fmt(l.p90),
        fmt(l.p99),
        format!("{:.0}", o.rps),
        dp50,
        dp99,
        rr,
        cpu("client"),
        cpu("gateway"),
        cpu("backend"),
        o.errors.to_string(),
    ]
}
