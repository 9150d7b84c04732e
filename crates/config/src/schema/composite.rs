//! `compositeTools[]`: workflows that a client sees as one tool (ToolHive's schema, read as
//! strictly as its loader does; free-form sub-trees such as `parameters`, `arguments` and
//! `schema` stay JSON).

use std::time::Duration;

use serde_json::{Map, Value as Json};
use yaml_serde::Value;

use crate::error::{Issues, KeyPath};
use crate::reader::{Choice, Fields, as_string, entries, seq};
use crate::schema::{AnnotationsOverride, RawSection};

/// A workflow's time budget when it sets none (ToolHive's default).
pub const DEFAULT_WORKFLOW_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// A step's time budget when it sets none (ToolHive's default, elicitation steps too).
pub const DEFAULT_STEP_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// One `compositeTools[]` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct CompositeToolConfig {
    /// `name`: the tool's advertised name.
    pub name: String,
    /// `description`.
    pub description: String,
    /// `parameters`: the JSON Schema (type object) of the tool's arguments, as written.
    pub parameters: Option<Json>,
    /// `timeout` of the whole workflow (default 30m).
    pub timeout: Duration,
    /// `annotations` merged over the ones derived from the steps.
    pub annotations: Option<AnnotationsOverride>,
    /// `output`: how the result is built (absent: the last completed step's output).
    pub output: Option<OutputConfig>,
    /// `steps[]`.
    pub steps: Vec<StepConfig>,
    /// The entry as written, for `init` output.
    pub raw: RawSection,
}

/// A step's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepKind {
    /// `tool`: call a backend tool.
    Tool,
    /// `elicitation`: ask the calling client.
    Elicitation,
    /// `forEach`: run an inner tool step for each item of a collection.
    ForEach,
}

impl Choice for StepKind {
    const NAMES: &'static [(&'static str, Self)] = &[
        ("tool", Self::Tool),
        ("elicitation", Self::Elicitation),
        ("forEach", Self::ForEach),
    ];
}

/// `onError.action`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ErrorAction {
    /// Fail the workflow (the default).
    #[default]
    Abort,
    /// Record the failure, use `defaultResults`, run the dependents.
    Continue,
    /// Try again `retryCount` times with exponential backoff.
    Retry,
}

impl Choice for ErrorAction {
    const NAMES: &'static [(&'static str, Self)] = &[
        ("abort", Self::Abort),
        ("continue", Self::Continue),
        ("retry", Self::Retry),
    ];
}

/// `onError`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OnError {
    /// `action`.
    pub action: ErrorAction,
    /// `retryCount` as written (the engine caps it).
    pub retry_count: u64,
    /// `retryDelay`: the first backoff (default 1s).
    pub retry_delay: Option<Duration>,
}

/// `onDecline.action` / `onCancel.action` of an elicitation step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElicitAction {
    /// The step completes and every step not yet started is skipped.
    SkipRemaining,
    /// The step fails.
    Abort,
    /// The step completes; its output records what the user did.
    Continue,
}

impl Choice for ElicitAction {
    const NAMES: &'static [(&'static str, Self)] = &[
        ("skip_remaining", Self::SkipRemaining),
        ("abort", Self::Abort),
        ("continue", Self::Continue),
    ];
}

/// One `steps[]` entry (or a forEach's inner `step`).
#[derive(Debug, Clone, PartialEq)]
pub struct StepConfig {
    /// `id` (required, unique; optional for a forEach's inner step).
    pub id: String,
    /// `type` (inferred `tool` when `tool` is set); `None` when it could not be decided.
    pub kind: Option<StepKind>,
    /// `tool`: an advertised name or `<backend>.<tool>`.
    pub tool: Option<String>,
    /// `arguments`: values, strings expanded as templates.
    pub arguments: Map<String, Json>,
    /// `dependsOn`.
    pub depends_on: Vec<String>,
    /// `condition`: a template that must render `true` or `false`.
    pub condition: Option<String>,
    /// `timeout` (default 5m).
    pub timeout: Option<Duration>,
    /// `onError`.
    pub on_error: OnError,
    /// `defaultResults`: the output of a skipped step or a failed `continue` step.
    pub default_results: Option<Map<String, Json>>,
    /// `message` of an elicitation.
    pub message: Option<String>,
    /// `schema` of an elicitation's answer.
    pub schema: Option<Json>,
    /// `onDecline.action`.
    pub on_decline: Option<ElicitAction>,
    /// `onCancel.action`.
    pub on_cancel: Option<ElicitAction>,
    /// `collection` of a forEach: a template producing a JSON array.
    pub collection: Option<String>,
    /// `itemVar` of a forEach (default `item`).
    pub item_var: Option<String>,
    /// `maxParallel` of a forEach (0 or absent: 10).
    pub max_parallel: Option<u64>,
    /// `maxIterations` of a forEach (0 or absent: 100).
    pub max_iterations: Option<u64>,
    /// `step`: a forEach's inner step.
    pub step: Option<Box<StepConfig>>,
}

/// `output`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OutputConfig {
    /// `properties`, in the order written.
    pub properties: Vec<(String, OutputProperty)>,
    /// `required`.
    pub required: Vec<String>,
}

/// The JSON type of an output property.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputType {
    /// `string`.
    String,
    /// `integer`.
    Integer,
    /// `number`.
    Number,
    /// `boolean`.
    Boolean,
    /// `object`.
    Object,
    /// `array`.
    Array,
}

impl Choice for OutputType {
    const NAMES: &'static [(&'static str, Self)] = &[
        ("string", Self::String),
        ("integer", Self::Integer),
        ("number", Self::Number),
        ("boolean", Self::Boolean),
        ("object", Self::Object),
        ("array", Self::Array),
    ];
}

