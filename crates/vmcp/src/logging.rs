//! Logs go to stderr via tracing: human-readable by default, JSON for machines.

use tracing_subscriber::EnvFilter;

use crate::cli::LogFormat;

/// Installs the global subscriber. `RUST_LOG` refines the level when set.
pub(crate) fn init(format: LogFormat, debug: bool) {
    let default = if debug { "debug" } else { "info" };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().init(),
    }
}
