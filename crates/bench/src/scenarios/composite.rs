//! Scenario 6: what a composite tool of [`STEPS`] sequential steps costs over the sum of its
//! steps' calls. One HTTP fixture; one iteration is, by path:
//!
//! - direct: [`STEPS`] sequential `tools/call` of the fixture's `echo` on a Legacy session;
//! - gateway: the same [`STEPS`] calls of `fx_echo` through the gateway (Legacy edge);
//! - composite: one call of [`COMPOSITE`], whose [`STEPS`] steps call `fx.echo` one after the
//!   other, each echoing the previous step's output.
//!
//! All three make [`STEPS`] backend calls per iteration; they are run interleaved (`--repeat`)
//! and each figure is the median over the runs, as in scenario 1.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use bytes::Bytes;
use serde_json::{Value, json};

use crate::cli::Settings;
use crate::http::{Edge, McpSession};
use crate::load::{self, Conn, Outcome, Plan, Template, Watched};
use crate::procs::Env;
use crate::report::{Section, ratio};
use crate::setup::{Backend, gateway_config, wait_ready};
use crate::stats::{fmt, us};

/// Steps of the composite, and calls per iteration on the other paths.
const STEPS: usize = 5;
/// The composite tool's name.
const COMPOSITE: &str = "five_steps";
/// The fixture's name in the gateway config.
const BACKEND: &str = "fx";
/// What the first step echoes (and so every step, and the composite's output).
const TEXT: &str = "one";

const HEADER: &[&str] = &[
    "c",
    "path",
    "client calls/iter",
    "p50",
    "p90",
    "p99",
    "iter/s",
    "p50 / direct",
    "p99 / direct",
    "p50 / gateway x5",
    "p99 / gateway x5",
    "CPU/iter client",
    "CPU/iter gateway",
    "CPU/iter backend",
    "errors",
];

/// The paths compared, in the order they run within a repetition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Path {
    Direct,
    Gateway,
    Composite,
}

impl Path {
    const ALL: [Path; 3] = [Path::Direct, Path::Gateway, Path::Composite];

    fn key(self) -> &'static str {
        match self {
            Path::Direct => "direct",
            Path::Gateway => "gateway",
            Path::Composite => "composite",
        }
    }

    fn label(self) -> String {
        match self {
            Path::Direct => format!("direct, {STEPS} x echo"),
            Path::Gateway => format!("gateway, {STEPS} x {BACKEND}_echo"),
            Path::Composite => format!("gateway, 1 x {COMPOSITE} ({STEPS} steps)"),
        }
    }

    /// Client requests per iteration.
    fn client_calls(self) -> usize {
        match self {
            Path::Direct | Path::Gateway => STEPS,
            Path::Composite => 1,
        }
    }
}

/// The `compositeTools` block: [`STEPS`] sequential echoes over `backend`, each step echoing
/// the previous one's output.
fn composite_yaml(backend: &str) -> String {
    let mut yaml = format!(
        "compositeTools:\n  - name: {COMPOSITE}\n    description: {STEPS} sequential echo calls\n    steps:\n"
    );
    for i in 1..=STEPS {
        let _ = if i == 1 {
            writeln!(
                yaml,
                "      - {{id: s1, tool: {backend}.echo, arguments: {{text: {TEXT:?}}}}}"
            )
        } else {
            let prev = i - 1;
            writeln!(
                yaml,
                "      - {{id: s{i}, tool: {backend}.echo, dependsOn: [s{prev}], arguments: {{text: \"{{{{.steps.s{prev}.output.text}}}}\"}}}}"
            )
        };
    }
    yaml
}

/// Runs scenario 6.
pub(crate) async fn run(env: &Env, s: &Settings) -> anyhow::Result<Section> {
    let fixture = env.fixture_http(BACKEND, 0, &[]).await?;
    let config = format!(
        "{}{}",
        gateway_config(&[Backend::Http {
            name: BACKEND,
            url: &fixture.url,
        }]),
        composite_yaml(BACKEND)
    );
    let gateway = env.gateway("composite", &config).await?;
    let result = async {
        wait_ready(&gateway).await?;
        check_composite(&gateway.url).await?;
        let subject = Subject {
            direct_url: fixture.url.clone(),
            gateway_url: gateway.url.clone(),
            backend_pid: fixture.pid,
            gateway_pid: gateway.pid,
        };
        let mut section = Section::new(
            "composite",
            &format!("6. Composite tool: {STEPS} sequential steps"),
            HEADER,
        );
        let mut runs = Vec::new();
        for &c in &s.composite_concurrency {
            runs.push(subject.compare(s, c, &mut section).await?);
        }
        section.json = Value::Array(runs);
        section.notes.push(format!(
            "One iteration = {STEPS} backend calls of the fixture's `echo` on every path; \
             latency, iter/s and CPU are per iteration. `/ direct` and `/ gateway x5`: this \
             row's figure over the direct row's and over the {STEPS}-call gateway row's at the \
             same concurrency. Gateway: Legacy edge, HTTP backend."
        ));
        anyhow::Ok(section)
    }
    .await;
    gateway.stop().await;
    fixture.stop().await;
    result
}

/// One call of the composite before any load: it is advertised, succeeds, and its output is
/// the text every step passed on.
async fn check_composite(url: &str) -> anyhow::Result<()> {
    let mut session = McpSession::legacy(url).await?;
    let body = json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": COMPOSITE, "arguments": {}},
    });
    let answer = session
        .request_with(Bytes::from(body.to_string()), &[])
        .await?;
    session.close().await;
    let v: Value = serde_json::from_slice(&answer)
        .with_context(|| format!("{COMPOSITE}: {}", crate::http::text(&answer)))?;
    let result = v
        .get("result")
        .with_context(|| format!("{COMPOSITE} did not succeed: {v}"))?;
    if result["isError"] == true || result["structuredContent"]["text"] != TEXT {
        bail!("{COMPOSITE} answered {result} (expected structuredContent.text {TEXT:?})");
    }
    Ok(())
}

