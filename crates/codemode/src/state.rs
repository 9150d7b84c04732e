//! Per-script state shared by the builtins (in a `thread_local!` of the evaluating thread), the
//! link to the tool host, the `print` collector and the step/heap hook.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::mpsc::{Receiver, Sender};

use serde_json::Value as Json;
use starlark::PrintHandler;
use starlark::codemap::FileSpanRef;
use starlark::eval::{BeforeStmtFuncDyn, Evaluator};

use crate::{MAX_HEAP_BYTES, MAX_LOG_BYTES, ToolInfo};

/// A request from the evaluating thread to the thread that owns the [`crate::ToolHost`].
pub(crate) enum Request {
    /// One tool call.
    Call(String, Json),
    /// One `parallel` round.
    Batch(Vec<(String, Json)>),
}

/// The evaluating thread's end of the link to the host.
pub(crate) struct Link {
    pub(crate) requests: Sender<Request>,
    pub(crate) results: Receiver<Vec<Result<Json, String>>>,
}

impl Link {
    pub(crate) fn exchange(&self, request: Request, expected: usize) -> Vec<Result<Json, String>> {
        let lost = || vec![Err("the tool host went away".to_owned()); expected];
        if self.requests.send(request).is_err() {
            return lost();
        }
        match self.results.recv() {
            Ok(results) if results.len() == expected => results,
            Ok(_) => {
                vec![Err("the tool host answered the wrong number of calls".to_owned()); expected]
            }
            Err(_) => lost(),
        }
    }
}

/// One answered call of a `parallel` callable, replayed when the callable runs again.
pub(crate) struct Answered {
    pub(crate) name: String,
    pub(crate) arguments: Json,
    pub(crate) result: Result<Json, String>,
}

/// The state of the `parallel` round in progress.
pub(crate) struct Parallel {
    /// Index of the callable running now.
    pub(crate) current: usize,
    /// How many of its answered calls it has replayed in this run.
    pub(crate) cursor: usize,
    /// Answered calls, per callable.
    pub(crate) answered: Vec<Vec<Answered>>,
    /// The first unanswered call of the callable running now, once it asks for one.
    pub(crate) pending: Option<(String, Json)>,
    /// Prints of the callable's current run.
    pub(crate) logs: Vec<String>,
}

/// Everything one script shares between its builtins.
pub(crate) struct State {
    pub(crate) tools: Vec<ToolInfo>,
    pub(crate) by_name: HashMap<String, usize>,
    pub(crate) link: Link,
    pub(crate) step_limit: u64,
    pub(crate) logs: Vec<String>,
    pub(crate) log_bytes: usize,
    pub(crate) parallel: Option<Parallel>,
}

thread_local! {
    static STATE: RefCell<Option<State>> = const { RefCell::new(None) };
}

impl State {
    pub(crate) fn install(tools: Vec<ToolInfo>, link: Link, step_limit: u64) {
        let mut by_name = HashMap::new();
        for (i, tool) in tools.iter().enumerate() {
            by_name.entry(tool.name.clone()).or_insert(i);
        }
        let state = State {
            tools,
            by_name,
            link,
            step_limit,
            logs: Vec::new(),
            log_bytes: 0,
            parallel: None,
        };
        STATE.with(|s| *s.borrow_mut() = Some(state));
    }

    /// Removes the state, returning the logs.
    pub(crate) fn uninstall() -> Vec<String> {
        STATE
            .with(|s| s.borrow_mut().take())
            .map(|s| s.logs)
            .unwrap_or_default()
    }
}

pub(crate) fn with_state<R>(f: impl FnOnce(&mut State) -> R) -> Result<R, String> {
    STATE.with(|s| match s.borrow_mut().as_mut() {
        Some(state) => Ok(f(state)),
        None => Err("internal error: no script state".to_owned()),
    })
}

pub(crate) fn error(message: impl Into<String>) -> starlark::Error {
    starlark::Error::new_other(Message(message.into()))
}

/// A plain message as an error.
#[derive(Debug)]
struct Message(String);

impl std::fmt::Display for Message {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Message {}

/// The message of the error that unwinds a `parallel` callable whose next call is not answered
/// yet. It never reaches the caller: `parallel` swallows it.
pub(crate) const SUSPENDED: &str = "parallel: callable suspended for its next tool call";

pub(crate) fn push_log(state: &mut State, line: String) -> starlark::Result<()> {
    state.log_bytes += line.len();
    let pending: usize = state
        .parallel
        .as_ref()
        .map_or(0, |p| p.logs.iter().map(String::len).sum());
    if state.log_bytes + pending > MAX_LOG_BYTES {
        return Err(error(format!(
            "print output exceeds {} MiB",
            MAX_LOG_BYTES / (1024 * 1024)
        )));
    }
    state.logs.push(line);
    Ok(())
}

/// Collects `print` output: into the current `parallel` callable's run, or the script's logs.
pub(crate) struct Collector;

impl PrintHandler for Collector {
    fn println(&self, text: &str) -> starlark::Result<()> {
        with_state(|s| {
            let committed = s.log_bytes;
            match s.parallel.as_mut() {
                Some(p) => {
                    let pending: usize = p.logs.iter().map(String::len).sum();
                    if committed + pending + text.len() > MAX_LOG_BYTES {
                        return Err(error(format!(
                            "print output exceeds {} MiB",
                            MAX_LOG_BYTES / (1024 * 1024)
                        )));
                    }
                    p.logs.push(text.to_owned());
                    Ok(())
                }
                None => push_log(s, text.to_owned()),
            }
        })
        .map_err(error)?
    }
}

/// Counts statements against the step limit and checks the heap before each one.
pub(crate) struct Steps {
    pub(crate) count: u64,
    pub(crate) limit: u64,
}

/// go.starlark.net's text for a cancelled computation, which ToolHive surfaces.
pub const TOO_MANY_STEPS: &str = "Starlark computation cancelled: too many steps";

impl<'a, 'e: 'a> BeforeStmtFuncDyn<'a, 'e> for Steps {
    fn call<'v>(
        &mut self,
        _span: FileSpanRef,
        eval: &mut Evaluator<'v, 'a, 'e>,
    ) -> starlark::Result<()> {
        self.count += 1;
        if self.count > self.limit {
            return Err(error(TOO_MANY_STEPS));
        }
        if eval.heap().allocated_bytes() > MAX_HEAP_BYTES {
            return Err(error(format!(
                "script exceeded its memory limit ({} MiB of interpreter heap)",
                MAX_HEAP_BYTES / (1024 * 1024)
            )));
        }
        Ok(())
    }
}
