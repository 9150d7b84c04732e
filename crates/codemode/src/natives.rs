//! The builtins a script sees besides the standard ones: `__tool`, `call_tool`, `parallel`, and a
//! `range` that refuses ranges longer than the step limit.

use std::num::NonZeroI32;

use serde_json::Value as Json;
use starlark::collections::SmallMap;
use starlark::environment::GlobalsBuilder;
use starlark::eval::Evaluator;
use starlark::starlark_module;
use starlark::values::Value;
use starlark::values::list::{AllocList, ListRef};
use starlark::values::range::Range;
use starlark::values::tuple::{TupleRef, UnpackTuple};

use crate::convert::{arguments_to_json, to_starlark};
use crate::state::{Answered, Parallel, Request, SUSPENDED, error, push_log, with_state};
use crate::{MAX_MESSAGE_BYTES, parse_tool_result};

/// Runs tool `index` with the script's arguments and returns what the script sees of its result.
fn call_tool_at<'v>(
    index: usize,
    positional: &[Value<'v>],
    named: &SmallMap<String, Value<'v>>,
    eval: &mut Evaluator<'v, '_, '_>,
) -> starlark::Result<Value<'v>> {
    let arguments = arguments_to_json(positional, named).map_err(error)?;
    let name = with_state(|s| s.tools.get(index).map(|t| t.name.clone()))
        .map_err(error)?
        .ok_or_else(|| error(format!("internal error: no tool {index}")))?;
    let result = dispatch(&name, arguments)?;
    let value = parse_tool_result(&result).map_err(error)?;
    to_starlark(eval.heap(), &value).map_err(|e| error(format!("tool \"{name}\" result: {e}")))
}

/// Sends one call to the host, or, inside `parallel`, replays or records it.
fn dispatch(name: &str, arguments: Json) -> starlark::Result<Json> {
    enum Next {
        Send,
        Replayed(Result<Json, String>),
        Suspend,
        NotDeterministic(usize),
    }
    let next = with_state(|s| match s.parallel.as_mut() {
        None => Next::Send,
        Some(p) => {
            let log = &p.answered[p.current];
            match log.get(p.cursor) {
                Some(done) if done.name == name && done.arguments == arguments => {
                    p.cursor += 1;
                    Next::Replayed(done.result.clone())
                }
                Some(_) => Next::NotDeterministic(p.current),
                None => {
                    p.pending = Some((name.to_owned(), arguments.clone()));
                    Next::Suspend
                }
            }
        }
    })
    .map_err(error)?;
    let result = match next {
        Next::Replayed(result) => result,
        Next::Suspend => return Err(error(SUSPENDED)),
        Next::NotDeterministic(i) => {
            return Err(error(format!(
                "parallel: callable {i} is not deterministic"
            )));
        }
        Next::Send => with_state(|s| {
            s.link
                .exchange(Request::Call(name.to_owned(), arguments), 1)
                .pop()
                .unwrap_or_else(|| Err("the tool host went away".to_owned()))
        })
        .map_err(error)?,
    };
    let result = result.map_err(error)?;
    check_size(name, &result)?;
    Ok(result)
}

fn check_size(name: &str, result: &Json) -> starlark::Result<()> {
    let size = serde_json::to_string(result).map_or(usize::MAX, |s| s.len());
    if size > MAX_MESSAGE_BYTES {
        return Err(error(format!(
            "tool \"{name}\" result is larger than {} MiB",
            MAX_MESSAGE_BYTES / (1024 * 1024)
        )));
    }
    Ok(())
}

/// `parallel([f, ...])`: every callable runs in rounds. In each round every unfinished callable
/// runs from the start, its answered calls replayed, until it finishes or asks for a call not
/// answered yet; the round's new calls then go to the host as one batch.
fn run_parallel<'v>(
    callables: Value<'v>,
    eval: &mut Evaluator<'v, '_, '_>,
) -> starlark::Result<Value<'v>> {
    let items: Vec<Value<'v>> = match ListRef::from_value(callables) {
        Some(list) => list.content().to_vec(),
        None => match TupleRef::from_value(callables) {
            Some(tuple) => tuple.content().to_vec(),
            None => {
                return Err(error(format!(
                    "parallel: argument must be a list of callables, got {}",
                    callables.get_type()
                )));
            }
        },
    };
    let n = items.len();
    let nested = with_state(|s| {
        if s.parallel.is_some() {
            return true;
        }
        s.parallel = Some(Parallel {
            current: 0,
            cursor: 0,
            answered: (0..n).map(|_| Vec::new()).collect(),
            pending: None,
            logs: Vec::new(),
        });
        false
    })
    .map_err(error)?;
    if nested {
        return Err(error("parallel: nested parallel calls are not supported"));
    }
    let outcome = parallel_rounds(&items, eval);
    with_state(|s| s.parallel = None).map_err(error)?;
    let (finished, prints) = outcome?;
    for line in prints.into_iter().flatten() {
        with_state(|s| push_log(s, line)).map_err(error)??;
    }
    let mut values = Vec::with_capacity(n);
    for result in finished {
        values.push(result?);
    }
    Ok(eval.heap().alloc(AllocList(values)))
}

type Finished<'v> = Vec<starlark::Result<Value<'v>>>;

