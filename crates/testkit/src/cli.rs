//! The `vmcp-fixture` command line: flags, choosing a transport, shutdown on signals.

use std::io;

use axum::Router;
use clap::{Parser, ValueEnum};
use tokio::net::TcpListener;

use crate::{FixtureOptions, http, sse, stdio};

/// Command line of `vmcp-fixture`, a fixture MCP server for vmcp's tests and benchmarks.
#[derive(Debug, Clone, Parser)]
#[command(name = "vmcp-fixture", version, about)]
pub struct Cli {
    /// Transport to serve.
    #[arg(long, value_enum)]
    pub transport: Transport,
    /// Server name: `serverInfo.name`, `whoami`'s answer, part of resource URIs.
    #[arg(long, default_value = "fixture")]
    pub name: String,
    /// TCP port for http/sse; 0 picks a free one (printed on stdout).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Address to bind for http/sse.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// http: answer POSTs as `text/event-stream` (one event) instead of `application/json`.
    #[arg(long)]
    pub sse_responses: bool,
    /// Add the trivial tools `tool_0 .. tool_{N-1}`.
    #[arg(long, default_value_t = 0)]
    pub tools: usize,
    /// Do not offer resources.
    #[arg(long)]
    pub no_resources: bool,
    /// Do not offer prompts.
    #[arg(long)]
    pub no_prompts: bool,
    /// http: no sessions at all (no `Mcp-Session-Id`, no GET stream, no DELETE).
    #[arg(long)]
    pub stateless: bool,
    /// stdio: offer `talk_later` (answers, then logs its `tag` `ms` milliseconds later).
    #[arg(long)]
    pub late_talk: bool,
}

/// The transports `vmcp-fixture` can serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Transport {
    /// Newline-delimited JSON-RPC on stdin/stdout.
    Stdio,
    /// MCP Streamable HTTP (2025-11-25) at `/mcp`.
    Http,
    /// The deprecated 2024-11-05 HTTP+SSE transport at `/sse`.
    Sse,
}

impl Cli {
    /// The server behaviour these flags ask for.
    pub fn options(&self) -> FixtureOptions {
        FixtureOptions {
            name: self.name.clone(),
            tools: self.tools,
            resources: !self.no_resources,
            prompts: !self.no_prompts,
            sse_responses: self.sse_responses,
            stateless: self.stateless,
            late_talk: self.late_talk,
        }
    }
}

/// Serves as `cli` says until SIGTERM/ctrl-c (or, for stdio, until stdin closes).
///
/// For http/sse, prints exactly one line to stdout first: `listening on http://HOST:PORT`.
/// Returns the process exit code: 0 on a clean shutdown, 1 if serving failed (the error is
/// printed to stderr). Call [`std::process::exit`] with it rather than returning from an async
/// `main`: tokio's stdin reader would otherwise hold up runtime shutdown.
pub async fn run(cli: Cli) -> i32 {
    let opts = cli.options();
    let shutdown = shutdown_signal();
    let served = match cli.transport {
        Transport::Stdio => tokio::select! {
            served = stdio::serve_stdio(&opts) => served,
            () = shutdown => Ok(()),
        },
        Transport::Http => serve_tcp(&cli.host, cli.port, http::router(&opts), shutdown).await,
        Transport::Sse => serve_tcp(&cli.host, cli.port, sse::router(&opts), shutdown).await,
    };
    match served {
        Ok(()) => 0,
        Err(err) => {
            eprintln!("vmcp-fixture: {err}");
            1
        }
    }
}

/// Binds `host:port`, prints `listening on http://ADDR`, and serves `router` until `shutdown`.
pub(crate) async fn serve_tcp(
    host: &str,
    port: u16,
    router: Router,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    let listener = TcpListener::bind((host, port)).await?;
    let addr = listener.local_addr()?;
    // std's stdout is line-buffered: this line is flushed before we serve.
    println!("listening on http://{addr}");
    tokio::select! {
        served = http::serve(listener, router) => served,
        () = shutdown => Ok(()),
    }
}

/// Resolves on SIGTERM or SIGINT/ctrl-c. The handlers are installed when this is called, not
/// when first polled, so a signal arriving right after `listening on` is not missed. Open
/// streams are not drained: the fixture just stops.
pub(crate) fn shutdown_signal() -> impl Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let terminate = signal(SignalKind::terminate());
        let interrupt = signal(SignalKind::interrupt());
        async move {
            match (terminate, interrupt) {
                (Ok(mut terminate), Ok(mut interrupt)) => {
                    tokio::select! {
                        _ = terminate.recv() => {}
                        _ = interrupt.recv() => {}
                    }
                }
                _ => std::future::pending().await,
            }
        }
    }
    #[cfg(not(unix))]
    async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}
