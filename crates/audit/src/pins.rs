//! Definition-pinning events (`toolPinning`): a backend served a tool, prompt or resource
//! template that differs from its pin, or someone approved one. In ToolHive's line layout, with
//! `source` local `vmcp-pins`; an approval's subject is the approver (the OS user who ran
//! `vmcp tools approve`).

use std::time::SystemTime;

use crate::AuditSettings;
use crate::event::{EventType, Obj, Outcome, head, local_source};

/// One pinning event.
#[derive(Debug, Clone, Copy)]
pub struct PinEvent<'a> {
    /// [`EventType::DefinitionChanged`] or [`EventType::DefinitionApproved`].
    pub kind: EventType,
    /// The backend serving the definition.
    pub backend: &'a str,
    /// `tools`, `prompts` or `resourceTemplates`.
    pub item_kind: &'a str,
    /// The item's name as the backend names it.
    pub name: &'a str,
    /// Why it differs (changed events): `changed`, `renamed`, `copies_description`.
    pub reason: Option<&'a str>,
    /// The same, for people.
    pub detail: Option<&'a str>,
    /// The fingerprint seen (changed) or accepted (approved).
    pub fingerprint: &'a str,
    /// Whether the gateway withholds it until approved (changed events).
    pub withheld: bool,
    /// Who approved it (approved events).
    pub approver: Option<&'a str>,
}

/// The line for `e` (newline included).
pub(crate) fn line(e: &PinEvent<'_>, s: &AuditSettings) -> Vec<u8> {
    let stamp = vmcp_proto::time::rfc3339_nanos(SystemTime::now());
    let mut buf = Vec::with_capacity(512);
    let mut out = Obj::open(&mut buf);
    let outcome = if e.withheld {
        Outcome::Denied
    } else {
        Outcome::Success
    };
    head(&mut out, &stamp, e.kind, outcome, &s.component);
    local_source(&mut out, "vmcp-pins");

    let mut subjects = out.object("subjects");
    subjects.str("user", e.approver.unwrap_or("vmcp"));
    subjects.close();

    let mut target = out.object("target");
    target.str("type", "definition");
    target.str("kind", e.item_kind);
    target.str("backend", e.backend);
    target.str("name", e.name);
    target.close();

    let mut metadata = out.object("metadata");
    let mut extra = metadata.object("extra");
    extra.str("fingerprint", e.fingerprint);
    if let Some(r) = e.reason {
        extra.str("reason", r);
    }
    if let Some(d) = e.detail {
        extra.str("detail", d);
    }
    if e.kind == EventType::DefinitionChanged {
        extra.raw("withheld", if e.withheld { "true" } else { "false" });
    }
    extra.close();
    metadata.close();
    out.close();
    buf.push(b'\n');
    buf
}
