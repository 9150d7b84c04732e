//! Parser: tokens to the tree in `node`, following Go's `text/template/parse/parse.go`, with
//! its error messages and its variable scoping (a variable lives until the `{{end}}` of the
//! control structure it was declared in; `define` and `block` bodies start with only `$`).
//!
//! Differences from Go, all deliberate: `if`/`with` else-chains are flattened (see `node`),
//! nesting is capped at [`MAX_DEPTH`] rather than 10 000, complex literals are refused, and an
//! unclosed structure is reported at its opening action rather than at end of input.

use std::collections::HashMap;

use crate::MAX_DEPTH;
use crate::error::ParseError;
use crate::escape::unquote;
use crate::lex::{Tok, Token, lex};
use crate::node::{Call, Control, Node, Range};

/// Go's limit on commands in one pipeline.
const MAX_PIPELINE_CMDS: usize = 100_000;

pub(crate) struct Parsed {
    pub(crate) root: Vec<Node>,
    pub(crate) defines: HashMap<String, Vec<Node>>,
}

type PResult<T> = Result<T, ParseError>;

/// How an item list ended.
enum Stop {
    End {
        pos: usize,
    },
    /// `{{else}}`; `chained` when `if` or `with` follows in the same action.
    Else {
        pos: usize,
        chained: bool,
    },
}

enum Item {
    Node(Node),
    Stop(Stop),
}

struct Parser<'s> {
    src: &'s str,
    toks: Vec<Token<'s>>,
    i: usize,
    vars: Vec<String>,
    range_depth: usize,
    depth: usize,
    defines: HashMap<String, Vec<Node>>,
}

pub(crate) fn parse(src: &str) -> PResult<Parsed> {
    let mut p = Parser {
        src,
        toks: lex(src),
        i: 0,
        vars: vec!["$".into()],
        range_depth: 0,
        depth: 0,
        defines: HashMap::new(),
    };
    let root = p.parse_top()?;
    Ok(Parsed {
        root,
        defines: p.defines,
    })
}

impl<'s> Parser<'s> {
    // Token navigation. The list ends in Eof or Error, which `next` repeats forever.

