//! Screening a discovery's answers against the pin book: unseen definitions are pinned on first
//! sight, a definition that differs from its pin (or is a pinned one renamed, or copies a pinned
//! one's description) is recorded as pending and, when enforcing, taken out of the answers, so
//! the catalog never advertises it and a call to it is refused as an unknown tool.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::book::{Pending, Pin, PinBook, Reason};
use super::view::{PinKind, fingerprint, fingerprint_without, model_view, same_view};
use crate::discover::BackendCapabilities;

/// Shortest description that can be flagged as copied (short ones like "Echo" repeat honestly).
pub(crate) const MIN_COPIED_DESCRIPTION: usize = 24;

/// A definition that differs from what was approved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The backend serving it.
    pub backend: String,
    /// Its kind.
    pub kind: PinKind,
    /// Its name (a template's URI template), as the backend names it.
    pub name: String,
    /// Why it is not approved.
    pub reason: Reason,
    /// The fingerprint of what the backend serves now.
    pub fingerprint: String,
}

/// What one screening did.
#[derive(Debug, Default)]
pub struct Screened {
    /// Whether the book changed (new pins, pending entries added or cleared).
    pub changed: bool,
    /// Every definition that is not approved, in backend, kind, name order.
    pub findings: Vec<Finding>,
    /// The tools taken out of the answers (when withholding), with their backend.
    pub withheld_tools: Vec<(String, Value)>,
}

fn items_mut(caps: &mut BackendCapabilities, kind: PinKind) -> &mut Vec<Value> {
    match kind {
        PinKind::Tool => &mut caps.tools,
        PinKind::Prompt => &mut caps.prompts,
        PinKind::Template => &mut caps.templates,
    }
}

/// Screens `caps` against `book` (updating it); with `withhold`, removes what is not approved.
pub fn screen(
    book: &mut PinBook,
    caps: &mut [BackendCapabilities],
    withhold: bool,
    now: &str,
) -> Screened {
    let mut out = Screened::default();
    let mut suspects = Suspects::default();
    for cap in caps.iter_mut() {
        let backend = cap.backend.clone();
        for kind in PinKind::ALL {
            let items = items_mut(cap, kind);
            let held = screen_list(book, &mut suspects, &backend, kind, items, now, &mut out);
            if withhold && !held.is_empty() {
                let (out_of_it, kept): (Vec<_>, Vec<_>) = std::mem::take(items)
                    .into_iter()
                    .enumerate()
                    .partition(|(i, _)| held.contains(i));
                *items = kept.into_iter().map(|(_, v)| v).collect();
                if kind == PinKind::Tool {
                    out.withheld_tools
                        .extend(out_of_it.into_iter().map(|(_, v)| (backend.clone(), v)));
                }
            }
        }
    }
    out
}