fn parallel_rounds<'v>(
    items: &[Value<'v>],
    eval: &mut Evaluator<'v, '_, '_>,
) -> starlark::Result<(Finished<'v>, Vec<Vec<String>>)> {
    let n = items.len();
    let mut finished: Vec<Option<starlark::Result<Value<'v>>>> = (0..n).map(|_| None).collect();
    let mut prints: Vec<Vec<String>> = vec![Vec::new(); n];
    loop {
        let mut round: Vec<(usize, String, Json)> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            if finished[i].is_some() {
                continue;
            }
            with_state(|s| {
                if let Some(p) = s.parallel.as_mut() {
                    p.current = i;
                    p.cursor = 0;
                    p.pending = None;
                    p.logs.clear();
                }
            })
            .map_err(error)?;
            let result = eval.eval_function(*item, &[], &[]);
            let (pending, logs) = with_state(|s| {
                s.parallel
                    .as_mut()
                    .map(|p| (p.pending.take(), std::mem::take(&mut p.logs)))
                    .unwrap_or_default()
            })
            .map_err(error)?;
            match (result, pending) {
                (Err(_), Some((name, arguments))) => round.push((i, name, arguments)),
                (result, _) => {
                    finished[i] = Some(result);
                    prints[i] = logs;
                }
            }
        }
        if round.is_empty() {
            break;
        }
        let calls: Vec<(String, Json)> = round
            .iter()
            .map(|(_, name, arguments)| (name.clone(), arguments.clone()))
            .collect();
        let expected = calls.len();
        let results =
            with_state(|s| s.link.exchange(Request::Batch(calls), expected)).map_err(error)?;
        with_state(|s| {
            if let Some(p) = s.parallel.as_mut() {
                for ((i, name, arguments), result) in round.into_iter().zip(results) {
                    p.answered[i].push(Answered {
                        name,
                        arguments,
                        result,
                    });
                }
            }
        })
        .map_err(error)?;
    }
    let finished = finished
        .into_iter()
        .map(|r| {
            r.unwrap_or_else(|| Err(error("internal error: parallel callable never finished")))
        })
        .collect();
    Ok((finished, prints))
}

#[starlark_module]
pub(crate) fn tool_builtins(builder: &mut GlobalsBuilder) {
    /// Calls bound tool number `index` (the prelude's tool functions call this).
    fn __tool<'v>(
        #[starlark(require = pos)] index: i32,
        #[starlark(args)] args: UnpackTuple<Value<'v>>,
        #[starlark(kwargs)] kwargs: SmallMap<String, Value<'v>>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Value<'v>> {
        let index =
            usize::try_from(index).map_err(|_| error("internal error: negative tool index"))?;
        call_tool_at(index, &args.items, &kwargs, eval)
    }

    /// `call_tool(name, ...)`: calls a tool by its advertised name.
    fn call_tool<'v>(
        #[starlark(args)] args: UnpackTuple<Value<'v>>,
        #[starlark(kwargs)] kwargs: SmallMap<String, Value<'v>>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Value<'v>> {
        let Some((first, rest)) = args.items.split_first() else {
            return Err(error("call_tool: missing tool name"));
        };
        let Some(name) = first.unpack_str() else {
            return Err(error(format!(
                "call_tool: first argument must be a string, got {}",
                first.get_type()
            )));
        };
        let index = with_state(|s| s.by_name.get(name).copied())
            .map_err(error)?
            .ok_or_else(|| error(format!("call_tool: unknown tool \"{name}\"")))?;
        call_tool_at(index, rest, &kwargs, eval)
    }

    /// `parallel([f, ...])`: runs the callables (no arguments) and returns their results in order.
    fn parallel<'v>(
        #[starlark(require = pos)] callables: Value<'v>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Value<'v>> {
        run_parallel(callables, eval)
    }
}

#[starlark_module]
pub(crate) fn range_builtin(builder: &mut GlobalsBuilder) {
    /// The standard `range`, refusing a range longer than the script's step limit: a loop over it
    /// could never finish (ToolHive counts a step per iteration).
    fn range(
        #[starlark(require = pos)] a1: i32,
        #[starlark(require = pos)] a2: Option<i32>,
        #[starlark(require = pos, default = 1)] step: i32,
    ) -> starlark::Result<Range> {
        let (start, stop) = match a2 {
            None => (0, a1),
            Some(stop) => (a1, stop),
        };
        let Some(step) = NonZeroI32::new(step) else {
            return Err(error("Third argument of range (step) cannot be zero"));
        };
        let (start, stop, s) = (i64::from(start), i64::from(stop), i64::from(step.get()));
        let len = if s > 0 {
            if stop > start {
                (stop - start + s - 1) / s
            } else {
                0
            }
        } else if start > stop {
            (start - stop - s - 1) / -s
        } else {
            0
        };
        let limit = with_state(|st| st.step_limit).map_err(error)?;
        if u64::try_from(len).unwrap_or(0) > limit {
            return Err(error(format!(
                "range of {len} elements exceeds the script step limit ({limit})"
            )));
        }
        #[allow(clippy::cast_possible_truncation)]
        Ok(Range::new(start as i32, stop as i32, step))
    }
}
