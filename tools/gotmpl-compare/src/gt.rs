//! gotmpl set up as a workflow would use it: data converted from `serde_json::Value`, and
//! ToolHive's `json`, `quote` and `fromJson` added as custom functions.
use std::{
    collections::BTreeMap,
    sync::{Arc, LazyLock},
};

use gotmpl::{Template, TemplateError, Value};
use serde_json::Value as Json;

pub fn to_value(j: &Json) -> Value {
    match j {
        Json::Null => Value::Nil,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Value::Int(i),
            (None, Some(u)) => Value::Uint(u),
            _ => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Json::String(s) => Value::String(s.as_str().into()),
        Json::Array(a) => Value::List(a.iter().map(to_value).collect()),
        Json::Object(o) => Value::Map(Arc::new(
            o.iter()
                .map(|(k, v)| (Arc::<str>::from(k.as_str()), to_value(v)))
                .collect::<BTreeMap<_, _>>(),
        )),
    }
}

fn to_json(v: &Value) -> Result<Json, TemplateError> {
    Ok(match v {
        Value::Nil => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => Json::from(*i),
        Value::Uint(u) => Json::from(*u),
        Value::Float(f) => Json::from(*f),
        Value::String(s) => Json::String(s.to_string()),
        Value::List(l) => Json::Array(l.iter().map(to_json).collect::<Result<_, _>>()?),
        Value::Map(m) => Json::Object(
            m.iter()
                .map(|(k, v)| Ok((k.to_string(), to_json(v)?)))
                .collect::<Result<_, TemplateError>>()?,
        ),
        Value::Function(_) => return Err(TemplateError::Exec("json: function value".into())),
    })
}

fn one<'a>(name: &str, args: &'a [Value]) -> Result<&'a Value, TemplateError> {
    match args {
        [v] => Ok(v),
        _ => Err(TemplateError::ArgCount {
            name: name.into(),
            expected: 1,
            got: args.len(),
        }),
    }
}

/// Go's `json.Marshal` number format (`100000000000000000000`, not serde_json's `1e+20`) is what
/// our crate's `json` writes; a swap would keep that code, so `json` borrows it here.
static MARSHAL: LazyLock<vmcp_template::Template> =
    LazyLock::new(|| vmcp_template::Template::parse("{{json .}}").expect("parses"));

/// A gotmpl template with ToolHive's functions. `quote` uses gotmpl's own `%q` (Go's
/// `strconv.Quote`) on the value's Go print form, as ours does. The template's name is one no
/// test defines (Go, like gotmpl, refuses a `{{define}}` of the template's own name).
pub fn parse(src: &str) -> Result<Template, TemplateError> {
    Template::new("gotmpl-compare")
        .func("json", |args| {
            let j = to_json(one("json", args)?)?;
            MARSHAL
                .render(&j)
                .map(|s| Value::String(s.into()))
                .map_err(|e| TemplateError::Exec(e.to_string()))
        })
        .func("quote", |args| {
            let v = one("quote", args)?;
            gotmpl::execute("{{print . | printf \"%q\"}}", v).map(|s| Value::String(s.into()))
        })
        .func("fromJson", |args| match one("fromJson", args)? {
            Value::String(s) => serde_json::from_str::<Json>(s)
                .map(|j| to_value(&j))
                .map_err(|e| TemplateError::Exec(format!("fromJson: {e}"))),
            _ => Err(TemplateError::Exec("fromJson: expected string".into())),
        })
        .parse(src)
}
