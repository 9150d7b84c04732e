//! A stand-alone code-mode worker: limits itself, then serves one job on stdin/stdout
//! (the gateway will use its own binary's hidden `script-worker` subcommand instead).

fn main() -> std::process::ExitCode {
    if let Err(e) = vmcp_codemode::worker::limit_worker_resources() {
        eprintln!("vmcp-script-worker: {e}");
        return std::process::ExitCode::from(2);
    }
    match vmcp_codemode::worker::serve_worker(std::io::stdin().lock(), std::io::stdout().lock()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("vmcp-script-worker: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
