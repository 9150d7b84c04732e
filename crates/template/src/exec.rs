//! Executor: walks the tree against the data, following Go's `text/template/exec.go` (variable
//! stack with marks, `range` over arrays, objects in key order and integers, `break` and
//! `continue`, `with` rebinding dot, pipelines passing the previous result as the last
//! argument, `and`/`or` short-circuit).
//!
//! Deliberate differences from Go:
//! - A field of JSON `null` is "no value", like a field of a missing key. Go fails with
//!   "nil pointer evaluating interface {}.x"; configs read optional step outputs and want the
//!   lenient reading.
//! - A field of a string or number names the value's own type ("can't evaluate field b in
//!   type string"); Go names the static type, which for decoded JSON is always `interface {}`.
//! - JSON integers stay integers (`printf "%d"`, `index`, `range 3` work on them); Go's
//!   `encoding/json` would have made them float64, printing 1000000 as `1e+06`.
//! - Output, nesting and loop work are bounded (see the crate constants).

use std::fmt;

use serde_json::Value;

use crate::error::{RenderError, line_col};
use crate::funcs::{self, FuncError};
use crate::node::{Arg, ArgKind, Call, Command, Control, Node, Pipe, Range};
use crate::print::{action_text, go_print};
use crate::value::{Num, Val, num};
use crate::{MAX_BUILT_BYTES, MAX_DEPTH, MAX_OUTPUT_BYTES, MAX_RANGE_ITERATIONS, Template};

/// How a list of nodes finished: normally, or by `{{break}}`/`{{continue}}` inside a range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    Normal,
    Break,
    Continue,
}

/// Where an error happened, rendered only if one does.
#[derive(Clone, Copy)]
enum At<'a> {
    Cmd(&'a Command),
    Arg(&'a Arg),
    Pipe(&'a Pipe),
    Call(&'a Call),
}

impl At<'_> {
    fn pos(&self) -> usize {
        match self {
            At::Cmd(c) => c.pos,
            At::Arg(a) => a.pos,
            At::Pipe(p) => p.pos,
            At::Call(c) => c.pos,
        }
    }
}

impl fmt::Display for At<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            At::Cmd(c) => write!(f, "{c}"),
            At::Arg(a) => write!(f, "{a}"),
            At::Pipe(p) => write!(f, "{p}"),
            At::Call(c) => write!(f, "template {}", crate::escape::quote(&c.name)),
        }
    }
}

struct ExecError {
    message: String,
    /// Byte offset and the action text, when the error belongs to one.
    at: Option<(usize, String)>,
}

type EResult<T> = Result<T, ExecError>;

struct Exec<'a> {
    tmpl: &'a Template,
    out: String,
    vars: Vec<(&'a str, Val<'a>)>,
    depth: usize,
    iterations: usize,
    /// Bytes of text functions built so far (held to [`MAX_BUILT_BYTES`]).
    built: usize,
}

pub(crate) fn render(tmpl: &Template, data: &Value) -> Result<String, RenderError> {
    let dot = Val::Ref(data);
    let mut ex = Exec {
        tmpl,
        out: String::new(),
        vars: vec![("$", dot.clone())],
        depth: 0,
        iterations: 0,
        built: 0,
    };
    match ex.walk(&dot, &tmpl.root) {
        Ok(_) => Ok(ex.out),
        Err(e) => Err(RenderError {
            message: match e.at {
                Some((pos, ctx)) => {
                    let (line, column) = line_col(&tmpl.src, pos);
                    format!(
                        "line {line}, column {column}: executing <{ctx}>: {}",
                        e.message
                    )
                }
                None => e.message,
            },
        }),
    }
}

fn err<T>(at: At<'_>, message: impl Into<String>) -> EResult<T> {
    Err(ExecError {
        message: message.into(),
        at: Some((at.pos(), at.to_string())),
    })
}

impl<'a> Exec<'a> {
    fn write(&mut self, s: &str) -> EResult<()> {
        if self.out.len() + s.len() > MAX_OUTPUT_BYTES {
            return Err(ExecError {
                message: "template output exceeds 10 MiB".into(),
                at: None,
            });
        }
        self.out.push_str(s);
        Ok(())
    }

