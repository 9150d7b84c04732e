//! Composite-tool workflow events: a line when a run starts and ends, and when each step starts
//! and ends, in ToolHive's layout (`source` local `vmcp-composer`, `target` the workflow or the
//! step), with the caller as subject.

use std::time::{Duration, SystemTime};

use serde_json::Value;
use vmcp_auth::Identity;

use crate::event::{EventType, Obj, Outcome, delegation, head, local_source, subjects};
use crate::{AuditSettings, Scrubber};

/// One workflow or step event.
#[derive(Debug, Clone, Copy)]
pub struct WorkflowEvent<'a> {
    /// One of the `vmcp_workflow_*` types.
    pub kind: EventType,
    /// The run's id.
    pub workflow_id: &'a str,
    /// The composite tool's name (written for run events; step events name the run by id).
    pub workflow_name: &'a str,
    /// The step, for step events.
    pub step_id: Option<&'a str>,
    /// `tool`, `elicitation` or `forEach`, for step events.
    pub step_type: Option<&'a str>,
    /// The tool a step calls.
    pub tool_name: Option<&'a str>,
    /// Who called the composite tool.
    pub identity: Option<&'a Identity>,
    /// How long the run or step took (ended events).
    pub duration: Option<Duration>,
    /// The run's time budget (started event).
    pub timeout: Option<Duration>,
    /// How many steps the workflow has (run ended events).
    pub step_count: Option<usize>,
    /// Retries a step took (step ended events).
    pub retry_count: Option<u64>,
    /// The condition that skipped a step.
    pub condition: Option<&'a str>,
    /// Why the run or step failed.
    pub error: Option<&'a str>,
    /// The parameters (started event; written with `includeRequestData`).
    pub request: Option<&'a Value>,
    /// The output (completed event; written with `includeResponseData`).
    pub response: Option<&'a Value>,
}

impl WorkflowEvent<'_> {
    fn outcome(&self) -> Outcome {
        match self.kind {
            EventType::WorkflowFailed | EventType::WorkflowTimedOut | EventType::StepFailed => {
                Outcome::Failure
            }
            _ => Outcome::Success,
        }
    }
}

/// Longest failure reason kept, in characters.
const ERROR_CHARS: usize = 256;

fn millis(d: Duration) -> String {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).to_string()
}

/// The line for `e` (newline included).
pub(crate) fn line(e: &WorkflowEvent<'_>, s: &AuditSettings, scrub: &Scrubber) -> Vec<u8> {
    let redact = scrub.for_caller(e.identity.and_then(|i| i.token.as_ref()));
    let stamp = vmcp_proto::time::rfc3339_nanos(SystemTime::now());
    let mut buf = Vec::with_capacity(512);
    let mut out = Obj::open(&mut buf);
    head(&mut out, &stamp, e.kind, e.outcome(), &s.component);
    local_source(&mut out, "vmcp-composer");

    subjects(&mut out, e.identity);

    let mut target = out.object("target");
    target.str("workflow_id", e.workflow_id);
    match e.step_id {
        Some(step) => {
            target.str("step_id", step);
            if let Some(t) = e.step_type {
                target.str("step_type", t);
            }
            if let Some(t) = e.tool_name {
                target.str("tool_name", t);
            }
            target.str("type", "workflow_step");
        }
        None => {
            target.str("workflow_name", e.workflow_name);
            target.str("type", "workflow");
        }
    }
    target.close();

    let mut metadata = out.object("metadata");
    let mut extra = metadata.object("extra");
    if let Some(t) = e.timeout {
        extra.raw("timeout_ms", &millis(t));
    }
    if let Some(d) = e.duration {
        extra.raw("duration_ms", &millis(d));
    }
    if let Some(n) = e.step_count {
        extra.raw("step_count", &n.to_string());
    }
    if let Some(n) = e.retry_count {
        extra.raw("retry_count", &n.to_string());
    }
    if let Some(c) = e.condition {
        extra.str("condition", c);
    }
    if let Some(err) = e.error {
        let err: String = redact.text(err).chars().take(ERROR_CHARS).collect();
        extra.str("error", &err);
    }
    extra.close();
    metadata.close();

    let request = e.request.filter(|_| s.include_request_data);
    let response = e.response.filter(|_| s.include_response_data);
    if request.is_some() || response.is_some() {
        let mut data = out.object("data");
        for (key, v) in [("request", request), ("response", response)] {
            if let Some(v) = v {
                let bytes = serde_json::to_vec(v).unwrap_or_default();
                data.value(key, &redact.data(&bytes, s.max_data_size));
            }
        }
        data.close();
    }
    if let Some(chain) = e
        .identity
        .and_then(|i| delegation(&i.claims, s.max_delegation_depth))
    {
        out.value("delegation", &chain);
    }
    out.close();
    buf.push(b'\n');
    buf
}