/// Screens one backend's list of one kind; returns the positions of the items not approved.
fn screen_list(
    book: &mut PinBook,
    suspects: &mut Suspects,
    backend: &str,
    kind: PinKind,
    items: &[Value],
    now: &str,
    out: &mut Screened,
) -> Vec<usize> {
    let mut held = Vec::new();
    // The names served, needed only when something is new or pending.
    let mut present: Option<HashSet<&str>> = None;
    let names = || {
        items
            .iter()
            .filter_map(|i| kind.key(i))
            .collect::<HashSet<&str>>()
    };
    for (position, item) in items.iter().enumerate() {
        let Some(name) = kind.key(item) else {
            continue;
        };
        // The common case, an unchanged definition, costs a comparison, not a hash.
        let pinned = book.pin(backend, kind, name);
        if pinned.is_some_and(|pin| same_view(kind, item, &pin.definition)) {
            out.changed |= book.clear_pending(backend, kind, name);
            continue;
        }
        let view = model_view(kind, item);
        let fp = fingerprint(&view);
        let reason = match pinned {
            Some(_) => Some(Reason::Changed),
            // Once flagged, an unpinned item stays flagged until someone decides, even if what
            // made it suspicious changed since.
            None => {
                let present = present.get_or_insert_with(names);
                suspects
                    .suspicion(book, backend, kind, name, &view, present)
                    .or_else(|| book.pending(backend, kind, name).map(|p| p.reason.clone()))
            }
        };
        let Some(reason) = reason else {
            let pin = Pin {
                fingerprint: fp,
                definition: view,
                pinned_at: now.to_owned(),
                pinned_by: "first sight".into(),
            };
            book.set_pin(backend, kind, name, pin);
            book.clear_pending(backend, kind, name);
            out.changed = true;
            continue;
        };
        let recorded = book.pending(backend, kind, name);
        if recorded.is_none_or(|p| p.fingerprint != fp || p.reason != reason) {
            let pending = Pending {
                fingerprint: fp.clone(),
                definition: view,
                first_seen: now.to_owned(),
                reason: reason.clone(),
            };
            book.set_pending(backend, kind, name, pending);
            out.changed = true;
        }
        out.findings.push(Finding {
            backend: backend.to_owned(),
            kind,
            name: name.to_owned(),
            reason,
            fingerprint: fp,
        });
        held.push(position);
    }
    // A pending definition the backend no longer serves needs no decision.
    if let Some(pending) = book.pending.get(backend).and_then(|k| k.get(kind.as_str())) {
        let present = present.get_or_insert_with(names);
        let stale: Vec<String> = pending
            .keys()
            .filter(|n| !present.contains(n.as_str()))
            .cloned()
            .collect();
        for name in stale {
            out.changed |= book.clear_pending(backend, kind, &name);
        }
    }
    held
}

/// What new definitions are checked against, built on the first new item (a screening with
/// none costs nothing): the descriptions of the pinned items, and the rename keys (definition
/// without name) of the current backend's pinned tools that it no longer serves.
#[derive(Default)]
struct Suspects {
    /// (kind, description) -> `backend/name` of a pinned item.
    descriptions: Option<HashMap<(PinKind, String), String>>,
    /// (backend, fingerprint without name -> pinned name) of its tools that are gone.
    gone: Option<(String, HashMap<String, String>)>,
}

impl Suspects {
    /// Why a definition seen for the first time is not pinned on sight, if it is suspicious: a
    /// pinned tool of the same backend that is gone had the same definition under another name
    /// (a rename), or a pinned item has its description word for word.
    fn suspicion(
        &mut self,
        book: &PinBook,
        backend: &str,
        kind: PinKind,
        name: &str,
        view: &Value,
        present: &HashSet<&str>,
    ) -> Option<Reason> {
        if kind == PinKind::Tool {
            if self.gone.as_ref().is_none_or(|(b, _)| b != backend) {
                let gone = book
                    .pins
                    .get(backend)
                    .and_then(|k| k.get(kind.as_str()))
                    .into_iter()
                    .flatten()
                    .filter(|(n, _)| !present.contains(n.as_str()))
                    .map(|(n, pin)| {
                        (
                            fingerprint_without(&pin.definition, Some("name")),
                            n.clone(),
                        )
                    })
                    .collect();
                self.gone = Some((backend.to_owned(), gone));
            }
            if let Some((_, gone)) = &self.gone
                && let Some(from) = gone.get(&fingerprint_without(view, Some("name")))
            {
                return Some(Reason::Renamed { from: from.clone() });
            }
        }
        let description = copyable(view)?;
        let descriptions = self.descriptions.get_or_insert_with(|| {
            let mut all = HashMap::new();
            for (b, k, n, pin) in book.all_pins() {
                if let Some(d) = copyable(&pin.definition) {
                    all.entry((k, d.to_owned()))
                        .or_insert_with(|| format!("{b}/{n}"));
                }
            }
            all
        });
        let of = descriptions.get(&(kind, description.to_owned()))?;
        (*of != format!("{backend}/{name}")).then(|| Reason::CopiesDescription { of: of.clone() })
    }
}

/// A description long enough to be flagged when copied (trimmed).
fn copyable(view: &Value) -> Option<&str> {
    view.get("description")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|d| d.chars().count() >= MIN_COPIED_DESCRIPTION)
}