    fn enter(&mut self, at: At<'_>) -> EResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return err(at, format!("exceeded maximum template depth ({MAX_DEPTH})"));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    fn walk(&mut self, dot: &Val<'a>, nodes: &'a [Node]) -> EResult<Flow> {
        for node in nodes {
            let flow = match node {
                Node::Text(s) => {
                    self.write(s)?;
                    Flow::Normal
                }
                Node::Action(pipe) => {
                    let v = self.eval_pipeline(dot, pipe)?;
                    // An action that declares variables prints nothing.
                    if pipe.decl.is_empty() {
                        self.write(&action_text(&v))?;
                    }
                    Flow::Normal
                }
                Node::If(c) => self.walk_if_or_with(dot, c, false)?,
                Node::With(c) => self.walk_if_or_with(dot, c, true)?,
                Node::Range(r) => self.walk_range(dot, r)?,
                Node::Template(call) => self.walk_template(dot, call)?,
                Node::Break => Flow::Break,
                Node::Continue => Flow::Continue,
            };
            if flow != Flow::Normal {
                return Ok(flow);
            }
        }
        Ok(Flow::Normal)
    }

    /// The first branch whose pipeline is true runs (`with` rebinds dot to the value);
    /// variables declared anywhere in the structure end with it.
    fn walk_if_or_with(&mut self, dot: &Val<'a>, c: &'a Control, is_with: bool) -> EResult<Flow> {
        let Some((first, _)) = c.branches.first() else {
            return Ok(Flow::Normal);
        };
        self.enter(At::Pipe(first))?;
        let mark = self.vars.len();
        let mut flow = None;
        for (pipe, list) in &c.branches {
            let v = self.eval_pipeline(dot, pipe)?;
            if v.truth() {
                flow = Some(if is_with {
                    self.walk(&v, list)?
                } else {
                    self.walk(dot, list)?
                });
                break;
            }
        }
        let flow = match (flow, &c.else_list) {
            (Some(f), _) => f,
            (None, Some(list)) => self.walk(dot, list)?,
            (None, None) => Flow::Normal,
        };
        self.vars.truncate(mark);
        self.leave();
        Ok(flow)
    }

    fn walk_range(&mut self, dot: &Val<'a>, r: &'a Range) -> EResult<Flow> {
        let at = At::Pipe(&r.pipe);
        self.enter(at)?;
        let mark = self.vars.len();
        let val = self.eval_pipeline(dot, &r.pipe)?;
        let body_mark = self.vars.len();
        let ran = match val.get() {
            None | Some(Value::Null) => false,
            Some(Value::Array(items)) => {
                let items: Vec<Val<'a>> = (0..items.len())
                    .filter_map(|i| val.project(|v| v.get(i)))
                    .collect();
                let mut ran = false;
                for (i, elem) in items.into_iter().enumerate() {
                    ran = true;
                    if self.iteration(r, body_mark, Val::int(i as i64), elem)? == Flow::Break {
                        break;
                    }
                }
                ran
            }
            Some(Value::Object(map)) => {
                // Go ranges over maps in sorted key order.
                let mut keys: Vec<String> = map.keys().cloned().collect();
                keys.sort_unstable();
                let mut ran = false;
                for key in keys {
                    ran = true;
                    let elem = val.project(|v| v.get(key.as_str())).unwrap_or(Val::Missing);
                    if self.iteration(r, body_mark, Val::str(key), elem)? == Flow::Break {
                        break;
                    }
                }
                ran
            }
            // Go 1.22: range over an integer n runs 0..n-1.
            Some(number @ Value::Number(n)) => {
                let Num::Int(count) = num(n) else {
                    return err(at, format!("range can't iterate over {}", go_print(number)));
                };
                if r.pipe.decl.len() > 1 {
                    return err(
                        at,
                        format!("can't use {n} to iterate over more than one variable"),
                    );
                }
                let mut i = 0i128;
                while i < count {
                    let elem = Val::owned(Value::from(i64::try_from(i).unwrap_or(i64::MAX)));
                    if self.iteration(r, body_mark, Val::Missing, elem)? == Flow::Break {
                        break;
                    }
                    i += 1;
                }
                count > 0
            }
            Some(other) => return err(at, format!("range can't iterate over {}", go_print(other))),
        };
        if !ran && let Some(list) = &r.else_list {
            self.walk(dot, list)?;
        }
        self.vars.truncate(mark);
        self.leave();
        Ok(Flow::Normal)
    }