/// The fixture, reachable directly and through a gateway that serves the composite.
struct Subject {
    direct_url: String,
    gateway_url: String,
    backend_pid: u32,
    gateway_pid: u32,
}

impl Subject {
    /// The three paths at concurrency `c`, `--repeat` times interleaved; adds their rows
    /// (medians) to `section` and returns their JSON.
    async fn compare(
        &self,
        s: &Settings,
        c: usize,
        section: &mut Section,
    ) -> anyhow::Result<Value> {
        let plan = Plan {
            warmup: s.warmup,
            duration: s.duration,
        };
        let mut runs: Vec<Vec<Outcome>> = vec![Vec::new(); Path::ALL.len()];
        for _ in 0..s.repeat {
            for (path, runs) in Path::ALL.iter().zip(&mut runs) {
                runs.push(self.run(*path, c, plan).await?);
            }
        }
        let medians: Vec<Outcome> = runs.iter().map(|r| Outcome::median(r)).collect();
        let (direct, gateway) = (&medians[0], &medians[1]);
        let mut json = json!({"concurrency": c, "calls_per_iteration": STEPS});
        for (path, out) in Path::ALL.iter().zip(&medians) {
            section.rows.push(row(*path, out, direct, gateway));
            let mut v = out.to_json();
            v["client_calls_per_iteration"] = json!(path.client_calls());
            if *path != Path::Direct {
                v["p50_over_direct"] = json!(times(out.latency.p50, direct.latency.p50));
                v["p99_over_direct"] = json!(times(out.latency.p99, direct.latency.p99));
            }
            if *path == Path::Composite {
                v["p50_over_gateway"] = json!(times(out.latency.p50, gateway.latency.p50));
                v["p99_over_gateway"] = json!(times(out.latency.p99, gateway.latency.p99));
            }
            json[path.key()] = v;
        }
        Ok(json)
    }

    /// One load run of `path` at concurrency `c`.
    async fn run(&self, path: Path, c: usize, plan: Plan) -> anyhow::Result<Outcome> {
        let url = match path {
            Path::Direct => &self.direct_url,
            Path::Gateway | Path::Composite => &self.gateway_url,
        };
        let mut conns = Vec::with_capacity(c);
        for _ in 0..c {
            conns.push(Conn::Http(McpSession::legacy(url).await?));
        }
        let mut watch = vec![Watched::new("client", 0)];
        if path != Path::Direct {
            watch.push(Watched::new("gateway", self.gateway_pid));
        }
        watch.push(Watched::new("backend", self.backend_pid));
        let template = match path {
            Path::Direct => Template::tools_call("echo", Edge::Legacy)?.times(STEPS),
            Path::Gateway => {
                Template::tools_call(&format!("{BACKEND}_echo"), Edge::Legacy)?.times(STEPS)
            }
            Path::Composite => Template::tools_call_with(COMPOSITE, json!({}), Edge::Legacy)?,
        };
        let (out, conns) = load::run(conns, Arc::new(template), plan, &watch).await;
        for conn in conns {
            conn.close().await;
        }
        Ok(out)
    }
}

/// `a / b`, rounded to 0.01.
fn times(a: Duration, b: Duration) -> Option<f64> {
    ratio(us(a), us(b)).map(|r| (r * 100.0).round() / 100.0)
}

fn row(path: Path, o: &Outcome, direct: &Outcome, gateway: &Outcome) -> Vec<String> {
    let l = o.latency;
    let cpu = |label| o.cpu(label).map_or("-".to_owned(), fmt);
    let x = |a, b| times(a, b).map_or("-".to_owned(), |r| format!("{r:.2}x"));
    let (d50, d99) = match path {
        Path::Direct => ("-".to_owned(), "-".to_owned()),
        _ => (x(l.p50, direct.latency.p50), x(l.p99, direct.latency.p99)),
    };
    let (g50, g99) = match path {
        Path::Composite => (x(l.p50, gateway.latency.p50), x(l.p99, gateway.latency.p99)),
        _ => ("-".to_owned(), "-".to_owned()),
    };
    vec![
        o.concurrency.to_string(),
        path.label(),
        path.client_calls().to_string(),
        fmt(l.p50),
        fmt(l.p90),
        fmt(l.p99),
        format!("{:.0}", o.rps),
        d50,
        d99,
        g50,
        g99,
        cpu("client"),
        cpu("gateway"),
        cpu("backend"),
        o.errors.to_string(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn composite_chains_every_step_on_the_previous_one() {
        let yaml = composite_yaml("fx");
        assert!(yaml.starts_with("compositeTools:\n  - name: five_steps\n"));
        assert!(yaml.contains("{id: s1, tool: fx.echo, arguments: {text: \"one\"}}"));
        assert!(yaml.contains(
            "{id: s5, tool: fx.echo, dependsOn: [s4], arguments: {text: \"{{.steps.s4.output.text}}\"}}"
        ));
        assert_eq!(yaml.matches("tool: fx.echo").count(), STEPS);
    }

    #[test]
    fn ratios_round_to_hundredths() {
        let ms = Duration::from_millis;
        assert_eq!(times(ms(3), ms(2)), Some(1.5));
        assert_eq!(times(ms(1), ms(3)), Some(0.33));
        assert_eq!(times(ms(1), Duration::ZERO), None);
    }
}
