//! `compositeTools[]`: ToolHive's load-time rules (types, references, cycles, templates,
//! the defaultResults rule, output shapes, limits), each problem reported at its path.
//! Tool references are resolved later, against the aggregated catalog, at serve time.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value as Json;
use vmcp_template::Template;

use crate::error::{Issues, KeyPath};
use crate::schema::{
    CompositeToolConfig, Config, ErrorAction, OutputConfig, OutputProperty, OutputType, StepConfig,
    StepKind,
};

/// Most steps in one workflow (ToolHive's engine limit).
const MAX_STEPS: usize = 100;
/// Most concurrent iterations of a forEach.
const MAX_PARALLEL: u64 = 50;
/// Most items a forEach may iterate over.
const MAX_ITERATIONS: u64 = 1000;
/// Deepest nesting of output properties.
const MAX_OUTPUT_DEPTH: usize = 10;

pub(crate) fn check(config: &Config, issues: &Issues) {
    let root = KeyPath::root().key("compositeTools");
    let mut names = BTreeSet::new();
    for (i, tool) in config.composite_tools.iter().enumerate() {
        let path = root.index(i);
        if tool.name.is_empty() {
            issues.push_new(&path.key("name"), "is required");
        } else if !is_tool_name(&tool.name) {
            issues.push_new(
                &path.key("name"),
                format!(
                    "{:?} is not a valid tool name (1-128 of A-Z a-z 0-9 _ - .)",
                    tool.name
                ),
            );
        } else if !names.insert(tool.name.as_str()) {
            issues.push_new(
                &path.key("name"),
                format!("duplicate composite tool name {:?}", tool.name),
            );
        }
        check_tool(tool, &path, issues);
    }
    let mut seen = BTreeSet::new();
    for (i, r) in config.composite_tool_refs.iter().enumerate() {
        let path = KeyPath::root()
            .key("compositeToolRefs")
            .index(i)
            .key("name");
        if r.name.is_empty() {
            issues.push_new(&path, "is required");
        } else if !seen.insert(r.name.as_str()) {
            issues.push_new(
                &path,
                format!("duplicate composite tool reference {:?}", r.name),
            );
        }
    }
}

/// MCP's tool name rule (2025-11-25 server/tools): 1-128 characters of `A-Za-z0-9_-.`.
fn is_tool_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// ToolHive's rule for a step's `tool`: `^[a-zA-Z0-9][a-zA-Z0-9._-]*$`.
fn is_tool_reference(name: &str) -> bool {
    name.bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphanumeric())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

fn check_tool(tool: &CompositeToolConfig, path: &KeyPath, issues: &Issues) {
    if tool.description.trim().is_empty() {
        issues.push_new(&path.key("description"), "is required");
    }
    if tool.timeout.is_zero() && tool.raw.0.get("timeout").is_some() {
        issues.push_new(&path.key("timeout"), "must be greater than zero");
    }
    if let Some(p) = &tool.parameters {
        check_parameters(p, &path.key("parameters"), issues);
    }
    let steps_path = path.key("steps");
    if tool.steps.is_empty() {
        issues.push_new(&steps_path, "at least one step is required");
        return;
    }
    if tool.steps.len() > MAX_STEPS {
        issues.push_new(
            &steps_path,
            format!(
                "{} steps; a workflow may have at most {MAX_STEPS}",
                tool.steps.len()
            ),
        );
        return;
    }
    let mut ids: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, s) in tool.steps.iter().enumerate() {
        let p = steps_path.index(i).key("id");
        if s.id.is_empty() {
            issues.push_new(&p, "is required");
        } else if ids.insert(&s.id, i).is_some() {
            issues.push_new(&p, format!("duplicate step id {:?}", s.id));
        }
    }
    // Steps whose output may be absent: they need defaultResults for the fields others read.
    let may_skip: BTreeMap<&str, &StepConfig> = tool
        .steps
        .iter()
        .filter(|s| s.condition.is_some() || s.on_error.action == ErrorAction::Continue)
        .map(|s| (s.id.as_str(), s))
        .collect();
    let refs = References {
        ids: &ids,
        may_skip: &may_skip,
        steps_path: &steps_path,
    };
    for (i, s) in tool.steps.iter().enumerate() {
        let p = steps_path.index(i);
        check_step(s, &p, false, &refs, issues);
        for (j, d) in s.depends_on.iter().enumerate() {
            if !ids.contains_key(d.as_str()) {
                issues.push_new(&p.key("dependsOn").index(j), format!("unknown step {d:?}"));
            }
        }
    }
    if let Some(cycle) = find_cycle(&tool.steps) {
        let first = ids.get(cycle[0]).copied().unwrap_or(0);
        issues.push_new(
            &steps_path.index(first).key("dependsOn"),
            format!("dependency cycle detected: {}", cycle.join(" -> ")),
        );
    }
    if let Some(out) = &tool.output {
        check_output(out, &path.key("output"), &refs, issues);
    }
}

