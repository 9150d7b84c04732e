//! `vmcp`: a Virtual MCP Server. One MCP endpoint in front of many MCP servers.

mod assemble;
mod audit;
mod authz;
mod cli;
mod embedder;
mod logging;
mod open_files;
mod pins;
mod reload;
mod serve;
mod state_key;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    logging::init(cli.log_format, cli.debug);
    match cli.command {
        Command::Serve(args) => run_async(serve::run(args)),
        Command::Validate { config } => validate(&config),
        Command::Init { from_mcp_json } => init(from_mcp_json.as_deref()),
        Command::Authz(cli::AuthzCommand::Check(args)) => authz::check(&args),
        Command::Tools(args) => pins::run(args),
        Command::Version => {
            println!("vmcp {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
    }
}

/// Runs `fut` on the control thread's runtime (startup, accepting, background work, shutdown);
/// clients are served on threads of their own (`vmcp_server::serve`).
fn run_async(fut: impl std::future::Future<Output = anyhow::Result<()>>) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(fut) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn validate(path: &std::path::Path) -> ExitCode {
    match vmcp_config::load_file(path) {
        Ok(config) => {
            if !authz::validate(&config) {
                return ExitCode::FAILURE;
            }
            let unsupported = config.unsupported();
            if unsupported.is_empty() {
                println!(
                    "{}: ok ({} backends)",
                    path.display(),
                    config.backends.len()
                );
                ExitCode::SUCCESS
            } else {
                println!("{}: valid, but `serve` will refuse it:", path.display());
                for u in unsupported {
                    println!("  not supported yet: {u}");
                }
                ExitCode::from(2)
            }
        }
        Err(errors) => {
            eprintln!("{}: {} problem(s):", path.display(), errors.0.len());
            for e in &errors.0 {
                eprintln!("  {e}");
            }
            ExitCode::FAILURE
        }
    }
}

fn init(from_mcp_json: Option<&std::path::Path>) -> ExitCode {
    let Some(path) = from_mcp_json else {
        print!("{}", vmcp_config::starter_config());
        return ExitCode::SUCCESS;
    };
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    };
    match vmcp_config::from_mcp_json(&text) {
        Ok(config) => {
            print!("{}", vmcp_config::to_yaml(&config));
            ExitCode::SUCCESS
        }
        Err(errors) => {
            eprintln!("error: {}: {errors}", path.display());
            ExitCode::FAILURE
        }
    }
}
