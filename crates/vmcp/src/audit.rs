//! The `audit` block turned into a running audit trail.

use std::sync::Arc;

use anyhow::Context;
use vmcp_audit::{AuditSettings, Auditor, Destination, EventType, WorkflowEvent};
use vmcp_backend::Backend;
use vmcp_config::{AuditFailureMode, Config};
use vmcp_workflow::Event;

/// The auditor for `config`, if auditing is on; its secrets are the backends' credentials.
///
/// # Errors
/// The log file cannot be opened for appending.
pub(crate) fn auditor(
    config: &Config,
    backends: &[Arc<Backend>],
) -> anyhow::Result<Option<Arc<Auditor>>> {
    let Some(a) = &config.audit else {
        return Ok(None);
    };
    if !a.is_on() {
        tracing::warn!(
            "audit.enabled is false: no audit trail is written (ToolHive would write one anyway)"
        );
        return Ok(None);
    }
    let destination = match &a.log_file {
        Some(path) => Destination::File(path.into()),
        None => Destination::Stdout,
    };
    let settings = AuditSettings {
        component: a.component.clone().unwrap_or_else(|| "vmcp-server".into()),
        event_types: a.event_types.clone(),
        exclude_event_types: a.exclude_event_types.clone(),
        include_request_data: a.include_request_data,
        include_response_data: a.include_response_data,
        detect_application_errors: a.detect_application_errors,
        max_data_size: a.max_data_size,
        max_delegation_depth: usize::try_from(a.max_delegation_depth).unwrap_or(usize::MAX),
        destination: destination.clone(),
        fail_closed: a.on_write_failure == AuditFailureMode::Closed,
        write_timeout: a.write_timeout,
        credentials: backends.iter().map(|b| b.spec().auth.clone()).collect(),
    };
    let auditor = Auditor::start(settings).with_context(|| match &destination {
        Destination::File(p) => format!("audit.logFile: cannot open {} for appending", p.display()),
        Destination::Stdout => "audit: cannot write to standard output".into(),
    })?;
    tracing::info!(
        destination = %match &destination {
            Destination::File(p) => p.display().to_string(),
            Destination::Stdout => "stdout".into(),
        },
        on_write_failure = if a.on_write_failure == AuditFailureMode::Closed { "closed" } else { "open" },
        "audit trail on"
    );
    Ok(Some(auditor))
}

/// Writes composite-tool runs into the audit trail.
pub(crate) struct WorkflowAudit(pub(crate) Arc<Auditor>);

impl vmcp_core::WorkflowObserver for WorkflowAudit {
    fn observe(&self, identity: &vmcp_core::Identity, event: &Event<'_>) {
        let base = |kind, workflow_id, workflow_name| WorkflowEvent {
            kind,
            workflow_id,
            workflow_name,
            step_id: None,
            step_type: None,
            tool_name: None,
            identity: Some(identity),
            duration: None,
            timeout: None,
            step_count: None,
            retry_count: None,
            condition: None,
            error: None,
            request: None,
            response: None,
        };
        let e = match *event {
            Event::WorkflowStarted {
                workflow,
                name,
                timeout,
                params,
            } => WorkflowEvent {
                timeout: Some(timeout),
                request: Some(params),
                ..base(EventType::WorkflowStarted, workflow, name)
            },
            Event::WorkflowEnded {
                workflow,
                name,
                status,
                elapsed,
                steps,
                error,
                output,
            } => {
                let kind = match status {
                    "completed" => EventType::WorkflowCompleted,
                    "timed_out" => EventType::WorkflowTimedOut,
                    _ => EventType::WorkflowFailed,
                };
                WorkflowEvent {
                    duration: Some(elapsed),
                    step_count: Some(steps),
                    error,
                    response: output,
                    ..base(kind, workflow, name)
                }
            }
            Event::StepStarted {
                workflow,
                step,
                kind,
                tool,
            } => WorkflowEvent {
                step_id: Some(step),
                step_type: Some(kind),
                tool_name: tool,
                ..base(EventType::StepStarted, workflow, "")
            },
            Event::StepEnded {
                workflow,
                step,
                kind,
                tool,
                status,
                elapsed,
                retries,
                error,
                condition,
                ..
            } => {
                let event_type = match status {
                    "completed" => EventType::StepCompleted,
                    "skipped" => EventType::StepSkipped,
                    _ => EventType::StepFailed,
                };
                WorkflowEvent {
                    step_id: Some(step),
                    step_type: Some(kind),
                    tool_name: tool,
                    duration: (status != "skipped").then_some(elapsed),
                    retry_count: (status != "skipped").then_some(retries),
                    condition,
                    error,
                    ..base(event_type, workflow, "")
                }
            }
        };
        self.0.emit_workflow(&e);
    }
}

#[cfg(test)]
mod tests {
    use vmcp_audit::EventType;
    use vmcp_config::AUDIT_EVENT_TYPES;

    #[test]
    fn the_config_accepts_every_type_the_trail_writes_but_sse_connection() {
        for t in EventType::ALL {
            let accepted = AUDIT_EVENT_TYPES.contains(&t.name());
            assert_eq!(accepted, t != EventType::SseConnection, "{}", t.name());
        }
        assert_eq!(EventType::ALL.len(), AUDIT_EVENT_TYPES.len() + 1);
    }
}
