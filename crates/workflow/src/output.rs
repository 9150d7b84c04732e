//! The workflow's result: the `output` config built from the final context (typed,
//! defaults, nested objects, required fields), and the `CallToolResult` shapes ToolHive
//! returns for success and failure.

use serde_json::{Map, Value, json};
use vmcp_config::OutputType;

use crate::coerce::{number, parse_bool};
use crate::compile::{OutProp, Output};
use crate::json::to_sorted_json;

/// What Go templates print for a missing key: such a value counts as not produced.
const NO_VALUE: &str = "<no value>";

/// `partial`: the run was cut short by `skip_remaining`, so values of skipped steps are
/// missing by the user's choice: they become `null` and `required` is not enforced.
pub(crate) fn build(out: &Output, ctx: &Value, partial: bool) -> Result<Value, String> {
    let obj = build_props(&out.properties, ctx, "", partial)?;
    for r in out.required.iter().filter(|_| !partial) {
        if obj.get(r).is_none_or(Value::is_null) {
            return Err(format!("required output property {r:?} is missing"));
        }
    }
    Ok(Value::Object(obj))
}

fn build_props(
    props: &[(String, OutProp)],
    ctx: &Value,
    prefix: &str,
    partial: bool,
) -> Result<Map<String, Value>, String> {
    let mut obj = Map::new();
    for (name, p) in props {
        let path = format!("{prefix}{name}");
        let v = if p.properties.is_empty() {
            match build_value(p, ctx, &path) {
                Err(_) if partial => Value::Null,
                other => other?,
            }
        } else {
            Value::Object(build_props(
                &p.properties,
                ctx,
                &format!("{path}."),
                partial,
            )?)
        };
        obj.insert(name.clone(), v);
    }
    Ok(obj)
}

fn build_value(p: &OutProp, ctx: &Value, path: &str) -> Result<Value, String> {
    let rendered = match &p.value {
        Some(t) => t.render(ctx),
        None => Err("no value template".to_owned()),
    };
    let problem = match rendered {
        Ok(s) if s == NO_VALUE => "its value is missing".to_owned(),
        Ok(s) => match typed(p.kind, s) {
            Ok(v) => return Ok(v),
            Err(e) => e,
        },
        Err(e) => e,
    };
    match &p.default {
        Some(Value::String(s)) => {
            typed(p.kind, s.clone()).map_err(|e| format!("output property {path:?}: default: {e}"))
        }
        Some(d) => Ok(d.clone()),
        None => Err(format!("output property {path:?}: {problem}")),
    }
}

/// A rendered string as the declared type.
fn typed(kind: OutputType, s: String) -> Result<Value, String> {
    let bad = |s: &str| format!("{:?} is not a valid {}", short(s), kind.name());
    match kind {
        OutputType::String => Ok(Value::String(s)),
        OutputType::Integer => s
            .parse::<i64>()
            .map(|n| Value::Number(n.into()))
            .map_err(|_| bad(&s)),
        OutputType::Number => s
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .map(number)
            .ok_or_else(|| bad(&s)),
        OutputType::Boolean => parse_bool(&s).map(Value::Bool).ok_or_else(|| bad(&s)),
        OutputType::Object => match serde_json::from_str::<Value>(&s) {
            Ok(v @ Value::Object(_)) => Ok(v),
            _ => Err(bad(&s)),
        },
        OutputType::Array => match serde_json::from_str::<Value>(&s) {
            Ok(v @ Value::Array(_)) => Ok(v),
            _ => Err(bad(&s)),
        },
    }
}

fn short(s: &str) -> String {
    s.chars().take(100).collect()
}

/// A successful result: the output as one text item (JSON, keys sorted) and, when it is an
/// object, as `structuredContent` (MCP requires an object there).
pub(crate) fn success(output: Value) -> Value {
    let mut r = json!({"content": [{"type": "text", "text": to_sorted_json(&output)}]});
    if output.is_object() {
        r["structuredContent"] = output;
    }
    r
}

/// A failed workflow, as a tool error the model can read.
pub(crate) fn failure(error: &str) -> Value {
    json!({
        "content": [{"type": "text", "text": format!("Workflow execution failed: {error}")}],
        "isError": true,
    })
}