    /// One pass of a range body: bind `$i, $e` (or assign them), run the body, drop the
    /// variables it declared.
    fn iteration(
        &mut self,
        r: &'a Range,
        body_mark: usize,
        index: Val<'a>,
        elem: Val<'a>,
    ) -> EResult<Flow> {
        let at = At::Pipe(&r.pipe);
        self.iterations += 1;
        if self.iterations > MAX_RANGE_ITERATIONS {
            return err(
                at,
                format!("exceeded {MAX_RANGE_ITERATIONS} range iterations"),
            );
        }
        let decl = &r.pipe.decl;
        if r.pipe.is_assign {
            match decl.as_slice() {
                [one] => self.set_var(one, elem.clone(), at)?,
                [i, e, ..] => {
                    self.set_var(i, index, at)?;
                    self.set_var(e, elem.clone(), at)?;
                }
                [] => {}
            }
        } else {
            // Declared variables were pushed by the pipeline: the element is on top, the
            // index (with two variables) below it.
            let top = self.vars.len();
            if !decl.is_empty()
                && let Some(slot) = top.checked_sub(1).and_then(|i| self.vars.get_mut(i))
            {
                slot.1 = elem.clone();
            }
            if decl.len() > 1
                && let Some(slot) = top.checked_sub(2).and_then(|i| self.vars.get_mut(i))
            {
                slot.1 = index;
            }
        }
        let flow = self.walk(&elem, &r.list)?;
        self.vars.truncate(body_mark);
        Ok(flow)
    }

    /// `{{template "name" pipeline}}`: the named body with dot and `$` set to the value and
    /// no other variables.
    fn walk_template(&mut self, dot: &Val<'a>, call: &'a Call) -> EResult<Flow> {
        let at = At::Call(call);
        let Some(body) = self.tmpl.defines.get(&call.name) else {
            return err(
                at,
                format!("template {} not defined", crate::escape::quote(&call.name)),
            );
        };
        self.enter(at)?;
        let new_dot = match &call.pipe {
            Some(p) => self.eval_pipeline(dot, p)?,
            None => Val::Missing,
        };
        let saved = std::mem::replace(&mut self.vars, vec![("$", new_dot.clone())]);
        let result = self.walk(&new_dot, body);
        self.vars = saved;
        self.leave();
        result.map(|_| Flow::Normal)
    }

    // Evaluation.

