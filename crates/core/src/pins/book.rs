//! The pin book: what the store holds. Approved fingerprints (`pins`), definitions that differ
//! from them and wait for a decision (`pending`), and the record of approvals. One JSON document,
//! readable and diffable, so a reviewer can keep it in version control beside the config.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::view::PinKind;

/// The file format's version.
pub const BOOK_VERSION: u32 = 1;

/// backend → kind (`tools`, `prompts`, `resourceTemplates`) → name → entry.
pub type Shelf<T> = BTreeMap<String, BTreeMap<String, BTreeMap<String, T>>>;

/// Everything pinned, pending and approved.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PinBook {
    /// [`BOOK_VERSION`].
    #[serde(default = "current_version")]
    pub version: u32,
    /// The accepted definitions.
    #[serde(default)]
    pub pins: Shelf<Pin>,
    /// Definitions seen that differ from their pin (or look like another's), awaiting approval.
    #[serde(default)]
    pub pending: Shelf<Pending>,
    /// Who accepted what, oldest first.
    #[serde(default)]
    pub approvals: Vec<Approval>,
}

fn current_version() -> u32 {
    BOOK_VERSION
}

/// An accepted definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Pin {
    /// [`super::fingerprint`] of `definition`.
    pub fingerprint: String,
    /// What the model reads ([`super::model_view`]).
    pub definition: Value,
    /// When (RFC 3339).
    pub pinned_at: String,
    /// `first sight`, or who approved it.
    pub pinned_by: String,
}

/// A definition waiting for a decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Pending {
    /// [`super::fingerprint`] of `definition`.
    pub fingerprint: String,
    /// What the backend serves now.
    pub definition: Value,
    /// When it was first seen (RFC 3339).
    pub first_seen: String,
    /// Why it was not accepted on sight.
    pub reason: Reason,
}

/// Why a definition waits for approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind", deny_unknown_fields)]
pub enum Reason {
    /// It differs from its pin.
    Changed,
    /// A pinned item of the same backend disappeared and this one, under a new name, is it.
    Renamed {
        /// The pinned name.
        from: String,
    },
    /// A new item whose description copies a pinned one's (the shadowing attack).
    CopiesDescription {
        /// `backend/name` of the item copied.
        of: String,
    },
}

impl Reason {
    /// A short label for logs, metrics and reports.
    pub fn label(&self) -> &'static str {
        match self {
            Reason::Changed => "changed",
            Reason::Renamed { .. } => "renamed",
            Reason::CopiesDescription { .. } => "copies_description",
        }
    }

    /// One line for people.
    pub fn describe(&self) -> String {
        match self {
            Reason::Changed => "changed since it was pinned".into(),
            Reason::Renamed { from } => format!("renamed from {from} (same definition otherwise)"),
            Reason::CopiesDescription { of } => {
                format!("new, and its description copies that of {of}")
            }
        }
    }
}

/// One approval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Approval {
    /// When (RFC 3339).
    pub at: String,
    /// The approver: the OS user who ran `vmcp tools approve`.
    pub by: String,
    /// The backend.
    pub backend: String,
    /// `tools`, `prompts` or `resourceTemplates`.
    pub kind: String,
    /// The item's name (a template's URI template).
    pub name: String,
    /// The fingerprint accepted.
    pub fingerprint: String,
    /// `approve` or `pin`.
    pub action: String,
}

/// Most approvals kept in the book (older ones are in the audit trail).
pub const MAX_APPROVALS: usize = 1000;

impl PinBook {
    /// The pin of (`backend`, `kind`, `name`).
    pub fn pin(&self, backend: &str, kind: PinKind, name: &str) -> Option<&Pin> {
        self.pins.get(backend)?.get(kind.as_str())?.get(name)
    }

    /// The pending entry of (`backend`, `kind`, `name`).
    pub fn pending(&self, backend: &str, kind: PinKind, name: &str) -> Option<&Pending> {
        self.pending.get(backend)?.get(kind.as_str())?.get(name)
    }

    /// Every pending entry: (backend, kind, name, entry).
    pub fn all_pending(&self) -> impl Iterator<Item = (&str, PinKind, &str, &Pending)> {
        entries(&self.pending)
    }

    /// Every pin: (backend, kind, name, entry).
    pub fn all_pins(&self) -> impl Iterator<Item = (&str, PinKind, &str, &Pin)> {
        entries(&self.pins)
    }

    pub(crate) fn set_pin(&mut self, backend: &str, kind: PinKind, name: &str, pin: Pin) {
        self.pins
            .entry(backend.to_owned())
            .or_default()
            .entry(kind.as_str().to_owned())
            .or_default()
            .insert(name.to_owned(), pin);
    }

    pub(crate) fn set_pending(&mut self, backend: &str, kind: PinKind, name: &str, p: Pending) {
        self.pending
            .entry(backend.to_owned())
            .or_default()
            .entry(kind.as_str().to_owned())
            .or_default()
            .insert(name.to_owned(), p);
    }

    /// Removes a pending entry; whether there was one.
    pub(crate) fn clear_pending(&mut self, backend: &str, kind: PinKind, name: &str) -> bool {
        let Some(kinds) = self.pending.get_mut(backend) else {
            return false;
        };
        let Some(names) = kinds.get_mut(kind.as_str()) else {
            return false;
        };
        let removed = names.remove(name).is_some();
        if names.is_empty() {
            kinds.remove(kind.as_str());
        }
        if kinds.is_empty() {
            self.pending.remove(backend);
        }
        removed
    }

    /// Accepts the pending definition of (`backend`, `kind`, `name`) as its pin, recording
    /// `by` and `action` (`approve`, `pin`). Returns the approval, or None when nothing is
    /// pending there.
    pub fn approve(
        &mut self,
        backend: &str,
        kind: PinKind,
        name: &str,
        by: &str,
        at: &str,
        action: &str,
    ) -> Option<Approval> {
        let pending = self.pending(backend, kind, name)?.clone();
        self.clear_pending(backend, kind, name);
        if let Reason::Renamed { from } = &pending.reason {
            // The old name is gone for good: its pin would only match a tool that returns.
            if let Some(names) = self
                .pins
                .get_mut(backend)
                .and_then(|k| k.get_mut(kind.as_str()))
            {
                names.remove(from);
            }
        }
        self.set_pin(
            backend,
            kind,
            name,
            Pin {
                fingerprint: pending.fingerprint.clone(),
                definition: pending.definition,
                pinned_at: at.to_owned(),
                pinned_by: by.to_owned(),
            },
        );
        let approval = Approval {
            at: at.to_owned(),
            by: by.to_owned(),
            backend: backend.to_owned(),
            kind: kind.as_str().to_owned(),
            name: name.to_owned(),
            fingerprint: pending.fingerprint,
            action: action.to_owned(),
        };
        self.record(approval.clone());
        Some(approval)
    }

    /// Appends to the approval record, dropping the oldest past [`MAX_APPROVALS`].
    pub fn record(&mut self, approval: Approval) {
        self.approvals.push(approval);
        if self.approvals.len() > MAX_APPROVALS {
            let extra = self.approvals.len() - MAX_APPROVALS;
            self.approvals.drain(..extra);
        }
    }
}

fn entries<T>(shelf: &Shelf<T>) -> impl Iterator<Item = (&str, PinKind, &str, &T)> {
    shelf.iter().flat_map(|(backend, kinds)| {
        kinds.iter().flat_map(move |(kind, names)| {
            let kind = PinKind::parse(kind);
            names.iter().filter_map(move |(name, entry)| {
                Some((backend.as_str(), kind?, name.as_str(), entry))
            })
        })
    })
}
