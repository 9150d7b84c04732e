//! Scenario 5: the gateway's resident memory idle, with many idle Legacy sessions, with as many
//! sessions holding their GET stream open, and after each of `--load-runs` identical load runs
//! (growth that repeats run after run would be a leak).

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use serde_json::json;

use crate::cli::Settings;
use crate::http::{Edge, HttpConn, McpSession};
use crate::load::{self, Conn, Plan, Template, Watched};
use crate::procfs::{peak_rss_kib, rss_kib};
use crate::procs::Env;
use crate::report::{Findings, Section};

/// Time given to the gateway to settle before RSS is read.
const SETTLE: Duration = Duration::from_millis(500);

/// Runs scenario 5.
pub(crate) async fn run(
    env: &Env,
    s: &Settings,
    findings: &mut Findings,
) -> anyhow::Result<Section> {
    let stack = crate::setup::Stack::http(env, "memory", "fx", 1, 0, &[]).await?;
    let gw = &stack.gateway;
    let rss = || rss_kib(gw.pid).context("cannot read the gateway's VmRSS");
    tokio::time::sleep(SETTLE).await;
    let idle = rss()?;

    let mut conn = HttpConn::connect(&gw.url).await?;
    for _ in 0..s.sessions {
        conn = McpSession::legacy_on(conn).await?.detach();
    }
    tokio::time::sleep(SETTLE).await;
    let with_sessions = rss()?;
    let per_session = (with_sessions.saturating_sub(idle) * 1024) as f64 / s.sessions.max(1) as f64;

    // As many sessions again, each holding its GET stream open on its own connection (as
    // clients do): what a stream costs on top of its session.
    let mut streams = Vec::with_capacity(s.sessions);
    for _ in 0..s.sessions {
        let mut session = McpSession::legacy(&gw.url).await?;
        let stream = session.open_get_stream().await?;
        streams.push((session, stream));
    }
    tokio::time::sleep(SETTLE).await;
    let with_streams = rss()?;
    let per_streamed =
        (with_streams.saturating_sub(with_sessions) * 1024) as f64 / s.sessions.max(1) as f64;
    drop(streams);

    let concurrency = s.concurrency.iter().copied().max().unwrap_or(32);
    let plan = Plan {
        warmup: Duration::ZERO,
        duration: s.soak,
    };
    let watch = [Watched::new("gateway", gw.pid)];
    let mut after = Vec::new();
    for _ in 0..s.load_runs {
        let mut conns = Vec::with_capacity(concurrency);
        for _ in 0..concurrency {
            conns.push(Conn::Http(McpSession::legacy(&gw.url).await?));
        }
        let template = Arc::new(Template::tools_call("fx_echo", Edge::Legacy)?);
        let (out, conns) = load::run(conns, template, plan, &watch).await;
        for conn in conns {
            conn.close().await;
        }
        tokio::time::sleep(SETTLE).await;
        after.push((rss()?, out));
    }
    let peak = peak_rss_kib(gw.pid).unwrap_or(0);
    stack.stop().await;

    findings.rss_idle_kib = Some(idle);
    findings.bytes_per_session = Some(per_session);
    // The last two runs: the most settled pair, and the pair a leak cannot hide in.
    let last = after.len() - 1;
    let growth = after[last].0 as i64 - after[last - 1].0 as i64;
    let mb = |kib: u64| format!("{:.1} MB", kib as f64 / 1024.0);
    let mut section = Section::new(
        "memory",
        "5. Gateway memory (VmRSS)",
        &["state", "RSS", "note"],
    );
    section.rows = vec![
        vec![
            "idle (1 HTTP backend, catalog cached)".into(),
            mb(idle),
            String::new(),
        ],
        vec![
            format!("{} idle Legacy sessions", s.sessions),
            mb(with_sessions),
            format!("{:.1} KB per session", per_session / 1024.0),
        ],
        vec![
            format!("+ {} Legacy sessions with an open GET stream", s.sessions),
            mb(with_streams),
            format!(
                "{:.1} KB per session with its stream ({:.1} KB for the stream)",
                per_streamed / 1024.0,
                (per_streamed - per_session) / 1024.0
            ),
        ],
    ];
    for (i, (kib, out)) in after.iter().enumerate() {
        let change = match i.checked_sub(1) {
            Some(prev) => format!(", {:+} KB", *kib as i64 - after[prev].0 as i64),
            None => String::new(),
        };
        section.rows.push(vec![
            format!(
                "after load run {} ({concurrency} workers, {:?})",
                i + 1,
                s.soak
            ),
            mb(*kib),
            format!("{:.0} req/s, {} errors{change}", out.rps, out.errors),
        ]);
    }
    section.rows.push(vec![
        format!("growth run {last} -> run {}", last + 1),
        format!("{growth:+} KB"),
        format!("peak (VmHWM) {}", mb(peak)),
    ]);
    section.json = json!({
        "idle_kib": idle,
        "sessions": s.sessions,
        "with_sessions_kib": with_sessions,
        "bytes_per_session": per_session.round(),
        "with_streams_kib": with_streams,
        "bytes_per_streamed_session": per_streamed.round(),
        "load_runs": after.iter().map(|(kib, out)| json!({"rss_kib": kib, "load": out.to_json()})).collect::<Vec<_>>(),
        "growth_kib": growth,
        "peak_kib": peak,
    });
    Ok(section)
}
