//! One script run: globals, the tool prelude, ToolHive's wrapping, limits, and the result.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::sync::mpsc;

use serde_json::Value as Json;
use starlark::environment::{Globals, GlobalsBuilder, LibraryExtension, Module};
use starlark::eval::{BeforeStmtFuncDyn, Evaluator};
use starlark::syntax::{AstModule, Dialect};

use crate::convert::{to_json, to_starlark};
use crate::natives::{range_builtin, tool_builtins};
use crate::sanitize::bind_names;
use crate::state::{Collector, Link, Request, State, Steps};
use crate::{FAILED_PREFIX, Job, MAX_CALLSTACK, MAX_MESSAGE_BYTES, Outcome, ToolHost};

/// Name of the script in error messages.
const SCRIPT_FILE: &str = "script.star";
/// Stack of the evaluating thread (recursion is bounded by [`MAX_CALLSTACK`] frames, but
/// compiling a deeply nested expression recurses too).
const EVAL_STACK_BYTES: usize = 16 * 1024 * 1024;

/// Runs `job`, sending its tool calls to `host`, and returns how it ended.
///
/// Synchronous: the script is evaluated on a helper thread of its own while the calling thread
/// answers its tool calls through `host`. (A `&mut dyn ToolHost` cannot be reached from a
/// `#[starlark_module]` builtin without `unsafe`; channels to the owner's thread can.) Do not call
/// it inside the gateway: a one-statement memory bomb aborts the process (see
/// [`crate::worker`]).
pub fn run(job: &Job, host: &mut dyn ToolHost) -> Outcome {
    let (request_tx, request_rx) = mpsc::channel::<Request>();
    let (result_tx, result_rx) = mpsc::channel();
    std::thread::scope(|scope| {
        let link = Link {
            requests: request_tx,
            results: result_rx,
        };
        let spawned = std::thread::Builder::new()
            .name("vmcp-script".to_owned())
            .stack_size(EVAL_STACK_BYTES)
            .spawn_scoped(scope, move || evaluate(job, link));
        let handle = match spawned {
            Ok(handle) => handle,
            Err(e) => return Outcome::failed(format!("cannot start the interpreter: {e}")),
        };
        while let Ok(request) = request_rx.recv() {
            let results = match request {
                Request::Call(name, arguments) => vec![host.call(&name, arguments)],
                Request::Batch(calls) => host.call_batch(calls),
            };
            if result_tx.send(results).is_err() {
                break;
            }
        }
        handle
            .join()
            .unwrap_or_else(|_| Outcome::failed("internal error: the interpreter panicked"))
    })
}

/// Why a script did not produce a value.
enum Failure {
    /// Before evaluation (ToolHive's executor): the message as it is.
    Plain(String),
    /// The interpreter's: prefixed with `script execution failed: `.
    Engine(String),
}

fn evaluate(job: &Job, link: Link) -> Outcome {
    State::install(job.tools.clone(), link, job.step_limit);
    let result = evaluate_in_state(job);
    let logs = State::uninstall();
    match result {
        Ok(value) => Outcome::Ok { value, logs },
        Err(Failure::Plain(message)) => Outcome::Err(message),
        Err(Failure::Engine(message)) => Outcome::Err(format!("{FAILED_PREFIX}{message}")),
    }
}

/// The globals of every script: the standard ones, `print`, the tool builtins, and our `range`
/// (added last, so it replaces the standard one).
pub(crate) fn globals() -> Globals {
    GlobalsBuilder::extended_by(&[LibraryExtension::Print])
        .with(tool_builtins)
        .with(range_builtin)
        .build()
}

/// The dialect: the standard one without `load`.
fn dialect() -> Dialect {
    Dialect {
        enable_load: false,
        ..Dialect::Standard
    }
}

/// ToolHive's `wrapScript`: the body inside `def __main__():`, so it may `return`.
pub(crate) fn wrap_script(script: &str) -> String {
    let mut out = String::with_capacity(script.len() + 64);
    out.push_str("def __main__():\n");
    for line in script.split('\n') {
        out.push_str("    ");
        out.push_str(line);
        out.push('\n');
    }
    out.push_str("__result__ = __main__()\n");
    out
}

/// One `def` per bound tool, calling `__tool` by index so no tool name is spliced into source
/// except its sanitised identifier.
fn prelude(names: &[Option<String>]) -> String {
    let mut out = String::new();
    for (index, name) in names.iter().enumerate() {
        if let Some(name) = name {
            let _ = writeln!(
                out,
                "def {name}(*args, **kwargs):\n    return __tool({index}, *args, **kwargs)\n"
            );
        }
    }
    out
}

