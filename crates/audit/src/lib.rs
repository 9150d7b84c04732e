//! The audit trail: one JSON line per MCP request and per composite-tool workflow event, in ToolHive's
//! format, so tools that read ToolHive's audit logs read ours.
//!
//! The edge fills an [`HttpEvent`] while it serves a request; [`Auditor`] turns it into a line
//! (filtered by event type, secrets scrubbed, data cut at `maxDataSize`) and hands it to a
//! writer thread through a bounded queue. A request reserves its queue slot before it is served
//! ([`Auditor::reserve`]), so with `onWriteFailure: closed` nothing is served that cannot be
//! recorded, and with `open` nothing waits on the disk.

mod event;
mod pins;
mod scrub;
mod sink;
mod workflow;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc::OwnedPermit;
use vmcp_auth::OutgoingAuth;

pub use event::{EventType, HttpEvent, Outcome};
pub use pins::PinEvent;
pub use scrub::{REDACTED, Redactor, Scrubber};
use sink::Sink;
pub use workflow::WorkflowEvent;

/// Where lines go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    /// Standard output (logs go to standard error, so the two never mix).
    Stdout,
    /// A file, appended to; created with mode 0600.
    File(PathBuf),
}

/// How the audit trail is written; built from the config's `audit` block.
#[derive(Debug, Clone)]
pub struct AuditSettings {
    /// `component` of every event.
    pub component: String,
    /// Types written (empty: all).
    pub event_types: Vec<String>,
    /// Types never written (wins over `event_types`).
    pub exclude_event_types: Vec<String>,
    /// Keep request bodies as `data.request`.
    pub include_request_data: bool,
    /// Keep response bodies as `data.response`.
    pub include_response_data: bool,
    /// A 2xx answer carrying a JSON-RPC error is `application_error`.
    pub detect_application_errors: bool,
    /// Bytes of request or response data kept.
    pub max_data_size: usize,
    /// `act` links recorded of a delegated token.
    pub max_delegation_depth: usize,
    /// Where lines go.
    pub destination: Destination,
    /// Refuse requests while lines cannot be written (`onWriteFailure: closed`).
    pub fail_closed: bool,
    /// The longest a request waits for room in the queue.
    pub write_timeout: Duration,
    /// The backends' credentials, whose secrets never appear in a line.
    pub credentials: Vec<OutgoingAuth>,
}

impl Default for AuditSettings {
    fn default() -> Self {
        Self {
            component: "vmcp-server".into(),
            event_types: Vec::new(),
            exclude_event_types: Vec::new(),
            include_request_data: false,
            include_response_data: false,
            detect_application_errors: true,
            max_data_size: 1024,
            max_delegation_depth: 10,
            destination: Destination::Stdout,
            fail_closed: false,
            write_timeout: Duration::from_secs(1),
            credentials: Vec::new(),
        }
    }
}

/// Lines waiting for the writer at most; a request holds one slot while it is served.
const QUEUE: usize = 65_536;

/// Writes the audit trail.
#[derive(Debug)]
pub struct Auditor {
    settings: AuditSettings,
    scrub: Scrubber,
    sink: Sink,
}

/// Why a request cannot be served while `onWriteFailure: closed`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable(pub String);

/// A request's place in the audit queue, reserved before it is served (the default holds none).
#[derive(Debug, Default)]
pub struct Slot {
    permit: Option<OwnedPermit<Vec<u8>>>,
}

impl Auditor {
    /// Opens the destination and starts the writer thread.
    ///
    /// # Errors
    /// The log file cannot be opened for appending.
    pub fn start(settings: AuditSettings) -> std::io::Result<Arc<Self>> {
        let sink = Sink::start(&settings.destination, QUEUE)?;
        let scrub = Scrubber::new(settings.credentials.clone());
        Ok(Arc::new(Self {
            settings,
            scrub,
            sink,
        }))
    }

    /// The settings in force.
    pub fn settings(&self) -> &AuditSettings {
        &self.settings
    }

    /// How much of a response body to keep so that, scrubbed and cut at `maxDataSize`, no
    /// secret is cut in half.
    pub fn response_capture_limit(&self) -> usize {
        self.settings.max_data_size + self.scrub.margin()
    }

    /// Whether events of `kind` are written.
    pub fn wants(&self, kind: EventType) -> bool {
        let name = kind.name();
        let s = &self.settings;
        if s.exclude_event_types.iter().any(|t| t == name) {
            return false;
        }
        // ToolHive's filter lists cannot name sse_connection, so an allow-list never hides it.
        s.event_types.is_empty()
            || kind == EventType::SseConnection
            || s.event_types.iter().any(|t| t == name)
    }

    /// Reserves a slot for a request's line. With `onWriteFailure: closed`, refuses while the
    /// writer is failing or the queue stays full for `writeTimeout`; with `open`, never waits
    /// (a request without a slot has its line dropped and counted).
    ///
    /// # Errors
    /// Only when failing closed: why the request must be refused.
    pub async fn reserve(&self) -> Result<Slot, Unavailable> {
        let s = &self.settings;
        if !s.fail_closed {
            return Ok(Slot {
                permit: self.sink.try_reserve(),
            });
        }
        if let Some(error) = self.sink.failing() {
            return Err(Unavailable(error));
        }
        match self.sink.reserve(s.write_timeout).await {
            Some(permit) => Ok(Slot {
                permit: Some(permit),
            }),
            None => {
                self.sink.count_refused();
                Err(Unavailable(format!(
                    "the audit queue stayed full for {:?}",
                    s.write_timeout
                )))
            }
        }
    }

    /// Writes the line of `event` through `slot`, unless its type is filtered out.
    pub fn emit(&self, slot: Slot, event: &HttpEvent) {
        let kind = event.event_type();
        if !self.wants(kind) {
            return;
        }
        let line = event::line(event, &self.settings, &self.scrub);
        match slot.permit.or_else(|| self.sink.try_reserve()) {
            Some(permit) => self.sink.send(permit, line),
            None => self.sink.count_dropped(),
        }
    }

    /// Writes the line of a workflow or step event, unless its type is filtered out. Best
    /// effort even when failing closed: the call that runs the workflow holds its own slot.
    pub fn emit_workflow(&self, event: &WorkflowEvent<'_>) {
        if !self.wants(event.kind) {
            return;
        }
        self.send_unslotted(workflow::line(event, &self.settings, &self.scrub));
    }

    /// Writes the line of a definition-pinning event, unless its type is filtered out (best
    /// effort: it belongs to no request).
    pub fn emit_pin(&self, event: &PinEvent<'_>) {
        if !self.wants(event.kind) {
            return;
        }
        self.send_unslotted(pins::line(event, &self.settings));
    }

    /// Queues a line that holds no reserved slot, or counts it dropped when the queue is full.
    fn send_unslotted(&self, line: Vec<u8>) {
        match self.sink.try_reserve() {
            Some(permit) => self.sink.send(permit, line),
            None => self.sink.count_dropped(),
        }
    }

    /// Counters and state for `/status`.
    pub fn status(&self) -> Value {
        self.sink.status(self.settings.fail_closed)
    }

    /// Waits (at most `within`) until every queued line is written; for shutdown.
    pub async fn flush(&self, within: Duration) -> bool {
        self.sink.flush(within).await
    }
}
