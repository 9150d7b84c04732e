//! A composite's safety annotations: derived from the tools its steps call (the floor), with
//! the config's explicit annotations merged over it. A composite that claims to be safer
//! than its steps is not advertised at all.

use serde_json::{Map, Value};
use vmcp_config::AnnotationsOverride;

/// What the steps' tools say about safety, combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Annotations {
    /// Every step's tool is read-only.
    pub read_only: bool,
    /// Some step's tool may destroy (or does not say).
    pub destructive: bool,
    /// Some step's tool reaches the open world (or does not say).
    pub open_world: bool,
}

/// The floor over the definitions of the tools the steps call (`None` for a tool whose
/// definition is unknown, which taints like a tool without annotations), then the explicit
/// annotations merged over it. `Ok(None)`: no tool steps and nothing explicit.
///
/// MCP's defaults decide a missing hint: `readOnlyHint` false, `destructiveHint` and
/// `openWorldHint` true. A read-only tool counts as not destructive (the spec gives
/// `destructiveHint` meaning only when `readOnlyHint` is false; ToolHive counts it).
///
/// # Errors
/// The explicit annotations claim more safety than the floor allows (the reason, in words).
pub fn derive_annotations(
    tools: &[Option<&Value>],
    explicit: Option<&AnnotationsOverride>,
) -> Result<Option<Map<String, Value>>, String> {
    let floor = (!tools.is_empty()).then(|| {
        let mut f = Annotations {
            read_only: true,
            destructive: false,
            open_world: false,
        };
        for def in tools {
            let a = def.and_then(|d| d.get("annotations"));
            let hint = |k: &str| a.and_then(|a| a.get(k)).and_then(Value::as_bool);
            let read_only = hint("readOnlyHint").unwrap_or(false);
            f.read_only &= read_only;
            f.destructive |= !read_only && hint("destructiveHint").unwrap_or(true);
            f.open_world |= hint("openWorldHint").unwrap_or(true);
        }
        f
    });
    let mut out = Map::new();
    if let Some(f) = floor {
        out.insert("readOnlyHint".into(), Value::Bool(f.read_only));
        out.insert("destructiveHint".into(), Value::Bool(f.destructive));
        out.insert("openWorldHint".into(), Value::Bool(f.open_world));
    }
    if let Some(e) = explicit {
        if let Some(f) = floor {
            if e.read_only_hint == Some(true) && !f.read_only {
                return Err("it says readOnlyHint: true but a step's tool is not read-only".into());
            }
            if e.destructive_hint == Some(false) && f.destructive {
                return Err(
                    "it says destructiveHint: false but a step's tool may be destructive".into(),
                );
            }
            if e.open_world_hint == Some(false) && f.open_world {
                return Err(
                    "it says openWorldHint: false but a step's tool reaches the open world".into(),
                );
            }
        }
        if let Some(t) = &e.title {
            out.insert("title".into(), Value::String(t.clone()));
        }
        let hints = [
            ("readOnlyHint", e.read_only_hint),
            ("destructiveHint", e.destructive_hint),
            ("idempotentHint", e.idempotent_hint),
            ("openWorldHint", e.open_world_hint),
        ];
        for (k, v) in hints {
            if let Some(v) = v {
                out.insert(k.into(), Value::Bool(v));
            }
        }
    }
    Ok((!out.is_empty()).then_some(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(ann: Value) -> Value {
        json!({"name": "t", "annotations": ann})
    }

    #[test]
    fn read_only_is_and_destructive_and_open_world_are_or_and_unknown_taints() {
        let ro = tool(json!({"readOnlyHint": true, "openWorldHint": false}));
        let w =
            tool(json!({"readOnlyHint": false, "destructiveHint": false, "openWorldHint": false}));
        let bare = json!({"name": "b"});
        let got = derive_annotations(&[Some(&ro), Some(&ro)], None)
            .unwrap()
            .unwrap();
        assert_eq!(
            Value::Object(got),
            json!({"readOnlyHint": true, "destructiveHint": false, "openWorldHint": false})
        );
        let got = derive_annotations(&[Some(&ro), Some(&w)], None)
            .unwrap()
            .unwrap();
        assert_eq!(
            Value::Object(got),
            json!({"readOnlyHint": false, "destructiveHint": false, "openWorldHint": false})
        );
        for taint in [Some(&bare), None] {
            let got = derive_annotations(&[Some(&ro), taint], None)
                .unwrap()
                .unwrap();
            assert_eq!(
                Value::Object(got),
                json!({"readOnlyHint": false, "destructiveHint": true, "openWorldHint": true})
            );
        }
    }

    #[test]
    fn explicit_annotations_merge_over_the_floor_but_cannot_claim_more_safety() {
        let w =
            tool(json!({"readOnlyHint": false, "destructiveHint": false, "openWorldHint": false}));
        let title = AnnotationsOverride {
            title: Some("T".into()),
            idempotent_hint: Some(true),
            destructive_hint: Some(true),
            ..Default::default()
        };
        let got = derive_annotations(&[Some(&w)], Some(&title))
            .unwrap()
            .unwrap();
        assert_eq!(
            Value::Object(got),
            json!({"readOnlyHint": false, "destructiveHint": true, "openWorldHint": false, "title": "T", "idempotentHint": true})
        );
        let liar = AnnotationsOverride {
            read_only_hint: Some(true),
            ..Default::default()
        };
        assert!(
            derive_annotations(&[Some(&w)], Some(&liar))
                .unwrap_err()
                .contains("readOnlyHint")
        );
        let bare = json!({"name": "b"});
        let closed = AnnotationsOverride {
            open_world_hint: Some(false),
            ..Default::default()
        };
        assert!(derive_annotations(&[Some(&bare)], Some(&closed)).is_err());
        // Elicitation-only workflows have no floor: explicit annotations stand alone.
        assert_eq!(derive_annotations(&[], None).unwrap(), None);
        let got = derive_annotations(&[], Some(&liar)).unwrap().unwrap();
        assert_eq!(Value::Object(got), json!({"readOnlyHint": true}));
    }
}