fn evaluate_in_state(job: &Job) -> Result<Json, Failure> {
    let globals = globals();
    let module = Module::new();
    let bound = bind_names(&job.tools);

    let builtins: HashSet<String> = globals.names().map(|n| n.as_str().to_owned()).collect();
    let tool_names: HashSet<&str> = bound.iter().flatten().map(String::as_str).collect();
    for key in job.data.keys() {
        if builtins.contains(key) || tool_names.contains(key.as_str()) {
            return Err(Failure::Plain(format!(
                "data argument \"{key}\" conflicts with a builtin or tool name"
            )));
        }
    }
    for (key, value) in &job.data {
        let value = to_starlark(module.heap(), value)
            .map_err(|e| Failure::Plain(format!("data argument \"{key}\": {e}")))?;
        module.set(key, value);
    }

    let prelude = prelude(&bound);
    if !prelude.is_empty() {
        let ast = AstModule::parse("prelude.star", prelude, &dialect())
            .map_err(|e| Failure::Engine(format!("internal error: {}", format_error(&e))))?;
        let mut eval = Evaluator::new(&module);
        eval.eval_module(ast, &globals)
            .map_err(|e| Failure::Engine(format!("internal error: {}", format_error(&e))))?;
    }

    let ast = AstModule::parse(SCRIPT_FILE, wrap_script(&job.script), &dialect()).map_err(|e| {
        Failure::Engine(load_refused(&job.script, &e).unwrap_or_else(|| format_error(&e)))
    })?;
    {
        let mut eval = Evaluator::new(&module);
        eval.set_print_handler(&Collector);
        eval.set_max_callstack_size(MAX_CALLSTACK)
            .map_err(|e| Failure::Engine(format!("internal error: {e}")))?;
        let steps: Box<dyn BeforeStmtFuncDyn> = Box::new(Steps {
            count: 0,
            limit: job.step_limit,
        });
        eval.before_stmt_for_dap(steps.into());
        eval.eval_module(ast, &globals)
            .map_err(|e| Failure::Engine(format_error(&e)))?;
    }
    // `Module::get` hides names starting with `_`; read `__result__` from inside the module.
    let read = AstModule::parse("result.star", "__result__".to_owned(), &dialect())
        .map_err(|e| Failure::Engine(format!("internal error: {}", format_error(&e))))?;
    let result = Evaluator::new(&module)
        .eval_module(read, &globals)
        .map_err(|e| Failure::Engine(format!("internal error: {}", format_error(&e))))?;
    let value = to_json(result).map_err(|e| Failure::Engine(format!("script result: {e}")))?;
    let size = serde_json::to_string(&value).map_or(usize::MAX, |s| s.len());
    if size > MAX_MESSAGE_BYTES {
        return Err(Failure::Engine(format!(
            "script result is larger than {} MiB",
            MAX_MESSAGE_BYTES / (1024 * 1024)
        )));
    }
    Ok(value)
}

/// `file:line:column: message` (the file's line, so user line n is line n+1, as in ToolHive).
/// An error inside a tool function's prelude `def` is placed at the script's call of it.
pub(crate) fn format_error(e: &starlark::Error) -> String {
    let message = e.without_diagnostic().to_string();
    let frames = e
        .call_stack()
        .frames
        .iter()
        .rev()
        .filter_map(|f| f.location.as_ref());
    let mut spans = e.span().into_iter().chain(frames);
    let span = spans
        .clone()
        .find(|s| s.filename() == SCRIPT_FILE)
        .or_else(|| spans.next());
    match span {
        Some(span) => {
            let begin = span.resolve_span().begin;
            format!(
                "{}:{}:{}: {message}",
                span.filename(),
                begin.line + 1,
                begin.column + 1
            )
        }
        None => message,
    }
}

/// ToolHive's message when the script tries `load`: the wrapped script has no top level, so the
/// parser refuses any `load`; name the module it asked for.
fn load_refused(script: &str, e: &starlark::Error) -> Option<String> {
    if !e.without_diagnostic().to_string().contains("load") {
        return None;
    }
    let module = script.lines().find_map(|line| {
        let rest = line
            .trim_start()
            .strip_prefix("load")?
            .trim_start()
            .strip_prefix('(')?
            .trim_start();
        let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
        let body = &rest[1..];
        Some(body[..body.find(quote)?].to_owned())
    })?;
    Some(format!("load(\"{module}\") is not permitted in scripts"))
}
