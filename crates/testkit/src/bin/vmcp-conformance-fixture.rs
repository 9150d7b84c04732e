//! `vmcp-conformance-fixture`: the MCP server the official conformance suite checks, over
//! Streamable HTTP at `/mcp`.
//!
//! All logic lives in the `vmcp_testkit` library; see `vmcp-conformance-fixture --help` and
//! `.ci/conformance.sh`.

use clap::Parser;

#[tokio::main]
async fn main() {
    let code = vmcp_testkit::run_conformance(vmcp_testkit::ConformanceCli::parse()).await;
    std::process::exit(code);
}
