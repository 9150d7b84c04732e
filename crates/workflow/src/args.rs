//! Templated text and argument trees: parsed at compile time, rendered per call against
//! the workflow's context (`.params`, `.steps`, `.workflow`, `.forEach`).

use serde_json::{Map, Value};
use vmcp_template::Template;

use crate::compile::{CompileError, parse};

/// A string that may be a template; plain text is kept as it is and never rendered.
#[derive(Debug)]
pub(crate) enum Text {
    Plain(String),
    Template(Box<Template>),
}

impl Text {
    pub(crate) fn compile(src: &str, at: &str) -> Result<Text, CompileError> {
        if !src.contains("{{") {
            return Ok(Text::Plain(src.to_owned()));
        }
        Ok(Text::Template(Box::new(parse(src, at)?)))
    }

    /// The text as written.
    pub(crate) fn source(&self) -> &str {
        match self {
            Text::Plain(s) => s,
            Text::Template(t) => t.source(),
        }
    }

    pub(crate) fn render(&self, ctx: &Value) -> Result<String, String> {
        match self {
            Text::Plain(s) => Ok(s.clone()),
            Text::Template(t) => t.render(ctx).map_err(|e| e.to_string()),
        }
    }
}

/// `arguments` with every string, at any depth, compiled as a template (ToolHive's runtime
/// expands nested strings too; other values pass through unchanged).
#[derive(Debug)]
pub(crate) enum ArgTree {
    Value(Value),
    Text(Text),
    Array(Vec<ArgTree>),
    Object(Vec<(String, ArgTree)>),
}

impl ArgTree {
    pub(crate) fn compile(v: &Value, at: &str) -> Result<ArgTree, CompileError> {
        Ok(match v {
            Value::String(s) => ArgTree::Text(Text::compile(s, at)?),
            Value::Array(a) => ArgTree::Array(
                a.iter()
                    .map(|x| ArgTree::compile(x, at))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Object(m) => ArgTree::Object(
                m.iter()
                    .map(|(k, x)| Ok((k.clone(), ArgTree::compile(x, at)?)))
                    .collect::<Result<_, CompileError>>()?,
            ),
            other => ArgTree::Value(other.clone()),
        })
    }

    pub(crate) fn render(&self, ctx: &Value) -> Result<Value, String> {
        Ok(match self {
            ArgTree::Value(v) => v.clone(),
            ArgTree::Text(t) => Value::String(t.render(ctx)?),
            ArgTree::Array(a) => {
                Value::Array(a.iter().map(|x| x.render(ctx)).collect::<Result<_, _>>()?)
            }
            ArgTree::Object(m) => {
                let mut out = Map::new();
                for (k, x) in m {
                    out.insert(k.clone(), x.render(ctx)?);
                }
                Value::Object(out)
            }
        })
    }
}
