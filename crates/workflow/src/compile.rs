//! A composite tool's config compiled for running: templates parsed once, dependencies as
//! indices, defaults and limits applied.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::{Map, Value, json};
use vmcp_config::{
    AnnotationsOverride, CompositeToolConfig, DEFAULT_STEP_TIMEOUT, ElicitAction, ErrorAction,
    OutputProperty, OutputType, StepConfig, StepKind,
};
use vmcp_template::Template;

use crate::MAX_RETRIES;
use crate::args::{ArgTree, Text};

/// A composite tool's config that cannot be compiled (the validator reports these first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileError(pub String);

impl std::error::Error for CompileError {}

impl std::fmt::Display for CompileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A compiled composite tool.
#[derive(Debug)]
pub struct Workflow {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) parameters: Value,
    pub(crate) timeout: Duration,
    pub(crate) annotations: Option<AnnotationsOverride>,
    pub(crate) output: Option<Output>,
    pub(crate) steps: Vec<Step>,
    /// A hash of the definition as written: state handed to a client is bound to it.
    fingerprint: u64,
    /// Steps whose `retryCount` was above [`MAX_RETRIES`].
    capped: Vec<String>,
}

#[derive(Debug)]
pub(crate) struct Output {
    pub(crate) properties: Vec<(String, OutProp)>,
    pub(crate) required: Vec<String>,
}

#[derive(Debug)]
pub(crate) struct OutProp {
    pub(crate) kind: OutputType,
    pub(crate) description: String,
    pub(crate) value: Option<Text>,
    pub(crate) properties: Vec<(String, OutProp)>,
    pub(crate) default: Option<Value>,
}

#[derive(Debug)]
pub(crate) struct Step {
    pub(crate) id: String,
    pub(crate) body: Body,
    pub(crate) deps: Vec<usize>,
    pub(crate) condition: Option<Text>,
    pub(crate) timeout: Duration,
    pub(crate) on_error: OnError,
    pub(crate) default_results: Option<Value>,
}

