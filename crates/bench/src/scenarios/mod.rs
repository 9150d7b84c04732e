//! The scenarios, one module each; [`run`] picks one.

mod call;
mod composite;
mod listing;
mod memory;
mod paging;
mod scale;
mod session;
mod telemetry;

use crate::cli::{Scenario, Settings};
use crate::procs::Env;
use crate::report::{Findings, Section};

/// Runs `scenario`, noting target measurements in `findings`.
///
/// # Errors
/// When a process cannot be started or a request fails outside a load run.
pub(crate) async fn run(
    scenario: Scenario,
    env: &Env,
    s: &Settings,
    findings: &mut Findings,
) -> anyhow::Result<Section> {
    match scenario {
        Scenario::Call => call::http_backend(env, s, findings).await,
        Scenario::Stdio => call::stdio_backend(env, s).await,
        Scenario::Session => session::run(env, s, findings).await,
        Scenario::Paging => paging::run(env, s).await,
        Scenario::Memory => memory::run(env, s, findings).await,
        Scenario::Composite => composite::run(env, s).await,
        Scenario::Telemetry => telemetry::run(env, s).await,
        Scenario::Scale => scale::run(env, s).await,
    }
}