    /// Runs the commands, each result becoming the last argument of the next, then declares
    /// or assigns the pipeline's variables.
    fn eval_pipeline(&mut self, dot: &Val<'a>, pipe: &'a Pipe) -> EResult<Val<'a>> {
        let mut value = None;
        for cmd in &pipe.cmds {
            value = Some(self.eval_command(dot, cmd, value)?);
        }
        let value = value.unwrap_or(Val::Missing);
        for name in &pipe.decl {
            if pipe.is_assign {
                self.set_var(name, value.clone(), At::Pipe(pipe))?;
            } else {
                self.vars.push((name, value.clone()));
            }
        }
        Ok(value)
    }

    fn eval_command(
        &mut self,
        dot: &Val<'a>,
        cmd: &'a Command,
        last: Option<Val<'a>>,
    ) -> EResult<Val<'a>> {
        let Some(first) = cmd.args.first() else {
            return err(At::Cmd(cmd), "empty command");
        };
        let has_args = cmd.args.len() > 1 || last.is_some();
        match &first.kind {
            ArgKind::Field(fields) => self.eval_fields(first, dot.clone(), fields, has_args),
            ArgKind::Chain(base, fields) => {
                let recv = self.eval_arg(dot, base)?;
                self.eval_fields(first, recv, fields, has_args)
            }
            ArgKind::Ident(name) => {
                self.eval_function(dot, name, At::Cmd(cmd), &cmd.args[1..], last)
            }
            ArgKind::Variable(name, fields) => {
                let v = self.var_value(name, At::Arg(first))?;
                if fields.is_empty() {
                    self.not_a_function(cmd, has_args)?;
                    return Ok(v);
                }
                self.eval_fields(first, v, fields, has_args)
            }
            ArgKind::Pipe(p) => {
                self.not_a_function(cmd, has_args)?;
                self.eval_nested(dot, first, p)
            }
            ArgKind::Nil => err(At::Arg(first), "nil is not a command"),
            _ => {
                self.not_a_function(cmd, has_args)?;
                self.eval_arg(dot, first)
            }
        }
    }

    fn not_a_function(&self, cmd: &'a Command, has_args: bool) -> EResult<()> {
        if has_args {
            let first = cmd
                .args
                .first()
                .map(ToString::to_string)
                .unwrap_or_default();
            return err(
                At::Cmd(cmd),
                format!("can't give argument to non-function {first}"),
            );
        }
        Ok(())
    }

    fn eval_nested(&mut self, dot: &Val<'a>, at: &'a Arg, p: &'a Pipe) -> EResult<Val<'a>> {
        self.enter(At::Arg(at))?;
        let v = self.eval_pipeline(dot, p)?;
        self.leave();
        Ok(v)
    }

    /// An argument of a function (or the only word of a command).
    fn eval_arg(&mut self, dot: &Val<'a>, arg: &'a Arg) -> EResult<Val<'a>> {
        match &arg.kind {
            ArgKind::Dot => Ok(dot.clone()),
            ArgKind::Nil => Ok(Val::owned(Value::Null)),
            ArgKind::Bool(b) => Ok(Val::bool(*b)),
            ArgKind::Number { text, value } => match value {
                Some(v) => Ok(Val::Ref(v)),
                None => err(At::Arg(arg), format!("{text} overflows int")),
            },
            ArgKind::Str { value, .. } => Ok(Val::Ref(value)),
            ArgKind::Field(fields) => self.eval_fields(arg, dot.clone(), fields, false),
            ArgKind::Variable(name, fields) => {
                let v = self.var_value(name, At::Arg(arg))?;
                self.eval_fields(arg, v, fields, false)
            }
            ArgKind::Pipe(p) => self.eval_nested(dot, arg, p),
            ArgKind::Ident(name) => self.eval_function(dot, name, At::Arg(arg), &[], None),
            ArgKind::Chain(base, fields) => {
                let recv = self.eval_arg(dot, base)?;
                self.eval_fields(arg, recv, fields, false)
            }
        }
    }

    /// `.a.b.c` from `recv`; only the last field may be given arguments (which is an error
    /// for an object key, as in Go).
    fn eval_fields(
        &self,
        node: &'a Arg,
        mut recv: Val<'a>,
        fields: &'a [String],
        has_args: bool,
    ) -> EResult<Val<'a>> {
        for (i, name) in fields.iter().enumerate() {
            recv = match recv.get() {
                // Missing or null: no value, whatever follows (lenient, see module doc).
                None | Some(Value::Null) => return Ok(Val::Missing),
                Some(Value::Object(_)) => {
                    if has_args && i + 1 == fields.len() {
                        return err(
                            At::Arg(node),
                            format!("{name} is not a method but has arguments"),
                        );
                    }
                    recv.project(|v| v.get(name.as_str()))
                        .unwrap_or(Val::Missing)
                }
                Some(_) => {
                    return err(
                        At::Arg(node),
                        format!("can't evaluate field {name} in type {}", recv.type_name()),
                    );
                }
            };
        }
        Ok(recv)
    }

    fn eval_function(
        &mut self,
        dot: &Val<'a>,
        name: &str,
        at: At<'a>,
        args: &'a [Arg],
        last: Option<Val<'a>>,
    ) -> EResult<Val<'a>> {
        let count = args.len() + usize::from(last.is_some());
        if let Err(m) = funcs::check_arity(name, count) {
            return err(at, m);
        }
        if name == "and" || name == "or" {
            // Short-circuit: return the first argument that decides, else the last one.
            let is_or = name == "or";
            let mut result = Val::Missing;
            for a in args {
                let v = self.eval_arg(dot, a)?;
                if v.truth() == is_or {
                    return Ok(v);
                }
                result = v;
            }
            return Ok(last.unwrap_or(result));
        }
        let mut vals = Vec::with_capacity(count);
        for a in args {
            vals.push(self.eval_arg(dot, a)?);
        }
        vals.extend(last);
        match funcs::call(name, vals) {
            Ok(v) => {
                if let Some(Value::String(text)) = v.get() {
                    self.built = self.built.saturating_add(text.len());
                    if self.built > MAX_BUILT_BYTES {
                        return err(
                            at,
                            format!("functions built more than {MAX_BUILT_BYTES} bytes of text"),
                        );
                    }
                }
                Ok(v)
            }
            Err(FuncError::Plain(m)) => err(at, m),
            Err(FuncError::Call(m)) => err(at, format!("error calling {name}: {m}")),
        }
    }

    fn var_value(&self, name: &str, at: At<'_>) -> EResult<Val<'a>> {
        match self.vars.iter().rev().find(|(n, _)| *n == name) {
            Some((_, v)) => Ok(v.clone()),
            None => err(at, format!("undefined variable: {name}")),
        }
    }

    fn set_var(&mut self, name: &str, value: Val<'a>, at: At<'_>) -> EResult<()> {
        match self.vars.iter_mut().rev().find(|(n, _)| *n == name) {
            Some(slot) => {
                slot.1 = value;
                Ok(())
            }
            None => err(at, format!("undefined variable: {name}")),
        }
    }
}

#[cfg(test)]
mod tests;
