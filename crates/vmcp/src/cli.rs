//! Command-line interface.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// A Virtual MCP Server: one MCP endpoint in front of many MCP servers.
#[derive(Parser, Debug)]
#[command(name = "vmcp", version, about)]
pub(crate) struct Cli {
    /// Log format on stderr.
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    pub(crate) log_format: LogFormat,
    /// Log at debug level.
    #[arg(long, global = true)]
    pub(crate) debug: bool,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// Log output format.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Run the gateway.
    Serve(ServeArgs),
    /// Check a config file and list every problem.
    Validate {
        /// The config file.
        #[arg(long)]
        config: PathBuf,
    },
    /// Print a starter config (or convert an mcpServers JSON file).
    Init {
        /// A Claude Desktop / Cursor / VS Code MCP servers file to convert.
        #[arg(long)]
        from_mcp_json: Option<PathBuf>,
    },
    /// Authorization tools.
    #[command(subcommand)]
    Authz(AuthzCommand),
    /// Review and approve definitions that changed since they were pinned (`toolPinning`).
    #[command(subcommand)]
    Tools(ToolsCommand),
    /// Print the version.
    Version,
}

#[derive(Args, Debug)]
pub(crate) struct PinsConfig {
    /// The config file (its pin file is `toolPinning.store`, or `<stem>.pins.json` beside it).
    #[arg(long)]
    pub(crate) config: PathBuf,
}

#[derive(Subcommand, Debug)]
pub(crate) enum ToolsCommand {
    /// Show each definition awaiting approval and what changed (exit 1 when there is any).
    Diff(PinsConfig),
    /// Accept a backend's pending definition named NAME (or all of them with --all).
    Approve {
        #[command(flatten)]
        pins: PinsConfig,
        /// The backend, as named in the config.
        backend: String,
        /// The tool, prompt or resource template (as the backend names it).
        #[arg(required_unless_present = "all")]
        name: Option<String>,
        /// Every pending definition of the backend.
        #[arg(long, conflicts_with = "name")]
        all: bool,
    },
    /// Discover every backend now and record what it serves as approved.
    Pin(PinsConfig),
}

#[derive(Subcommand, Debug)]
pub(crate) enum AuthzCommand {
    /// Decide one request with the config's Cedar policies, without a running gateway, and print
    /// the decision and the policies that determined it (exit 0 allowed, 1 denied).
    Check(CheckArgs),
}

#[derive(Args, Debug)]
pub(crate) struct CheckArgs {
    /// The config file.
    #[arg(long)]
    pub(crate) config: PathBuf,
    /// A JSON file with the caller's token claims (`sub`, `groups`, ...).
    #[arg(long)]
    pub(crate) claims: PathBuf,
    /// Call this tool (advertised name).
    #[arg(long, group = "target")]
    pub(crate) tool: Option<String>,
    /// Get this prompt (advertised name).
    #[arg(long, group = "target")]
    pub(crate) prompt: Option<String>,
    /// Read this resource (exact URI).
    #[arg(long, group = "target")]
    pub(crate) resource: Option<String>,
    /// A JSON file with the call's arguments.
    #[arg(long)]
    pub(crate) args: Option<PathBuf>,
    /// The backend serving the item (for `resource in Backend::"..."` policies).
    #[arg(long)]
    pub(crate) backend: Option<String>,
    /// The tool's annotations as JSON, e.g. '{"readOnlyHint": true}'.
    #[arg(long)]
    pub(crate) annotations: Option<String>,
}

#[derive(Args, Debug)]
pub(crate) struct ServeArgs {
    /// The config file.
    #[arg(long)]
    pub(crate) config: PathBuf,
    /// Address to listen on (overrides server.host).
    #[arg(long)]
    pub(crate) host: Option<String>,
    /// Port to listen on, 0 for any (overrides server.port).
    #[arg(long)]
    pub(crate) port: Option<u16>,
    /// Idle time after which a session expires, e.g. 30m (overrides server.sessionTtl).
    #[arg(long, value_parser = parse_duration)]
    pub(crate) session_ttl: Option<Duration>,
    /// Refuse MCP 2026-07-28 (stateless) requests with -32022 and advertise only the session-based
    /// revisions (a rollback switch).
    #[arg(long)]
    pub(crate) disable_modern: bool,
    /// Reload the config when the file changes (SIGHUP always reloads it).
    #[arg(long)]
    pub(crate) watch: bool,
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    vmcp_config::parse_duration(s)
}
