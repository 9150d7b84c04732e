//! The `vmcp-conformance-fixture` command line.

use clap::Parser;

use super::{AllowedHosts, router};
use crate::cli::{serve_tcp, shutdown_signal};

/// Command line of `vmcp-conformance-fixture`, the server the official MCP conformance suite
/// (`.ci/conformance.sh`) is run against, directly or behind vmcp.
#[derive(Debug, Clone, Parser)]
#[command(name = "vmcp-conformance-fixture", version, about)]
pub struct ConformanceCli {
    /// TCP port; 0 picks a free one (printed on stdout as `listening on http://HOST:PORT`).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Address to bind.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Also accept requests whose Host/Origin names this host (localhost, 127.0.0.1, [::1]
    /// and --host are always accepted). Repeatable.
    #[arg(long = "allow-host", value_name = "HOST")]
    pub allow_hosts: Vec<String>,
    /// Serve MCP 2025-11-25 only, as before 2026-07-28 support: no `server/discover`, every
    /// request session-based (e.g. to test a gateway's path to a Legacy backend).
    #[arg(long)]
    pub legacy_only: bool,
}

/// Serves the conformance fixture at `/mcp` (both eras, unless `--legacy-only`) until
/// SIGTERM/ctrl-c.
///
/// Prints exactly one line to stdout first: `listening on http://HOST:PORT`. Returns the
/// process exit code: 0 on a clean shutdown, 1 if serving failed (printed to stderr).
pub async fn run_conformance(cli: ConformanceCli) -> i32 {
    let mut extra = cli.allow_hosts.clone();
    extra.push(cli.host.clone());
    let router = router(AllowedHosts::local_and(extra), !cli.legacy_only);
    match serve_tcp(&cli.host, cli.port, router, shutdown_signal()).await {
        Ok(()) => 0,
        Err(err) => {
            eprintln!("vmcp-conformance-fixture: {err}");
            1
        }
    }
}
