//! The `Template` that go_behaviour.rs is compiled against here: it runs whichever engine the
//! current thread selected, turns panics into errors, and remembers the last outcome so the
//! recording asserts (conformance.rs) can say why a case failed.
use std::{
    cell::{Cell, RefCell},
    fmt,
    panic::{AssertUnwindSafe, catch_unwind},
};

use serde_json::Value as Json;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Engine {
    Ours,
    Gotmpl,
}

/// What the engine did last: rendered text, an error, or a panic.
#[derive(Clone, Debug)]
#[allow(dead_code)] // read through Debug
pub enum Outcome {
    Ok(String),
    Err(String),
    Panic(String),
}

thread_local! {
    pub static ENGINE: Cell<Engine> = const { Cell::new(Engine::Ours) };
    pub static LAST: RefCell<Option<(String, Outcome)>> = const { RefCell::new(None) };
}

fn engine() -> Engine {
    ENGINE.with(Cell::get)
}

fn note(src: &str, o: Outcome) {
    LAST.with(|l| *l.borrow_mut() = Some((src.to_owned(), o)));
}

fn guarded<T>(src: &str, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            note(src, Outcome::Panic(msg.clone()));
            Err(format!("PANIC: {msg}"))
        }
    }
}

pub enum Template {
    Ours(vmcp_template::Template),
    Gotmpl(Box<gotmpl::Template>, String),
}

#[derive(Debug, PartialEq)]
pub struct ParseError {
    pub message: String,
    pub line: usize,
    pub column: usize,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

#[derive(Debug, PartialEq)]
pub struct RenderError {
    pub message: String,
}

impl Template {
    pub fn parse(src: &str) -> Result<Template, ParseError> {
        let parsed = guarded(src, || match engine() {
            Engine::Ours => Ok(vmcp_template::Template::parse(src)
                .map(Template::Ours)
                .map_err(|e| (e.to_string(), e.line, e.column))),
            Engine::Gotmpl => Ok(crate::gt::parse(src)
                .map(|t| Template::Gotmpl(Box::new(t), src.to_owned()))
                .map_err(|e| match &e {
                    gotmpl::TemplateError::Parse { line, col, .. }
                    | gotmpl::TemplateError::Lex { line, col, .. } => (e.to_string(), *line, *col),
                    _ => (e.to_string(), 0, 0),
                })),
        });
        let (message, line, column) = match parsed {
            Ok(Ok(t)) => {
                note(src, Outcome::Ok("(parsed)".into()));
                return Ok(t);
            }
            Ok(Err(e)) => {
                note(src, Outcome::Err(format!("parse: {}", e.0)));
                e
            }
            Err(panic) => (panic, 0, 0),
        };
        Err(ParseError {
            message,
            line,
            column,
        })
    }

    pub fn render(&self, data: &Json) -> Result<String, RenderError> {
        let src = match self {
            Template::Ours(t) => t.source().to_owned(),
            Template::Gotmpl(_, s) => s.clone(),
        };
        let r = guarded(&src, || match self {
            Template::Ours(t) => t.render(data).map_err(|e| e.message),
            Template::Gotmpl(t, _) => t
                .execute_to_string(&crate::gt::to_value(data))
                .map_err(|e| e.to_string()),
        });
        match &r {
            Ok(s) => note(&src, Outcome::Ok(s.clone())),
            Err(e) if !e.starts_with("PANIC") => note(&src, Outcome::Err(e.clone())),
            Err(_) => {}
        }
        r.map_err(|message| RenderError { message })
    }

    pub fn is_plain(&self) -> bool {
        match self {
            Template::Ours(t) => t.is_plain(),
            Template::Gotmpl(..) => unreachable!("plain_templates is not run for gotmpl"),
        }
    }
}
