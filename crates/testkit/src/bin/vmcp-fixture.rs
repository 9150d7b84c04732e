//! `vmcp-fixture`: a fixture MCP server over stdio, Streamable HTTP or HTTP+SSE.
//!
//! All logic lives in the `vmcp_testkit` library; see `vmcp-fixture --help`.

use clap::Parser;

#[tokio::main]
async fn main() {
    let code = vmcp_testkit::run(vmcp_testkit::Cli::parse()).await;
    // Exit here rather than dropping the runtime, which would wait on tokio's stdin thread.
    std::process::exit(code);
}
