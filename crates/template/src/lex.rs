//! Lexer: source text to tokens, following Go's `text/template/parse/lex.go` state by state
//! (trim markers, comments, newlines inside actions, number and quote scanning).
//!
//! It lexes the whole input up front; the token list always ends in `Eof` or `Error`, so the
//! parser meets a lexical error exactly where Go's streaming lexer would report it.

use std::borrow::Cow;

use crate::escape::quote;

/// What a token is. Keywords come after `Dot` so `is_keyword` can print them as Go does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tok {
    Error,
    Eof,
    Text,
    LeftDelim,
    RightDelim,
    Space,
    Pipe,
    LeftParen,
    RightParen,
    Declare,
    Assign,
    Char,
    Bool,
    Number,
    CharConstant,
    Complex,
    Str,
    RawStr,
    Field,
    Variable,
    Identifier,
    // Keywords.
    Dot,
    Block,
    Break,
    Continue,
    Define,
    Else,
    End,
    If,
    Nil,
    Range,
    Template,
    With,
}

#[derive(Debug, Clone)]
pub(crate) struct Token<'s> {
    pub(crate) kind: Tok,
    /// The token's source text; for `Error`, the message.
    pub(crate) text: Cow<'s, str>,
    /// Byte offset of the token in the source.
    pub(crate) pos: usize,
}

impl Tok {
    fn is_keyword(self) -> bool {
        matches!(
            self,
            Tok::Dot
                | Tok::Block
                | Tok::Break
                | Tok::Continue
                | Tok::Define
                | Tok::Else
                | Tok::End
                | Tok::If
                | Tok::Nil
                | Tok::Range
                | Tok::Template
                | Tok::With
        )
    }
}

impl std::fmt::Display for Token<'_> {
    /// Go's `item.String()`, used in "unexpected X in Y" messages.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kind {
            Tok::Eof => f.write_str("EOF"),
            Tok::Error => f.write_str(&self.text),
            k if k.is_keyword() => write!(f, "<{}>", self.text),
            _ if self.text.chars().count() > 10 => {
                let head: String = self.text.chars().take(10).collect();
                write!(f, "{}...", quote(&head))
            }
            _ => f.write_str(&quote(&self.text)),
        }
    }
}

const LEFT_DELIM: &str = "{{";
const RIGHT_DELIM: &str = "}}";
const LEFT_COMMENT: &str = "/*";
const RIGHT_COMMENT: &str = "*/";
/// Go's `spaceChars`: what trim markers remove and what separates words inside actions.
const SPACE_CHARS: &[char] = &[' ', '\t', '\r', '\n'];

#[derive(Clone, Copy)]
enum State {
    Text,
    LeftDelim,
    Comment,
    RightDelim,
    InsideAction,
    Space,
    Identifier,
    Field,
    Variable,
    Char,
    Number,
    Quote,
    RawQuote,
    Done,
}

struct Lexer<'s> {
    src: &'s str,
    pos: usize,
    start: usize,
    /// Offset of the `{{` of the action being lexed, for "unclosed" errors.
    action_start: usize,
    paren_depth: i64,
    tokens: Vec<Token<'s>>,
}

/// Lexes `src` completely.
pub(crate) fn lex(src: &str) -> Vec<Token<'_>> {
    let mut l = Lexer {
        src,
        pos: 0,
        start: 0,
        action_start: 0,
        paren_depth: 0,
        tokens: Vec::new(),
    };
    let mut state = State::Text;
    loop {
        state = match state {
            State::Text => l.lex_text(),
            State::LeftDelim => l.lex_left_delim(),
            State::Comment => l.lex_comment(),
            State::RightDelim => l.lex_right_delim(),
            State::InsideAction => l.lex_inside_action(),
            State::Space => l.lex_space(),
            State::Identifier => l.lex_identifier(),
            State::Field => l.lex_field_or_variable(Tok::Field),
            State::Variable => l.lex_variable(),
            State::Char => l.lex_char(),
            State::Number => l.lex_number(),
            State::Quote => l.lex_quote(),
            State::RawQuote => l.lex_raw_quote(),
            State::Done => break,
        };
    }
    l.tokens
}