impl OutputType {
    /// The JSON Schema spelling.
    pub fn name(self) -> &'static str {
        Choice::name(self)
    }
}

/// One output property.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputProperty {
    /// `type` (`None` when missing or invalid; reported at validation).
    pub kind: Option<OutputType>,
    /// `description`.
    pub description: String,
    /// `value`: a template.
    pub value: Option<String>,
    /// `properties` of an object built field by field.
    pub properties: Vec<(String, OutputProperty)>,
    /// `default` when `value` cannot be built.
    pub default: Option<Json>,
}

pub(crate) fn decode_composite(v: &Value, path: &KeyPath, issues: &Issues) -> CompositeToolConfig {
    let mut f = Fields::open(v, path, issues);
    let steps = f
        .value("steps")
        .map(|(v, p)| {
            seq(v, &p, issues)
                .map(|(item, ip)| decode_step(item, &ip, issues))
                .collect()
        })
        .unwrap_or_default();
    let annotations = f
        .value("annotations")
        .map(|(v, p)| super::aggregation::decode_annotations(v, &p, issues));
    let c = CompositeToolConfig {
        name: f.string("name").unwrap_or_default(),
        description: f.string("description").unwrap_or_default(),
        parameters: f.raw("parameters").map(|r| r.0),
        timeout: f.duration("timeout").unwrap_or(DEFAULT_WORKFLOW_TIMEOUT),
        annotations,
        output: f.value("output").map(|(v, p)| decode_output(v, &p, issues)),
        steps,
        raw: f.raw_self().unwrap_or(RawSection(Json::Object(Map::new()))),
    };
    f.finish();
    c
}

fn decode_step(v: &Value, path: &KeyPath, issues: &Issues) -> StepConfig {
    let mut f = Fields::open(v, path, issues);
    let tool = f.string("tool");
    let message = f.string("message");
    let kind = match f.value("type") {
        Some((t, p)) => crate::reader::as_choice::<StepKind>(t, &p, issues),
        // ToolHive infers `tool` only from `tool`; both or neither is decided at validation.
        None => (tool.is_some() && message.is_none()).then_some(StepKind::Tool),
    };
    let on_error = f
        .value("onError")
        .map(|(v, p)| {
            let mut e = Fields::open(v, &p, issues);
            let o = OnError {
                action: e.choice("action").unwrap_or_default(),
                retry_count: e.uint("retryCount").unwrap_or(0),
                retry_delay: e.duration("retryDelay"),
            };
            e.finish();
            o
        })
        .unwrap_or_default();
    let mut elicit_action = |key: &'static str| {
        f.value(key).and_then(|(v, p)| {
            let mut a = Fields::open(v, &p, issues);
            let action = a.choice("action");
            if action.is_none() {
                issues.push_new(&p.key("action"), "is required");
            }
            a.finish();
            action
        })
    };
    let on_decline = elicit_action("onDecline");
    let on_cancel = elicit_action("onCancel");
    let object = |f: &mut Fields<'_>, key: &'static str| -> Option<Map<String, Json>> {
        let (v, p) = f.value(key)?;
        match yaml_serde::from_value::<Json>(v.clone()) {
            Ok(Json::Object(m)) => Some(m),
            Ok(_) => {
                issues.push_new(&p, "expected a mapping");
                None
            }
            Err(e) => {
                issues.push_new(&p, format!("cannot be represented: {e}"));
                None
            }
        }
    };
    let arguments = object(&mut f, "arguments").unwrap_or_default();
    let default_results = object(&mut f, "defaultResults");
    let schema = f.raw("schema").map(|r| r.0);
    let step = f
        .value("step")
        .map(|(v, p)| Box::new(decode_step(v, &p, issues)));
    let s = StepConfig {
        id: f.string("id").unwrap_or_default(),
        kind,
        tool,
        arguments,
        depends_on: f.strings("dependsOn"),
        condition: f.string("condition"),
        timeout: f.duration("timeout"),
        on_error,
        default_results,
        message,
        schema,
        on_decline,
        on_cancel,
        collection: f.string("collection"),
        item_var: f.string("itemVar"),
        max_parallel: f.uint("maxParallel"),
        max_iterations: f.uint("maxIterations"),
        step,
    };
    f.finish();
    s
}

fn decode_output(v: &Value, path: &KeyPath, issues: &Issues) -> OutputConfig {
    let mut f = Fields::open(v, path, issues);
    let out = OutputConfig {
        properties: f
            .value("properties")
            .map(|(v, p)| decode_properties(v, &p, issues, 0))
            .unwrap_or_default(),
        required: f.strings("required"),
    };
    f.finish();
    out
}

/// Deeper than this, nested output properties are refused (ToolHive's limit is 10; the
/// decoder stops a little past it so the validator can say so).
const DECODE_DEPTH: usize = 12;

fn decode_properties(
    v: &Value,
    path: &KeyPath,
    issues: &Issues,
    depth: usize,
) -> Vec<(String, OutputProperty)> {
    if depth > DECODE_DEPTH {
        issues.push_new(
            path,
            "output properties are nested too deeply (at most 10 levels)",
        );
        return Vec::new();
    }
    entries(v, path, issues)
        .map(|(name, v, p)| {
            let mut f = Fields::open(v, &p, issues);
            let prop = OutputProperty {
                kind: f.choice("type"),
                description: f.string("description").unwrap_or_default(),
                value: f.value("value").and_then(|(v, p)| as_string(v, &p, issues)),
                properties: f
                    .value("properties")
                    .map(|(v, p)| decode_properties(v, &p, issues, depth + 1))
                    .unwrap_or_default(),
                default: f.raw("default").map(|r| r.0),
            };
            f.finish();
            (name, prop)
        })
        .collect()
}
