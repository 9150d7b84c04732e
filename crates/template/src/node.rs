//! The parse tree, and its printing in Go's `Node.String()` form for error messages
//! (`executing <.a.b>`).
//!
//! Positions are byte offsets into the source; `error::line_col` turns them into what users see.
//! `if … else if …` and `with … else with …` chains are flattened into one node with several
//! branches: same scoping and behaviour as Go's nested form, without one level of recursion per
//! `else`.

use std::fmt;

use serde_json::Value;

#[derive(Debug, Clone)]
pub(crate) enum Node {
    Text(String),
    /// `{{pipeline}}`: prints the value unless the pipeline declares variables.
    Action(Pipe),
    If(Control),
    With(Control),
    Range(Range),
    /// `{{template "name" pipeline}}`, also what `{{block}}` leaves in place.
    Template(Call),
    Break,
    Continue,
}

/// `if`/`with`: the first branch whose pipeline is true runs, else `else_list`.
#[derive(Debug, Clone)]
pub(crate) struct Control {
    pub(crate) branches: Vec<(Pipe, Vec<Node>)>,
    pub(crate) else_list: Option<Vec<Node>>,
}

#[derive(Debug, Clone)]
pub(crate) struct Range {
    pub(crate) pipe: Pipe,
    pub(crate) list: Vec<Node>,
    pub(crate) else_list: Option<Vec<Node>>,
}

#[derive(Debug, Clone)]
pub(crate) struct Call {
    pub(crate) pos: usize,
    pub(crate) name: String,
    pub(crate) pipe: Option<Pipe>,
}

/// `$x := cmd | cmd | …`.
#[derive(Debug, Clone)]
pub(crate) struct Pipe {
    pub(crate) pos: usize,
    pub(crate) is_assign: bool,
    pub(crate) decl: Vec<String>,
    pub(crate) cmds: Vec<Command>,
}

/// A function or value with its arguments; the first argument is the function.
#[derive(Debug, Clone)]
pub(crate) struct Command {
    pub(crate) pos: usize,
    pub(crate) args: Vec<Arg>,
}

#[derive(Debug, Clone)]
pub(crate) struct Arg {
    pub(crate) pos: usize,
    pub(crate) kind: ArgKind,
}

#[derive(Debug, Clone)]
pub(crate) enum ArgKind {
    Dot,
    Nil,
    Bool(bool),
    /// `value` is `None` for a literal that fits uint64 but not int: Go fails with
    /// "overflows int" when it is evaluated.
    Number {
        text: String,
        value: Option<Value>,
    },
    /// Kept as a JSON value so evaluation can lend it out without copying.
    Str {
        quoted: String,
        value: Value,
    },
    /// `.a.b`
    Field(Vec<String>),
    /// `$x.a.b`: the variable name (with `$`) and the fields.
    Variable(String, Vec<String>),
    /// A function name.
    Ident(String),
    /// `(pipeline)`
    Pipe(Box<Pipe>),
    /// `(pipeline).a.b` or `fn.a`: a term followed by fields.
    Chain(Box<Arg>, Vec<String>),
}

impl fmt::Display for Arg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ArgKind::Dot => f.write_str("."),
            ArgKind::Nil => f.write_str("nil"),
            ArgKind::Bool(b) => write!(f, "{b}"),
            ArgKind::Number { text, .. } => f.write_str(text),
            ArgKind::Str { quoted, .. } => f.write_str(quoted),
            ArgKind::Field(fields) => fields.iter().try_for_each(|x| write!(f, ".{x}")),
            ArgKind::Variable(name, fields) => {
                f.write_str(name)?;
                fields.iter().try_for_each(|x| write!(f, ".{x}"))
            }
            ArgKind::Ident(name) => f.write_str(name),
            ArgKind::Pipe(p) => write!(f, "({p})"),
            ArgKind::Chain(base, fields) => {
                write!(f, "{base}")?;
                fields.iter().try_for_each(|x| write!(f, ".{x}"))
            }
        }
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, a) in self.args.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{a}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Pipe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.decl.is_empty() {
            f.write_str(&self.decl.join(", "))?;
            f.write_str(if self.is_assign { " = " } else { " := " })?;
        }
        for (i, c) in self.cmds.iter().enumerate() {
            if i > 0 {
                f.write_str(" | ")?;
            }
            write!(f, "{c}")?;
        }
        Ok(())
    }
}