fn is_space(c: char) -> bool {
    SPACE_CHARS.contains(&c)
}

/// Go's `isAlphaNumeric` (Rust's Unicode classes stand in for `unicode.IsLetter`/`IsDigit`).
fn is_alnum(c: char) -> bool {
    c == '_' || c.is_alphabetic() || c.is_numeric()
}

fn has_left_trim_marker(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && b[0] == b'-' && is_space(b[1] as char)
}

fn has_right_trim_marker(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && is_space(b[0] as char) && b[1] == b'-'
}

/// Go's `%#U`: `U+0023 '#'`, or just `U+0007` when the character is not printable.
fn rune_desc(c: char) -> String {
    if crate::escape::is_print(c) {
        format!("U+{:04X} '{c}'", c as u32)
    } else {
        format!("U+{:04X}", c as u32)
    }
}

impl<'s> Lexer<'s> {
    fn rest(&self) -> &'s str {
        &self.src[self.pos..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    /// Steps back over `c`, which `next` just returned.
    fn backup(&mut self, c: Option<char>) {
        if let Some(c) = c {
            self.pos -= c.len_utf8();
        }
    }

    fn accept(&mut self, valid: &str) -> bool {
        match self.peek() {
            Some(c) if valid.contains(c) => {
                self.pos += c.len_utf8();
                true
            }
            _ => false,
        }
    }

    fn accept_run(&mut self, valid: &str) {
        while self.accept(valid) {}
    }

    fn emit(&mut self, kind: Tok) {
        let text = &self.src[self.start..self.pos];
        self.tokens.push(Token {
            kind,
            text: Cow::Borrowed(text),
            pos: self.start,
        });
        self.start = self.pos;
    }

    fn ignore(&mut self) {
        self.start = self.pos;
    }

    fn error_at(&mut self, pos: usize, msg: String) -> State {
        self.tokens.push(Token {
            kind: Tok::Error,
            text: Cow::Owned(msg),
            pos,
        });
        State::Done
    }

    fn error(&mut self, msg: String) -> State {
        self.error_at(self.start, msg)
    }

    fn lex_text(&mut self) -> State {
        if let Some(x) = self.rest().find(LEFT_DELIM) {
            let delim = self.pos + x;
            let mut end = delim;
            if has_left_trim_marker(&self.src[delim + LEFT_DELIM.len()..]) {
                end = self.src[self.start..delim]
                    .trim_end_matches(SPACE_CHARS)
                    .len()
                    + self.start;
            }
            self.pos = end;
            if self.pos > self.start {
                self.emit(Tok::Text);
            }
            self.pos = delim;
            self.ignore();
            return State::LeftDelim;
        }
        self.pos = self.src.len();
        if self.pos > self.start {
            self.emit(Tok::Text);
        }
        self.emit(Tok::Eof);
        State::Done
    }

    fn at_right_delim(&self) -> (bool, bool) {
        let rest = self.rest();
        if has_right_trim_marker(rest) && rest[2..].starts_with(RIGHT_DELIM) {
            return (true, true);
        }
        (rest.starts_with(RIGHT_DELIM), false)
    }

    fn lex_left_delim(&mut self) -> State {
        self.action_start = self.pos;
        self.pos += LEFT_DELIM.len();
        let trim = has_left_trim_marker(self.rest());
        let after = if trim { 2 } else { 0 };
        if self.rest()[after..].starts_with(LEFT_COMMENT) {
            self.pos += after;
            self.ignore();
            return State::Comment;
        }
        self.emit(Tok::LeftDelim);
        self.pos += after;
        self.ignore();
        self.paren_depth = 0;
        State::InsideAction
    }

    fn lex_comment(&mut self) -> State {
        self.pos += LEFT_COMMENT.len();
        let Some(i) = self.rest().find(RIGHT_COMMENT) else {
            return self.error_at(self.action_start, "unclosed comment".into());
        };
        self.pos += i + RIGHT_COMMENT.len();
        let (delim, trim) = self.at_right_delim();
        if !delim {
            return self.error_at(
                self.action_start,
                "comment ends before closing delimiter".into(),
            );
        }
        if trim {
            self.pos += 2;
        }
        self.pos += RIGHT_DELIM.len();
        if trim {
            self.pos = self.src.len() - self.rest().trim_start_matches(SPACE_CHARS).len();
        }
        self.ignore();
        State::Text
    }

    fn lex_right_delim(&mut self) -> State {
        let trim = has_right_trim_marker(self.rest());
        if trim {
            self.pos += 2;
            self.ignore();
        }
        self.pos += RIGHT_DELIM.len();
        self.emit(Tok::RightDelim);
        if trim {
            self.pos = self.src.len() - self.rest().trim_start_matches(SPACE_CHARS).len();
            self.ignore();
        }
        State::Text
    }

    fn lex_inside_action(&mut self) -> State {
        if self.at_right_delim().0 {
            if self.paren_depth == 0 {
                return State::RightDelim;
            }
            return self.error("unclosed left paren".into());
        }
        let c = self.next();
        match c {
            None => self.error_at(self.action_start, "unclosed action".into()),
            Some(c) if is_space(c) => {
                self.backup(Some(c));
                State::Space
            }
            Some('=') => {
                self.emit(Tok::Assign);
                State::InsideAction
            }
            Some(':') => {
                if self.next() != Some('=') {
                    return self.error("expected :=".into());
                }
                self.emit(Tok::Declare);
                State::InsideAction
            }
            Some('|') => {
                self.emit(Tok::Pipe);
                State::InsideAction
            }
            Some('"') => State::Quote,
            Some('`') => State::RawQuote,
            Some('$') => State::Variable,
            Some('\'') => State::Char,
            Some('.') if self.peek().is_some_and(|n| !n.is_ascii_digit()) => State::Field,
            Some(c @ ('.' | '+' | '-' | '0'..='9')) => {
                self.backup(Some(c));
                State::Number
            }
            Some(c) if is_alnum(c) => {
                self.backup(Some(c));
                State::Identifier
            }
            Some('(') => {
                self.emit(Tok::LeftParen);
                self.paren_depth += 1;
                State::InsideAction
            }
            Some(')') => {
                self.paren_depth -= 1;
                if self.paren_depth < 0 {
                    return self.error(format!("unexpected right paren {}", rune_desc(')')));
                }
                self.emit(Tok::RightParen);
                State::InsideAction
            }
            Some(c) if c.is_ascii() && !c.is_ascii_control() => {
                self.emit(Tok::Char);
                State::InsideAction
            }
            Some(c) => self.error(format!(
                "unrecognized character in action: {}",
                rune_desc(c)
            )),
        }
    }

    /// A run of spaces. Careful with " -}}": the space belongs to the trim marker.
    fn lex_space(&mut self) -> State {
        let mut n = 0;
        while self.peek().is_some_and(is_space) {
            self.next();
            n += 1;
        }
        let last = self.pos - 1;
        if has_right_trim_marker(&self.src[last..]) && self.src[last + 2..].starts_with(RIGHT_DELIM)
        {
            self.pos = last;
            if n == 1 {
                return State::RightDelim;
            }
        }
        self.emit(Tok::Space);
        State::InsideAction
    }

    fn lex_identifier(&mut self) -> State {
        while self.peek().is_some_and(is_alnum) {
            self.next();
        }
        if !self.at_terminator() {
            let c = self.peek();
            return self.error(format!(
                "bad character {}",
                c.map(rune_desc).unwrap_or_default()
            ));
        }
        let kind = match &self.src[self.start..self.pos] {
            "block" => Tok::Block,
            "break" => Tok::Break,
            "continue" => Tok::Continue,
            "define" => Tok::Define,
            "else" => Tok::Else,
            "end" => Tok::End,
            "if" => Tok::If,
            "nil" => Tok::Nil,
            "range" => Tok::Range,
            "template" => Tok::Template,
            "with" => Tok::With,
            "true" | "false" => Tok::Bool,
            _ => Tok::Identifier,
        };
        self.emit(kind);
        State::InsideAction
    }

    fn lex_variable(&mut self) -> State {
        if self.at_terminator() {
            self.emit(Tok::Variable);
            return State::InsideAction;
        }
        self.lex_field_or_variable(Tok::Variable)
    }

    /// `.Field` or `$var`; the `.` or `$` has been read.
    fn lex_field_or_variable(&mut self, kind: Tok) -> State {
        if self.at_terminator() {
            self.emit(if kind == Tok::Variable {
                Tok::Variable
            } else {
                Tok::Dot
            });
            return State::InsideAction;
        }
        while self.peek().is_some_and(is_alnum) {
            self.next();
        }
        if !self.at_terminator() {
            let c = self.peek();
            return self.error(format!(
                "bad character {}",
                c.map(rune_desc).unwrap_or_default()
            ));
        }
        self.emit(kind);
        State::InsideAction
    }

    /// Whether the next character may follow an identifier; this is what splits `.X.Y`.
    fn at_terminator(&self) -> bool {
        match self.peek() {
            None => true,
            Some(c) => is_space(c) || matches!(c, '.' | ',' | '|' | ':' | ')' | '(' | '}'),
        }
    }

    fn lex_char(&mut self) -> State {
        self.lex_escaped('\'', Tok::CharConstant, "unterminated character constant")
    }

    /// A `close`-delimited literal with backslash escapes, on one line.
    fn lex_escaped(&mut self, close: char, tok: Tok, unterminated: &str) -> State {
        loop {
            match self.next() {
                Some('\\') => {
                    if matches!(self.next(), None | Some('\n')) {
                        return self.error(unterminated.into());
                    }
                }
                None | Some('\n') => return self.error(unterminated.into()),
                Some(c) if c == close => break,
                Some(_) => {}
            }
        }
        self.emit(tok);
        State::InsideAction
    }

    fn lex_number(&mut self) -> State {
        if !self.scan_number() {
            let text = quote(&self.src[self.start..self.pos]);
            return self.error(format!("bad number syntax: {text}"));
        }
        if matches!(self.peek(), Some('+' | '-')) {
            // Complex: 1+2i. No spaces, must end in 'i'.
            if !self.scan_number() || !self.src[..self.pos].ends_with('i') {
                let text = quote(&self.src[self.start..self.pos]);
                return self.error(format!("bad number syntax: {text}"));
            }
            self.emit(Tok::Complex);
        } else {
            self.emit(Tok::Number);
        }
        State::InsideAction
    }

    /// Go's deliberately loose scanner; `parse` rejects what strconv would.
    fn scan_number(&mut self) -> bool {
        self.accept("+-");
        let mut digits = "0123456789_";
        if self.accept("0") {
            if self.accept("xX") {
                digits = "0123456789abcdefABCDEF_";
            } else if self.accept("oO") {
                digits = "01234567_";
            } else if self.accept("bB") {
                digits = "01_";
            }
        }
        self.accept_run(digits);
        if self.accept(".") {
            self.accept_run(digits);
        }
        if digits.len() == 11 && self.accept("eE") {
            self.accept("+-");
            self.accept_run("0123456789_");
        }
        if digits.len() == 23 && self.accept("pP") {
            self.accept("+-");
            self.accept_run("0123456789_");
        }
        self.accept("i");
        if self.peek().is_some_and(is_alnum) {
            self.next();
            return false;
        }
        true
    }

    fn lex_quote(&mut self) -> State {
        self.lex_escaped('"', Tok::Str, "unterminated quoted string")
    }

    fn lex_raw_quote(&mut self) -> State {
        loop {
            match self.next() {
                None => return self.error("unterminated raw quoted string".into()),
                Some('`') => break,
                Some(_) => {}
            }
        }
        self.emit(Tok::RawStr);
        State::InsideAction
    }
}

#[cfg(test)]
mod tests;
