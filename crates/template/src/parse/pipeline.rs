//! Pipelines inside actions: declarations (`$x :=`, `$i, $e :=`), commands separated by `|`,
//! operands with their field chains, and terms (literals, functions, variables, `(pipeline)`).

use serde_json::Value;

use super::{MAX_PIPELINE_CMDS, PResult, Parser};
use crate::escape::{quote, unquote};
use crate::funcs::is_builtin;
use crate::lex::Tok;
use crate::node::{Arg, ArgKind, Command, Pipe};
use crate::number::parse_number;

impl Parser<'_> {
    /// `declarations? command ('|' command)*` up to `end`.
    pub(super) fn pipeline(&mut self, context: &str, end: Tok) -> PResult<Pipe> {
        let pos = self.peek_non_space().pos;
        let mut pipe = Pipe {
            pos,
            is_assign: false,
            decl: Vec::new(),
            cmds: Vec::new(),
        };
        self.declarations(&mut pipe, context)?;
        loop {
            let t = self.next_non_space();
            if t.kind == end {
                self.check_pipeline(&pipe, context, t.pos)?;
                return Ok(pipe);
            }
            match t.kind {
                Tok::Bool
                | Tok::CharConstant
                | Tok::Complex
                | Tok::Dot
                | Tok::Field
                | Tok::Identifier
                | Tok::Number
                | Tok::Nil
                | Tok::RawStr
                | Tok::Str
                | Tok::Variable
                | Tok::LeftParen => {
                    self.backup();
                    let cmd = self.command()?;
                    pipe.cmds.push(cmd);
                    if pipe.cmds.len() > MAX_PIPELINE_CMDS {
                        return Err(self.error(t.pos, "pipeline too long"));
                    }
                }
                _ => return Err(self.unexpected(&t, context)),
            }
        }
    }

    /// `$x :=`, `$x =`, and in `range` `$i, $e :=`. Needs Go's three-token look-ahead, which
    /// here is just saving the position.
    fn declarations(&mut self, pipe: &mut Pipe, context: &str) -> PResult<()> {
        loop {
            let v = self.peek_non_space();
            if v.kind != Tok::Variable {
                return Ok(());
            }
            let save = self.i;
            self.next_non_space();
            let next = self.peek_non_space();
            match next.kind {
                Tok::Assign | Tok::Declare => {
                    pipe.is_assign = next.kind == Tok::Assign;
                    self.next_non_space();
                    pipe.decl.push(v.text.to_string());
                    self.vars.push(v.text.to_string());
                    return Ok(());
                }
                Tok::Char if next.text == "," => {
                    self.next_non_space();
                    pipe.decl.push(v.text.to_string());
                    self.vars.push(v.text.to_string());
                    if context == "range" && pipe.decl.len() < 2 {
                        match self.peek_non_space().kind {
                            Tok::Variable | Tok::RightDelim | Tok::RightParen => continue,
                            _ => {
                                return Err(
                                    self.error(next.pos, "range can only initialize variables")
                                );
                            }
                        }
                    }
                    return Err(self.error(next.pos, format!("too many declarations in {context}")));
                }
                _ => {
                    self.i = save;
                    return Ok(());
                }
            }
        }
    }

    fn check_pipeline(&self, pipe: &Pipe, context: &str, end_pos: usize) -> PResult<()> {
        if pipe.cmds.is_empty() {
            return Err(self.error(end_pos, format!("missing value for {context}")));
        }
        for (i, c) in pipe.cmds.iter().enumerate().skip(1) {
            if let Some(first) = c.args.first()
                && matches!(
                    first.kind,
                    ArgKind::Bool(_)
                        | ArgKind::Dot
                        | ArgKind::Nil
                        | ArgKind::Number { .. }
                        | ArgKind::Str { .. }
                )
            {
                return Err(self.error(
                    c.pos,
                    format!("non executable command in pipeline stage {}", i + 1),
                ));
            }
        }
        Ok(())
    }

    /// Space-separated operands up to `|`, `}}` or `)`; consumes the `|`.
    fn command(&mut self) -> PResult<Command> {
        let pos = self.peek_non_space().pos;
        let mut args = Vec::new();
        loop {
            self.peek_non_space();
            if let Some(arg) = self.operand()? {
                args.push(arg);
            }
            let t = self.next();
            match t.kind {
                Tok::Space => continue,
                Tok::RightDelim | Tok::RightParen => self.backup(),
                Tok::Pipe => {}
                _ => return Err(self.unexpected(&t, "operand")),
            }
            break;
        }
        if args.is_empty() {
            return Err(self.error(pos, "empty command"));
        }
        Ok(Command { pos, args })
    }

    /// A term possibly followed by `.Field`s.
    fn operand(&mut self) -> PResult<Option<Arg>> {
        let Some(term) = self.term()? else {
            return Ok(None);
        };
        if self.peek().kind != Tok::Field {
            return Ok(Some(term));
        }
        let mut fields = Vec::new();
        while self.peek().kind == Tok::Field {
            let t = self.next();
            fields.push(t.text[1..].to_string());
        }
        let pos = term.pos;
        let kind = match term.kind {
            ArgKind::Field(mut base) => {
                base.extend(fields);
                ArgKind::Field(base)
            }
            ArgKind::Variable(name, mut base) => {
                base.extend(fields);
                ArgKind::Variable(name, base)
            }
            ArgKind::Bool(_)
            | ArgKind::Str { .. }
            | ArgKind::Number { .. }
            | ArgKind::Nil
            | ArgKind::Dot => {
                let shown = quote(&term.to_string());
                return Err(self.error(pos, format!("unexpected . after term {shown}")));
            }
            _ => ArgKind::Chain(Box::new(term), fields),
        };
        Ok(Some(Arg { pos, kind }))
    }

    /// A literal, function name, `.`, `.Field`, `$var` or `(pipeline)`; `None` if the next
    /// token is none of these.
    fn term(&mut self) -> PResult<Option<Arg>> {
        let t = self.next_non_space();
        let pos = t.pos;
        let kind = match t.kind {
            Tok::Identifier => {
                if !is_builtin(&t.text) {
                    return Err(self.error(pos, format!("function {} not defined", quote(&t.text))));
                }
                ArgKind::Ident(t.text.into_owned())
            }
            Tok::Dot => ArgKind::Dot,
            Tok::Nil => ArgKind::Nil,
            Tok::Variable => {
                if !self.vars.iter().any(|v| *v == t.text) {
                    return Err(self.error(pos, format!("undefined variable {}", quote(&t.text))));
                }
                ArgKind::Variable(t.text.into_owned(), Vec::new())
            }
            Tok::Field => ArgKind::Field(vec![t.text[1..].to_string()]),
            Tok::Bool => ArgKind::Bool(t.text == "true"),
            Tok::CharConstant | Tok::Complex | Tok::Number => {
                let lit = parse_number(&t.text, t.kind == Tok::CharConstant)
                    .map_err(|e| self.error(pos, e))?;
                ArgKind::Number {
                    text: t.text.into_owned(),
                    value: lit.to_value(),
                }
            }
            Tok::LeftParen => {
                self.enter(pos)?;
                let pipe = self.pipeline("parenthesized pipeline", Tok::RightParen)?;
                self.leave();
                ArgKind::Pipe(Box::new(pipe))
            }
            Tok::Str | Tok::RawStr => {
                let text = unquote(&t.text).map_err(|e| self.error(pos, e))?;
                ArgKind::Str {
                    quoted: t.text.into_owned(),
                    value: Value::String(text),
                }
            }
            _ => {
                self.backup();
                return Ok(None);
            }
        };
        Ok(Some(Arg { pos, kind }))
    }
}