impl Step {
    /// The step's type as configs spell it.
    pub(crate) fn kind_name(&self) -> &'static str {
        match self.body {
            Body::Tool(_) => "tool",
            Body::Elicit { .. } => "elicitation",
            Body::ForEach { .. } => "forEach",
        }
    }

    /// The tool the step calls, if any.
    pub(crate) fn tool(&self) -> Option<&str> {
        match &self.body {
            Body::Tool(t) => Some(&t.tool),
            Body::ForEach { inner, .. } => Some(&inner.tool),
            Body::Elicit { .. } => None,
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct OnError {
    pub(crate) action: ErrorAction,
    pub(crate) retries: u64,
    pub(crate) delay: Duration,
}

#[derive(Debug)]
pub(crate) enum Body {
    Tool(ToolCall),
    Elicit {
        message: Text,
        schema: Value,
        on_decline: Option<ElicitAction>,
        on_cancel: Option<ElicitAction>,
    },
    ForEach {
        collection: Text,
        item_var: String,
        max_parallel: usize,
        max_iterations: usize,
        inner: ToolCall,
        inner_on_error: OnError,
        inner_timeout: Duration,
        /// The forEach step's own `timeout`, when written: a budget for all iterations.
        timeout: Option<Duration>,
    },
}

#[derive(Debug)]
pub(crate) struct ToolCall {
    pub(crate) tool: String,
    pub(crate) args: ArgTree,
}

impl Workflow {
    /// Compiles a validated config entry.
    ///
    /// # Errors
    /// A template that does not parse, an unknown dependency, a step without its kind's keys.
    pub fn compile(c: &CompositeToolConfig) -> Result<Workflow, CompileError> {
        let index: HashMap<&str, usize> = c
            .steps
            .iter()
            .enumerate()
            .map(|(i, s)| (s.id.as_str(), i))
            .collect();
        let steps = c
            .steps
            .iter()
            .map(|s| compile_step(s, &index))
            .collect::<Result<Vec<_>, _>>()?;
        let output = c
            .output
            .as_ref()
            .map(|o| {
                Ok::<_, CompileError>(Output {
                    properties: compile_props(&o.properties)?,
                    required: o.required.clone(),
                })
            })
            .transpose()?;
        let timeout = if c.timeout.is_zero() {
            vmcp_config::DEFAULT_WORKFLOW_TIMEOUT
        } else {
            c.timeout
        };
        let fingerprint = {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            crate::to_sorted_json(&c.raw.0).hash(&mut h);
            h.finish()
        };
        let capped = c
            .steps
            .iter()
            .flat_map(|s| std::iter::once(s).chain(s.step.as_deref()))
            .filter(|s| s.on_error.retry_count > MAX_RETRIES)
            .map(|s| s.id.clone())
            .collect();
        Ok(Workflow {
            fingerprint,
            capped,
            name: c.name.clone(),
            description: c.description.clone(),
            parameters: c
                .parameters
                .clone()
                .unwrap_or_else(|| json!({"type": "object", "properties": {}})),
            timeout,
            annotations: c.annotations.clone(),
            output,
            steps,
        })
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Every tool the workflow calls (forEach inner steps included), in step order.
    pub fn tool_references(&self) -> impl Iterator<Item = &str> {
        self.steps.iter().filter_map(|s| match &s.body {
            Body::Tool(t) => Some(t.tool.as_str()),
            Body::ForEach { inner, .. } => Some(inner.tool.as_str()),
            Body::Elicit { .. } => None,
        })
    }

    /// The first step that asks the user, if any.
    pub fn elicitation_step(&self) -> Option<&str> {
        self.steps
            .iter()
            .find(|s| matches!(s.body, Body::Elicit { .. }))
            .map(|s| s.id.as_str())
    }

    /// Steps whose `retryCount` exceeds what runs (it is capped at [`MAX_RETRIES`]).
    pub fn capped_retries(&self) -> &[String] {
        &self.capped
    }

    /// A hash of the definition as written (changes when the config's entry changes).
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// The tool definition clients see (annotations are the caller's to add: they depend on
    /// the backend tools the steps resolve to).
    pub fn definition(&self) -> Map<String, Value> {
        let mut d = Map::new();
        d.insert("name".into(), Value::String(self.name.clone()));
        d.insert(
            "description".into(),
            Value::String(self.description.clone()),
        );
        d.insert("inputSchema".into(), self.parameters.clone());
        if let Some(out) = &self.output {
            let mut schema = json!({"type": "object", "properties": schema_props(&out.properties)});
            if !out.required.is_empty() {
                schema["required"] = json!(out.required);
            }
            d.insert("outputSchema".into(), schema);
        }
        d
    }

    /// The annotations written in the config, if any.
    pub fn explicit_annotations(&self) -> Option<&AnnotationsOverride> {
        self.annotations.as_ref()
    }
}

fn schema_props(props: &[(String, OutProp)]) -> Value {
    let mut m = Map::new();
    for (name, p) in props {
        let mut s = json!({"type": p.kind.name(), "description": p.description});
        if !p.properties.is_empty() {
            s["properties"] = schema_props(&p.properties);
        }
        m.insert(name.clone(), s);
    }
    Value::Object(m)
}

fn compile_props(
    props: &[(String, OutputProperty)],
) -> Result<Vec<(String, OutProp)>, CompileError> {
    props
        .iter()
        .map(|(name, p)| {
            let kind = p
                .kind
                .ok_or_else(|| CompileError(format!("output property {name:?} has no type")))?;
            Ok((
                name.clone(),
                OutProp {
                    kind,
                    description: p.description.clone(),
                    value: p
                        .value
                        .as_deref()
                        .map(|v| Text::compile(v, &format!("output.{name}.value")))
                        .transpose()?,
                    properties: compile_props(&p.properties)?,
                    default: p.default.clone(),
                },
            ))
        })
        .collect()
}

fn on_error(s: &StepConfig) -> OnError {
    OnError {
        action: s.on_error.action,
        retries: s.on_error.retry_count.min(MAX_RETRIES),
        delay: s.on_error.retry_delay.unwrap_or(Duration::from_secs(1)),
    }
}

fn tool_call(s: &StepConfig, at: &str) -> Result<ToolCall, CompileError> {
    let tool = s
        .tool
        .clone()
        .filter(|t| !t.is_empty())
        .ok_or_else(|| CompileError(format!("step {at:?} has no tool")))?;
    Ok(ToolCall {
        tool,
        args: ArgTree::compile(&Value::Object(s.arguments.clone()), at)?,
    })
}

fn compile_step(s: &StepConfig, index: &HashMap<&str, usize>) -> Result<Step, CompileError> {
    let at = s.id.as_str();
    let kind = s
        .kind
        .ok_or_else(|| CompileError(format!("step {at:?}: type is missing or ambiguous")))?;
    let body = match kind {
        StepKind::Tool => Body::Tool(tool_call(s, at)?),
        StepKind::Elicitation => Body::Elicit {
            message: Text::compile(s.message.as_deref().unwrap_or_default(), at)?,
            schema: s
                .schema
                .clone()
                .unwrap_or_else(|| json!({"type": "object"})),
            on_decline: s.on_decline,
            on_cancel: s.on_cancel,
        },
        StepKind::ForEach => {
            let inner = s
                .step
                .as_deref()
                .ok_or_else(|| CompileError(format!("forEach step {at:?} has no step")))?;
            Body::ForEach {
                collection: Text::compile(s.collection.as_deref().unwrap_or_default(), at)?,
                item_var: s.item_var.clone().unwrap_or_else(|| "item".into()),
                max_parallel: match s.max_parallel {
                    None | Some(0) => 10,
                    Some(n) => n.min(50) as usize,
                },
                max_iterations: match s.max_iterations {
                    None | Some(0) => 100,
                    Some(n) => n.min(1000) as usize,
                },
                inner: tool_call(inner, at)?,
                inner_on_error: on_error(inner),
                inner_timeout: inner.timeout.unwrap_or(DEFAULT_STEP_TIMEOUT),
                timeout: s.timeout,
            }
        }
    };
    let deps =
        s.depends_on
            .iter()
            .map(|d| {
                index.get(d.as_str()).copied().ok_or_else(|| {
                    CompileError(format!("step {at:?} depends on unknown step {d:?}"))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
    Ok(Step {
        id: s.id.clone(),
        body,
        deps,
        condition: s
            .condition
            .as_deref()
            .map(|c| Text::compile(c, at))
            .transpose()?,
        timeout: s.timeout.unwrap_or(DEFAULT_STEP_TIMEOUT),
        on_error: on_error(s),
        default_results: s.default_results.clone().map(Value::Object),
    })
}

/// Parses a template, with the step or key it belongs to in the error.
pub(crate) fn parse(src: &str, at: &str) -> Result<Template, CompileError> {
    Template::parse(src).map_err(|e| CompileError(format!("{at}: template does not parse: {e}")))
}