    fn next(&mut self) -> Token<'s> {
        let last = self.toks.len() - 1;
        let t = self.toks[self.i.min(last)].clone();
        self.i = (self.i + 1).min(self.toks.len());
        t
    }

    fn backup(&mut self) {
        self.i = self.i.saturating_sub(1);
    }

    fn peek(&mut self) -> Token<'s> {
        let t = self.next();
        self.backup();
        t
    }

    fn next_non_space(&mut self) -> Token<'s> {
        loop {
            let t = self.next();
            if t.kind != Tok::Space {
                return t;
            }
        }
    }

    fn peek_non_space(&mut self) -> Token<'s> {
        let t = self.next_non_space();
        self.backup();
        t
    }

    fn error(&self, pos: usize, msg: impl Into<String>) -> ParseError {
        ParseError::at(self.src, pos, msg)
    }

    /// Go's `unexpected`: a lexical error is reported as itself.
    fn unexpected(&self, t: &Token<'_>, context: &str) -> ParseError {
        if t.kind == Tok::Error {
            return self.error(t.pos, t.text.to_string());
        }
        self.error(t.pos, format!("unexpected {t} in {context}"))
    }

    fn expect(&mut self, kind: Tok, context: &str) -> PResult<Token<'s>> {
        let t = self.next_non_space();
        if t.kind != kind {
            return Err(self.unexpected(&t, context));
        }
        Ok(t)
    }

    fn enter(&mut self, pos: usize) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error(
                pos,
                format!("exceeded maximum nesting depth of {MAX_DEPTH}"),
            ));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    // Structure.

    /// The top level: like an item list, but `{{define}}` is allowed and `{{end}}`/`{{else}}`
    /// are errors.
    fn parse_top(&mut self) -> PResult<Vec<Node>> {
        let mut root = Vec::new();
        while self.peek().kind != Tok::Eof {
            if self.peek().kind == Tok::LeftDelim {
                let save = self.i;
                let delim = self.next();
                if self.next_non_space().kind == Tok::Define {
                    self.parse_definition(delim.pos)?;
                    continue;
                }
                self.i = save;
            }
            match self.text_or_action()? {
                Item::Node(n) => root.push(n),
                Item::Stop(Stop::End { pos }) => return Err(self.error(pos, "unexpected {{end}}")),
                Item::Stop(Stop::Else { pos, .. }) => {
                    return Err(self.error(pos, "unexpected {{else}}"));
                }
            }
        }
        Ok(root)
    }

    /// `{{define "name"}} … {{end}}`; `define` has been read.
    fn parse_definition(&mut self, open: usize) -> PResult<()> {
        const CONTEXT: &str = "define clause";
        let name_tok = self.next_non_space();
        if !matches!(name_tok.kind, Tok::Str | Tok::RawStr) {
            return Err(self.unexpected(&name_tok, CONTEXT));
        }
        let name = unquote(&name_tok.text).map_err(|e| self.error(name_tok.pos, e))?;
        self.expect(Tok::RightDelim, CONTEXT)?;
        let body = self.parse_body(open, "define")?;
        self.add_definition(name, body, open)
    }

    /// A `define` or `block` body: its own variable scope and no enclosing range.
    fn parse_body(&mut self, open: usize, what: &str) -> PResult<Vec<Node>> {
        self.enter(open)?;
        let vars = std::mem::replace(&mut self.vars, vec!["$".into()]);
        let range_depth = std::mem::take(&mut self.range_depth);
        let (body, stop) = self.item_list(open, what)?;
        if let Stop::Else { pos, .. } = stop {
            return Err(self.error(pos, format!("unexpected {{{{else}}}} in {what} clause")));
        }
        self.vars = vars;
        self.range_depth = range_depth;
        self.leave();
        Ok(body)
    }

    fn add_definition(&mut self, name: String, body: Vec<Node>, open: usize) -> PResult<()> {
        match self.defines.get(&name) {
            Some(old) if !is_empty_tree(old) && !is_empty_tree(&body) => Err(self.error(
                open,
                format!(
                    "template: multiple definition of template {}",
                    crate::escape::quote(&name)
                ),
            )),
            // An empty redefinition does not replace a real one.
            Some(old) if !is_empty_tree(old) => Ok(()),
            _ => {
                self.defines.insert(name, body);
                Ok(())
            }
        }
    }

    /// Nodes up to `{{end}}` or `{{else}}`. `open` is the structure's opening action, where an
    /// unexpected end of input is reported.
    fn item_list(&mut self, open: usize, what: &str) -> PResult<(Vec<Node>, Stop)> {
        let mut list = Vec::new();
        while self.peek_non_space().kind != Tok::Eof {
            match self.text_or_action()? {
                Item::Node(n) => list.push(n),
                Item::Stop(stop) => return Ok((list, stop)),
            }
        }
        Err(self.error(
            open,
            format!("unexpected EOF: {{{{{what}}}}} has no {{{{end}}}}"),
        ))
    }

    fn text_or_action(&mut self) -> PResult<Item> {
        let t = self.next_non_space();
        match t.kind {
            Tok::Text => Ok(Item::Node(Node::Text(t.text.into_owned()))),
            Tok::LeftDelim => self.action(t.pos),
            _ => Err(self.unexpected(&t, "input")),
        }
    }

    /// After `{{`: a control keyword or a pipeline.
    fn action(&mut self, open: usize) -> PResult<Item> {
        let t = self.next_non_space();
        let node = match t.kind {
            Tok::Block => self.block_control(open)?,
            Tok::Break | Tok::Continue => self.loop_control(open, t.kind)?,
            Tok::Else => return self.else_control(open).map(Item::Stop),
            Tok::End => {
                self.expect(Tok::RightDelim, "end")?;
                return Ok(Item::Stop(Stop::End { pos: open }));
            }
            Tok::If => Node::If(self.if_or_with(open, "if")?),
            Tok::With => Node::With(self.if_or_with(open, "with")?),
            Tok::Range => self.range_control(open)?,
            Tok::Template => self.template_control()?,
            _ => {
                self.backup();
                // Variables declared here persist until the enclosing {{end}}.
                Node::Action(self.pipeline("command", Tok::RightDelim)?)
            }
        };
        Ok(Item::Node(node))
    }

    fn loop_control(&mut self, open: usize, kind: Tok) -> PResult<Node> {
        let name = if kind == Tok::Break {
            "break"
        } else {
            "continue"
        };
        let t = self.next_non_space();
        if t.kind != Tok::RightDelim {
            return Err(self.unexpected(&t, &format!("{{{{{name}}}}}")));
        }
        if self.range_depth == 0 {
            return Err(self.error(open, format!("{{{{{name}}}}} outside {{{{range}}}}")));
        }
        Ok(if kind == Tok::Break {
            Node::Break
        } else {
            Node::Continue
        })
    }

    fn else_control(&mut self, open: usize) -> PResult<Stop> {
        // "{{else if" and "{{else with" leave the keyword for the enclosing structure.
        if matches!(self.peek_non_space().kind, Tok::If | Tok::With) {
            self.next_non_space();
            self.backup();
            return Ok(Stop::Else {
                pos: open,
                chained: true,
            });
        }
        self.expect(Tok::RightDelim, "else")?;
        Ok(Stop::Else {
            pos: open,
            chained: false,
        })
    }

    /// `{{if p}} … {{else if p}} … {{else}} … {{end}}`, and the same for `with`.
    fn if_or_with(&mut self, open: usize, context: &str) -> PResult<Control> {
        self.enter(open)?;
        let mark = self.vars.len();
        let keyword = if context == "if" { Tok::If } else { Tok::With };
        let mut branches = Vec::new();
        let mut else_list = None;
        loop {
            let pipe = self.pipeline(context, Tok::RightDelim)?;
            let (list, stop) = self.item_list(open, context)?;
            branches.push((pipe, list));
            match stop {
                Stop::End { .. } => break,
                Stop::Else { chained: true, .. } if self.peek().kind == keyword => {
                    self.next();
                }
                Stop::Else { .. } => {
                    let (list, stop) = self.item_list(open, context)?;
                    if let Stop::Else { pos, .. } = stop {
                        return Err(self.error(pos, "expected end; found {{else}}"));
                    }
                    else_list = Some(list);
                    break;
                }
            }
        }
        self.vars.truncate(mark);
        self.leave();
        Ok(Control {
            branches,
            else_list,
        })
    }

    fn range_control(&mut self, open: usize) -> PResult<Node> {
        self.enter(open)?;
        let mark = self.vars.len();
        let pipe = self.pipeline("range", Tok::RightDelim)?;
        self.range_depth += 1;
        let (list, stop) = self.item_list(open, "range")?;
        self.range_depth -= 1;
        let else_list = match stop {
            Stop::End { .. } => None,
            Stop::Else { .. } => {
                let (list, stop) = self.item_list(open, "range")?;
                if let Stop::Else { pos, .. } = stop {
                    return Err(self.error(pos, "expected end; found {{else}}"));
                }
                Some(list)
            }
        };
        self.vars.truncate(mark);
        self.leave();
        Ok(Node::Range(Range {
            pipe,
            list,
            else_list,
        }))
    }

    fn template_name(&mut self, context: &str) -> PResult<(String, usize)> {
        let t = self.next_non_space();
        if !matches!(t.kind, Tok::Str | Tok::RawStr) {
            return Err(self.unexpected(&t, context));
        }
        let name = unquote(&t.text).map_err(|e| self.error(t.pos, e))?;
        Ok((name, t.pos))
    }

    /// `{{template "name" pipeline}}`; the pipeline is optional.
    fn template_control(&mut self) -> PResult<Node> {
        const CONTEXT: &str = "template clause";
        let (name, pos) = self.template_name(CONTEXT)?;
        let pipe = if self.next_non_space().kind == Tok::RightDelim {
            None
        } else {
            self.backup();
            Some(self.pipeline(CONTEXT, Tok::RightDelim)?)
        };
        Ok(Node::Template(Call { pos, name, pipe }))
    }

    /// `{{block "name" pipeline}} … {{end}}`: defines the template and calls it here.
    fn block_control(&mut self, open: usize) -> PResult<Node> {
        const CONTEXT: &str = "block clause";
        let (name, pos) = self.template_name(CONTEXT)?;
        let pipe = self.pipeline(CONTEXT, Tok::RightDelim)?;
        let body = self.parse_body(open, "block")?;
        self.add_definition(name.clone(), body, open)?;
        Ok(Node::Template(Call {
            pos,
            name,
            pipe: Some(pipe),
        }))
    }
}

/// Go's `IsEmptyTree`: only whitespace text.
fn is_empty_tree(nodes: &[Node]) -> bool {
    nodes
        .iter()
        .all(|n| matches!(n, Node::Text(t) if t.trim().is_empty()))
}

mod pipeline;

#[cfg(test)]
mod tests;