fn check_parameters(p: &Json, path: &KeyPath, issues: &Issues) {
    let Some(obj) = p.as_object() else {
        issues.push_new(path, "must be a JSON Schema object");
        return;
    };
    if obj.get("type").and_then(Json::as_str) != Some("object") {
        issues.push_new(&path.key("type"), "must be \"object\"");
    }
    if let Some(props) = obj.get("properties") {
        match props.as_object() {
            Some(m) => {
                for (k, v) in m {
                    if !v.is_object() {
                        issues.push_new(
                            &path.key("properties").key(k),
                            "must be a JSON Schema object",
                        );
                    }
                }
            }
            None => issues.push_new(&path.key("properties"), "must be a mapping"),
        }
    }
    if let Some(req) = obj.get("required")
        && !req
            .as_array()
            .is_some_and(|a| a.iter().all(Json::is_string))
    {
        issues.push_new(&path.key("required"), "must be a list of property names");
    }
}

/// What template references are checked against.
struct References<'a> {
    ids: &'a BTreeMap<&'a str, usize>,
    may_skip: &'a BTreeMap<&'a str, &'a StepConfig>,
    steps_path: &'a KeyPath,
}

fn check_step(s: &StepConfig, path: &KeyPath, inner: bool, refs: &References<'_>, issues: &Issues) {
    let kind = match s.kind {
        Some(k) => k,
        None if s.tool.is_some() && s.message.is_some() => {
            issues.push_new(
                &path.key("type"),
                "is required when both tool and message are set (ambiguous step)",
            );
            return;
        }
        None if s.message.is_some() => {
            issues.push_new(
                &path.key("type"),
                "an elicitation step must say `type: elicitation`",
            );
            return;
        }
        None if s.raw_type_invalid(path, issues) => return,
        None => {
            issues.push_new(
                &path.key("type"),
                "is required (tool, elicitation or forEach), or set `tool`",
            );
            return;
        }
    };
    if let Some(t) = s.timeout
        && t.is_zero()
    {
        issues.push_new(&path.key("timeout"), "must be greater than zero");
    }
    let e = &s.on_error;
    if e.action == ErrorAction::Retry && e.retry_count == 0 {
        issues.push_new(
            &path.key("onError").key("retryCount"),
            "must be at least 1 when action is retry",
        );
    }
    if let Some(c) = &s.condition {
        check_template(c, &path.key("condition"), refs, issues);
    }
    check_arguments(&s.arguments, &path.key("arguments"), refs, issues);
    match kind {
        StepKind::Tool => {
            match s.tool.as_deref() {
                None | Some("") => issues.push_new(&path.key("tool"), "is required"),
                Some(t) if !is_tool_reference(t) => issues.push_new(
                    &path.key("tool"),
                    format!("{t:?} must be a valid tool name (`tool` or `backend.tool`)"),
                ),
                Some(_) => {}
            }
            for (key, set) in [
                ("message", s.message.is_some()),
                ("collection", s.collection.is_some()),
                ("step", s.step.is_some()),
            ] {
                if set {
                    issues.push_new(&path.key(key), "is not allowed in a tool step");
                }
            }
        }
        StepKind::Elicitation => {
            if inner {
                issues.push_new(&path.key("type"), "a forEach step runs tool steps only");
            }
            match s.message.as_deref() {
                None | Some("") => issues.push_new(&path.key("message"), "is required"),
                Some(m) => check_template(m, &path.key("message"), refs, issues),
            }
            match &s.schema {
                Some(Json::Object(m)) if !m.is_empty() => {
                    let schema = Json::Object(m.clone());
                    if json_depth(&schema) > 10 {
                        issues.push_new(&path.key("schema"), "is nested deeper than 10 levels");
                    } else if schema.to_string().len() > 100 * 1024 {
                        issues.push_new(&path.key("schema"), "is larger than 100 KB");
                    }
                }
                Some(_) => issues.push_new(
                    &path.key("schema"),
                    "must be a non-empty JSON Schema object",
                ),
                None => issues.push_new(&path.key("schema"), "is required"),
            }
            if s.tool.is_some() {
                issues.push_new(&path.key("tool"), "is not allowed in an elicitation step");
            }
        }
        StepKind::ForEach => {
            if inner {
                issues.push_new(&path.key("type"), "forEach steps cannot be nested");
                return;
            }
            for (key, set) in [("tool", s.tool.is_some()), ("message", s.message.is_some())] {
                if set {
                    issues.push_new(
                        &path.key(key),
                        "is not allowed in a forEach step (put it in `step`)",
                    );
                }
            }
            match s.collection.as_deref() {
                None | Some("") => issues.push_new(&path.key("collection"), "is required"),
                Some(c) => check_template(c, &path.key("collection"), refs, issues),
            }
            if let Some(v) = &s.item_var
                && (!is_go_identifier(v) || v == "index")
            {
                issues.push_new(
                    &path.key("itemVar"),
                    format!(
                        "{v:?} must be an identifier (letters, digits, _) other than \"index\""
                    ),
                );
            }
            if s.max_parallel.is_some_and(|n| n > MAX_PARALLEL) {
                issues.push_new(
                    &path.key("maxParallel"),
                    format!("must be at most {MAX_PARALLEL}"),
                );
            }
            if s.max_iterations.is_some_and(|n| n > MAX_ITERATIONS) {
                issues.push_new(
                    &path.key("maxIterations"),
                    format!("must be at most {MAX_ITERATIONS}"),
                );
            }
            match &s.step {
                None => issues.push_new(&path.key("step"), "is required"),
                Some(inner_step) => {
                    if inner_step.kind.is_some_and(|k| k != StepKind::Tool) {
                        issues.push_new(
                            &path.key("step").key("type"),
                            "a forEach step runs tool steps only",
                        );
                    } else {
                        check_step(inner_step, &path.key("step"), true, refs, issues);
                        let p = path.key("step");
                        let unused = [
                            ("condition", inner_step.condition.is_some()),
                            ("dependsOn", !inner_step.depends_on.is_empty()),
                            ("defaultResults", inner_step.default_results.is_some()),
                            (
                                "onError",
                                inner_step.on_error.action == ErrorAction::Continue,
                            ),
                        ];
                        for (key, set) in unused {
                            if set {
                                issues.push_new(
                                    &p.key(key),
                                    "has no effect in a forEach's inner step (set it on the forEach step)",
                                );
                            }
                        }
                    }
                }
            }
        }
    }
    if kind != StepKind::ForEach {
        for (key, set) in [
            (
                "collection",
                s.collection.is_some() && kind == StepKind::Elicitation,
            ),
            ("itemVar", s.item_var.is_some()),
            ("maxParallel", s.max_parallel.is_some()),
            ("maxIterations", s.max_iterations.is_some()),
        ] {
            if set {
                issues.push_new(&path.key(key), "is only allowed in a forEach step");
            }
        }
    }
}

