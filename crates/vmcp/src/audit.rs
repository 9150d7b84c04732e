//! The `audit` block turned into a running audit trail.

use std::sync::Arc;

use anyhow::Context;
use vmcp_audit::{AuditSettings, Auditor, Destination};
use vmcp_backend::Backend;
use vmcp_config::{AuditFailureMode, Config};

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
    }
}
