//! Composite tools: a ToolHive `compositeTools[]` entry compiled once (templates parsed,
//! dependencies indexed) into a [`Workflow`], then run per call against a [`Runner`] that
//! calls backend tools and asks the client.
//!
//! The engine knows nothing of backends or sessions: the gateway's runner resolves tool
//! references, carries the caller's identity and credentials, and relays elicitations.
//! Behaviour follows ToolHive's engine (reference section 8) except where its names say
//! otherwise: `skip_remaining` skips the remaining steps, a step starts as soon as its own
//! dependencies are done (not when its whole level is), and progress is reported per step.

mod annotations;
mod args;
mod coerce;
mod compile;
mod engine;
mod json;
mod output;

use std::future::Future;
use std::time::Duration;

use serde_json::Value;

pub use annotations::{Annotations, derive_annotations};
pub use compile::{CompileError, Workflow};
pub use engine::{Resume, Round};
pub use json::to_sorted_json;

/// Most steps running at once in one workflow (ToolHive's DAG limit).
pub const MAX_PARALLEL_STEPS: usize = 10;
/// Most retries of one step, whatever `retryCount` says (ToolHive's cap).
pub const MAX_RETRIES: u64 = 10;
/// The longest an elicitation waits for the user, whatever the step's timeout says.
pub const MAX_ELICITATION_WAIT: Duration = Duration::from_secs(10 * 60);
/// Largest elicitation answer accepted (bytes of JSON).
pub const MAX_ELICITATION_ANSWER: usize = 1024 * 1024;

/// What a workflow needs from the gateway.
pub trait Runner: Send + Sync {
    /// Calls the tool a step names (an advertised name or `backend.tool`) and returns its
    /// `CallToolResult`; `Err` is a transport or protocol failure, in words.
    fn call_tool(
        &self,
        tool: &str,
        arguments: Value,
    ) -> impl Future<Output = Result<Value, String>> + Send;

    /// The `inputSchema` of the tool a step names, for coercing rendered arguments.
    fn input_schema(&self, tool: &str) -> Option<&Value>;

    /// Asks the calling client (`elicitation/create` with `message` and `requestedSchema`)
    /// and returns its `ElicitResult`.
    fn elicit(
        &self,
        message: String,
        schema: Value,
    ) -> impl Future<Output = Result<Value, String>> + Send;

    /// Something happened (for progress, audit and logs). Called on the running task.
    fn observe(&self, _event: Event<'_>) {}

    /// Whether the client cancelled the call: no retry is attempted after that.
    fn cancelled(&self) -> bool {
        false
    }
}

/// What happened in a workflow run, for progress, audit and logs.
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// The run started.
    WorkflowStarted {
        /// This run's id.
        workflow: &'a str,
        /// The composite tool's name.
        name: &'a str,
        /// The run's time budget.
        timeout: Duration,
        /// The parameters, defaults applied.
        params: &'a Value,
    },
    /// The run ended.
    WorkflowEnded {
        /// This run's id.
        workflow: &'a str,
        /// The composite tool's name.
        name: &'a str,
        /// `completed`, `failed` or `timed_out`.
        status: &'static str,
        /// How long it ran.
        elapsed: Duration,
        /// How many steps the workflow has.
        steps: usize,
        /// Why it failed.
        error: Option<&'a str>,
        /// The output, when it completed.
        output: Option<&'a Value>,
    },
    /// A step started.
    StepStarted {
        /// The run's id.
        workflow: &'a str,
        /// The step.
        step: &'a str,
        /// `tool`, `elicitation` or `forEach`.
        kind: &'static str,
        /// The tool it calls, if any.
        tool: Option<&'a str>,
    },
    /// A step ended: completed, failed, or skipped.
    StepEnded {
        /// The run's id.
        workflow: &'a str,
        /// The step.
        step: &'a str,
        /// `tool`, `elicitation` or `forEach`.
        kind: &'static str,
        /// The tool it calls, if any.
        tool: Option<&'a str>,
        /// `completed`, `failed` or `skipped`.
        status: &'static str,
        /// How many steps have ended so far, this one included.
        done: usize,
        /// How many steps the workflow has.
        total: usize,
        /// How long it ran.
        elapsed: Duration,
        /// Retries it needed (forEach: over all iterations).
        retries: u64,
        /// Why it failed.
        error: Option<&'a str>,
        /// The condition that skipped it.
        condition: Option<&'a str>,
    },
}
