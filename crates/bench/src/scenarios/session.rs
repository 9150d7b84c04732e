//! Scenario 3: session creation (`initialize`, `notifications/initialized`, then `tools/list`
//! through every page) with 10 backends of 100 tools each. Cold: the first session after the
//! gateway starts (it has to initialize every backend and aggregate); measured over several
//! gateway restarts. Warm: later sessions, served from the 30 s capability cache.

use std::time::{Duration, Instant};

use serde_json::json;

use super::listing;
use crate::cli::Settings;
use crate::http::{HttpConn, McpSession};
use crate::procs::Env;
use crate::report::{Findings, Section};
use crate::setup::{Stack, TOOLS_ONLY};
use crate::stats::{Latency, fmt};

const BACKENDS: usize = 10;
const TOOLS: usize = 100;

/// Runs scenario 3.
pub(crate) async fn run(
    env: &Env,
    s: &Settings,
    findings: &mut Findings,
) -> anyhow::Result<Section> {
    let mut fixtures = Vec::with_capacity(BACKENDS);
    for i in 0..BACKENDS {
        fixtures.push(
            env.fixture_http(&format!("b{i}"), TOOLS, TOOLS_ONLY)
                .await?,
        );
    }
    let mut cold = Samples::default();
    let mut gateway = None;
    for run in 0..s.cold_runs {
        if let Some(previous) = gateway.take() {
            crate::procs::Proc::stop(previous).await;
        }
        let gw = Stack::gateway_for(env, &format!("session-{run}"), &fixtures, "b").await?;
        let conn = HttpConn::connect(&gw.url).await?;
        let (_, tools) = cold.create(conn).await?;
        cold.tools = tools;
        gateway = Some(gw);
    }
    let Some(gw) = gateway else {
        anyhow::bail!("no cold run");
    };
    let mut warm = Samples::default();
    let mut conn = HttpConn::connect(&gw.url).await?;
    for _ in 0..s.iterations {
        let (session, tools) = warm.create(conn).await?;
        warm.tools = tools;
        conn = session.close().await;
    }
    gw.stop().await;
    for f in fixtures {
        f.stop().await;
    }

    let (cold_total, warm_total) = (Latency::of(&mut cold.total), Latency::of(&mut warm.total));
    let (cold_init, warm_init) = (Latency::of(&mut cold.init), Latency::of(&mut warm.init));
    findings.warm_session_p50 = Some(warm_total.p50);
    let mut section = Section::new(
        "session",
        "3. Session creation: initialize + tools/list, 10 backends x 100 tools",
        &[
            "cache",
            "runs",
            "tools",
            "pages",
            "p50",
            "p99",
            "initialize p50",
            "tools/list p50",
        ],
    );
    for (label, l, init, samples) in [
        ("cold", cold_total, cold_init, &cold),
        ("warm", warm_total, warm_init, &warm),
    ] {
        section.rows.push(vec![
            label.to_owned(),
            l.count.to_string(),
            samples.tools.to_string(),
            samples.pages.to_string(),
            fmt(l.p50),
            fmt(l.p99),
            fmt(init.p50),
            fmt(l.p50.saturating_sub(init.p50)),
        ]);
    }
    section.notes.push(format!(
        "Cold = the first session on a freshly started gateway ({} restarts); backends run \
         throughout. Fixtures serve tools only ({} per backend incl. the 9 built-in ones).",
        s.cold_runs,
        cold.tools / BACKENDS
    ));
    section.json = json!({
        "backends": BACKENDS,
        "tools_listed": warm.tools,
        "pages": warm.pages,
        "cold": {"total": cold_total.to_json(), "initialize": cold_init.to_json()},
        "warm": {"total": warm_total.to_json(), "initialize": warm_init.to_json()},
    });
    Ok(section)
}

#[derive(Default)]
struct Samples {
    total: Vec<u64>,
    init: Vec<u64>,
    tools: usize,
    pages: usize,
}

impl Samples {
    /// Creates one session on `conn` and lists its tools, timing both.
    async fn create(&mut self, conn: HttpConn) -> anyhow::Result<(McpSession, usize)> {
        let start = Instant::now();
        let mut session = McpSession::legacy_on(conn).await?;
        let init = start.elapsed();
        let walk = listing::walk(&mut session, &mut 0, crate::http::Edge::Legacy).await?;
        let total = start.elapsed();
        self.total.push(nanos(total));
        self.init.push(nanos(init));
        self.pages = walk.pages.len();
        Ok((session, walk.tools()?))
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}