impl StepConfig {
    /// Whether `type` was written but invalid (already reported by the decoder).
    fn raw_type_invalid(&self, path: &KeyPath, issues: &Issues) -> bool {
        issues.has_at(&path.key("type"))
    }
}

fn is_go_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}

fn json_depth(v: &Json) -> usize {
    match v {
        Json::Object(m) => 1 + m.values().map(json_depth).max().unwrap_or(0),
        Json::Array(a) => 1 + a.iter().map(json_depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// Every string in `arguments`, at any depth, is a template.
fn check_arguments(
    args: &serde_json::Map<String, Json>,
    path: &KeyPath,
    refs: &References<'_>,
    issues: &Issues,
) {
    fn walk(v: &Json, path: &KeyPath, refs: &References<'_>, issues: &Issues) {
        match v {
            Json::String(s) => check_template(s, path, refs, issues),
            Json::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    walk(x, &path.index(i), refs, issues);
                }
            }
            Json::Object(m) => {
                for (k, x) in m {
                    walk(x, &path.key(k), refs, issues);
                }
            }
            _ => {}
        }
    }
    for (k, v) in args {
        walk(v, &path.key(k), refs, issues);
    }
}

/// Parses `src` and checks what it reads of `.steps`.
fn check_template(src: &str, path: &KeyPath, refs: &References<'_>, issues: &Issues) {
    if !src.contains("{{") {
        return;
    }
    let tpl = match Template::parse(src) {
        Ok(t) => t,
        Err(e) => {
            issues.push_new(path, format!("template does not parse: {e}"));
            return;
        }
    };
    for chain in tpl.root_references() {
        let [first, id, rest @ ..] = chain.as_slice() else {
            continue;
        };
        if first != "steps" {
            continue;
        }
        if !refs.ids.contains_key(id.as_str()) {
            issues.push_new(
                path,
                format!("reads .steps.{id}, which is not a step of this workflow"),
            );
            continue;
        }
        // `.steps.<id>.output.<field>` of a step that may be skipped needs a default.
        if let (Some(step), [out, field, ..]) = (refs.may_skip.get(id.as_str()), rest)
            && out == "output"
            && !step
                .default_results
                .as_ref()
                .is_some_and(|d| d.contains_key(field.as_str()))
        {
            let why = if step.condition.is_some() {
                "has a condition"
            } else {
                "continues on error"
            };
            let at = refs.ids.get(id.as_str()).map_or_else(
                || path.clone(),
                |&i| refs.steps_path.index(i).key("defaultResults"),
            );
            issues.push_new(
                &at,
                format!(
                    "defaultResults[{field}] is required: step {id:?} {why}, and {path} reads .steps.{id}.output.{field}"
                ),
            );
        }
    }
}

fn check_output(out: &OutputConfig, path: &KeyPath, refs: &References<'_>, issues: &Issues) {
    if out.properties.is_empty() {
        issues.push_new(&path.key("properties"), "at least one property is required");
    }
    check_properties(&out.properties, &path.key("properties"), refs, issues, 1);
    for (i, r) in out.required.iter().enumerate() {
        if !out.properties.iter().any(|(n, _)| n == r) {
            issues.push_new(
                &path.key("required").index(i),
                format!("{r:?} is not one of the output properties"),
            );
        }
    }
}

fn check_properties(
    props: &[(String, OutputProperty)],
    path: &KeyPath,
    refs: &References<'_>,
    issues: &Issues,
    depth: usize,
) {
    if depth > MAX_OUTPUT_DEPTH {
        issues.push_new(
            path,
            format!("output properties are nested deeper than {MAX_OUTPUT_DEPTH} levels"),
        );
        return;
    }
    for (name, p) in props {
        let pp = path.key(name);
        let Some(kind) = p.kind else {
            issues.push_new(
                &pp.key("type"),
                "is required (string, integer, number, boolean, object or array)",
            );
            continue;
        };
        if p.description.trim().is_empty() {
            issues.push_new(&pp.key("description"), "is required");
        }
        match (&p.value, p.properties.is_empty()) {
            (Some(_), false) => issues.push_new(&pp, "set either value or properties, not both"),
            (None, true) => issues.push_new(
                &pp.key("value"),
                "is required (or properties, for an object)",
            ),
            (None, false) if kind != OutputType::Object => issues.push_new(
                &pp.key("properties"),
                "only an object property has properties",
            ),
            _ => {}
        }
        if let Some(v) = &p.value {
            check_template(v, &pp.key("value"), refs, issues);
        }
        if let Some(d) = &p.default
            && !default_fits(kind, d)
        {
            issues.push_new(
                &pp.key("default"),
                format!("does not fit type {}", kind.name()),
            );
        }
        check_properties(
            &p.properties,
            &pp.key("properties"),
            refs,
            issues,
            depth + 1,
        );
    }
}

/// ToolHive accepts a default of the declared type, or a string it coerces at run time.
fn default_fits(kind: OutputType, d: &Json) -> bool {
    match (kind, d) {
        (_, Json::String(_)) => true,
        (OutputType::Integer, Json::Number(n)) => n.is_i64() || n.is_u64(),
        (OutputType::Number, Json::Number(_)) => true,
        (OutputType::Boolean, Json::Bool(_)) => true,
        (OutputType::Object, Json::Object(_)) => true,
        (OutputType::Array, Json::Array(_)) => true,
        _ => false,
    }
}

/// A dependency cycle as step ids, first id repeated at the end (`a -> b -> a`).
fn find_cycle(steps: &[StepConfig]) -> Option<Vec<&str>> {
    let index: BTreeMap<&str, &StepConfig> = steps.iter().map(|s| (s.id.as_str(), s)).collect();
    // 0 unvisited, 1 on the current path, 2 done.
    let mut state: BTreeMap<&str, u8> = BTreeMap::new();
    let mut path: Vec<&str> = Vec::new();
    fn visit<'a>(
        id: &'a str,
        index: &BTreeMap<&'a str, &'a StepConfig>,
        state: &mut BTreeMap<&'a str, u8>,
        path: &mut Vec<&'a str>,
    ) -> Option<Vec<&'a str>> {
        match state.get(id) {
            Some(2) => return None,
            Some(1) => {
                let start = path.iter().position(|p| *p == id).unwrap_or(0);
                let mut cycle = path[start..].to_vec();
                cycle.push(id);
                return Some(cycle);
            }
            _ => {}
        }
        state.insert(id, 1);
        path.push(id);
        if let Some(step) = index.get(id) {
            for d in &step.depends_on {
                if index.contains_key(d.as_str())
                    && let Some(c) = visit(d.as_str(), index, state, path)
                {
                    return Some(c);
                }
            }
        }
        path.pop();
        state.insert(id, 2);
        None
    }
    for s in steps {
        if let Some(c) = visit(s.id.as_str(), &index, &mut state, &mut path) {
            return Some(c);
        }
    }
    None
}
